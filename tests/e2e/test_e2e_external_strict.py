"""End to end: ``strict_mcp_servers`` with the real Claude Code CLI.

An external MCP server (``tests/lib/ext_stdio_server.py``, written with mcp's
own FastMCP / MCPServer) runs over stdio as Claude Code's child; the relay
sits between the CLI and the stand-in API (``fake_api.py``). What the
stand-in records is what the Messages API would receive: the external tool
with ``strict: true`` and the strict form of the schema the server listed
(made by ``strict.transform.strict_schemas``, as for SDK tools), the beta, and
the tool that has no strict form unchanged, named in one WARNING. Tool
search off and on; the session runs on both mcp majors.
"""

from __future__ import annotations

import copy
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib import ext_stdio_server
from tests.lib.cli_harness import isolated_env, run_turn
from tests.lib.fake_api import FakeMessagesAPI, text, tool_use

try:
    from claude_agent_sdk._internal.strict.transform import strict_schemas
except ImportError:  # a tree without the patches: these tests must fail
    strict_schemas = None  # type: ignore[assignment]

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("tool-fields-relay")]

EXT = ext_stdio_server.NAME
EXT_SEARCH = f"mcp__{EXT}__search"
EXT_TAG = f"mcp__{EXT}__tag"
SDK_LOOKUP = "mcp__legal__lookup"
STRUCTURED_OUTPUTS = "structured-outputs-2025-12-15"
SERVER_SCRIPT = Path(ext_stdio_server.__file__).resolve()

TOOL_SEARCH = [
    pytest.param("false", id="tool-search-off"),
    pytest.param("true", id="tool-search-on"),
]


def _sdk_server() -> Any:
    @tool("lookup", "Look up a case by citation", {"citation": str})
    async def lookup(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "NJA 2019 s. 123"}]}

    return create_sdk_mcp_server("legal", tools=[lookup])


@pytest.mark.parametrize("tool_search", TOOL_SEARCH)
async def test_an_external_stdio_tool_reaches_the_api_strict(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    e2e_home: Path,
    e2e_cwd: Path,
    tool_search: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    listed = await ext_stdio_server.tool_schemas()
    expected = strict_schemas(copy.deepcopy(listed["search"]), describe=True).served
    # The transform did something: closed the root, moved the bounds.
    assert expected["additionalProperties"] is False
    assert (
        "{minLength: 2, maxLength: 40}"
        in expected["properties"]["query"]["description"]
    )
    assert "maximum" not in expected["properties"]["limit"]

    script = []
    if tool_search == "true":
        script.append(
            tool_use(
                "ToolSearch", {"query": f"select:{EXT_SEARCH},{EXT_TAG},{SDK_LOOKUP}"}
            )
        )
    fake_api.script(
        *script,
        tool_use(EXT_SEARCH, {"query": "payout", "limit": 5}),
        text("Found it."),
    )
    caplog.set_level(logging.WARNING, "claude_agent_sdk._internal")
    turn = await run_turn(
        cli=claude_cli,
        prompt="Search the archive for payouts.",
        mcp_servers={
            EXT: {
                "type": "stdio",
                "command": sys.executable,
                "args": [str(SERVER_SCRIPT)],
            },
            "legal": _sdk_server(),
        },
        env=isolated_env(fake_api.url, e2e_home, ENABLE_TOOL_SEARCH=tool_search),
        cwd=e2e_cwd,
        allowed_tools=[EXT_SEARCH, EXT_TAG, SDK_LOOKUP],
        tool_fields_relay=True,
        strict_mcp_servers=[EXT],
    )

    carrying = [r for r in fake_api.messages_requests() if r.tool(EXT_SEARCH)]
    assert carrying, [[t.get("name") for t in r.tools] for r in fake_api.requests]
    for request in carrying:
        search = request.tool(EXT_SEARCH)
        assert search is not None
        assert search["strict"] is True
        assert search["input_schema"] == expected
        betas = request.headers["anthropic-beta"].split(",")
        assert betas.count(STRUCTURED_OUTPUTS) == 1
        # No strict form (a free-form map): as the CLI sent it.
        tag = request.tool(EXT_TAG)
        assert tag is not None and "strict" not in tag
        assert tag["input_schema"] == listed["tag"]
        # A server not listed in strict_mcp_servers: untouched.
        lookup = request.tool(SDK_LOOKUP)
        assert lookup is not None and "strict" not in lookup
        if tool_search == "true":
            assert search["defer_loading"] is True
            assert tag["defer_loading"] is True

    # The call went to the external server and its answer came back.
    results = [b for r in fake_api.messages_requests() for b in r.tool_results()]
    assert any("ARCHIVE-7" in str(b) for b in results), results
    assert turn.result is not None and not turn.result.is_error

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    named = [w for w in warnings if EXT_TAG in w]
    assert len(named) == 1, warnings
    assert "additionalProperties" in named[0]
    assert not any(EXT_SEARCH in w for w in warnings), warnings
