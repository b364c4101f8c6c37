"""``strict_mcp_servers``: the relay makes external MCP servers' tools strict.

What ``rewrite_body`` does with ``StrictServers`` to a Messages API body
(the tools of listed servers get ``strict: true`` and the strict form of
their schema, made by ``strict.transform.strict_schemas``, spliced into the
original text), the warning for a tool without a strict form, the caps over
SDK and external tools together, the ``_meta["anthropic/strict"]`` opt-in of
SDK servers, name normalization, tool search, and the option's validation.
``tests/e2e/test_e2e_external_strict.py`` runs it with the real CLI and a
stdio server.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import mcp.types
import pytest

from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, query, tool
from tests.lib.cli_peer import hand_built_server, tools_by_name
from tests.lib.relay_upstream import Upstream
from tests.relay.cases import SCHEMA

try:
    from claude_agent_sdk._internal.relay.connections import http_client_module
    from claude_agent_sdk._internal.relay.lifecycle import (
        ToolFieldsRelay,
        ToolFieldsRelayError,
        check_strict_mcp_servers,
        prepare_for_cli,
        strict_servers_for,
    )
    from claude_agent_sdk._internal.relay.rewrite import (
        STRUCTURED_OUTPUTS_BETA,
        StrictServers,
        rewrite_body,
    )
    from claude_agent_sdk._internal.strict.transform import strict_schemas
except ImportError:  # a tree without the patches: these tests must fail
    http_client_module = None  # type: ignore[assignment]
    STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-12-15"
    StrictServers = None  # type: ignore[assignment, misc]
    rewrite_body = None  # type: ignore[assignment]
    strict_schemas = None  # type: ignore[assignment]
    ToolFieldsRelay = None  # type: ignore[assignment, misc]
    ToolFieldsRelayError = None  # type: ignore[assignment, misc]
    check_strict_mcp_servers = None  # type: ignore[assignment]
    prepare_for_cli = None  # type: ignore[assignment]
    strict_servers_for = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("tool-fields-relay")

http = http_client_module() if http_client_module is not None else None

SEARCH = "mcp__ext__search"
OPEN = "mcp__ext__annotate"
OTHER = "mcp__other__search"
# As FastMCP / MCPServer list a pydantic-derived schema: bounds strict mode
# cannot compile, an object left open by omission.
BOUNDED = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2, "maxLength": 40},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        "filter": {
            "type": "object",
            "properties": {"year": {"type": "integer", "exclusiveMinimum": 1900}},
        },
    },
    "required": ["query"],
}
# A free-form map: no strict form exists.
FREE_MAP = {
    "type": "object",
    "properties": {
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}
    },
    "required": ["labels"],
}
# Typed only by an enum of objects and arrays: in words it would admit any
# value, so no strict form exists either.
ENUM_ONLY = {
    "type": "object",
    "properties": {"pick": {"enum": [{"k": 1}, ["a"], "b"]}},
    "required": ["pick"],
}


def strict_form(schema: dict[str, Any]) -> Any:
    return strict_schemas(copy.deepcopy(schema), describe=True).served


def servers(*listed: str, known: tuple[str, ...] = ("ext", "other")) -> Any:
    return StrictServers(frozenset(listed), known)


def body_of(*entries: dict[str, Any], **extra: Any) -> bytes:
    """A body as the CLI writes it: compact JSON.stringify output."""
    return json.dumps(
        {
            "model": "claude-x",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": list(entries),
            **extra,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()


def entry(name: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"the {name} tool",
        "input_schema": schema,
        **extra,
    }


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------
# The transform: strict: true and the strict form, spliced in
# --------------------------------------------------------------------------


def test_a_listed_servers_tool_gets_strict_and_the_strict_form() -> None:
    body = body_of(entry(SEARCH, BOUNDED))
    rewrite = rewrite_body(body, {}, servers("ext"))
    tool_entry = json.loads(rewrite.body)["tools"][0]
    assert tool_entry["strict"] is True
    schema = tool_entry["input_schema"]
    assert schema == strict_form(BOUNDED)
    # Objects closed, at the root and below.
    assert schema["additionalProperties"] is False
    assert schema["properties"]["filter"]["additionalProperties"] is False
    # What strict mode cannot compile is served in words.
    query_schema = schema["properties"]["query"]
    assert "minLength" not in query_schema and "maxLength" not in query_schema
    assert query_schema["description"] == "{minLength: 2, maxLength: 40}"
    assert schema["properties"]["limit"]["description"] == "{minimum: 1, maximum: 50}"
    year = schema["properties"]["filter"]["properties"]["year"]
    assert year["description"] == "{exclusiveMinimum: 1900}"
    assert rewrite.modified_tools == [SEARCH] and rewrite.betas == [
        STRUCTURED_OUTPUTS_BETA
    ]
    assert rewrite.not_strict == [] and rewrite.exceeded == []


def test_only_the_schema_span_is_replaced_and_strict_inserted() -> None:
    # JavaScript spellings elsewhere in the body stay as written.
    text = body_of(entry(SEARCH, BOUNDED, defer_loading=True)).decode()
    text = text.replace(
        '"stream":true', '"stream":true,"temperature":1e-7,"big":12345678901234567890'
    )
    body = text.encode()
    rewrite = rewrite_body(body, {}, servers("ext"))
    old = compact(BOUNDED)
    new = compact(strict_form(BOUNDED))
    expected = text.replace(old, new).replace(
        '"defer_loading":true}', '"defer_loading":true,"strict":true}'
    )
    assert rewrite.body.decode() == expected


def test_a_schema_without_a_strict_form_is_sent_unchanged_and_named() -> None:
    body = body_of(entry(OPEN, FREE_MAP))
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body and rewrite.modified_tools == []
    [(tool_name, reason)] = rewrite.not_strict
    assert tool_name == OPEN
    assert "#/properties/labels/additionalProperties" in reason
    assert "additionalProperties must be false" in reason


def test_without_a_strict_form_the_other_tools_still_get_theirs() -> None:
    body = body_of(entry(OPEN, FREE_MAP), entry(SEARCH, BOUNDED))
    rewrite = rewrite_body(body, {}, servers("ext"))
    tools = {t["name"]: t for t in json.loads(rewrite.body)["tools"]}
    assert tools[OPEN] == entry(OPEN, FREE_MAP)
    assert tools[SEARCH]["strict"] is True
    assert [name for name, _ in rewrite.not_strict] == [OPEN]
    # The untouched entry is the same text.
    assert compact(entry(OPEN, FREE_MAP)).encode() in rewrite.body


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {
            "type": "object",
            "properties": {"node": {"$ref": "#"}},
        },
        ENUM_ONLY,
    ],
    ids=["non-object-root", "recursive", "typed-only-by-an-enum-of-objects"],
)
def test_other_schemas_without_a_strict_form(schema: dict[str, Any]) -> None:
    body = body_of(entry(SEARCH, schema))
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body
    assert [name for name, _ in rewrite.not_strict] == [SEARCH]


def test_a_tool_without_input_schema_is_named() -> None:
    body = body_of({"name": SEARCH, "description": "d"})
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body
    assert rewrite.not_strict == [(SEARCH, "the tool has no input_schema")]


def test_an_already_strict_compatible_tool_is_left_as_is() -> None:
    body = body_of(entry(SEARCH, strict_form(BOUNDED), strict=True))
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body and not rewrite.modified_tools


def test_an_already_closed_schema_only_gets_strict() -> None:
    body = body_of(entry(SEARCH, SCHEMA))  # closed, nothing to describe
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body == body[: -len(b"}]}")] + b',"strict":true}]}'
    assert rewrite.modified_tools == [SEARCH]


def test_strict_true_with_an_incompatible_schema_gets_the_strict_form() -> None:
    body = body_of(entry(SEARCH, BOUNDED, strict=True))
    rewrite = rewrite_body(body, {}, servers("ext"))
    tool_entry = json.loads(rewrite.body)["tools"][0]
    assert tool_entry["input_schema"] == strict_form(BOUNDED)
    assert tool_entry["strict"] is True
    assert rewrite.body.count(b'"strict"') == 1


def test_rewriting_twice_changes_nothing_more() -> None:
    once = rewrite_body(body_of(entry(SEARCH, BOUNDED)), {}, servers("ext")).body
    twice = rewrite_body(once, {}, servers("ext"))
    assert twice.body is once


# --------------------------------------------------------------------------
# Which tools: listed servers only, names as Claude Code normalizes them
# --------------------------------------------------------------------------


def test_a_server_not_listed_is_untouched_byte_for_byte() -> None:
    body = body_of(entry(OTHER, BOUNDED), entry("Bash", BOUNDED))
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body
    mixed = body_of(
        entry(OTHER, BOUNDED), entry(SEARCH, BOUNDED), entry("Bash", BOUNDED)
    )
    rewritten = rewrite_body(mixed, {}, servers("ext")).body
    for untouched in (entry(OTHER, BOUNDED), entry("Bash", BOUNDED)):
        assert compact(untouched).encode() in rewritten


def test_a_tool_belongs_to_the_longest_server_name_it_starts_with() -> None:
    # Listed "a", not listed "a__b": mcp__a__b__x is a__b's tool "x".
    listed = StrictServers(frozenset({"a"}), ("a", "a__b"))
    body = body_of(entry("mcp__a__b__x", BOUNDED), entry("mcp__a__y", BOUNDED))
    tools = json.loads(rewrite_body(body, {}, listed).body)["tools"]
    assert "strict" not in tools[0] and tools[1]["strict"] is True


def test_names_are_normalized_as_the_cli_does() -> None:
    config = {"ext.v2 ö📚": {"type": "stdio", "command": "x"}}
    listed = strict_servers_for(["ext.v2 ö📚"], config)
    # "." " " "ö" one "_" each, the emoji two: server "ext_v2____".
    name = "mcp__ext_v2______search"
    tools = json.loads(rewrite_body(body_of(entry(name, BOUNDED)), {}, listed).body)[
        "tools"
    ]
    assert tools[0]["strict"] is True


def test_every_transport_counts_and_an_sdk_server_can_be_listed() -> None:
    @tool("lookup", "Look up", {"citation": str})
    async def lookup(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    config = {
        "stdio": {"type": "stdio", "command": "x"},
        "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
        "events": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "legal": create_sdk_mcp_server("legal", tools=[lookup]),
    }
    listed = strict_servers_for(list(config), config)
    names = ["mcp__stdio__t", "mcp__web__t", "mcp__events__t", "mcp__legal__lookup"]
    body = body_of(*(entry(n, BOUNDED) for n in names))
    rewrite = rewrite_body(body, {}, listed)
    assert rewrite.modified_tools == names


def test_sdk_fields_and_external_strict_together() -> None:
    # An SDK tool of a listed server with input_examples: both arrive.
    examples = [{"query": "payout"}]
    body = body_of(entry(SEARCH, BOUNDED))
    rewrite = rewrite_body(body, {SEARCH: {"input_examples": examples}}, servers("ext"))
    tool_entry = json.loads(rewrite.body)["tools"][0]
    assert tool_entry["strict"] is True and tool_entry["input_examples"] == examples
    assert tool_entry["input_schema"] == strict_form(BOUNDED)
    assert rewrite.modified_tools == [SEARCH]
    assert rewrite.betas == [STRUCTURED_OUTPUTS_BETA, "advanced-tool-use-2025-11-20"]


# --------------------------------------------------------------------------
# Tool search
# --------------------------------------------------------------------------


def test_deferred_entries_keep_defer_loading() -> None:
    body = body_of(
        {"name": "ToolSearch", "description": "s", "input_schema": SCHEMA},
        entry(SEARCH, BOUNDED, defer_loading=True),
    )
    tools = json.loads(rewrite_body(body, {}, servers("ext")).body)["tools"]
    assert tools[1]["defer_loading"] is True and tools[1]["strict"] is True
    assert tools[1]["input_schema"] == strict_form(BOUNDED)


def test_a_tool_only_named_in_messages_and_tool_references_is_left_alone() -> None:
    # Tool search's first turns: the tool is named in the system text and
    # in tool_reference blocks, and not (yet) defined in tools.
    body = body_of(
        {"name": "ToolSearch", "description": "s", "input_schema": SCHEMA},
        system=[{"type": "text", "text": f"Deferred tools: {SEARCH}"}],
        messages=[
            {"role": "user", "content": "hi"},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "tool_reference", "tool_name": SEARCH}],
                    }
                ],
            },
        ],
    )
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body and not rewrite.unchanged_because


# --------------------------------------------------------------------------
# Bodies that cannot be changed safely
# --------------------------------------------------------------------------


def test_an_unsafe_body_is_forwarded_unchanged_naming_the_server() -> None:
    text = body_of(entry(SEARCH, BOUNDED)).decode()
    body = text.replace('"description":', '"name":"x","description":', 1).encode()
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert rewrite.body is body
    assert rewrite.unchanged_because is not None
    assert rewrite.lost_tools == ["mcp__ext__*"]


def test_not_json_is_forwarded_unchanged() -> None:
    body = b'{"tools":[{"name":"mcp__ext__search"'
    rewrite = rewrite_body(body, {}, servers("ext"))
    assert (
        rewrite.body is body
        and rewrite.unchanged_because == "the body is not valid JSON"
    )


# --------------------------------------------------------------------------
# Caps: SDK and external tools together
# --------------------------------------------------------------------------


def test_caps_count_sdk_and_external_tools_together() -> None:
    sdk = [f"mcp__docs__t{i}" for i in range(15)]
    external = [f"mcp__ext__t{i}" for i in range(6)]
    body = body_of(*(entry(n, SCHEMA) for n in sdk + external))
    rewrite = rewrite_body(body, dict.fromkeys(sdk, {"strict": True}), servers("ext"))
    [limit] = rewrite.caps
    assert limit.limit == "strict tools" and limit.count == 21
    assert {name for name, _ in limit.tools} == set(sdk + external)
    # The SDK's tools stay strict first; the last external one goes without.
    assert rewrite.over_caps == [external[-1]] and rewrite.exceeded == []
    # Neither alone goes over.
    assert not rewrite_body(body, dict.fromkeys(sdk, {"strict": True})).caps
    assert not rewrite_body(body, {}, servers("ext")).caps


def test_optional_parameters_of_transformed_schemas_count() -> None:
    # Each strict form of BOUNDED has 3 optional parameters (limit, filter,
    # filter.year): 9 tools are 27, over 24.
    names = [f"mcp__ext__t{i}" for i in range(9)]
    rewrite = rewrite_body(
        body_of(*(entry(n, BOUNDED) for n in names)), {}, servers("ext")
    )
    [limit] = rewrite.caps
    assert limit.limit == "optional parameters" and limit.count == 27
    assert dict(limit.tools) == dict.fromkeys(names, 3)
    assert rewrite.over_caps == [names[-1]]  # 8 x 3 = 24 fit


@pytest.fixture
async def client() -> AsyncIterator[Any]:
    async with http.AsyncClient(trust_env=False, timeout=30) as c:
        yield c


async def test_over_a_cap_the_relay_sends_the_first_strict_naming_the_rest_once(
    upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 31.2: 30 strict external tools of two servers, over the cap of
    # 20 strict tools: answered, with the first 20 in strict_mcp_servers
    # order strict; the other 10 without strict, named once per relay.
    caplog.set_level(logging.WARNING)
    first = [f"mcp__one__t{i}" for i in range(15)]
    second = [f"mcp__ext__t{i}" for i in range(15)]
    listed = StrictServers(frozenset({"ext", "one"}), order=("one", "ext"))
    # Listed in the request in another order than strict_mcp_servers.
    body = body_of(*(entry(n, SCHEMA) for n in second + first))
    async with ToolFieldsRelay({}, upstream.url, strict_servers=listed) as relay:
        for _ in range(3):
            response = await client.post(relay.url + "/v1/messages", content=body)
            assert response.status_code == 200
    assert len(upstream.seen) == 3
    for seen in upstream.seen:  # the same choice on every turn
        tools = {t["name"]: t for t in seen.json()["tools"]}
        strict = [name for name, t in tools.items() if t.get("strict") is True]
        assert len(strict) == 20
        assert set(strict) == set(first + second[:5])
        for name in second[5:]:
            assert tools[name] == entry(name, SCHEMA)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert all(name in warnings[0] for name in second[5:])
    assert "30 strict tools" in warnings[0] and "limit of 20" in warnings[0]


async def test_a_request_over_a_cap_by_its_own_strict_tools_still_goes_out(
    upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # 21 tools the request itself marks strict (over the cap of 20 without
    # the relay) and one SDK tool with examples and strict: the relay adds
    # no strict, adds the examples, and sends the request (the API answers
    # it as it would without the relay); one WARNING per relay says so.
    caplog.set_level(logging.WARNING)
    own = [entry(f"mcp__one__t{i}", SCHEMA, strict=True) for i in range(21)]
    sdk = "mcp__sdk__search"
    fields = {sdk: {"strict": True, "input_examples": [{"q": "x"}]}}
    body = body_of(*own, entry(sdk, SCHEMA))
    async with ToolFieldsRelay(fields, upstream.url) as relay:
        for _ in range(2):
            response = await client.post(relay.url + "/v1/messages", content=body)
            assert response.status_code == 200
    assert len(upstream.seen) == 2
    for seen in upstream.seen:
        tools = {t["name"]: t for t in seen.json()["tools"]}
        assert [tools[e["name"]] for e in own] == own
        assert tools[sdk] == entry(sdk, SCHEMA, input_examples=[{"q": "x"}])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    limits = [w for w in warnings if "by themselves" in w]
    assert len(limits) == 1, warnings
    assert "21 strict tools" in limits[0] and "it is sent" in limits[0]
    assert any(sdk in w and "without strict" in w for w in warnings), warnings


@pytest.mark.parametrize(
    ("without", "why"),
    [
        (FREE_MAP, "#/properties/labels/additionalProperties"),
        (ENUM_ONLY, "#/properties/pick/enum: enum with an object or array value"),
    ],
    ids=["free-form-map", "typed-only-by-an-enum-of-objects"],
)
async def test_the_relay_sends_the_strict_form_with_the_beta_and_warns_once(
    upstream: Upstream,
    client: Any,
    caplog: pytest.LogCaptureFixture,
    without: dict[str, Any],
    why: str,
) -> None:
    caplog.set_level(logging.WARNING)
    body = body_of(entry(SEARCH, BOUNDED), entry(OPEN, without))
    async with ToolFieldsRelay(
        {}, upstream.url, strict_servers=servers("ext")
    ) as relay:
        for _ in range(3):  # three turns of one query
            response = await client.post(
                relay.url + "/v1/messages?beta=true",
                content=body,
                headers={"anthropic-beta": "claude-code-20250219"},
            )
            assert response.status_code == 200
    assert len(upstream.seen) == 3
    for seen in upstream.seen:
        tools = {t["name"]: t for t in seen.json()["tools"]}
        assert tools[SEARCH]["strict"] is True
        assert tools[SEARCH]["input_schema"] == strict_form(BOUNDED)
        assert tools[OPEN] == entry(OPEN, without)
        assert seen.headers["anthropic-beta"] == (
            f"claude-code-20250219,{STRUCTURED_OUTPUTS_BETA}"
        )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert OPEN in warnings[0] and why in warnings[0]


# --------------------------------------------------------------------------
# _meta["anthropic/strict"] on an SDK server's tools
# --------------------------------------------------------------------------


async def test_an_sdk_servers_meta_strict_tool_counts_as_opted_in() -> None:
    marked = mcp.types.Tool.model_validate(
        {
            "name": "find",
            "description": "Find",
            "inputSchema": BOUNDED,
            "_meta": {"anthropic/strict": True},
        }
    )
    plain = mcp.types.Tool.model_validate(
        {"name": "plain", "description": "Plain", "inputSchema": BOUNDED}
    )
    hand = hand_built_server("hand", [marked, plain])
    config = {"ext": {"type": "stdio", "command": "x"}, "hand": hand}
    listed = strict_servers_for(["ext"], config)
    body = body_of(
        entry("mcp__hand__find", BOUNDED), entry("mcp__hand__plain", BOUNDED)
    )
    # Before the server has listed its tools, the relay knows nothing of them.
    assert rewrite_body(body, {}, listed).body is body
    # The CLI lists them (through the SDK's bridge, which the relay watches).
    await tools_by_name(hand)
    tools = json.loads(rewrite_body(body, {}, listed).body)["tools"]
    assert tools[0]["strict"] is True and tools[0]["input_schema"] == strict_form(
        BOUNDED
    )
    assert "strict" not in tools[1]


def test_without_strict_mcp_servers_nothing_is_watched_or_changed() -> None:
    assert strict_servers_for(None, {}) is None
    assert strict_servers_for([], {}) is None
    relay = prepare_for_cli({"ext": {"type": "stdio", "command": "x"}}, {})
    assert relay.strict_servers is None
    body = body_of(entry(SEARCH, BOUNDED))
    assert rewrite_body(body, {}).body is body


# --------------------------------------------------------------------------
# The option
# --------------------------------------------------------------------------


EXT_CONFIG: dict[str, Any] = {"ext": {"type": "stdio", "command": "x"}}


def test_a_name_not_in_mcp_servers_is_refused_by_name() -> None:
    with pytest.raises(ToolFieldsRelayError, match="'missing'") as raised:
        check_strict_mcp_servers(["ext", "missing"], EXT_CONFIG, True)
    assert "not configured in mcp_servers" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_strict_mcp_servers_without_the_relay_is_refused() -> None:
    with pytest.raises(ToolFieldsRelayError, match="tool_fields_relay=True"):
        check_strict_mcp_servers(["ext"], EXT_CONFIG, False)
    # Empty or None asks for nothing.
    check_strict_mcp_servers([], EXT_CONFIG, False)
    check_strict_mcp_servers(None, EXT_CONFIG, False)


def test_a_bare_string_is_refused() -> None:
    with pytest.raises(ToolFieldsRelayError, match="list of names"):
        check_strict_mcp_servers("ext", EXT_CONFIG, True)


def test_servers_claude_code_cannot_tell_apart_are_refused() -> None:
    config = {
        "a.b": {"type": "stdio", "command": "x"},
        "a_b": {"type": "stdio", "command": "y"},
    }
    with pytest.raises(ToolFieldsRelayError, match="mcp__a_b__"):
        check_strict_mcp_servers(["a.b"], config, True)
    check_strict_mcp_servers(["a.b", "a_b"], config, True)


def test_names_are_read_from_a_json_config(tmp_path: Any) -> None:
    config = {"mcpServers": {"ext": {"type": "stdio", "command": "x"}}}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    check_strict_mcp_servers(["ext"], path, True)
    check_strict_mcp_servers(["ext"], json.dumps(config), True)
    with pytest.raises(ToolFieldsRelayError, match="'nope'"):
        check_strict_mcp_servers(["nope"], str(path), True)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"strict_mcp_servers": ["ext"]}, "tool_fields_relay=True"),
        ({"strict_mcp_servers": ["nope"], "tool_fields_relay": True}, "'nope'"),
    ],
)
async def test_query_refuses_before_anything_starts(
    options: dict[str, Any], match: str
) -> None:
    opts = ClaudeAgentOptions(
        mcp_servers=dict(EXT_CONFIG), cli_path="/nonexistent/claude", **options
    )
    with pytest.raises(ToolFieldsRelayError, match=match):
        async for _ in query(prompt="hi", options=opts):
            pass
