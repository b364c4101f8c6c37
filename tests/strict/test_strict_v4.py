"""Strict mode v4 (issue 42): a typo is never served strict, and the caps
keep every tool that fits.

Each test fails on the tree before this change: a misspelled keyword was
served in words (so the constraint it meant reached neither the grammar nor
the validator), a shorthand dict that is JSON Schema with a typo became a
strict tool of string parameters, at the caps one over-wide tool made
every tool after it non-strict, and each union branch was closed over its
siblings' names, declared as ``{}`` optional parameters the caps count,
and an ``enum``/``const`` of objects or arrays that alone typed its schema
was served in words as an untyped schema that admits any value.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import error_text, serve

try:
    from claude_agent_sdk._internal.definition.schema_checks import check_input_schema
    from claude_agent_sdk._internal.relay.rewrite import (
        StrictServers,
        over_caps_message,
        rewrite_body,
    )
    from claude_agent_sdk._internal.strict.transform import (
        find_strict_violations,
        select_within_limits,
        strict_schemas,
    )
except ImportError:  # a tree without the patches: these tests must fail
    StrictServers = None  # type: ignore[assignment, misc]
    over_caps_message = None  # type: ignore[assignment]
    rewrite_body = None  # type: ignore[assignment]
    check_input_schema = None  # type: ignore[assignment]
    find_strict_violations = None  # type: ignore[assignment]
    select_within_limits = None  # type: ignore[assignment]
    strict_schemas = None  # type: ignore[assignment]

strict_patch = pytest.mark.requires_patch("strict-schema-checks")


def terms_tool(**changes: Any) -> dict[str, Any]:
    """The motivating report's tool shape: an enum beside an array of strings."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["any", "all"]},
            "terms": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["mode", "terms"],
    }
    terms = dict(schema["properties"]["terms"])
    if "terms" in changes:
        terms = changes.pop("terms")
    schema["properties"] = {**schema["properties"], "terms": terms}
    schema.update(changes)
    return schema


async def handler(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


# -- 1. no unknown keyword in a strict schema ---------------------------------


@strict_patch
def test_itmes_refuses_a_strict_tool_naming_pointer_and_nearest_keyword() -> None:
    schema = terms_tool(terms={"type": "array", "itmes": {"type": "string"}})
    with pytest.raises(ValueError) as raised:
        tool("search", "Search", schema, strict=True)(handler)
    message = str(raised.value)
    assert "Tool 'search'" in message
    assert "#/properties/terms/itmes" in message
    assert "did you mean 'items'?" in message


@strict_patch
def test_requried_refuses_a_strict_tool() -> None:
    schema = terms_tool()
    schema["requried"] = schema.pop("required")
    with pytest.raises(ValueError, match=r"#/requried: .*did you mean 'required'\?"):
        tool("search", "Search", schema, strict=True)(handler)


@strict_patch
def test_find_strict_violations_reports_the_typo() -> None:
    schema = terms_tool(terms={"type": "array", "itmes": {"type": "string"}})
    found = [str(v) for v in find_strict_violations(schema)]
    assert any(
        v.startswith("#/properties/terms/itmes:") and "'items'" in v for v in found
    )


@strict_patch
def test_a_keyword_of_another_vocabulary_is_refused_without_a_guess() -> None:
    schema = terms_tool(terms={"type": "array", "items": {"type": "string"}})
    schema["properties"]["mode"] = {"type": "string", "nullable": True}
    violations = strict_schemas(schema).violations
    assert [v.path for v in violations] == ["#/properties/mode/nullable"]
    assert "did you mean" not in violations[0].rule


@strict_patch
def test_x_extensions_and_json_schema_annotations_are_served_in_words() -> None:
    schema = terms_tool()
    schema["x-owner"] = "search-team"
    schema["properties"]["mode"]["examples"] = ["any"]
    forms = strict_schemas(schema)
    assert forms.violations == []
    assert "{x-owner: " in forms.served["description"]
    assert "examples" not in forms.served["properties"]["mode"]


@pytest.mark.requires_patch("json-schema-from-types")
def test_a_shorthand_typo_is_not_served_as_three_string_parameters() -> None:
    schema = {
        "type": "object",
        "proprties": {"terms": {"type": "array", "items": {"type": "string"}}},
        "required": ["terms"],
    }
    with pytest.raises(ValueError) as raised:
        tool("search", "Search", schema, strict=True)(handler)
    message = str(raised.value)
    assert "Tool 'search'" in message and "not Python types" in message
    assert "'proprties'" in message


@strict_patch
def test_the_relay_sends_a_tool_with_a_typo_non_strict_saying_why() -> None:
    schema = terms_tool(terms={"type": "array", "itmes": {"type": "string"}})
    body = _body(("mcp__ext__search", schema))
    rewrite = rewrite_body(body, {}, StrictServers(frozenset({"ext"}), ("ext",)))
    [(name, reason)] = rewrite.not_strict
    assert name == "mcp__ext__search"
    assert "#/properties/terms/itmes" in reason and "'items'" in reason
    assert b'"strict"' not in rewrite.body


@strict_patch
def test_a_plain_tool_with_a_typo_is_served_as_written_with_one_notice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = terms_tool(terms={"type": "array", "itmes": {"type": "string"}})
    schema["requried"] = schema.pop("required")
    with caplog.at_level(logging.INFO, logger="claude_agent_sdk"):
        check_input_schema("plain_typo_tool", schema, opted_in=False)
    records = [r for r in caplog.records if "plain_typo_tool" in r.getMessage()]
    assert len(records) == 1  # one notice per tool, naming its first typo
    assert records[0].levelno < logging.ERROR
    assert "did you mean" in records[0].getMessage()


# -- 2. the caps keep every tool that fits ------------------------------------


def _wide(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(n)},
    }


NARROW = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
}


def _body(*tools: tuple[str, dict[str, Any]]) -> bytes:
    return json.dumps(
        {
            "model": "claude-x",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [
                {"name": n, "description": n, "input_schema": s} for n, s in tools
            ],
        },
        separators=(",", ":"),
    ).encode()


@pytest.mark.requires_patch("tool-fields-relay")
def test_one_over_wide_tool_in_the_middle_does_not_block_the_rest() -> None:
    names = [f"mcp__ext__t{i}" for i in range(8)]
    schemas = [NARROW, NARROW, _wide(52), *[NARROW] * 5]
    rewrite = rewrite_body(
        _body(*zip(names, schemas, strict=True)),
        {},
        StrictServers(frozenset({"ext"}), ("ext",)),
    )
    assert rewrite.over_caps == [names[2]]
    assert rewrite.over_caps_why == [(names[2], "optional parameters")]
    sent = json.loads(rewrite.body)["tools"]
    assert [t.get("strict") is True for t in sent] == [
        True, True, False, True, True, True, True, True,
    ]  # fmt: skip
    message = over_caps_message(rewrite.over_caps, rewrite)
    assert f"{names[2]} (optional parameters)" in message


@pytest.mark.requires_patch("tool-fields-relay")
def test_all_three_caps_at_once_keep_the_order_and_skip() -> None:
    union = {
        "type": "object",
        "properties": {f"u{i}": {"type": ["string", "null"]} for i in range(10)},
        "required": [f"u{i}" for i in range(10)],
    }
    names = [f"mcp__ext__t{i}" for i in range(25)]
    schemas = [union, union, _wide(20), _wide(5), *[NARROW] * 21]
    rewrite = rewrite_body(
        _body(*zip(names, schemas, strict=True)),
        {},
        StrictServers(frozenset({"ext"}), ("ext",)),
    )
    why = dict(rewrite.over_caps_why)
    assert why[names[1]] == "union-typed parameters"  # 20 > 16
    assert why[names[3]] == "optional parameters"  # 25 > 24
    kept = [n for n in names if n not in why]
    assert len(kept) == 20 and kept[:2] == [names[0], names[2]]
    assert all(why[n] == "strict tools" for n in names[22:])


@strict_patch
def test_selection_is_deterministic_and_maximal() -> None:
    tools = [("a", (20, 0)), ("b", (52, 0)), ("c", (4, 0)), ("d", (1, 0))]
    kept, skipped = select_within_limits([], tools)
    assert kept == ["a", "c"] and skipped == [
        ("b", "optional parameters"),
        ("d", "optional parameters"),
    ]
    assert select_within_limits([], tools) == (kept, skipped)


@strict_patch
def test_a_server_over_a_cap_is_refused_naming_the_smallest_change() -> None:
    tools = [
        tool(f"t{i}", "d", schema, strict=True)(handler)
        for i, schema in enumerate([NARROW, _wide(52), NARROW, NARROW])
    ]
    with pytest.raises(ValueError) as raised:
        create_sdk_mcp_server("wide", tools=tools)
    message = str(raised.value)
    assert "52 optional parameters" in message
    assert "made non-strict (strict=False): t1 (optional parameters)" in message
    assert "t0 (" not in message.split("non-strict")[-1]


# -- 3. closing that adds no optional parameters ------------------------------


def _bare_declarations(schema: Any) -> list[str]:
    """Names declared as ``{}`` (any value) anywhere in ``schema``."""
    found: list[str] = []
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            properties = value.get("properties")
            if isinstance(properties, dict):
                found.extend(n for n, sub in properties.items() if sub == {})
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _union_tool(kinds: str, per_branch: int) -> dict[str, Any]:
    """A tool whose one required parameter is a union of object branches,
    each with a discriminating ``kind`` and its own optional parameters."""
    branches = [
        {
            "type": "object",
            "properties": {
                "kind": {"const": kind},
                **{f"{kind}{i}": {"type": "string"} for i in range(per_branch)},
            },
            "required": ["kind"],
        }
        for kind in kinds
    ]
    return {
        "type": "object",
        "properties": {"target": {"anyOf": branches}},
        "required": ["target"],
    }


@strict_patch
def test_closing_a_union_adds_no_optional_parameters() -> None:
    from claude_agent_sdk._internal.strict.transform import count_parameters

    schema = _union_tool("abcd", 6)
    forms = strict_schemas(schema)
    assert forms.violations == []
    assert count_parameters(schema) == (24, 1)  # the author's: at the cap
    assert count_parameters(forms.served) == count_parameters(schema)
    assert _bare_declarations(forms.served) == []
    for branch in forms.served["properties"]["target"]["anyOf"]:
        assert branch["additionalProperties"] is False
        kind = branch["properties"]["kind"]["const"]
        assert set(branch["properties"]) == {"kind", *(f"{kind}{i}" for i in range(6))}


@strict_patch
@pytest.mark.parametrize("union", ["anyOf", "oneOf"])
def test_a_tool_of_22_optional_parameters_in_union_branches_is_served_strict(
    union: str,
) -> None:
    """The issue's shape: 22 optional parameters in two branches, under the
    cap as written; closed over siblings' names it was served with 44 and
    refused. Served strict now, by the SDK and by the relay."""
    from claude_agent_sdk._internal.strict.transform import count_parameters

    schema = _union_tool("ab", 11)
    if union == "oneOf":
        target = schema["properties"]["target"]
        target["oneOf"] = target.pop("anyOf")
    served = strict_schemas(schema).served
    assert count_parameters(served) == (22, 1)
    assert _bare_declarations(served) == []
    defined = tool("fetch", "Fetch", schema, strict=True)(handler)
    create_sdk_mcp_server("wide", tools=[defined])  # not refused over a cap
    name = "mcp__ext__fetch"
    rewrite = rewrite_body(
        _body((name, schema)), {}, StrictServers(frozenset({"ext"}), ("ext",))
    )
    assert rewrite.over_caps == []
    (sent,) = json.loads(rewrite.body)["tools"]
    assert sent.get("strict") is True
    assert count_parameters(sent["input_schema"]) == (22, 1)


@strict_patch
def test_an_object_holding_a_union_declares_each_branch_name_once() -> None:
    """At the root (which must be closed), the branches' names are declared
    once, by the root; no branch declares a sibling's names (67 optional
    parameters before, for 22 written)."""
    from claude_agent_sdk._internal.strict.transform import count_parameters

    target = _union_tool("ab", 11)["properties"]["target"]
    schema = {"type": "object", "oneOf": target["anyOf"]}
    served = strict_schemas(schema).served
    assert sorted(_bare_declarations(served)) == sorted(
        ["kind", *(f"{k}{i}" for k in "ab" for i in range(11))]
    )
    for branch in served["anyOf"]:
        kind = branch["properties"]["kind"]["const"]
        assert set(branch["properties"]) == {"kind", *(f"{kind}{i}" for i in range(11))}
    assert count_parameters(served) == (45, 1)


# -- 4. only typed subschemas -------------------------------------------------


@strict_patch
@pytest.mark.parametrize(
    ("where", "subschema"),
    [
        ("property", {}),
        ("property", {"description": "any value"}),
        ("property", True),
        ("property", {"anyOf": [{"type": "string"}, {"description": "x"}]}),
        ("items", {}),
        ("items", {"description": "each term"}),
    ],
)
def test_an_untyped_subschema_is_refused_and_reported(
    where: str, subschema: Any
) -> None:
    if where == "items":
        schema = terms_tool(terms={"type": "array", "items": subschema})
        pointer = "#/properties/terms/items"
    else:
        schema = terms_tool()
        schema["properties"]["extra"] = subschema
        pointer = "#/properties/extra"
    violations = strict_schemas(schema).violations
    assert [v.path for v in violations] == [pointer]
    assert "accepts any JSON value" in violations[0].rule
    assert pointer in [v.path for v in find_strict_violations(schema)]
    with pytest.raises(ValueError, match="accepts any JSON value"):
        tool("search", "Search", schema, strict=True)(handler)


@strict_patch
def test_typed_unions_and_closing_declarations_pass() -> None:
    schema = terms_tool()
    schema["properties"]["note"] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    forms = strict_schemas(schema)
    assert forms.violations == []
    assert find_strict_violations(forms.served) == []


@strict_patch
def test_an_allof_reference_to_a_boolean_schema_is_written_out() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}]}},
        "$defs": {"A": False},
    }
    forms = strict_schemas(schema)
    assert forms.violations == []
    assert forms.served["properties"]["a"] == {"allOf": [False]}
    assert find_strict_violations(forms.served) == []


# An enum or const of objects or arrays is not in strict mode's subset and is
# moved into words; where nothing else types its schema, what would be served
# (``{"description": "{enum: [...]}"}``) admits any JSON value, so the tool
# is refused instead (before, it was served so).
ENUM_ONLY = [
    ("property", {"enum": [{"k": 1}, "b"]}, "enum"),
    ("property", {"const": [1, 2]}, "const"),
    ("property", {"enum": [["a"], ["b", "c"]], "description": "a pair"}, "enum"),
    ("items", {"const": {"k": [True]}}, "const"),
    ("branch", {"anyOf": [{"type": "string"}, {"enum": [[1], [2]]}]}, "enum"),
]


@strict_patch
@pytest.mark.parametrize(
    ("where", "subschema", "keyword"),
    ENUM_ONLY,
    ids=[f"{where}-{keyword}-{i}" for i, (where, _, keyword) in enumerate(ENUM_ONLY)],
)
def test_an_enum_of_objects_or_arrays_that_alone_types_a_schema_is_refused(
    where: str, subschema: Any, keyword: str
) -> None:
    if where == "items":
        schema = terms_tool(terms={"type": "array", "items": subschema})
        pointer = f"#/properties/terms/items/{keyword}"
    else:
        schema = terms_tool()
        schema["properties"]["pick"] = subschema
        pointer = "#/properties/pick/" + ("anyOf/1/" if where == "branch" else "")
        pointer += keyword
    violations = strict_schemas(schema).violations
    assert [v.path for v in violations] == [pointer]
    assert "nothing else types this schema" in violations[0].rule
    assert pointer in [v.path for v in find_strict_violations(schema)]
    with pytest.raises(ValueError) as raised:
        tool("search", "Search", schema, strict=True)(handler)
    message = str(raised.value)
    assert message.startswith("Tool 'search' has strict=True")
    assert f"{pointer}: {keyword} with an object or array value" in message
    assert "accept any JSON value" in message


@strict_patch
async def test_beside_a_type_such_an_enum_is_served_in_words_and_enforced() -> None:
    # The twin: typed by `type`, the enum moves into words, the served form
    # passes strict mode's own check, and a call outside the enum is an error.
    seen: list[Any] = []

    async def recording(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {"content": [{"type": "text", "text": "ok"}]}

    pair = {"type": "array", "items": {"type": "string"}, "enum": [["a"], ["b"]]}
    schema = terms_tool()
    schema["properties"]["pick"] = pair
    search = tool("search", "Search", schema, strict=True)(recording)
    inside = {"mode": "any", "terms": ["t"], "pick": ["a"]}
    [listed], [outside, fits] = await serve(
        create_sdk_mcp_server("s", tools=[search]),
        calls=[("search", {**inside, "pick": ["c"]}), ("search", inside)],
    )
    served = listed["inputSchema"]["properties"]["pick"]
    assert served["type"] == "array" and "enum" not in served
    assert '{enum: [["a"], ["b"]]}' in served["description"]
    assert find_strict_violations(listed["inputSchema"]) == []
    assert error_text(outside).startswith("Input validation error: ")
    assert fits.get("isError") is not True
    assert seen == [inside]


@strict_patch
def test_the_relay_sends_a_tool_typed_only_by_an_enum_of_objects_non_strict() -> None:
    schema = terms_tool()
    schema["properties"]["pick"] = {"enum": [{"k": 1}, "b"]}
    body = _body(("mcp__ext__search", schema))
    rewrite = rewrite_body(body, {}, StrictServers(frozenset({"ext"}), ("ext",)))
    [(name, reason)] = rewrite.not_strict
    assert name == "mcp__ext__search"
    assert "#/properties/pick/enum" in reason
    assert "nothing else types this schema" in reason
    assert b'"strict"' not in rewrite.body


@strict_patch
def test_typed_beside_such_an_enum_the_served_form_passes_its_own_check() -> None:
    # The hole this closes: the SDK served a form find_strict_violations
    # reports (an untyped subschema).
    for subschema in (
        {"type": ["object", "string"], "properties": {"k": {"type": "integer"}},
         "enum": [{"k": 1}, "b"]},
        {"type": "array", "items": {"type": "integer"}, "const": [1, 2]},
        {"anyOf": [{"type": "array", "items": {"type": "integer"}},
                   {"type": "null"}], "enum": [[1], None]},
    ):  # fmt: skip
        schema = terms_tool()
        schema["properties"]["pick"] = subschema
        forms = strict_schemas(schema)
        assert forms.violations == [], subschema
        assert find_strict_violations(forms.served) == [], subschema
