"""Strict mode v4 (issue 42): a typo is never served strict, and the caps
keep every tool that fits.

Each test fails on the tree before this change: a misspelled keyword was
served in words (so the constraint it meant reached neither the grammar nor
the validator), a shorthand dict that is JSON Schema with a typo became a
strict tool of string parameters, at the caps one over-wide tool made
every tool after it non-strict, and each union branch was closed over its
siblings' names, declared as ``{}`` optional parameters the caps count (an
object holding a union itself, the root of many MCP tools, declared every
branch's names again as ``{}``), and an ``enum``/``const`` of objects or
arrays that alone typed its schema was served in words as an untyped
schema that admits any value.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import jsonschema
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


def _valid(schema: Any, instance: Any) -> bool:
    valid: bool = jsonschema.Draft202012Validator(schema).is_valid(instance)
    return valid


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


def _issue_tool() -> dict[str, Any]:
    """A realistic MCP tool root: shared properties (2 required, 2 optional)
    beside a ``oneOf`` of three actions with different names; 22 optional
    parameters as written (2 shared, 7 + 6 + 7 in the branches)."""

    def action(name: str, required: list[str], optional: list[str]) -> Any:
        properties: dict[str, Any] = {"action": {"const": name}}
        properties.update({p: {"type": "string"} for p in required})
        properties.update({p: {"type": "string"} for p in optional})
        return {"properties": properties, "required": ["action", *required]}

    return {
        "type": "object",
        "properties": {
            "owner": {"type": "string"},
            "repo": {"type": "string"},
            "dry_run": {"type": "boolean"},
            "note": {"type": "string", "maxLength": 200},
        },
        "required": ["owner", "repo"],
        "oneOf": [
            action(
                "create",
                ["title"],
                ["body", "labels", "assignee", "milestone", "type", "project", "due"],
            ),
            action(
                "comment",
                ["issue_number"],
                ["text", "reply_to", "minimize", "reaction", "quote", "lock"],
            ),
            action(
                "close",
                ["issue_number"],
                ["reason", "duplicate_of", "state_note", "notify", "label_on_close",
                 "unassign", "unpin"],
            ),
        ],
    }  # fmt: skip


@strict_patch
async def test_a_root_holding_a_union_of_22_parameters_is_served_strict_under_the_cap() -> (
    None
):
    """The issue's shape at the root of a tool: each name declared once and
    typed: 24 optional parameters served for 22 written, the two more being
    names some branches require and others lack, which the one object the
    root must be cannot require (before: 57, every branch name declared
    again as ``{}`` on the root and each shared name in every branch). Every author-valid input is served;
    one the served schema admits but the author's refuses is an error at
    call time, and the handler is not called. The relay serves it strict."""
    from claude_agent_sdk._internal.strict.transform import count_parameters

    schema = _issue_tool()
    assert count_parameters(schema)[0] == 22
    forms = strict_schemas(schema)
    assert forms.violations == []
    served = forms.served
    assert _bare_declarations(served) == []
    assert find_strict_violations(served) == []
    assert served["required"] == ["owner", "repo", "action"]
    # issue_number (required by two of three branches) and title (by one)
    # are optional on the one closed object: 24, at the cap, not over it.
    assert count_parameters(served) == (24, 0)
    assert served["properties"]["action"] == {"enum": ["create", "comment", "close"]}
    assert served["properties"]["issue_number"] == {"type": "string"}
    create = {"owner": "o", "repo": "r", "action": "create", "title": "t", "due": "d"}
    close = {"owner": "o", "repo": "r", "action": "close", "issue_number": "7"}
    comment = {**close, "action": "comment", "text": "x"}
    missing = {"owner": "o", "repo": "r", "action": "close"}  # no issue_number
    for instance in (create, close, comment):
        assert _valid(schema, instance) and _valid(served, instance)
    assert _valid(served, missing) and not _valid(schema, missing)

    seen: list[Any] = []

    async def recording(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {"content": [{"type": "text", "text": "ok"}]}

    defined = tool("issue", "Manage issues", schema, strict=True)(recording)
    [listed], [ok, refused] = await serve(
        create_sdk_mcp_server("gh", tools=[defined]),
        calls=[("issue", create), ("issue", missing)],
    )
    assert listed["strict"] is True
    assert listed["inputSchema"] == served
    assert ok.get("isError") is not True
    assert error_text(refused).startswith("Input validation error: ")
    assert seen == [create]

    rewrite = rewrite_body(
        _body(("mcp__ext__issue", schema)),
        {},
        StrictServers(frozenset({"ext"}), ("ext",)),
    )
    assert rewrite.over_caps == []
    (sent,) = json.loads(rewrite.body)["tools"]
    assert sent.get("strict") is True
    assert count_parameters(sent["input_schema"]) == (24, 0)


@strict_patch
@pytest.mark.parametrize("union", ["anyOf", "oneOf"])
def test_an_object_holding_a_union_declares_each_branch_name_once_typed(
    union: str,
) -> None:
    """At the root (which must be one closed object), the union moves to the
    properties: each branch's names declared once, typed as the branches
    declare them; the discriminating consts become one enum, required where
    every branch requires it (67 optional parameters before this change's
    first step, 45 before this one, for 22 written)."""
    from claude_agent_sdk._internal.strict.transform import count_parameters

    target = _union_tool("ab", 11)["properties"]["target"]
    schema = {"type": "object", union: target["anyOf"]}
    served = strict_schemas(schema).served
    assert _bare_declarations(served) == []
    assert set(served["properties"]) == {
        "kind",
        *(f"{k}{i}" for k in "ab" for i in range(11)),
    }
    assert served["properties"]["kind"] == {"enum": ["a", "b"]}
    assert served["required"] == ["kind"]
    assert count_parameters(served) == (22, 0)
    assert find_strict_violations(served) == []
    # what the grammar no longer says is in words, and enforced at call time
    assert served["description"].startswith('{anyOf: [{"properties": {"kind": ')
    mixed = {"kind": "a", "b0": "x"}
    assert _valid(served, mixed)
    assert not _valid(strict_schemas(schema).enforced, {"kind": "c"})


@strict_patch
def test_a_nested_object_holding_a_union_is_served_as_the_union_of_whole_objects() -> (
    None
):
    """Below the root, an object whose own names are all required and that
    holds a union becomes the ``anyOf`` of its branches, each completed with
    the object's names: the grammar keeps the union, and the count is the
    author's. With an optional name of its own, it is merged as at the root.
    A union inside a union branch is served first, innermost out."""
    from claude_agent_sdk._internal.strict.transform import count_parameters

    inner = _union_tool("ab", 3)["properties"]["target"]["anyOf"]
    holder = {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "oneOf": inner,
    }
    schema = {"type": "object", "properties": {"t": holder}, "required": ["t"]}
    forms = strict_schemas(schema)
    assert forms.violations == []
    served = forms.served
    assert count_parameters(served) == count_parameters(schema) == (6, 1)
    assert _bare_declarations(served) == []
    branches = served["properties"]["t"]["anyOf"]
    assert [b["required"] for b in branches] == [["id", "kind"], ["id", "kind"]]
    assert all(b["additionalProperties"] is False for b in branches)
    assert not _valid(served, {"t": {"id": "1", "kind": "a", "b0": "x"}})
    assert _valid(served, {"t": {"id": "1", "kind": "a", "a0": "x"}})
    assert find_strict_violations(served) == []

    optional = {
        **holder,
        "properties": {**holder["properties"], "n": {"type": "integer"}},
    }
    served = strict_schemas({**schema, "properties": {"t": optional}}).served
    assert "anyOf" not in served["properties"]["t"]
    assert count_parameters(served) == (7, 0)
    assert _bare_declarations(served) == []

    nested = {
        "type": "object",
        "oneOf": [
            {"properties": {"kind": {"const": "x"}, "deep": {"type": "integer"}}},
            {
                "properties": {"mode": {"type": "string"}},
                "required": ["mode"],
                "anyOf": inner,
            },
        ],
    }
    forms = strict_schemas(nested)
    assert forms.violations == []
    assert _bare_declarations(forms.served) == []
    assert find_strict_violations(forms.served) == []
    assert forms.served["properties"]["kind"] == {"enum": ["x", "a", "b"]}
    for instance in ({"kind": "x", "deep": 1}, {"mode": "m", "kind": "a", "a1": "s"}):
        assert _valid(nested, instance) and _valid(forms.served, instance)


@strict_patch
def test_a_bare_declaration_is_reported_and_an_unmergeable_union_refused() -> None:
    """No untyped ``{}`` is served: ``find_strict_violations`` reports one in
    a closed object, and a union the SDK cannot merge (a branch that is not
    an object of named properties) is refused at the declaration it would
    need, naming why."""
    closed = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {}},
        "additionalProperties": False,
    }
    assert [v.path for v in find_strict_violations(closed)] == ["#/properties/b"]
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "anyOf": [
            {"properties": {"b": {"type": "string"}}, "not": {"required": ["a"]}},
            {"required": ["a"]},
        ],
    }
    violations = strict_schemas(schema).violations
    assert "#/properties/b" in [v.path for v in violations]
    with pytest.raises(ValueError, match="accepts any JSON value: closing the object"):
        tool("u", "U", schema, strict=True)(handler)


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
