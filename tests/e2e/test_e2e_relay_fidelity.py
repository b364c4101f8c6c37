"""End to end: with the relay, the API receives what Claude Code sends without
it, plus the two fields and their betas (proxy mode, first-party).

The real CLI runs twice with the caller's environment of a first-party user
(no ``ANTHROPIC_BASE_URL``; ``HTTPS_PROXY`` and ``NODE_EXTRA_CA_CERTS`` lead
to ``Upstream.first_party`` in ``tests/lib/relay_upstream.py``, a TLS
stand-in for ``api.anthropic.com``): once without the relay, once with it,
when the SDK makes itself the CLI's HTTPS proxy and forwards through the
caller's own. Every request the stand-in
records is compared. The normalisation, and nothing more:

- ids that differ on every run: the session, prompt and client request ids
  (headers, ``metadata.user_id``, the billing line's ``cc_prompt_id``), the
  stand-in's own message/request/tool-use ids (``*_fake<N>``), the billing
  line's ``cch`` hash, and the tool durations Claude Code reports;
- per-connection headers: ``Connection`` (hop by hop) and ``Content-Length``;
- side requests (``GET /api/claude_code/*``) are compared as the set of
  routes requested: how often Claude Code polls them depends on timing and
  on what it has cached.

What the relay adds is then checked exactly: ``strict`` and
``input_examples`` on the SDK tool, and ``structured-outputs-2025-12-15`` and
``advanced-tool-use-2025-11-20`` appended to ``anthropic-beta``. The test
fails the day a CLI version makes the two runs differ otherwise.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from tests.lib.cases import (
    ARGUMENTS,
    LOOKUP,
    SEARCH,
    SERVER,
    STRICT_FIELDS,
    LegalServer,
)
from tests.lib.cli_harness import isolated_env, run_turn
from tests.lib.fake_api import RecordedRequest, loading, text, tool_use
from tests.lib.relay_upstream import Upstream

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("tool-fields-relay")]

ADDED_BETAS = ["structured-outputs-2025-12-15", "advanced-tool-use-2025-11-20"]
FIRST_PARTY_BETAS = {  # what a custom base URL loses (FINDINGS.md)
    "prompt-caching-scope-2026-01-05",
    "mid-conversation-system-clear-at-2026-08-21",
    "thinking-binding-controls-2026-08-01",
    "cache-diagnosis-2026-04-07",
}
_PER_RUN_HEADERS = {
    "x-claude-code-session-id",
    "x-claude-code-prompt-id",
    "x-client-request-id",
}
_PER_CONNECTION_HEADERS = {"connection", "content-length"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STAND_IN_ID = re.compile(r"\b(msg|req|toolu)_fake\d+")
_CCH = re.compile(r"cch=[0-9a-f]{5}")
_DURATION = re.compile(r"=\d+")


def _text(value: str) -> str:
    value = _UUID.sub("<uuid>", value)
    value = _STAND_IN_ID.sub(r"\1_<id>", value)
    return _CCH.sub("cch=<hash>", value)


def _normalised(value: Any) -> Any:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items()}
    return value


def _headers(request: RecordedRequest) -> dict[str, str]:
    headers = {}
    for name, value in request.headers.items():
        if name in _PER_CONNECTION_HEADERS:
            continue
        if name in _PER_RUN_HEADERS:
            value = "<id>"
        elif name == "x-claude-code-prev-tool-durations":
            value = _DURATION.sub("=<ms>", value)
        headers[name] = _text(value)
    return headers


async def _capture(
    claude_cli: str,
    home: Path,
    cwd: Path,
    directory: Path,
    tool_search: str,
    relay: bool,
) -> Upstream:
    stand_in = Upstream.first_party(directory).start()
    try:
        stand_in.api.script(
            *loading(tool_search, SEARCH, LOOKUP),
            tool_use(SEARCH, ARGUMENTS),
            text("Found one case."),
        )
        env = isolated_env("", home, ENABLE_TOOL_SEARCH=tool_search, **stand_in.env())
        turn = await run_turn(
            cli=claude_cli,
            prompt="Find Swedish cases about insurance payouts.",
            mcp_servers={SERVER: LegalServer(STRICT_FIELDS, lookup=True).config},
            env=env,
            cwd=cwd,
            allowed_tools=[SEARCH, LOOKUP],
            tool_fields_relay=relay,
        )
        assert turn.result is not None and not turn.result.is_error
        assert turn.result.result == "Found one case."
    finally:
        stand_in.stop()
    return stand_in


async def test_the_api_receives_what_claude_code_sends_plus_the_fields(
    claude_cli: str, e2e_home: Path, e2e_cwd: Path, tmp_path: Path, tool_search: str
) -> None:
    runs = {}
    for relay in (False, True):
        directory = tmp_path / ("relay" if relay else "plain")
        directory.mkdir()
        runs[relay] = await _capture(
            claude_cli, e2e_home, e2e_cwd, directory, tool_search, relay
        )
    plain, relayed = runs[False].api.requests, runs[True].api.requests

    # The CLI stayed first-party: its side requests and betas are there.
    side = {(r.method, r.route) for r in plain if r.method == "GET"}
    assert side == {
        ("GET", "/api/claude_code/settings"),
        ("GET", "/api/claude_code/policy_limits"),
    }
    assert {(r.method, r.route) for r in relayed if r.method == "GET"} == side
    # The relay reached the stand-in as the caller's own proxy.
    assert {seen.path for seen in runs[True].connects} == {"api.anthropic.com:443"}

    posts = [
        [r for r in requests if r.method == "POST"] for requests in (plain, relayed)
    ]
    assert len(posts[0]) == len(posts[1]) >= 2
    for sent, received in zip(*posts, strict=True):
        assert received.path == sent.path
        expected_headers = _headers(sent)
        betas = sent.headers["anthropic-beta"].split(",")
        assert set(betas) >= FIRST_PARTY_BETAS
        if sent.tool(SEARCH) is not None:
            expected_headers["anthropic-beta"] = ",".join(
                betas + [b for b in ADDED_BETAS if b not in betas]
            )
        assert _headers(received) == expected_headers

        expected = copy.deepcopy(sent.body)
        for entry in expected.get("tools", []):
            if entry["name"] == SEARCH:
                entry.update(copy.deepcopy(STRICT_FIELDS))
        assert _normalised(received.body) == _normalised(expected)
