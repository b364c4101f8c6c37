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
    from claude_agent_sdk._internal.definition.schema_checks import served_input_schema

    search, _ = _recording_tool(SEARCH, input_examples=[{"query": "ok", "page": 2}])
    # Served without the bound (in words), yet an example breaking it is refused.
    page = served_input_schema(search, _build_input_schema(search))["properties"][
        "page"
    ]
    assert "minimum" not in page, page
    with pytest.raises(ValueError, match=r"input_examples\[0\]"):
        _recording_tool(SEARCH, input_examples=[{"query": "ok", "page": 0}])


def _descriptions(schema: Any) -> str:
    if isinstance(schema, dict):
        own = str(schema.get("description", ""))
        return own + "".join(_descriptions(v) for v in schema.values())
    if isinstance(schema, list):
        return "".join(map(_descriptions, schema))
    return ""


# (schema of "v", an argument it refuses that the served schema lets through,
#  what the error names, the words served)
NARROWING = [
    (
        {"type": "integer", "not": {"minimum": 5}},
        7,
        "(at v: not",
        '{not: {"minimum": 5}}',
    ),
    (
        {"type": "number", "if": {"maximum": 3}, "then": {"type": "integer"}},
        2.5,
        "(at v: type",
        '{if: {"maximum": 3}, then: {"type": "integer"}}',
    ),
    (
        {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string"}]},
        "ab",
        "(at v: oneOf",
        "{maxLength: 3}",
    ),
]


@strict_patch
@pytest.mark.parametrize(
    ("schema", "argument", "named", "words"),
    NARROWING,
    ids=["not", "if-then", "oneOf"],
)
async def test_a_keyword_that_only_narrows_is_served_in_words_and_enforced(
    schema: dict[str, Any], argument: Any, named: str, words: str
) -> None:
    full = {"type": "object", "properties": {"v": schema}, "required": ["v"]}
    tool_def, seen = _recording_tool(full)
    [listed], [result] = await serve(
        create_sdk_mcp_server("s", tools=[tool_def]),
        calls=[("search", {"v": argument})],
    )
    served = listed["inputSchema"]["properties"]["v"]
    assert not {"not", "if", "then", "oneOf"} & served.keys(), served
    assert words in _descriptions(served), served
    assert jsonschema.Draft202012Validator(listed["inputSchema"]).is_valid(
        {"v": argument}
    )
    assert named in error_text(result), error_text(result)
    assert seen == []


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
def test_a_required_name_properties_does_not_declare_is_refused(
    schema: dict[str, Any], call: dict[str, Any]
) -> None:
    """Closed, the object must declare ``b``; nothing types it, so it would
    be served as ``{}`` (any JSON value, ``call`` shows one), which strict
    mode cannot compile: refused at ``b`` (issue 42)."""
    full = {"type": "object", **schema}
    assert jsonschema.Draft202012Validator(full).is_valid(call)
    with pytest.raises(ValueError, match=r"#/properties/b: property 'b' accepts any"):
        _recording_tool(full)


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
    # Strict mode's page does not list named groups: the pattern is served in
    # words, and validated with the group written for Python's re.
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
    month = listed["inputSchema"]["properties"]["month"]
    assert "pattern" not in month
    assert month["description"] == "{pattern: " + json.dumps(pattern) + "}"
    assert good.get("isError") is not True, good
    assert "(at month: pattern" in error_text(bad)
    assert seen == [{"month": "2026-12"}]


@strict_patch
async def test_a_pattern_inside_the_subset_is_served_as_written() -> None:
    pattern = r"^(?:[a-z]+|\d{1,3})-[A-Z_]*$"
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": pattern}},
    }
    tool_def, _ = _recording_tool(schema)
    [listed], _ = await serve(create_sdk_mcp_server("s", tools=[tool_def]))
    assert listed["inputSchema"]["properties"]["s"] == {
        "type": "string",
        "pattern": pattern,
    }
    assert listed["inputSchema"]["additionalProperties"] is False


@strict_patch
async def test_only_the_documented_formats_are_served() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "n": {"type": "string", "format": "int32"},
        },
    }
    tool_def, _ = _recording_tool(schema)
    [listed], _ = await serve(create_sdk_mcp_server("s", tools=[tool_def]))
    properties = listed["inputSchema"]["properties"]
    assert properties["when"] == {"type": "string", "format": "date-time"}
    assert properties["n"] == {"type": "string", "description": '{format: "int32"}'}


@strict_patch
async def test_an_allof_ref_is_written_out_and_schema_is_not_served() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}], "description": "d"}},
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }
    tool_def, _ = _recording_tool(schema)
    [listed], _ = await serve(create_sdk_mcp_server("s", tools=[tool_def]))
    served = listed["inputSchema"]
    assert "$schema" not in served
    assert served["properties"]["a"] == {
        "allOf": [
            {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "additionalProperties": False,
            }
        ],
        "description": "d",
    }


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
