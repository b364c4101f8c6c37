"""Bad tool definitions are refused when the tool is defined.

Each error names the tool and the field (and, for an example, its index),
whether the tool is made with ``tool()`` or built as an ``SdkMcpTool``
directly. Nothing is silently dropped: what is not refused is served.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from claude_agent_sdk import SdkMcpTool, tool
from tests.lib.cases import CASE_SCHEMA, GOOD_EXAMPLE

FEATURE = pytest.mark.requires_patch("serve-extra-tool-fields")


async def _handler(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


def _via_decorator(**fields: Any) -> SdkMcpTool[Any]:
    return tool("search", "Search case law", CASE_SCHEMA, **fields)(_handler)


def _via_dataclass(**fields: Any) -> SdkMcpTool[Any]:
    return SdkMcpTool("search", "Search case law", CASE_SCHEMA, _handler, **fields)


BUILDERS = pytest.mark.parametrize(
    "build", [_via_decorator, _via_dataclass], ids=["tool", "SdkMcpTool"]
)


class _Opaque:
    pass


BAD_STRICT = [1, 0, 1.0, "true", [True]]

# (fields, exception type, what the message must say after "Tool 'search': ")
BAD_INPUT = [
    # strict: only a bool (or None)
    *[
        pytest.param({"strict": value}, TypeError, r"strict\b", id=f"strict={value!r}")
        for value in BAD_STRICT
    ],
    # input_examples: a list of JSON objects, each matching the input schema
    pytest.param(
        {"input_examples": (GOOD_EXAMPLE,)},
        TypeError,
        r"input_examples\b",
        id="examples-tuple",
    ),
    pytest.param(
        {"input_examples": GOOD_EXAMPLE},
        TypeError,
        r"input_examples\b",
        id="examples-dict",
    ),
    pytest.param(
        {"input_examples": [GOOD_EXAMPLE, "se payout"]},
        TypeError,
        r"input_examples\[1\]",
        id="example-not-an-object",
    ),
    pytest.param(
        {"input_examples": [GOOD_EXAMPLE, None]},
        TypeError,
        r"input_examples\[1\]",
        id="example-None",
    ),
    pytest.param(
        {"input_examples": [{"jurisdiction": "se", "terms": ("payout",)}]},
        TypeError,
        r"input_examples\[0\]",
        id="example-with-a-tuple",
    ),
    pytest.param(
        {"input_examples": [{"jurisdiction": "se", "terms": [math.inf]}]},
        ValueError,
        r"input_examples\[0\]",
        id="example-with-inf",
    ),
    pytest.param(
        {"input_examples": [GOOD_EXAMPLE, {"terms": ["payout"]}]},
        ValueError,
        r"input_examples\[1\].*'jurisdiction' is a required property",
        id="example-missing-a-required-property",
    ),
    pytest.param(
        {
            "input_examples": [
                GOOD_EXAMPLE,
                GOOD_EXAMPLE,
                {**GOOD_EXAMPLE, "terms": "x"},
            ]
        },
        ValueError,
        r"input_examples\[2\].*'x' is not of type 'array'",
        id="example-of-the-wrong-type",
    ),
    pytest.param(
        {"input_examples": [{"jurisdiction": "uk", "terms": []}]},
        ValueError,
        r"input_examples\[0\].*'uk' is not one of",
        id="example-outside-the-enum",
    ),
    # extra_fields: a mapping with str keys ...
    pytest.param(
        {"extra_fields": [("title", "Case search")]},
        TypeError,
        r"extra_fields\b",
        id="extra-fields-pairs",
    ),
    pytest.param(
        {"extra_fields": "title"}, TypeError, r"extra_fields\b", id="extra-fields-str"
    ),
    pytest.param(
        {"extra_fields": {1: "one"}}, TypeError, r"extra_fields\b", id="int-key"
    ),
    # ... whose values are strictly JSON, refused with their path ...
    pytest.param(
        {"extra_fields": {"x-acme": [1, 2, ("a", "b")]}},
        TypeError,
        r"extra_fields\['x-acme'\]\[2\]",
        id="tuple",
    ),
    pytest.param(
        {"extra_fields": {"x-acme": {"tags": {"law"}}}},
        TypeError,
        r"extra_fields\['x-acme'\]\['tags'\]",
        id="set",
    ),
    pytest.param(
        {"extra_fields": {"x-acme": float("nan")}},
        ValueError,
        r"extra_fields\['x-acme'\]",
        id="nan",
    ),
    pytest.param(
        {"extra_fields": {"x-acme": [-math.inf]}},
        ValueError,
        r"extra_fields\['x-acme'\]\[0\]",
        id="inf",
    ),
    pytest.param(
        {"extra_fields": {"x-acme": {"when": _Opaque()}}},
        TypeError,
        r"extra_fields\['x-acme'\]\['when'\]",
        id="object",
    ),
    pytest.param(
        {"extra_fields": {"x-acme": {2: "two"}}},
        TypeError,
        r"extra_fields\['x-acme'\]",
        id="nested-int-key",
    ),
    pytest.param(
        {"extra_fields": {"x-acme": b"bytes"}},
        TypeError,
        r"extra_fields\['x-acme'\]",
        id="bytes",
    ),
    # ... and standard MCP Tool fields must fit the MCP Tool model.
    pytest.param(
        {"extra_fields": {"title": 5}},
        ValueError,
        r"extra_fields\['title'\]",
        id="title-not-a-str",
    ),
    pytest.param(
        {"extra_fields": {"title": None}},
        ValueError,
        r"extra_fields\['title'\]",
        id="title-None",
    ),
    pytest.param(
        {"extra_fields": {"icons": [{"mimeType": "image/png"}]}},
        ValueError,
        r"extra_fields\['icons'\]",
        id="icon-without-src",
    ),
    pytest.param(
        {"output_schema": {"type": "array"}},
        ValueError,
        r"output_schema must have \"type\": \"object\"",
        id="output-schema-not-an-object",
        marks=pytest.mark.requires_patch("tool-results"),
    ),
    pytest.param(
        {"output_schema": "object"},
        TypeError,
        r"output_schema must be a dict",
        id="output-schema-a-str",
        marks=pytest.mark.requires_patch("tool-results"),
    ),
    pytest.param(
        {"output_schema": {"type": "object", "required": "lines"}},
        ValueError,
        r"output_schema\['required'\] is not a valid JSON Schema",
        id="output-schema-invalid",
        marks=pytest.mark.requires_patch("tool-results"),
    ),
    pytest.param(
        {"extra_fields": {"outputSchema": {"type": "object"}}},
        ValueError,
        r"extra_fields\['outputSchema'\] would replace a field the SDK builds; "
        "use the output_schema argument instead",
        id="output-schema-through-extra-fields",
        marks=pytest.mark.requires_patch("tool-results"),
    ),
]


@FEATURE
@BUILDERS
@pytest.mark.parametrize(("fields", "error", "says"), BAD_INPUT)
def test_bad_input_is_refused_naming_the_tool_and_the_field(
    build: Any, fields: dict[str, Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=r"^Tool 'search': .*" + says):
        build(**fields)


@FEATURE
@BUILDERS
@pytest.mark.parametrize(
    "key",
    [
        "name",
        "description",
        "inputSchema",
        "annotations",
        "_meta",
        "strict",
        "input_examples",
    ],
)
def test_extra_fields_cannot_replace_a_field_the_sdk_owns(build: Any, key: str) -> None:
    with pytest.raises(ValueError, match=rf"^Tool 'search': .*extra_fields\['{key}'\]"):
        build(extra_fields={key: True})


@FEATURE
@BUILDERS
def test_a_container_holding_itself_is_refused(build: Any) -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match=r"^Tool 'search': .*extra_fields\['x-acme'\]"):
        build(extra_fields={"x-acme": loop})


@FEATURE
def test_examples_cannot_be_checked_against_an_invalid_input_schema() -> None:
    with pytest.raises(ValueError, match=r"^Tool 'broken': .*input_examples"):
        tool(
            "broken",
            "Has an invalid schema",
            {"type": "object", "properties": {"x": {"type": "bogus"}}},
            input_examples=[{"x": 1}],
        )(_handler)


@FEATURE
def test_examples_are_checked_against_a_dict_or_typeddict_schema() -> None:
    with pytest.raises(ValueError, match=r"^Tool 'add': .*input_examples\[0\]"):
        tool("add", "Add", {"a": float, "b": float}, input_examples=[{"a": 1}])(
            _handler
        )


@FEATURE
def test_the_new_fields_default_to_none_and_are_keyword_only() -> None:
    plain = _via_decorator()
    assert (plain.strict, plain.input_examples, plain.extra_fields) == (
        None,
        None,
        None,
    )
    with pytest.raises(TypeError):
        # Deliberately passes strict positionally to check it is refused.
        tool("search", "Search case law", CASE_SCHEMA, None, True)  # type: ignore[call-overload]


@FEATURE
def test_good_fields_are_kept_as_given() -> None:
    search = _via_decorator(
        strict=False,
        input_examples=[GOOD_EXAMPLE],
        extra_fields={"title": "Case search", "x-acme": {"n": 1.5, "ok": None}},
    )
    assert search.strict is False
    assert search.input_examples == [GOOD_EXAMPLE]
    assert search.extra_fields == {
        "title": "Case search",
        "x-acme": {"n": 1.5, "ok": None},
    }


def test_positional_construction_still_works() -> None:
    built = SdkMcpTool("search", "Search case law", CASE_SCHEMA, _handler, None)
    assert built.annotations is None
    assert built.name == "search"
