"""Helpers for the strict-mode tests: play the CLI against an SDK MCP server.

``serve`` lists a server's tools (and calls them) through ``Query`` exactly as
the Claude Code CLI does, so the tests see the schema that goes on the wire
and the validation a ``tools/call`` gets, not an internal structure. They are
fixtures rather than an imported module so that they work under any
``--import-mode``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import count
from typing import Any
from unittest.mock import AsyncMock, Mock

import pytest

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "strict-tests", "version": "0"},
}


async def _exchange(
    config: Any, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from claude_agent_sdk._internal.query import Query

    transport = AsyncMock()
    transport.is_ready = Mock(return_value=True)
    query = Query(
        transport=transport,
        is_streaming_mode=True,
        sdk_mcp_servers={"srv": config["instance"]},
    )
    ids = count()

    async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(ids), "method": method}
        message["params"] = params
        response = await query._handle_sdk_mcp_request("srv", message)
        assert response is not None and "error" not in response, response
        result: dict[str, Any] = response["result"]
        return result

    try:
        await request("initialize", INITIALIZE)
        await query._handle_sdk_mcp_request(
            "srv", {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        tools = (await request("tools/list", {}))["tools"]
        results = [
            await request("tools/call", {"name": name, "arguments": arguments})
            for name, arguments in calls
        ]
        return tools, results
    finally:
        await query.close()
        query.close_receive_stream()


Serve = Callable[..., Awaitable[tuple[list[dict[str, Any]], list[dict[str, Any]]]]]


@pytest.fixture
def serve() -> Serve:
    """``await serve(config, calls=[(tool, arguments), ...])`` -> (tools, results)."""

    async def run(
        config: Any, calls: list[tuple[str, dict[str, Any]]] | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return await _exchange(config, calls or [])

    return run
