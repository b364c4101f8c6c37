"""``tools/nox -s live`` (tools/live.py): what it needs, that it sends nothing
without credentials, and its verdict. The turn itself, through the real CLI
against a loopback stand-in, is tests/e2e/test_e2e_live.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import noxfile
from tests.lib.cases import CASE_SCHEMA, SEARCH
from tools import live

ROOT = Path(__file__).resolve().parents[2]
STRUCTURED = "structured-outputs-2025-12-15"

_CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)


def _no_credentials(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CREDENTIALS}
    env["HOME"] = str(home)
    return env


@pytest.mark.parametrize(
    ("env", "wanted"),
    [
        ({}, "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN"),
        ({"ANTHROPIC_API_KEY": ""}, "ANTHROPIC_API_KEY"),
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, "AWS_REGION"),
        ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-north-1"}, "credentials"),
        ({"CLAUDE_CODE_USE_VERTEX": "1"}, "ANTHROPIC_VERTEX_PROJECT_ID"),
        (
            {
                "CLAUDE_CODE_USE_VERTEX": "1",
                "ANTHROPIC_VERTEX_PROJECT_ID": "p",
                "CLOUD_ML_REGION": "us-east5",
            },
            "Google credentials",
        ),
        ({"CLAUDE_CODE_USE_FOUNDRY": "1"}, "ANTHROPIC_FOUNDRY_RESOURCE"),
        (
            {"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "r"},
            "ANTHROPIC_FOUNDRY_API_KEY",
        ),
    ],
)
def test_what_each_platform_needs_is_one_line(
    env: dict[str, str], wanted: str, tmp_path: Path
) -> None:
    line = live.needs({"HOME": str(tmp_path), **env})
    assert line is not None and wanted in line and "\n" not in line


@pytest.mark.parametrize(
    "env",
    [
        {"ANTHROPIC_API_KEY": "sk-ant-x"},
        {"CLAUDE_CODE_OAUTH_TOKEN": "t"},
        {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "r", "AWS_PROFILE": "p"},
        {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "r", "~/.aws": "credentials"},
        {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "ANTHROPIC_VERTEX_PROJECT_ID": "p",
            "CLOUD_ML_REGION": "global",
            "GOOGLE_APPLICATION_CREDENTIALS": "/k.json",
        },
        {
            "CLAUDE_CODE_USE_FOUNDRY": "1",
            "ANTHROPIC_FOUNDRY_BASE_URL": "https://x",
            "ANTHROPIC_FOUNDRY_API_KEY": "k",
        },
    ],
)
def test_credentials_for_a_platform_are_enough(
    env: dict[str, str], tmp_path: Path
) -> None:
    if env.pop("~/.aws", None):
        (tmp_path / ".aws").mkdir()
        (tmp_path / ".aws" / "credentials").write_text("[default]\n")
    assert live.needs({"HOME": str(tmp_path), **env}) is None


class _Listener:
    """A loopback port that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def test_without_credentials_one_line_exit_0_and_nothing_sent(tmp_path: Path) -> None:
    listener = _Listener()
    try:
        env = _no_credentials(tmp_path)
        # Anything it sent would have to go here: every proxy and base URL.
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY"):
            env[name] = listener.url
        env["ANTHROPIC_BASE_URL"] = listener.url
        done = subprocess.run(
            [sys.executable, "-m", "tools.live", "--cli", "/nonexistent/claude"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1 and "nothing sent" in done.stdout
    assert "ANTHROPIC_API_KEY" in done.stdout
    assert listener.accepted == 0


def test_the_nox_session_stops_before_installing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Session:
        posargs: list[str] = []

        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the session called {name}")

    monkeypatch.setattr(os, "environ", _no_credentials(tmp_path))
    session_function = noxfile.live
    getattr(session_function, "func", session_function)(Session())
    assert "nothing sent" in capsys.readouterr().out
    assert "live" in noxfile.MAINTENANCE_SESSIONS


# --------------------------------------------------------------------------
# The verdict
# --------------------------------------------------------------------------

pytestmark_relay = pytest.mark.requires_patch("tool-fields-relay")


def _report(**fields: Any) -> Any:
    from claude_agent_sdk import ToolFieldsReport

    base: dict[str, Any] = {
        "outcome": "changed",
        "platform": "anthropic",
        "mode": "proxy",
        "route": "/v1/messages",
        "strict_tools": (SEARCH,),
        "betas": (STRUCTURED,),
    }
    return ToolFieldsReport(**{**base, **fields})


def _verdict(**fields: Any) -> tuple[str, bool]:
    outcome = live.Outcome(platform="the Claude API", cli_version="2.1.332", **fields)
    lines, ok = live.verdict(outcome, SEARCH, CASE_SCHEMA)
    return "\n".join(lines), ok


@pytestmark_relay
def test_verdict_pass_names_strict_betas_and_the_valid_arguments() -> None:
    text, ok = _verdict(
        reports=[_report(), _report()],
        tool_inputs=[{"jurisdiction": "se", "terms": ["insurance", "payout"]}],
    )
    assert ok and text.endswith("verdict: PASS")
    assert "request:   accepted" in text
    assert f"strict:    on {SEARCH}, in 2 of 2" in text
    assert f"betas:     {STRUCTURED}" in text
    assert "arguments: valid" in text and '"terms": ["insurance", "payout"]' in text
    assert "proxy mode" in text and "2.1.332" in text


@pytestmark_relay
def test_verdict_a_refusal_is_quoted_verbatim_and_points_at_the_relay_switch() -> None:
    error = (
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"request integrity check failed (cch)"}}'
    )
    text, ok = _verdict(reports=[_report()], error=error)
    assert not ok
    assert f"REFUSED: {error}" in text
    assert "tool_fields_relay=False" in text and "docs/relay.md" in text
    assert "verdict: FAIL (request refused; arguments not shown valid)" in text


@pytestmark_relay
def test_verdict_fails_when_strict_did_not_reach_the_request() -> None:
    text, ok = _verdict(
        reports=[
            _report(
                outcome="unchanged",
                strict_tools=(),
                betas=(),
                reason="the body is not valid JSON",
                dropped_tools=(SEARCH,),
            )
        ],
        tool_inputs=[{"jurisdiction": "se", "terms": ["x"]}],
    )
    assert not ok and f"NOT on {SEARCH}: the body is not valid JSON" in text
    assert "verdict: FAIL (strict not on the request)" in text
    text, ok = _verdict(tool_inputs=[{"jurisdiction": "se", "terms": ["x"]}])
    assert not ok and "the relay changed no request" in text


@pytestmark_relay
@pytest.mark.parametrize(
    "arguments",
    [
        {"jurisdiction": "se", "terms": '["payout"]'},  # the array as a string
        {"jurisdiction": "fi", "terms": ["payout"]},  # not in the enum
        {"jurisdiction": "se", "terms": ["x"], "extra": 1},  # not in the schema
    ],
)
def test_verdict_fails_on_arguments_the_schema_refuses(arguments: Any) -> None:
    text, ok = _verdict(reports=[_report()], tool_inputs=[arguments])
    assert not ok and "arguments: INVALID" in text
    text, ok = _verdict(reports=[_report()])
    assert not ok and "no call to the tool" in text
