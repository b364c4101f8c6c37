"""Every tool's schemas are checked (schema_checks).

A tool with strict=True or input_examples is checked when it is defined and
refused; any other tool is checked when its server is built, gets one
log record per kind of problem (never a warning), and is served as upstream
serves it.

- A reference that resolves outside the schema is refused for opted-in tools
  (and in an outputSchema), naming the tool and the JSON Pointer; a plain
  tool gets a log record, and a call whose values reach the reference is
  refused (an error result naming the tool and the document).
  Nothing is ever fetched: not at definition, not when examples are checked,
  not on a call.
- A schema that fails its metaschema, or a pattern Python's ``re`` cannot
  compile, is refused for opted-in tools; others get one log record listing
  every place (pointer and keyword) and are still served.
- NaN/infinity in a strict schema is refused with its pointer.
- 1,000-level nesting is the documented ValueError for opted-in tools (a
  warning for others), never RecursionError.
"""

from __future__ import annotations

import math
import re
import socket
import sys
import urllib.request
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import call_tool, serve
from tests.lib.notices import logged_notices

try:
    from claude_agent_sdk._internal.definition.schema_checks import check_input_schema
    from claude_agent_sdk._internal.strict.schema_graph import MAX_SCHEMA_DEPTH
    from claude_agent_sdk._internal.strict.transform import make_strict
except ImportError:  # a tree without the patch: these tests must fail
    MAX_SCHEMA_DEPTH = None  # type: ignore[assignment]
    check_input_schema = None  # type: ignore[assignment]
    make_strict = None  # type: ignore[assignment]

try:
    from claude_agent_sdk._internal.argument_validation import (
        argument_error,
        compile_validator,
    )
except ImportError:  # a tree without that patch: its test must fail
    argument_error = compile_validator = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("schema-checks")

WIRING = pytest.mark.requires_patch("schema-checks")

EXTERNAL = [
    "https://example.com/a.json",
    "http://example.com/a.json#/A",
    "file:///etc/passwd",
    "urn:example:a",
    "other.json",
    "https://json-schema.org/draft/2020-12/schema",
]


@pytest.fixture
def no_io(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"I/O attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    yield


def _with_ref(ref: str, keyword: str = "$ref") -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"a": {keyword: ref}},
        "additionalProperties": False,
    }


async def _noop(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


@pytest.mark.usefixtures("no_io")
@pytest.mark.parametrize("ref", EXTERNAL)
def test_external_refs_are_refused_with_their_pointer(ref: str) -> None:
    with pytest.raises(ValueError) as refused:
        check_input_schema("fetcher", _with_ref(ref), opted_in=True)
    message = str(refused.value)
    assert message.startswith("Tool 'fetcher': input_schema refers outside itself")
    assert "#/properties/a/$ref" in message and repr(ref) in message


@pytest.mark.usefixtures("no_io")
@pytest.mark.parametrize("ref", EXTERNAL)
def test_external_refs_of_other_tools_are_one_warning_with_their_pointer(
    ref: str,
) -> None:
    with logged_notices() as caught:
        check_input_schema("fetcher", _with_ref(ref), opted_in=False)
    [warning] = caught
    message = str(warning.message)
    if ref.startswith("file:///"):  # read once, on the first call reaching it
        assert message.startswith(
            "Tool 'fetcher': input_schema refers outside itself; the SDK reads a "
            "local file once and never fetches other documents"
        ), message
        assert f"{ref!r} names a local file, which the SDK reads once" in message
    elif ref.startswith("https://json-schema.org/"):  # bundled: checked offline
        assert message.startswith(
            "Tool 'fetcher': input_schema refers outside itself, to a JSON Schema "
            "metaschema, which the SDK checks arguments against offline"
        ), message
        assert "not checked" not in message
    else:
        assert message.startswith(
            "Tool 'fetcher': input_schema refers outside itself, and the SDK "
            "never fetches schemas: "
        ), message
    assert "#/properties/a/$ref" in message and repr(ref) in message


@pytest.mark.usefixtures("no_io")
def test_dynamic_refs_and_refs_against_an_id_base_are_checked_too() -> None:
    with pytest.raises(ValueError, match=r"#/properties/a/\$dynamicRef"):
        check_input_schema(
            "t", _with_ref("https://example.com/m#meta", "$dynamicRef"), opted_in=True
        )
    schema = {**_with_ref("b.json"), "$id": "https://example.com/a.json"}
    with pytest.raises(ValueError, match="#/properties/a/\\$ref"):
        check_input_schema("t", schema, opted_in=True)
    with logged_notices(match=r"refers outside itself[\s\S]*#/properties/a/\$ref"):
        check_input_schema("t", schema, opted_in=False)


@pytest.mark.usefixtures("no_io")
def test_refs_inside_the_document_are_fine() -> None:
    schema = {
        "$id": "https://example.com/root",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/S"},
            "b": {"$ref": "s.json"},
            "c": {"$ref": "s.json#s"},
            "d": {"$ref": "https://example.com/root#/$defs/S"},
        },
        "$defs": {"S": {"$id": "s.json", "$anchor": "s", "type": "string"}},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_input_schema("t", schema, opted_in=True)


@pytest.mark.requires_patch("ref-policy")
@pytest.mark.usefixtures("no_io")
def test_the_argument_validator_never_fetches() -> None:
    # The SDK's one validator factory: it never retrieves a reference, refuses
    # arguments an unreachable one governs (never runs them unchecked) and
    # enforces the rest.
    validator = compile_validator("t", _with_ref("https://example.com/a.json"))
    for governed in ({"a": 1}, {"a": {"any": ["json"]}}):
        with pytest.raises(
            ValueError,
            match=r"^Tool 't': these arguments cannot be checked: "
            r"\$ref 'https://example.com/a.json' names another document",
        ):
            argument_error(validator, governed)
    assert argument_error(validator, {"b": 1}) is not None
    assert argument_error(validator, {}) is None


@WIRING
@pytest.mark.usefixtures("no_io")
@pytest.mark.parametrize("kwargs", [{"strict": True}, {"input_examples": [{}]}])
def test_a_strict_or_exemplified_tool_with_an_external_ref_is_refused(
    kwargs: dict[str, Any],
) -> None:
    with pytest.raises(ValueError, match=r"'fetcher'.*\n.*#/properties/a/\$ref"):
        tool("fetcher", "d", _with_ref("https://example.com/a.json"), **kwargs)(_noop)


@WIRING
@pytest.mark.usefixtures("no_io")
async def test_a_plain_tool_with_an_external_ref_warns_once_and_is_served() -> None:
    received: list[dict[str, Any]] = []

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        received.append(args)
        return {"content": [{"type": "text", "text": "ok"}]}

    schema = {**_with_ref("https://example.com/a.json")}
    schema["properties"] = {**schema["properties"], "n": {"type": "integer"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = tool("fetcher", "d", schema)(handler)
        config = create_sdk_mcp_server("s", tools=[plain])  # checked at first use
    with logged_notices() as caught:
        listed, results = await serve(
            config,
            [
                ("fetcher", {"a": {"x": [1]}}),
                ("fetcher", {"n": "x"}),
                ("fetcher", {"b": 1}),
            ],
        )
    # One notice from the checks at the first listing, one from the first
    # call whose arguments reach the reference (which is refused).
    [warning, refused] = caught
    assert re.match(
        r"Tool 'fetcher': input_schema refers outside itself, and the SDK never "
        r"fetches schemas: [\s\S]*#/properties/a/\$ref",
        str(warning.message),
    ), warning.message
    assert str(refused.message) == (
        "Tool 'fetcher': $ref 'https://example.com/a.json' names another "
        "document, which is not fetched; calls whose arguments it governs are "
        "refused (copy it into $defs and refer to it as '#/$defs/...')"
    )
    assert listed[0]["inputSchema"] == schema
    assert results[0]["content"][0]["text"] == (
        "Tool 'fetcher': these arguments cannot be checked: $ref "
        "'https://example.com/a.json' names another document, which is not fetched"
    )
    assert received == []  # never run on arguments it could not check
    assert all(r["isError"] is True for r in results)


@WIRING
def test_an_output_schema_that_would_fail_every_call_is_refused() -> None:
    output = {"type": "object", "properties": {"r": {"$ref": "#/$defs/missing"}}}
    with pytest.raises(
        ValueError,
        match=r"'out': output_schema would fail every call.*\n.*#/properties/r",
    ):
        tool("out", "d", {"q": str}, output_schema=output)(_noop)


# --- tools that would fail every call -------------------------------------------

BAD_PATTERN = {
    "type": "object",
    "properties": {"s": {"type": "string", "pattern": r"^\p{L}+$"}},
}
BAD_PATTERN_NAME = {"type": "object", "patternProperties": {r"^\p{L}+$": {}}}
BAD_METASCHEMA = {"type": "object", "properties": {"n": {"type": "no-such-type"}}}
FAILING = {
    "pattern": (BAD_PATTERN, "#/properties/s/pattern", "pattern"),
    "pattern-name": (
        BAD_PATTERN_NAME,
        r"#/patternProperties/^\p{L}+$",
        "patternProperties",
    ),
    "metaschema": (BAD_METASCHEMA, "#/properties/n/type", "type"),
    "nan": (
        {
            "type": "object",
            "properties": {"n": {"type": "number", "maximum": math.nan}},
        },
        "#/properties/n/maximum",
        "maximum",
    ),
}
if sys.version_info < (3, 11):  # possessive quantifiers arrived in 3.11
    FAILING["possessive"] = (
        {"type": "object", "properties": {"s": {"type": "string", "pattern": "a++"}}},
        "#/properties/s/pattern",
        "pattern",
    )


@pytest.mark.parametrize("case", list(FAILING))
def test_opted_in_tools_are_refused(case: str) -> None:
    schema, at, keyword = FAILING[case]
    with pytest.raises(ValueError) as refused:
        check_input_schema("t", schema, opted_in=True)
    message = str(refused.value)
    assert message.startswith("Tool 't': input_schema")
    assert f"{at} ({keyword})" in message


@pytest.mark.parametrize("case", list(FAILING))
def test_other_tools_get_a_warning_and_are_served(case: str) -> None:
    schema, at, keyword = FAILING[case]
    with logged_notices() as caught:
        check_input_schema("t", schema, opted_in=False)
    [warning] = caught
    message = str(warning.message)
    assert message.startswith(
        "Tool 't': input_schema would fail every call it applies to; the tool is "
        "served as written (refused for tools with strict=True or input_examples):"
        "\n  - "
    ), message
    assert f"\n  - {at} ({keyword}): " in message, message


def test_other_tools_get_one_warning_listing_every_place() -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "pattern": r"^\p{L}+$"},
            "n": {"type": "number", "maximum": math.nan},
            "r": {"$ref": "#/$defs/missing"},
        },
    }
    with logged_notices() as caught:
        check_input_schema("t", schema, opted_in=False)
    [warning] = caught
    message = str(warning.message)
    assert "\n  - #/properties/s/pattern (pattern): " in message, message
    assert "\n  - #/properties/n/maximum (maximum): " in message, message
    assert "\n  - #/properties/r/$ref ($ref): " in message, message


@WIRING
async def test_a_plain_tool_with_a_bad_pattern_is_still_served() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = tool("p", "d", BAD_PATTERN)(_noop)  # no warning at definition
        config = create_sdk_mcp_server("s", tools=[plain])  # nor at start-up
    with logged_notices() as caught:
        listed, _ = await serve(config, [])
    [warning] = caught
    assert re.match(
        r"Tool 'p': input_schema would fail every call[\s\S]*"
        r"\n  - #/properties/s/pattern \(pattern\): ",
        str(warning.message),
    ), warning.message
    assert listed[0]["inputSchema"] == BAD_PATTERN


@WIRING
@pytest.mark.parametrize("kwargs", [{"strict": True}, {"input_examples": [{}]}])
def test_a_strict_or_exemplified_tool_with_a_bad_pattern_is_refused(
    kwargs: dict[str, Any],
) -> None:
    schema = {**BAD_PATTERN, "additionalProperties": False}
    with pytest.raises(
        ValueError, match=r"'p'.*\n.*#/properties/s/pattern \(pattern\)"
    ):
        tool("p", "d", schema, **kwargs)(_noop)


# --- NaN ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_in_a_strict_schema_are_refused(value: float) -> None:
    schema = {
        "type": "object",
        "properties": {"e": {"enum": ["a", value]}},
        "additionalProperties": False,
    }
    _, violations = make_strict(schema)
    assert [v.path for v in violations] == ["#/properties/e/enum/1"]


@WIRING
def test_a_strict_tool_with_nan_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"e": {"const": math.nan}},
        "additionalProperties": False,
    }
    with pytest.raises(ValueError, match=r"Tool 'n'[\s\S]*#/properties/e/const"):
        tool("n", "d", schema, strict=True)(_noop)


# --- deep nesting -----------------------------------------------------------------------


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_deep_nesting_is_the_documented_error_for_opted_in_tools() -> None:
    with pytest.raises(
        ValueError,
        match=f"Tool 't': input_schema nests deeper than {MAX_SCHEMA_DEPTH}",
    ):
        check_input_schema("t", _deep(1000), opted_in=True)
    with logged_notices() as caught:
        check_input_schema("t", _deep(1000), opted_in=False)
    [warning] = caught
    assert str(warning.message).startswith(
        f"Tool 't': input_schema nests deeper than {MAX_SCHEMA_DEPTH}"
    )
    with pytest.raises(ValueError, match="outputSchema nests deeper"):
        check_input_schema("t", _deep(1000), opted_in=True, field="outputSchema")
    _, violations = make_strict(_deep(1000))
    assert [v.path for v in violations] == ["#"]
    assert "nests deeper" in violations[0].rule


def test_a_schema_that_contains_itself_is_the_same_error() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema
    with pytest.raises(ValueError, match="contains itself"):
        check_input_schema("t", schema, opted_in=True)
    with logged_notices(match="^Tool 't': input_schema nests deeper") as w:
        check_input_schema("t", schema, opted_in=False)
    assert len(w) == 1


@WIRING
@pytest.mark.parametrize("kwargs", [{"strict": True}, {"input_examples": [{}]}])
def test_a_deep_tool_is_refused_not_recursion_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"'deep'[\s\S]*nests deeper"):
        tool("deep", "d", _deep(1000), **kwargs)(_noop)


@WIRING
async def test_a_deep_plain_tool_warns_once_at_its_first_call() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        deep = tool("deep", "d", _deep(1000))(_noop)
        config = create_sdk_mcp_server("s", tools=[deep])  # checked at first use
    # (Listing it fails on mcp 2.x and stops the server on mcp 1.x, as
    # upstream's does, so the first use here is a call.)
    with logged_notices() as caught:
        result = await call_tool(config, "deep", {})
    [warning] = caught
    assert str(warning.message).startswith("Tool 'deep': input_schema nests deeper")
    assert result["isError"] is True  # as upstream: RecursionError on every call


def test_moderate_nesting_is_served() -> None:
    check_input_schema("t", _deep(40), opted_in=True)
