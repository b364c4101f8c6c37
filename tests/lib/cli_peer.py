"""The CLI's side of an SDK MCP server's JSON-RPC: the one stand-in every test
and the benchmarks (``tools/bench_worker.py``, ``tools/bench_startup.py``)
use to play the Claude Code CLI.

``CliPeer`` sends raw JSON-RPC dicts to ``Query._handle_sdk_mcp_request``,
which is where the CLI's ``mcp_message`` control requests land, and hands
back each response the way the CLI receives it: serialized to JSON text
(strictly: NaN or a non-JSON value fails the test) and parsed again.
``handle`` is the same hop without the JSON text, for what a benchmark times.

The handshake offers ``PROTOCOL_VERSION`` (what Claude Code 2.1.x sends) unless
told otherwise; ``SUPPORTED_PROTOCOL_VERSIONS`` is the installed mcp's list,
for tests that must hold under each version a client may negotiate.

Everything is compared as JSON, never as Python: ``json_text`` renders a
value canonically, so ``True``, ``1`` and ``1.0`` are three different
things, as they are on the wire.
"""

from __future__ import annotations

import importlib
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


def _protocol_versions() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The installed mcp's (handshake, supported) protocol versions.

    mcp 2.x keeps them in mcp_types and reaches its stateless versions
    (2026-07-28) without the initialize handshake; on mcp 1.x (which has no
    mcp_types, so neither import can be checked statically under both majors)
    every supported version is negotiated by it.
    """
    try:
        versions = importlib.import_module("mcp_types.version")
    except ImportError:
        versions = importlib.import_module("mcp.shared.version")
        supported = tuple(map(str, versions.SUPPORTED_PROTOCOL_VERSIONS))
        return supported, supported
    return (
        tuple(map(str, versions.HANDSHAKE_PROTOCOL_VERSIONS)),
        tuple(map(str, versions.SUPPORTED_PROTOCOL_VERSIONS)),
    )


# The protocol versions the installed mcp serves (see _protocol_versions).
HANDSHAKE_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS = _protocol_versions()

# The newest version Claude Code 2.1.x offers in its initialize request.
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

    def __init__(
        self,
        servers: Mapping[str, McpSdkServerConfig],
        protocol_version: str = PROTOCOL_VERSION,
        client_version: str = "contract",
    ) -> None:
        self.protocol_version = protocol_version
        self.client_version = client_version  # the clientInfo it introduces itself with
        self.negotiated: dict[str, str] = {}  # server -> its answer's version
        transport = AsyncMock()
        transport.is_ready = Mock(return_value=True)
        self.query = Query(
            transport=transport,
            is_streaming_mode=True,
            sdk_mcp_servers={name: cfg["instance"] for name, cfg in servers.items()},
        )
        self._ids = itertools.count(0)  # the CLI's initialize is id 0

    def message(
        self, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A JSON-RPC request with the next id."""
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": next(self._ids),
            "method": method,
        }
        if params is not None:
            message["params"] = params
        return message

    async def handle(self, server: str, message: dict[str, Any]) -> Any:
        """The SDK's response as it returns it, before any JSON text."""
        return await self.query._handle_sdk_mcp_request(server, message)

    async def send(self, server: str, message: dict[str, Any]) -> Any:
        response = await self.handle(server, message)
        if response is None:
            return None
        # What the CLI reads is JSON text; anything JSON cannot carry fails here.
        return json.loads(json.dumps(response, allow_nan=False))

    async def request(
        self, server: str, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message = self.message(method, params)
        response = await self.send(server, message)
        assert isinstance(response, dict), response
        assert response["jsonrpc"] == "2.0", response
        assert response["id"] == message["id"], (message, response)
        return response

    async def notify(self, server: str, method: str) -> None:
        answer = await self.send(server, {"jsonrpc": "2.0", "method": method})
        assert answer is None, answer

    def hello(self) -> dict[str, Any]:
        """The params of the CLI's ``initialize`` request."""
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": self.client_version},
        }

    async def initialize(self, server: str) -> dict[str, Any]:
        response = await self.request(server, "initialize", self.hello())
        assert "result" in response, response
        await self.notify(server, "notifications/initialized")
        result: dict[str, Any] = response["result"]
        self.negotiated[server] = result["protocolVersion"]
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
        self.query.close_receive_stream()


@asynccontextmanager
async def connected(
    protocol_version: str = PROTOCOL_VERSION, **servers: McpSdkServerConfig
) -> AsyncIterator[CliPeer]:
    """A ``CliPeer`` with each server registered under its keyword and initialized."""
    peer = CliPeer(servers, protocol_version)
    try:
        for name in servers:
            await peer.initialize(name)
        yield peer
    finally:
        await peer.aclose()


async def tools_by_name(config: McpSdkServerConfig) -> dict[str, dict[str, Any]]:
    """One server's tools/list entries by tool name, after a fresh handshake."""
    async with connected(srv=config) as cli:
        return await cli.listed("srv")


async def call_tool(
    config: McpSdkServerConfig, name: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One tools/call result from a freshly initialized server."""
    async with connected(srv=config) as cli:
        return await cli.call_tool("srv", name, arguments)


async def serve(
    config: McpSdkServerConfig, calls: list[tuple[str, dict[str, Any]]] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(tools, results)``: the server's tools/list, then each ``(tool, arguments)``
    call's result, on one connection. A JSON-RPC error fails the test."""
    async with connected(srv=config) as cli:
        tools = await cli.list_tools("srv")
        results = [await cli.call_tool("srv", n, a) for n, a in calls or []]
    return tools, results


def error_text(result: dict[str, Any]) -> str:
    """The one text block of a tools/call error result."""
    assert result["isError"] is True, result
    [block] = result["content"]
    assert block["type"] == "text", result
    text: str = block["text"]
    return text


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
