"""End to end: Claude Code's own network path, and the relay's failures
reaching the caller (issue 40, items 1 and 3), with the real CLI.

- ``test_claude_code_takes_the_tabled_path`` measures, for every row of
  ``tests.lib.network_path.TABLE``, where Claude Code 2.1.332 itself (no SDK,
  no relay) sends its Messages requests, its other requests to the API host
  and an https MCP server's connection, against loopback stand-in proxies
  (the table in docs/relay.md; ``tests/relay/test_network_path.py`` checks
  the relay against the same table). It fails the day a CLI version takes
  another path.
- ``test_an_unreachable_api_is_raised_to_the_caller_within_15_s``: with the
  relay on and the API unreachable for a named cause, ``query()`` raises the
  relay's ``ToolFieldsRelayError`` (the cause, the destination, the proxy,
  the fix) within 15 s, instead of minutes of the CLI's retries of 502s.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from claude_agent_sdk import ClaudeAgentOptions, query
from claude_agent_sdk._internal._mcp_compat import MCP_MAJOR
from tests.lib.cases import SERVER, STRICT_FIELDS, LegalServer
from tests.lib.cli_harness import isolated_env
from tests.lib.network_path import TABLE, Recorder, Row, available, measure
from tests.lib.relay_upstream import Upstream
from tests.lib.tls import loopback_certificate

try:
    from claude_agent_sdk._internal.relay.lifecycle import ToolFieldsRelayError
except ImportError:  # a tree without the relay patch: these tests must fail
    ToolFieldsRelayError = ValueError  # type: ignore[assignment, misc]

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("tool-fields-relay")]


@pytest.mark.parametrize("row", TABLE, ids=[row.label for row in TABLE])
def test_claude_code_takes_the_tabled_path(claude_cli: str, row: Row) -> None:
    if MCP_MAJOR < 2:
        pytest.skip("the CLI's own behaviour: measured once per run, on mcp 2.x")
    reason = available()
    if reason is not None:
        pytest.skip(reason)
    assert measure(claude_cli, row.env) == dict(row.routes)


async def test_an_unreachable_api_is_raised_to_the_caller_within_15_s(
    claude_cli: str, e2e_home: Path, e2e_cwd: Path, tmp_path: Path
) -> None:
    # A gateway whose certificate nobody trusts (base-URL mode), and the
    # first-party API behind a proxy that wants credentials (proxy mode).
    certificate = loopback_certificate(tmp_path)
    with Upstream(tls=certificate.server_context()) as gateway:
        proxy = Recorder(status=b"407 Proxy Authentication Required").start()
        try:
            cases = [
                (
                    {"ANTHROPIC_BASE_URL": gateway.url},
                    ["certificate verify failed for 127.0.0.1", "NODE_EXTRA_CA_CERTS"],
                ),
                (
                    {
                        "ANTHROPIC_BASE_URL": "",
                        "HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}",
                        "https_proxy": "",
                    },
                    [
                        "407",
                        f"for api.anthropic.com via http://127.0.0.1:{proxy.port}",
                        "HTTPS_PROXY",
                    ],
                ),
            ]
            for settings, expected in cases:
                env = isolated_env("", e2e_home, **settings)
                if not env["ANTHROPIC_BASE_URL"]:
                    del env["ANTHROPIC_BASE_URL"]
                options = ClaudeAgentOptions(
                    cli_path=claude_cli,
                    cwd=str(e2e_cwd),
                    env=env,
                    mcp_servers={SERVER: LegalServer(STRICT_FIELDS).config},
                    setting_sources=[],
                    tool_fields_relay=True,
                )
                started = time.monotonic()
                with pytest.raises(ToolFieldsRelayError) as raised:
                    async for _ in query(prompt="Say hi.", options=options):
                        pass
                elapsed = time.monotonic() - started
                assert elapsed < 15, elapsed
                for part in expected:
                    assert part in str(raised.value), (part, str(raised.value))
        finally:
            proxy.stop()
