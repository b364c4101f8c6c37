"""The CLI's side of an SDK MCP server's JSON-RPC, for the contract tests.

``CliPeer`` sends raw JSON-RPC dicts to ``Query._handle_sdk_mcp_request``,
which is where the CLI's ``mcp_message`` control requests land, and hands
back each response the way the CLI receives it: serialized to JSON text
(strictly: NaN or a non-JSON value fails the test) and parsed again.

Everything is compared as JSON, never as Python: ``json_text`` renders a
value canonically, so ``True``, ``1`` and ``1.0`` are three different
things, as they are on the wire.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any
from unittest.mock import AsyncMock, Mock

import mcp.types
from mcp.server import Server

from claude_agent_sdk import McpSdkServerConfig
from claude_agent_sdk._internal.query import Query

PROTOCOL_VERSION = "2025-11-25"

# Read from the installed distribution, not from the SDK, so the tests do
# not lean on the code they check.
MCP_MAJOR = int(version("mcp").split(".")[0])


def json_text(value: Any) -> str:
    """The canonical JSON text of ``value`` (sorted keys, no NaN)."""
    return json.dumps(value, sort_keys=True, allow_nan=False, indent=1)


def assert_json(actual: Any, expected: Any) -> None:
    """``actual`` and ``expected`` are the same JSON, key order aside."""
    actual_text, expected_text = json_text(actual), json_text(expected)
    assert actual_text == expected_text, (
        f"\nactual:\n{actual_text}\nexpected:\n{expected_text}"
    )


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: 1, 1.0 and True are three different values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(json_equal, a, b))
    return type(a) is type(b) and a == b


class CliPeer:
    """Plays the CLI against one or more SDK MCP servers through a ``Query``."""

    def __init__(self, servers: Mapping[str, McpSdkServerConfig]) -> None:
        transport = AsyncMock()
        transport.is_ready = Mock(return_value=True)
        self.query = Query(
            transport=transport,
            is_streaming_mode=True,
            sdk_mcp_servers={name: cfg["instance"] for name, cfg in servers.items()},
        )
        self._ids = itertools.count(0)  # the CLI's initialize is id 0

    async def send(self, server: str, message: dict[str, Any]) -> Any:
        response = await self.query._handle_sdk_mcp_request(server, message)
        if response is None:
            return None
        # What the CLI reads is JSON text; anything JSON cannot carry fails here.
        return json.loads(json.dumps(response, allow_nan=False))

    async def request(
        self, server: str, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": next(self._ids),
            "method": method,
        }
        if params is not None:
            message["params"] = params
        response = await self.send(server, message)
        assert isinstance(response, dict), response
        assert response["jsonrpc"] == "2.0", response
        assert response["id"] == message["id"], (message, response)
        return response

    async def notify(self, server: str, method: str) -> None:
        answer = await self.send(server, {"jsonrpc": "2.0", "method": method})
        assert answer is None, answer

    async def initialize(self, server: str) -> dict[str, Any]:
        response = await self.request(
            server,
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "claude-code", "version": "contract"},
            },
        )
        assert "result" in response, response
        await self.notify(server, "notifications/initialized")
        result: dict[str, Any] = response["result"]
        return result

    async def list_tools(self, server: str) -> list[dict[str, Any]]:
        response = await self.request(server, "tools/list", {})
        assert "result" in response, response
        tools: list[dict[str, Any]] = response["result"]["tools"]
        return tools

    async def listed(self, server: str) -> dict[str, dict[str, Any]]:
        """The server's tools/list entries by tool name."""
        return {entry["name"]: entry for entry in await self.list_tools(server)}

    async def call_tool(
        self, server: str, name: str, arguments: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        response = await self.request(
            server, "tools/call", {"name": name, "arguments": arguments or {}}
        )
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    async def aclose(self) -> None:
        await self.query.close()


@asynccontextmanager
async def connected(**servers: McpSdkServerConfig) -> AsyncIterator[CliPeer]:
    """A ``CliPeer`` with each server registered under its keyword and initialized."""
    peer = CliPeer(servers)
    try:
        for name in servers:
            await peer.initialize(name)
        yield peer
    finally:
        await peer.aclose()


def hand_built_server(name: str, tools: list[mcp.types.Tool]) -> McpSdkServerConfig:
    """A lowlevel ``mcp.server.Server`` listing ``tools``, written against the
    installed mcp's own API (as applications that bring their own server do)."""
    # Only one major is installed; Any lets a type checker accept the other's API.
    server_class: Any = Server
    if MCP_MAJOR >= 2:

        async def on_list_tools(ctx: Any, params: Any) -> mcp.types.ListToolsResult:
            return mcp.types.ListToolsResult(tools=tools)

        server = server_class(name, version="0.1.0", on_list_tools=on_list_tools)
    else:
        server = server_class(name, version="0.1.0")

        async def list_tools() -> list[mcp.types.Tool]:
            return tools

        server.list_tools()(list_tools)

    return McpSdkServerConfig(type="sdk", name=name, instance=server)
