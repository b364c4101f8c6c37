"""End to end: the relay through a long session's conditions, with the real
Claude Code CLI in proxy mode (``Upstream.first_party``: the caller's proxy,
a TLS stand-in for ``api.anthropic.com``).

One turn whose tool runs 10 s (longer than Claude Code's own 8 s of idle
reuse), beside a flood of silent local connections that has the relay at its
admission bound from before Claude Code starts until after it exits:

- no new TCP or TLS handshake to the API after the tool run: the relay's
  upstream connection outlived the idle spell;
- the turn completes, and every connection the relay closed was the
  flood's (each close matched to a flood connection open at that moment),
  none of Claude Code's.

Twice: a flood of connections that send nothing, and one of connections
that each send one byte (~2,400 a second, up to 900 held) at a soft limit
of 1,024 descriptors, beside which the relay's descriptors stay within the
documented bound (a quarter of the limit) and the host's own ``open()``
never fails.

Runs once per default run (``e2e(mcp2)``; the relay's HTTP does not depend
on the mcp major), ~15 s each.
"""

from __future__ import annotations

import asyncio
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from tests.lib.cases import ARGUMENTS, SEARCH, SERVER, STRICT_FIELDS, LegalServer
from tests.lib.cli_harness import isolated_env, run_turn
from tests.lib.fake_api import text, tool_use
from tests.lib.flood import (
    HELD,
    SPEAKING_HELD,
    Flood,
    Host,
    open_descriptors,
    relay_closes,
)
from tests.lib.relay_upstream import Upstream

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("tool-fields-relay")]

TOOL_RUN_S = 10.0


@pytest.mark.parametrize("flood_kind", ["silent", "one byte"])
async def test_a_long_tool_run_beside_a_flood_costs_no_handshake_and_no_connection(
    claude_cli: str,
    e2e_home: Path,
    e2e_cwd: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flood_kind: str,
) -> None:
    from claude_agent_sdk._internal.relay import lifecycle

    speak = flood_kind == "one byte"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if speak:
        if hard != resource.RLIM_INFINITY and hard < 1024:
            pytest.skip(f"the hard descriptor limit is {hard}, under 1,024")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    closed = relay_closes(monkeypatch)
    floods: list[Flood] = []
    hosts: list[tuple[Host, int]] = []
    real_start = lifecycle.ToolFieldsRelay.start

    async def start_flooded(self: Any) -> None:
        # The flood starts with the relay, before Claude Code does, and
        # holds the relay at its bound before Claude Code's first request.
        await real_start(self)
        if speak:
            baseline = open_descriptors()
            hosts.append((Host().__enter__(), baseline))
        flood = Flood(self.port, speak=speak).start()
        floods.append(flood)
        await asyncio.to_thread(flood.wait_until_flooding)
        while not closed:
            await asyncio.sleep(0.05)

    monkeypatch.setattr(lifecycle.ToolFieldsRelay, "start", start_flooded)
    tool_run: dict[str, float] = {}

    async def run_tool() -> None:
        tool_run["started"] = time.monotonic()
        await asyncio.sleep(TOOL_RUN_S)
        tool_run["ended"] = time.monotonic()
        tool_run["ended_wall"] = time.time()

    server = LegalServer(STRICT_FIELDS, on_search=run_tool)
    stand_in = Upstream.first_party(tmp_path / "api").start()
    try:
        stand_in.api.script(tool_use(SEARCH, ARGUMENTS), text("Found one case."))
        turn = await run_turn(
            cli=claude_cli,
            prompt="Find Swedish cases about insurance payouts.",
            mcp_servers={SERVER: server.config},
            env=isolated_env("", e2e_home, **stand_in.env()),
            cwd=e2e_cwd,
            allowed_tools=[SEARCH],
            tool_fields_relay=True,
            timeout=180,
        )
    finally:
        for flood in floods:
            flood.stop()
        for host, _ in hosts:
            host.__exit__(None, None, None)
        stand_in.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    # The turn: both model calls answered, the tool's result among them.
    assert turn.result is not None and not turn.result.is_error, turn.result
    assert turn.result.result == "Found one case."
    assert server.calls == [ARGUMENTS]
    posts = stand_in.api.messages_requests()
    assert len(posts) == 2
    assert posts[-1].tool(SEARCH)["strict"] is True  # type: ignore[index]
    assert posts[-1].received_at >= tool_run["ended_wall"]  # after the idle spell

    # Keep-alive: the relay reached the API (through the caller's proxy,
    # one CONNECT and TLS handshake per upstream connection) before the
    # tool run, and not once after it began.
    assert stand_in.connections >= 1
    assert [t for t in stand_in.accepted if t >= tool_run["started"]] == []

    # The flood: real, it had the relay making room, and every connection
    # the relay closed was one of its own, open at that moment.
    (flood,) = floods
    assert flood.opened > (SPEAKING_HELD if speak else HELD) and closed, (
        flood.opened,
        len(closed),
    )
    assert [(port, at) for port, at in closed if not flood.owned(port, at)] == []
    if speak:
        # The descriptor bound (a quarter of 1,024) beside Claude Code's own
        # connections, pipes and MCP server, and no open() of the host's
        # failed.
        ((host, baseline),) = hosts
        assert host.failures == []
        assert host.peak - baseline <= 1024 // 4 + 40, (host.peak, baseline)
