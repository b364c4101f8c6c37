"""tools/call as the CLI receives it: results, structuredContent, output_schema.

MCP requires a tool that declares an ``outputSchema`` (``output_schema=``) to
return matching ``structuredContent`` (Claude Code 2.1.332 does not check it,
and shows the model the structured content in place of the text content).
For a tool that declares one, the fork passes ``structuredContent``
on and turns a result that breaks the contract into an error result the model
can read; any other tool's result is upstream's (``structuredContent``
dropped).
"""

from __future__ import annotations

from typing import Any

import pytest

from claude_agent_sdk import McpSdkServerConfig, create_sdk_mcp_server, tool
from tests.lib.cli_peer import assert_json, call_tool, connected, error_text

FEATURE = pytest.mark.requires_patch("serve-extra-tool-fields")
RESULTS = pytest.mark.requires_patch("tool-results")

COUNT_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"lines": {"type": "integer"}},
    "required": ["lines"],
}


def _count_server(result: dict[str, Any], **fields: Any) -> McpSdkServerConfig:
    @tool("count", "Count lines", {}, **fields)
    async def count(args: dict[str, Any]) -> dict[str, Any]:
        return result

    return create_sdk_mcp_server("srv", tools=[count])


async def test_plain_tool_call() -> None:
    @tool("greet", "Greet a user", {"name": str})
    async def greet(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

    result = await call_tool(
        create_sdk_mcp_server("srv", tools=[greet]), "greet", {"name": "Ada"}
    )
    assert_json(
        result, {"content": [{"type": "text", "text": "Hello, Ada!"}], "isError": False}
    )


# A handler written against MCP reports failure as isError (its wire name);
# upstream answers such a call as a success.
@pytest.mark.requires_patch("handler-is-error")
async def test_is_error_in_the_mcp_spelling_is_honoured() -> None:
    text = [{"type": "text", "text": "page not found"}]
    config = _count_server({"content": text, "isError": True})
    result = await call_tool(config, "count")
    assert_json(result, {"content": text, "isError": True})


@FEATURE
async def test_strict_tool_is_still_callable() -> None:
    @tool(
        "search",
        "Search case law",
        {"jurisdiction": str, "terms": list[str]},
        strict=True,
        input_examples=[{"jurisdiction": "se", "terms": ["payout"]}],
        extra_fields={"title": "Case search"},
    )
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": ",".join(args["terms"])}]}

    config = create_sdk_mcp_server("srv", tools=[search])
    async with connected(srv=config) as cli:
        [listed] = await cli.list_tools("srv")
        ok = await cli.call_tool(
            "srv", "search", {"jurisdiction": "se", "terms": ["a", "b"]}
        )
        refused = await cli.call_tool("srv", "search", {"jurisdiction": "se"})

    assert listed["strict"] is True
    assert_json(ok, {"content": [{"type": "text", "text": "a,b"}], "isError": False})
    assert "terms" in error_text(refused)


@RESULTS
async def test_output_schema_is_listed_and_matching_structured_content_passed_on() -> (
    None
):
    config = _count_server(
        {
            "content": [{"type": "text", "text": "3 lines"}],
            "structuredContent": {"lines": 3},
        },
        output_schema=COUNT_OUTPUT_SCHEMA,
    )
    async with connected(srv=config) as cli:
        [listed] = await cli.list_tools("srv")
        result = await cli.call_tool("srv", "count", {})

    assert_json(
        listed,
        {
            "name": "count",
            "description": "Count lines",
            "inputSchema": {"type": "object", "properties": {}, "required": []},
            "outputSchema": {
                "type": "object",
                "properties": {"lines": {"type": "integer"}},
                "required": ["lines"],
            },
        },
    )
    assert_json(
        result,
        {
            "content": [{"type": "text", "text": "3 lines"}],
            "structuredContent": {"lines": 3},
            "isError": False,
        },
    )


@RESULTS
async def test_structured_content_is_read_under_its_mcp_name_only() -> None:
    config = _count_server(
        {"content": [], "structured_content": {"lines": 0}},
        output_schema=COUNT_OUTPUT_SCHEMA,
    )
    text = error_text(await call_tool(config, "count"))
    assert text == (
        "Tool 'count' returned no structuredContent, which its output_schema requires"
    )


# Without an outputSchema the result is upstream's: structuredContent is
# dropped and is_error is read as pydantic reads a bool (lax), so this pins
# what tool-results must not change.
async def test_structured_content_without_an_output_schema_is_dropped_as_upstream() -> (
    None
):
    config = _count_server(
        {
            "content": [{"type": "text", "text": "ok"}],
            "structuredContent": {"a": [1]},
            "is_error": "false",
        }
    )
    result = await call_tool(config, "count")
    assert_json(result, {"content": [{"type": "text", "text": "ok"}], "isError": False})


@RESULTS
async def test_missing_structured_content_is_an_error_result_naming_the_tool() -> None:
    config = _count_server(
        {"content": [{"type": "text", "text": "3 lines"}]},
        output_schema=COUNT_OUTPUT_SCHEMA,
    )
    text = error_text(await call_tool(config, "count"))
    assert text == (
        "Tool 'count' returned no structuredContent, which its output_schema requires"
    )


@RESULTS
async def test_invalid_structured_content_is_an_error_result_naming_the_tool() -> None:
    config = _count_server(
        {"content": [], "structuredContent": {"lines": "three"}},
        output_schema=COUNT_OUTPUT_SCHEMA,
    )
    result = await call_tool(config, "count")
    assert "structuredContent" not in result
    text = error_text(result)
    assert text == (
        "Tool 'count' returned structuredContent that does not match its "
        "output_schema: 'three' is not of type 'integer' (at $.lines)"
    )


@RESULTS
async def test_structured_content_that_is_not_an_object_is_an_error_result() -> None:
    config = _count_server(
        {"content": [], "structuredContent": [3]},
        output_schema=COUNT_OUTPUT_SCHEMA,
    )
    text = error_text(await call_tool(config, "count"))
    assert text == (
        "Tool 'count' returned structuredContent that is not a JSON object (got list)"
    )


# Upstream already passes an error result through as it is; with an
# output_schema (tool-results) it is not checked either, as in MCP.
@RESULTS
async def test_error_result_of_a_tool_with_an_output_schema_is_left_as_it_is() -> None:
    config = _count_server(
        {"content": [{"type": "text", "text": "no such file"}], "is_error": True},
        output_schema=COUNT_OUTPUT_SCHEMA,
    )
    result = await call_tool(config, "count")
    assert_json(
        result,
        {"content": [{"type": "text", "text": "no such file"}], "isError": True},
    )
