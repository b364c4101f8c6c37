"""End to end: the evidence a caller gets (``ToolFieldsReport`` through
``ClaudeAgentOptions.tool_fields_report``, the INFO records) matches what the
API received, in base-URL and proxy mode; and ``tools/live.py``'s turn and
verdict, through the real CLI against a loopback TLS stand-in for
``api.anthropic.com`` (accepted, and refused with the platform's words)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.lib.cases import (
    ARGUMENTS,
    CASE_SCHEMA,
    SEARCH,
    SERVER,
    STRICT_FIELDS,
    LegalServer,
)
from tests.lib.cli_harness import isolated_env, run_turn
from tests.lib.fake_api import FakeMessagesAPI, api_error, loading, text, tool_use
from tests.lib.relay_upstream import Upstream
from tools import live

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("tool-fields-relay")]

BETAS = ("structured-outputs-2025-12-15", "advanced-tool-use-2025-11-20")


def _check(reports: list[Any], requests: list[Any], mode: str) -> None:
    carrying = [r for r in requests if r.tool(SEARCH) is not None]
    assert carrying and all(r.tool(SEARCH)["strict"] is True for r in carrying)
    # One report per request the relay changed: each request carrying the tool.
    assert len(reports) == len(carrying)
    for report in reports:
        assert report.outcome == "changed" and report.mode == mode
        assert report.platform == "anthropic" and report.route == "/v1/messages"
        assert report.strict_tools == (SEARCH,) == report.example_tools
        assert report.betas == BETAS


async def test_reports_match_what_the_api_received_base_url_mode(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    e2e_home: Path,
    e2e_cwd: Path,
    tool_search: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    fake_api.script(
        *loading(tool_search, SEARCH), tool_use(SEARCH, ARGUMENTS), text("Done.")
    )
    reports: list[Any] = []
    await run_turn(
        cli=claude_cli,
        prompt="Find Swedish cases about insurance payouts.",
        mcp_servers={SERVER: LegalServer(STRICT_FIELDS).config},
        env=isolated_env(fake_api.url, e2e_home, ENABLE_TOOL_SEARCH=tool_search),
        cwd=e2e_cwd,
        allowed_tools=[SEARCH],
        tool_fields_relay=True,
        tool_fields_report=reports.append,
    )
    _check(reports, fake_api.messages_requests(), "base_url")
    infos = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and "changed a request" in r.getMessage()
    ]
    assert infos == [r.describe() for r in reports]
    assert not any("sk-ant-e2e-dummy-key" in r.getMessage() for r in caplog.records)


async def test_reports_in_proxy_mode_and_relay_off(
    claude_cli: str, e2e_home: Path, e2e_cwd: Path, tmp_path: Path
) -> None:
    for relay in (True, False):
        stand_in = Upstream.first_party(tmp_path / f"ca-{relay}").start()
        try:
            stand_in.api.script(tool_use(SEARCH, ARGUMENTS), text("Done."))
            reports: list[Any] = []
            await run_turn(
                cli=claude_cli,
                prompt="Find Swedish cases about insurance payouts.",
                mcp_servers={SERVER: LegalServer(STRICT_FIELDS).config},
                env=isolated_env("", e2e_home, **stand_in.env()),
                cwd=e2e_cwd,
                allowed_tools=[SEARCH],
                tool_fields_relay=relay,
                tool_fields_report=reports.append,
            )
        finally:
            stand_in.stop()
        requests = stand_in.api.messages_requests()
        if relay:
            _check(reports, requests, "proxy")
        else:
            # Claude Code dropped the fields; the one report says so.
            sent = [r.tool(SEARCH) or {} for r in requests]
            assert sent and all("name" in t and "strict" not in t for t in sent)
            [report] = reports
            assert report.outcome == "relay_off" and report.mode is None
            assert report.dropped_tools == (SEARCH,)


async def test_the_live_check_passes_against_a_stand_in(
    claude_cli: str, e2e_home: Path, tmp_path: Path
) -> None:
    stand_in = Upstream.first_party(tmp_path / "ca").start()
    try:
        stand_in.api.script(tool_use(SEARCH, ARGUMENTS), text("Two cases."))
        env = isolated_env("", e2e_home, **stand_in.env())
        outcome = await live.live_turn(claude_cli, env)
    finally:
        stand_in.stop()
    lines, ok = live.verdict(outcome, SEARCH, CASE_SCHEMA)
    assert ok, lines
    assert lines[0].startswith("live check: the Claude API, relay in proxy mode")
    assert lines[-1] == "verdict: PASS"
    assert outcome.tool_inputs == [ARGUMENTS]
    sent = [r.tool(SEARCH) for r in stand_in.api.messages_requests()]
    assert sent[0] is not None and sent[0]["strict"] is True  # as the verdict says


async def test_the_live_check_quotes_a_refusal_verbatim(
    claude_cli: str, e2e_home: Path, tmp_path: Path
) -> None:
    message = "request integrity check failed: cch does not match the body"
    stand_in = Upstream.first_party(tmp_path / "ca").start()
    try:
        stand_in.api.script(api_error(400, message))
        env = isolated_env("", e2e_home, **stand_in.env())
        outcome = await live.live_turn(claude_cli, env)
    finally:
        stand_in.stop()
    lines, ok = live.verdict(outcome, SEARCH, CASE_SCHEMA)
    assert not ok
    text_ = "\n".join(lines)
    assert message in text_ and "REFUSED" in text_
    assert "tool_fields_relay=False" in text_
    assert lines[-1].startswith("verdict: FAIL (request refused")


async def test_the_demo_shows_the_relay_on_request_in_proxy_mode(
    claude_cli: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tools import demo

    assert await demo.run(claude_cli, real_api=False) == 0
    out = capsys.readouterr().out
    main = out[out.index("== relay on, proxy mode") : out.index("what survived")]
    # The main section is the relay-on request as the API received it.
    assert "[2] CLI -> relay -> API" in main and '"strict": true' in main
    assert "structured-outputs-2025-12-15 (added)" in main
    assert "advanced-tool-use-2025-11-20 (added)" in main
    assert "changed a request (/v1/messages, anthropic, proxy mode)" in main
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "what survived each hop" in line)
    columns, strict = lines[at + 1], lines[at + 2].split()
    assert "relay on, proxy mode" in columns and "relay on, base-URL mode" in columns
    assert "relay off" in columns
    assert strict == ["strict", "true", "true", "true", "absent"]
