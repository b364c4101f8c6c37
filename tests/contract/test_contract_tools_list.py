"""tools/list as the CLI receives it: the exact JSON of every listed tool.

The feature tests (marked) pin what ``strict``, ``input_examples`` and
``extra_fields`` put on the wire. The unmarked ones pin what must not change:
tools that set none of them, and hand-built servers, list exactly as in
upstream 0.2.189 on the installed mcp major.
"""

from __future__ import annotations

from typing import Any

import mcp.types
import pytest

from claude_agent_sdk import SdkMcpTool, ToolAnnotations, create_sdk_mcp_server, tool
from tests.lib.cases import CASE_SCHEMA
from tests.lib.cli_peer import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    MCP_MAJOR,
    SUPPORTED_PROTOCOL_VERSIONS,
    assert_json,
    connected,
    hand_built_server,
    tools_by_name,
)

FEATURE = pytest.mark.requires_patch("serve-extra-tool-fields")
EXTRA = pytest.mark.requires_patch("extra-fields")


# How upstream 0.2.189 lists a tool defined with CASE_SCHEMA and no extras.
SEARCH_ENTRY = {
    "name": "search",
    "description": "Search case law",
    "inputSchema": {
        "type": "object",
        "properties": {
            "jurisdiction": {"type": "string", "enum": ["se", "no", "dk"]},
            "terms": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["jurisdiction", "terms"],
        "additionalProperties": False,
    },
}


async def _search_handler(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": " ".join(args["terms"])}]}


def _search(**fields: Any) -> SdkMcpTool[Any]:
    return tool("search", "Search case law", CASE_SCHEMA, **fields)(_search_handler)


async def _listed(*tools: SdkMcpTool[Any]) -> dict[str, dict[str, Any]]:
    return await tools_by_name(create_sdk_mcp_server("srv", tools=list(tools)))


# --- Unchanged from upstream ------------------------------------------------------


async def test_plain_tools_list_exactly_as_upstream() -> None:
    @tool("greet", "Greet a user", {"name": str, "times": int})
    async def greet(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    big = tool(
        "get_schema",
        "Return the database schema",
        {},
        annotations=ToolAnnotations(readOnlyHint=True, maxResultSizeChars=500_000),
    )(_search_handler)

    listed = await _listed(greet, big, _search())

    assert_json(
        listed["greet"],
        {
            "name": "greet",
            "description": "Greet a user",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "times": {"type": "integer"},
                },
                "required": ["name", "times"],
            },
        },
    )
    assert_json(
        listed["get_schema"],
        {
            "name": "get_schema",
            "description": "Return the database schema",
            "inputSchema": {"type": "object", "properties": {}, "required": []},
            "annotations": {"readOnlyHint": True},
            "_meta": {"anthropic/maxResultSizeChars": 500000},
        },
    )
    assert_json(listed["search"], SEARCH_ENTRY)


async def test_hand_built_servers_tools_list_as_mcp_serializes_them() -> None:
    """mcp 1.x serializes a Tool's extra fields, and they have always reached
    the CLI; mcp 2.x strips every field its Tool model does not define, even
    from an extra="allow" subclass (documented: on 2.x such fields only reach
    the CLI through tool(strict=..., input_examples=..., extra_fields=...))."""

    class ToolWithExtras(mcp.types.Tool, extra="allow"):
        pass

    config = hand_built_server(
        "hand-built",
        [
            ToolWithExtras.model_validate(
                {
                    "name": "raw",
                    "title": "Raw",
                    "inputSchema": {"type": "object"},
                    "strict": True,
                    "input_examples": [{"n": 1}],
                    "x-acme": {"tier": 2},
                }
            )
        ],
    )
    async with connected(hand=config) as cli:
        listed = await cli.listed("hand")

    if MCP_MAJOR >= 2:
        assert_json(
            listed["raw"],
            {"name": "raw", "title": "Raw", "inputSchema": {"type": "object"}},
        )
    else:
        assert_json(
            listed["raw"],
            {
                "name": "raw",
                "title": "Raw",
                "inputSchema": {"type": "object"},
                "strict": True,
                "input_examples": [{"n": 1}],
                "x-acme": {"tier": 2},
            },
        )


# --- Each field alone ---------------------------------------------------------------


@FEATURE
@pytest.mark.parametrize("strict", [True, False])
async def test_strict_alone(strict: bool) -> None:
    listed = await _listed(_search(strict=strict))
    assert_json(
        listed["search"],
        {**SEARCH_ENTRY, "strict": strict, "_meta": {"anthropic/strict": strict}},
    )


@pytest.mark.requires_patch("strict-meta-hint")
@pytest.mark.parametrize("strict", [True, False])
async def test_strict_is_also_served_as_the_proposed_meta_key(strict: bool) -> None:
    # The key the open Claude Code proposal reads; the canary e2e test watches it.
    listed = await _listed(_search(strict=strict))
    assert listed["search"]["_meta"] == {"anthropic/strict": strict}


@FEATURE
async def test_input_examples_alone() -> None:
    listed = await _listed(
        _search(
            input_examples=[
                {"jurisdiction": "se", "terms": ["payout"]},
                {"jurisdiction": "no", "terms": []},
            ]
        )
    )
    assert_json(
        listed["search"],
        {
            **SEARCH_ENTRY,
            "input_examples": [
                {"jurisdiction": "se", "terms": ["payout"]},
                {"jurisdiction": "no", "terms": []},
            ],
        },
    )


@EXTRA
async def test_extra_fields_alone() -> None:
    listed = await _listed(
        _search(
            extra_fields={
                "title": "Case search",
                "x-acme-tier": 2,
                "x-acme": {"ratio": 0.5, "tags": ["law", None, True], "empty": {}},
            }
        )
    )
    assert_json(
        listed["search"],
        {
            **SEARCH_ENTRY,
            "title": "Case search",
            "x-acme-tier": 2,
            "x-acme": {"ratio": 0.5, "tags": ["law", None, True], "empty": {}},
        },
    )


@EXTRA
async def test_standard_mcp_tool_fields_through_extra_fields() -> None:
    listed = await _listed(
        _search(
            extra_fields={
                "title": "Case search",
                "icons": [
                    {"src": "https://example.com/law.png", "mimeType": "image/png"}
                ],
                "execution": {"taskSupport": "forbidden"},
            }
        )
    )
    assert_json(
        listed["search"],
        {
            **SEARCH_ENTRY,
            "title": "Case search",
            "icons": [{"src": "https://example.com/law.png", "mimeType": "image/png"}],
            "execution": {"taskSupport": "forbidden"},
        },
    )


@pytest.mark.requires_patch("tool-results")
async def test_output_schema_is_listed_beside_the_extra_fields() -> None:
    output_schema = {
        "type": "object",
        "properties": {"hits": {"type": "integer"}},
        "required": ["hits"],
    }
    listed = await _listed(
        _search(extra_fields={"title": "Case search"}, output_schema=output_schema)
    )
    assert_json(
        listed["search"],
        {**SEARCH_ENTRY, "title": "Case search", "outputSchema": output_schema},
    )


# --- Together -----------------------------------------------------------------------


@FEATURE
@pytest.mark.parametrize("protocol_version", SUPPORTED_PROTOCOL_VERSIONS)
async def test_all_fields_together_leave_annotations_meta_and_schema_alone(
    protocol_version: str,
) -> None:
    """The same listing under every protocol version the installed mcp
    supports: a version the handshake cannot reach (mcp 2.x's stateless
    2026-07-28) is answered with the newest one it can, as for any client."""
    search = _search(
        annotations=ToolAnnotations(readOnlyHint=True, maxResultSizeChars=9000),
        strict=True,
        input_examples=[{"jurisdiction": "se", "terms": ["payout"]}],
        extra_fields={"title": "Case search", "x-acme-tier": 2},
    )
    server = create_sdk_mcp_server("srv", tools=[search])
    async with connected(protocol_version, srv=server) as cli:
        listed = await cli.listed("srv")

    if protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        assert cli.negotiated == {"srv": protocol_version}
    else:
        assert cli.negotiated == {"srv": HANDSHAKE_PROTOCOL_VERSIONS[-1]}
    assert_json(
        listed["search"],
        {
            "name": "search",
            "description": "Search case law",
            "inputSchema": SEARCH_ENTRY["inputSchema"],
            "annotations": {"readOnlyHint": True},
            "_meta": {
                "anthropic/maxResultSizeChars": 9000,
                "anthropic/strict": True,
            },
            "strict": True,
            "input_examples": [{"jurisdiction": "se", "terms": ["payout"]}],
            "title": "Case search",
            "x-acme-tier": 2,
        },
    )


@FEATURE
async def test_plain_tool_next_to_tools_with_fields_is_unchanged() -> None:
    @tool("plain", "No extras", {"x": str})
    async def plain(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    listed = await _listed(plain, _search(strict=True, extra_fields={"title": "T"}))
    assert_json(
        listed["plain"],
        {
            "name": "plain",
            "description": "No extras",
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "required": ["x"],
            },
        },
    )
    assert_json(
        listed["search"],
        {
            **SEARCH_ENTRY,
            "strict": True,
            "_meta": {"anthropic/strict": True},
            "title": "T",
        },
    )


@FEATURE
async def test_tool_built_directly_lists_its_fields() -> None:
    direct = SdkMcpTool(
        name="search",
        description="Search case law",
        input_schema=CASE_SCHEMA,
        handler=_search_handler,
        strict=True,
        input_examples=[{"jurisdiction": "no", "terms": ["x"]}],
        extra_fields={"x-acme": 1},
    )
    listed = await _listed(direct)
    assert_json(
        listed["search"],
        {
            **SEARCH_ENTRY,
            "strict": True,
            "_meta": {"anthropic/strict": True},
            "input_examples": [{"jurisdiction": "no", "terms": ["x"]}],
            "x-acme": 1,
        },
    )


@FEATURE
async def test_each_server_lists_its_own_fields() -> None:
    """Two servers with a tool of the same name: neither's fields leak into
    the other's listing, nor into a hand-built server's."""
    strict_one = create_sdk_mcp_server("a", tools=[_search(strict=True)])
    titled_one = create_sdk_mcp_server(
        "b", tools=[_search(extra_fields={"title": "B"})]
    )
    plain_one = create_sdk_mcp_server("c", tools=[_search()])
    hand = hand_built_server(
        "d",
        [
            mcp.types.Tool.model_validate(
                {"name": "search", "inputSchema": {"type": "object"}}
            )
        ],
    )
    async with connected(a=strict_one, b=titled_one, c=plain_one, d=hand) as cli:
        a, b, c, d = [await cli.listed(name) for name in "abcd"]

    assert_json(
        a["search"],
        {**SEARCH_ENTRY, "strict": True, "_meta": {"anthropic/strict": True}},
    )
    assert_json(b["search"], {**SEARCH_ENTRY, "title": "B"})
    assert_json(c["search"], SEARCH_ENTRY)
    assert_json(d["search"], {"name": "search", "inputSchema": {"type": "object"}})


@FEATURE
async def test_listing_is_the_same_every_time_and_after_a_new_handshake() -> None:
    config = create_sdk_mcp_server(
        "srv",
        tools=[
            _search(strict=True, input_examples=[{"jurisdiction": "se", "terms": []}])
        ],
    )
    expected = {
        **SEARCH_ENTRY,
        "strict": True,
        "_meta": {"anthropic/strict": True},
        "input_examples": [{"jurisdiction": "se", "terms": []}],
    }
    async with connected(srv=config) as cli:
        first = await cli.list_tools("srv")
        second = await cli.list_tools("srv")
        await cli.initialize("srv")  # the CLI re-initializes in some situations
        third = await cli.list_tools("srv")

    for listing in (first, second, third):
        assert_json(listing, [expected])


@FEATURE
async def test_what_is_listed_is_a_snapshot_of_what_was_given() -> None:
    examples: list[dict[str, Any]] = [{"jurisdiction": "se", "terms": ["payout"]}]
    vendor: dict[str, Any] = {"tags": ["law"]}
    search = _search(input_examples=examples, extra_fields={"x-acme": vendor})
    examples[0]["terms"].append("changed later")
    examples.append({"jurisdiction": "no", "terms": []})
    vendor["tags"] = "changed later"

    listed = await _listed(search)
    assert_json(
        listed["search"],
        {
            **SEARCH_ENTRY,
            "input_examples": [{"jurisdiction": "se", "terms": ["payout"]}],
            "x-acme": {"tags": ["law"]},
        },
    )
