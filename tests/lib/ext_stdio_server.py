"""A small external MCP server over stdio, written with mcp's own high-level API.

Run as ``python -m tests.lib.ext_stdio_server`` (or by path, with
``sys.executable``); the e2e tests of ``strict_mcp_servers`` configure it as a
``{"type": "stdio", ...}`` entry of ``mcp_servers``. mcp 1.x calls the API
``mcp.server.fastmcp.FastMCP``, mcp 2.x ``mcp.server.mcpserver.MCPServer``;
both derive each tool's input schema from the function's signature with
pydantic, so ``search`` lists ``minLength``/``maxLength``/``minimum``/
``maximum`` (which strict mode cannot compile) and ``tag`` a free-form map
(which it cannot express at all).

``tool_schemas()`` lists the tools in-process, as the server lists them to
Claude Code, so a test can compute what the relay must send.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

from pydantic import Field


def _server_class() -> Any:
    try:  # mcp 2.x
        return importlib.import_module("mcp.server.mcpserver").MCPServer
    except ImportError:  # mcp 1.x
        return importlib.import_module("mcp.server.fastmcp").FastMCP


NAME = "ext"

server: Any = _server_class()(NAME)


def search(
    query: Annotated[str, Field(min_length=2, max_length=40)],
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> str:
    return f"{limit} hits for {query}: ARCHIVE-7"


def tag(labels: dict[str, str]) -> str:
    return f"tagged {len(labels)}"


server.tool(description="Search the archive")(search)
server.tool(description="Tag a document")(tag)


async def tool_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's ``inputSchema`` as the server lists it."""
    listed = await server.list_tools()
    # Dumped by alias: the field is ``inputSchema`` on 1.x, ``input_schema``
    # (aliased ``inputSchema``) on 2.x.
    return {
        tool.name: tool.model_dump(by_alias=True, exclude_none=True)["inputSchema"]
        for tool in listed
    }


if __name__ == "__main__":
    server.run()
