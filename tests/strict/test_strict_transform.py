"""Transform, then enforce; and no refusal nor unsatisfiable schema that the
tool's schema does not call for (issue 22, items 2 and 3).

For a strict tool written as a JSON Schema dict or Python types, what strict
mode cannot compile but a validator can check is listed in the description
(``{minimum: 1}``) and still enforced on every ``tools/call``, against the
author's schema: a call the grammar lets through (``page`` 0 where
``minimum`` is 1) comes back as an error result naming the field and the
rule, and the handler never sees it. Only what the root reaches is checked
and listed, a tool without arguments is listed closed, a required name the
object does not declare is declared, a root that is not an object is
refused, and ECMA-262 named groups are validated, not refused.

All through the public API and the MCP wire (``tests.lib.cli_peer``).
"""

import json
from typing import Any

import jsonschema
import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import error_text, serve

strict_patch = pytest.mark.requires_patch("strict-schema-checks")

SEARCH = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words to look for",
            "minLength": 2,
            "maxLength": 40,
        },
        "page": {"type": "integer", "minimum": 1, "maximum": 100},
        "ratio": {"type": "number", "exclusiveMaximum": 1, "multipleOf": 0.25},
        "ids": {
            "type": "array",
            "items": {"type": "string", "pattern": r"^(?!tmp)[a-z]+\b"},
            "minItems": 2,
            "maxItems": 3,
            "uniqueItems": True,
        },
    },
    "required": ["query"],
}


def _recording_tool(schema: Any, name: str = "search", **kwargs: Any) -> Any:
    seen: list[Any] = []

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {"content": [{"type": "text", "text": "ok"}]}

    return tool(name, "Search", schema, strict=True, **kwargs)(handler), seen


async def _noop(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


@strict_patch
async def test_constraints_are_listed_in_words_and_the_authors_dict_is_kept() -> None:
    before = json.dumps(SEARCH, sort_keys=True)
    search, _ = _recording_tool(SEARCH)
    [listed], _ = await serve(create_sdk_mcp_server("s", tools=[search]))
    assert listed["strict"] is True
    assert listed["inputSchema"] == {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words to look for\n\n{minLength: 2, maxLength: 40}",
            },
            "page": {"type": "integer", "description": "{minimum: 1, maximum: 100}"},
            "ratio": {
                "type": "number",
                "description": "{exclusiveMaximum: 1, multipleOf: 0.25}",
            },
            "ids": {
                "type": "array",
                "items": {
                    "type": "string",
                    "description": '{pattern: "^(?!tmp)[a-z]+\\\\b"}',
                },
                "description": "{minItems: 2, maxItems: 3, uniqueItems: true}",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert json.dumps(SEARCH, sort_keys=True) == before


# (arguments the grammar would let through, what the error must name)
OUTSIDE_THE_RULES = [
    ({"query": "a"}, "(at query: minLength 2)"),
    ({"query": "a" * 41}, "(at query: maxLength 40)"),
    ({"query": "ok", "page": 0}, "(at page: minimum 1)"),
    ({"query": "ok", "page": 101}, "(at page: maximum 100)"),
    ({"query": "ok", "ratio": 1}, "(at ratio: exclusiveMaximum 1)"),
    ({"query": "ok", "ratio": 0.3}, "(at ratio: multipleOf 0.25)"),
    ({"query": "ok", "ids": ["ab"]}, "(at ids: minItems 2)"),
    ({"query": "ok", "ids": ["a", "b", "c", "d"]}, "(at ids: maxItems 3)"),
    ({"query": "ok", "ids": ["ab", "ab"]}, "(at ids: uniqueItems true)"),
    ({"query": "ok", "ids": ["ab", "tmpx"]}, "(at ids[1]: pattern"),
]


@strict_patch
@pytest.mark.parametrize(
    ("arguments", "named"),
    OUTSIDE_THE_RULES,
    ids=[named for _, named in OUTSIDE_THE_RULES],
)
async def test_a_call_outside_the_authors_rules_is_an_error_the_handler_never_sees(
    arguments: dict[str, Any], named: str
) -> None:
    search, seen = _recording_tool(SEARCH)
    inside = {"query": "ok", "page": 1, "ratio": 0.75, "ids": ["ab", "cd"]}
    _, [outside, fits] = await serve(
        create_sdk_mcp_server("s", tools=[search]),
        calls=[("search", arguments), ("search", inside)],
    )
    text = error_text(outside)
    assert text.startswith("Input validation error: "), text
    assert named in text, text
    assert fits.get("isError") is not True, fits
    assert seen == [inside]


@strict_patch
def test_input_examples_are_held_to_the_authors_rules() -> None:
    from claude_agent_sdk import _build_input_schema
    from claude_agent_sdk._internal.schema_checks import served_input_schema

    search, _ = _recording_tool(SEARCH, input_examples=[{"query": "ok", "page": 2}])
    # Served without the bound (in words), yet an example breaking it is refused.
    page = served_input_schema(search, _build_input_schema(search))["properties"][
        "page"
    ]
    assert "minimum" not in page, page
    with pytest.raises(ValueError, match=r"input_examples\[0\]"):
        _recording_tool(SEARCH, input_examples=[{"query": "ok", "page": 0}])


@strict_patch
@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "integer", "not": {"minimum": 5}}, "not/minimum"),
        ({"if": {"maximum": 3}, "then": {"type": "integer"}}, "if/maximum"),
        (
            {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string"}]},
            "oneOf/0/maxLength",
        ),
    ],
)
def test_a_constraint_whose_words_would_refuse_more_is_still_refused(
    schema: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValueError) as refused:
        tool("t", "d", {"type": "object", "properties": {"v": schema}}, strict=True)(
            _noop
        )
    assert f"  - #/properties/v/{where}: " in str(refused.value)
    assert "not moved into the description here" in str(refused.value)


@strict_patch
@pytest.mark.parametrize(
    ("schema", "path", "words"),
    [
        (
            {"properties": {"m": {"type": "object", "additionalProperties": True}}},
            "#/properties/m/additionalProperties",
            "no open objects or free-form maps",
        ),
        (
            {"properties": {"m": {"type": "object"}}},
            "#/properties/m",
            "declares no properties",
        ),
        (
            {
                "properties": {"n": {"$ref": "#/$defs/N"}},
                "$defs": {
                    "N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}
                },
            },
            "#/$defs/N/properties/n/$ref",
            "recursive schema",
        ),
    ],
)
def test_what_neither_the_grammar_nor_words_can_carry_is_refused(
    schema: dict[str, Any], path: str, words: str
) -> None:
    with pytest.raises(ValueError) as refused:
        tool("t", "d", {"type": "object", **schema}, strict=True)(_noop)
    assert f"  - {path}: " in str(refused.value)
    assert words in str(refused.value)


# --- item 3 -----------------------------------------------------------------


@strict_patch
async def test_definitions_no_ref_reaches_are_neither_refused_nor_listed() -> None:
    # The shape of one published server's tools: shared $defs with open
    # objects, of which each tool uses a few.
    schema = {
        "type": "object",
        "properties": {"repo": {"$ref": "#/$defs/Repo"}},
        "required": ["repo"],
        "$defs": {
            "Repo": {
                "type": "object",
                "properties": {"owner": {"$ref": "#/$defs/Name"}},
            },
            "Name": {"type": "string", "minLength": 1},
            "Labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "Tree": {"type": "object", "properties": {"up": {"$ref": "#/$defs/Tree"}}},
        },
    }
    tool_def, seen = _recording_tool(schema)
    [listed], [bad, good] = await serve(
        create_sdk_mcp_server("s", tools=[tool_def]),
        calls=[
            ("search", {"repo": {"owner": ""}}),
            ("search", {"repo": {"owner": "a"}}),
        ],
    )
    assert sorted(listed["inputSchema"]["$defs"]) == ["Name", "Repo"]
    assert "(at repo.owner: minLength 1)" in error_text(bad)
    assert seen == [{"repo": {"owner": "a"}}]


@strict_patch
async def test_a_tool_without_arguments_is_listed_closed() -> None:
    no_args = tool("ping", "Ping", {"type": "object"}, strict=True)(_noop)
    [listed], [empty, extra] = await serve(
        create_sdk_mcp_server("s", tools=[no_args]),
        calls=[("ping", {}), ("ping", {"x": 1})],
    )
    assert listed["inputSchema"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert empty.get("isError") is not True
    assert "Additional properties are not allowed" in error_text(extra)


@strict_patch
@pytest.mark.parametrize(
    ("schema", "call"),
    [
        ({"properties": {"a": {"type": "string"}}, "required": ["b"]}, {"b": 1}),
        (
            {
                "properties": {"a": {"type": "string"}},
                "dependentRequired": {"a": ["b"]},
            },
            {"a": "x", "b": [1]},
        ),
        (
            {"properties": {"a": {"type": "string"}}, "dependencies": {"a": ["b"]}},
            {"a": "x", "b": None},
        ),
    ],
)
async def test_a_required_name_properties_does_not_declare_stays_satisfiable(
    schema: dict[str, Any], call: dict[str, Any]
) -> None:
    full = {"type": "object", **schema}
    assert jsonschema.Draft202012Validator(full).is_valid(call)
    tool_def, seen = _recording_tool(full)
    [listed], [result] = await serve(
        create_sdk_mcp_server("s", tools=[tool_def]), calls=[("search", call)]
    )
    served = listed["inputSchema"]
    assert served["additionalProperties"] is False
    assert served["properties"]["b"] == {}
    assert result.get("isError") is not True, result
    assert seen == [call]


@strict_patch
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": "string", "minLength": 1},
        {"type": ["object", "null"], "properties": {"a": {"type": "string"}}},
    ],
)
def test_a_strict_schema_whose_root_is_not_an_object_is_refused(
    schema: dict[str, Any],
) -> None:
    with (
        pytest.warns(UserWarning),
        pytest.raises(ValueError, match=r"  - #: the root of a strict tool's input"),
    ):
        tool("t", "d", schema, strict=True)(_noop)


@strict_patch
async def test_ecma_named_groups_are_validated_not_refused() -> None:
    pattern = r"^(?<year>\d{4})-(?<month>\d{2})$"
    schema = {
        "type": "object",
        "properties": {"month": {"type": "string", "pattern": pattern}},
        "required": ["month"],
    }
    tool_def, seen = _recording_tool(schema)
    [listed], [good, bad] = await serve(
        create_sdk_mcp_server("s", tools=[tool_def]),
        calls=[("search", {"month": "2026-12"}), ("search", {"month": "12/2026"})],
    )
    assert listed["inputSchema"]["properties"]["month"]["pattern"] == pattern
    assert good.get("isError") is not True, good
    assert "(at month: pattern" in error_text(bad)
    assert seen == [{"month": "2026-12"}]


async def test_plain_tools_are_listed_and_validated_exactly_as_before() -> None:
    plain = tool("search", "no strict", SEARCH)(_noop)
    [listed], [result] = await serve(
        create_sdk_mcp_server("s", tools=[plain]),
        calls=[("search", {"query": "ok", "page": 0})],
    )
    assert listed["inputSchema"] == SEARCH
    assert "strict" not in listed
    assert error_text(result) == (
        "Input validation error: 0 is less than the minimum of 1"
    )
