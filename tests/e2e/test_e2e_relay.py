"""End to end: ``tool_fields_relay=True`` with the real Claude Code CLI.

The relay sits between the CLI and the loopback stand-in API
(``fake_api.py``): the CLI's ``ANTHROPIC_BASE_URL`` is the relay, the relay's
upstream is the stand-in. What the stand-in records is therefore what the
Messages API would receive. Every test runs with tool search off (MCP tools in
``tools`` from the first request) and on (the model loads them with
``ToolSearch``, after which they carry ``defer_loading: true``).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ResultError,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import StreamEvent
from tests.lib.cases import (
    ARGUMENTS,
    CASE_SCHEMA,
    LOOKUP,
    SEARCH,
    SERVER,
    STRICT_FIELDS,
    LegalServer,
)
from tests.lib.cli_harness import Turn, isolated_env, run_turn
from tests.lib.fake_api import (
    FakeMessagesAPI,
    RecordedRequest,
    api_error,
    loading,
    text,
    tool_use,
)

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("tool-fields-relay")]

INPUT_EXAMPLES = STRICT_FIELDS["input_examples"]
BETA = "advanced-tool-use-2025-11-20"
STRUCTURED_OUTPUTS = "structured-outputs-2025-12-15"
PLAIN_KEYS = {"name", "description", "input_schema", "defer_loading"}


def legal_server(**options: Any) -> LegalServer:
    """``search`` (strict, with input examples) and ``lookup`` (plain)."""
    return LegalServer(STRICT_FIELDS, lookup=True, **options)


def with_tool(api: FakeMessagesAPI, name: str) -> list[RecordedRequest]:
    requests = [r for r in api.messages_requests() if r.tool(name) is not None]
    assert requests, f"no request carried {name}: " + repr(
        [[t.get("name") for t in r.tools] for r in api.messages_requests()]
    )
    return requests


@pytest.fixture
def relay_env(e2e_home: Path, fake_api: FakeMessagesAPI) -> Any:
    def make(tool_search: str, **extra: str) -> dict[str, str]:
        return isolated_env(
            fake_api.url, e2e_home, ENABLE_TOOL_SEARCH=tool_search, **extra
        )

    return make


async def relay_turn(
    cli: str, cwd: Path, env: dict[str, str], server: LegalServer, **options: Any
) -> Turn:
    return await run_turn(
        cli=cli,
        prompt="Find Swedish cases about insurance payouts.",
        mcp_servers={SERVER: server.config},
        env=env,
        cwd=cwd,
        allowed_tools=[SEARCH, LOOKUP],
        **{"tool_fields_relay": True, **options},
    )


# --------------------------------------------------------------------------
# The fields arrive; nothing else changes; the round trip works
# --------------------------------------------------------------------------


async def test_fields_reach_the_api_and_the_tool_round_trip_works(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
    tool_search: str,
) -> None:
    server = legal_server()
    fake_api.script(
        *loading(tool_search, SEARCH, LOOKUP),
        tool_use(SEARCH, ARGUMENTS),
        text("Found one case."),
    )
    turn = await relay_turn(claude_cli, e2e_cwd, relay_env(tool_search), server)

    for request in with_tool(fake_api, SEARCH):
        search = request.tool(SEARCH)
        assert search is not None
        assert search["strict"] is True
        assert search["input_examples"] == INPUT_EXAMPLES
        assert search["input_schema"] == CASE_SCHEMA
        betas = request.headers["anthropic-beta"].split(",")
        # The betas Claude Code sends with strict and input_examples, once.
        assert betas.count(BETA) == betas.count(STRUCTURED_OUTPUTS) == 1
        lookup = request.tool(LOOKUP)
        assert lookup is not None
        assert set(lookup) <= PLAIN_KEYS, lookup
        if tool_search == "true":
            assert search["defer_loading"] is True
            assert lookup["defer_loading"] is True
        # The stand-in sees the CLI's paths, never the relay's secret.
        assert request.path == "/v1/messages?beta=true"
        assert request.headers["x-api-key"] == "sk-ant-e2e-dummy-key"

    assert server.calls == [ARGUMENTS]
    results = [b for r in fake_api.messages_requests() for b in r.tool_results()]
    assert any("NJA 2019 s. 123" in json.dumps(b) for b in results)
    assert turn.result is not None and not turn.result.is_error
    assert turn.result.result == "Found one case."


async def test_everything_but_the_added_fields_is_what_the_cli_sent(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
) -> None:
    """The same turn with the relay off and on: per request, the tools are
    identical except ``strict``/``input_examples`` on ``search``."""
    bodies: dict[bool, list[dict[str, Any]]] = {}
    betas: dict[bool, list[list[str]]] = {}
    for relay in (False, True):
        api = FakeMessagesAPI().start()
        try:
            api.script(tool_use(SEARCH, ARGUMENTS), text("Found one case."))
            env = relay_env("false", ANTHROPIC_BASE_URL=api.url)
            await relay_turn(
                claude_cli, e2e_cwd, env, legal_server(), tool_fields_relay=relay
            )
            bodies[relay] = [r.body for r in api.messages_requests()]
            betas[relay] = [
                r.headers.get("anthropic-beta", "").split(",")
                for r in api.messages_requests()
            ]
        finally:
            api.stop()
    assert len(bodies[False]) == len(bodies[True]) == 2
    for sent, relayed_betas in zip(betas[False], betas[True], strict=True):
        # The CLI's betas in its order, then the two the fields need, once.
        added = [b for b in (STRUCTURED_OUTPUTS, BETA) if b not in sent]
        assert relayed_betas == sent + added
    for plain, relayed in zip(bodies[False], bodies[True], strict=True):
        expected = copy.deepcopy(plain["tools"])
        for entry in expected:
            if entry["name"] == SEARCH:
                entry.update(strict=True, input_examples=INPUT_EXAMPLES)
        assert relayed["tools"] == expected
        assert relayed["messages"][:1] == plain["messages"][:1]
        assert relayed.keys() == plain.keys()


async def test_names_are_normalized_as_the_cli_does(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
) -> None:
    # Measured with 2.1.332: each UTF-16 code unit outside [A-Za-z0-9_-]
    # becomes "_" (the emoji is two), in server and tool names alike.
    key = "lagrum-ö📚 v2"
    api_name = "mcp__lagrum-____v2__search"

    @tool("search", "Search case law", CASE_SCHEMA, strict=True)
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "none"}]}

    fake_api.script(text("Nothing."))
    await run_turn(
        cli=claude_cli,
        prompt="Search.",
        mcp_servers={key: create_sdk_mcp_server("legal", tools=[search])},
        env=relay_env("false"),
        cwd=e2e_cwd,
        tool_fields_relay=True,
    )
    entry = with_tool(fake_api, api_name)[0].tool(api_name)
    assert entry is not None and entry["strict"] is True


# --------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------


async def test_a_delayed_sse_chunk_reaches_the_cli_before_the_stream_ends(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
    tool_search: str,
) -> None:
    reply = text("First words, then the rest after a pause.")
    reply.pause_after_event = 3  # message_start, content_block_start, 1st delta
    reply.pause_s = 2.0
    fake_api.script(reply)
    arrivals: list[tuple[float, str]] = []
    options = ClaudeAgentOptions(
        cli_path=claude_cli,
        cwd=str(e2e_cwd),
        env=relay_env(tool_search),
        mcp_servers={SERVER: legal_server().config},
        setting_sources=[],
        include_partial_messages=True,
        tool_fields_relay=True,
    )

    async def collect() -> None:
        async for message in query(prompt="Say something.", options=options):
            if isinstance(message, StreamEvent):
                delta = message.event.get("delta") or {}
                if delta.get("type") == "text_delta":
                    arrivals.append((time.time(), delta["text"]))

    await asyncio.wait_for(collect(), 90)
    answered = [r for r in fake_api.requests if "resumed_at" in r.extra]
    assert len(answered) == 1
    assert arrivals, "no text delta reached the caller"
    first_at, first_text = arrivals[0]
    assert first_text == reply.blocks[0]["text"][: reply.chunk_size * 4]
    # The first delta was in the caller's hands while the stand-in was
    # still holding back the rest of the stream.
    assert first_at < answered[0].extra["resumed_at"]
    assert answered[0].extra["resumed_at"] - first_at > 1.0


# --------------------------------------------------------------------------
# No silent downgrade: an API 400 reaches the caller
# --------------------------------------------------------------------------


async def test_an_api_400_surfaces_to_the_caller_with_its_message(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
    tool_search: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    message = "tools.3.custom: strict schema not supported (stand-in)"
    fake_api.script(*loading(tool_search, SEARCH), api_error(400, message))
    caplog.set_level(logging.WARNING, "claude_agent_sdk._internal.relay.lifecycle")
    with pytest.raises(ResultError) as raised:
        await relay_turn(claude_cli, e2e_cwd, relay_env(tool_search), legal_server())
    error = raised.value
    assert getattr(error, "api_error_status", None) == 400, repr(error)
    assert message in str(error)
    # The stand-in got the modified request, and the relay said so.
    refused = [r for r in fake_api.requests if r.answered_with == "error 400"]
    assert refused and all(r.tool(SEARCH)["strict"] is True for r in refused)  # type: ignore[index]
    warnings = [r.getMessage() for r in caplog.records]
    assert any("400" in w and SEARCH in w for w in warnings), warnings
    assert not any("sk-ant-e2e-dummy-key" in w for w in warnings)


# --------------------------------------------------------------------------
# The secret prefix, and proxies
# --------------------------------------------------------------------------


def _cli_env(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


def _status(url: str) -> int:
    request = urllib.request.Request(
        url,
        data=b'{"model": "m", "messages": []}',
        headers={"x-api-key": "sk-ant-stolen", "content-type": "application/json"},
        method="POST",
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


async def test_a_request_without_the_secret_prefix_is_refused(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
    tool_search: str,
) -> None:
    seen: dict[str, Any] = {}
    holder: dict[str, Any] = {}

    async def probe() -> None:
        # Runs inside the tool call, while the CLI and its relay are live.
        process = holder["turn_transport"].inner._process
        env = _cli_env(process.pid)
        base = env["ANTHROPIC_BASE_URL"]
        seen["base"] = base
        seen["no_proxy"] = env["NO_PROXY"]
        origin, secret = base.rsplit("/", 1)
        seen["secret"] = secret
        for label, url in {
            "none": f"{origin}/v1/messages",
            "wrong": f"{origin}/{'x' * len(secret)}/v1/messages",
            "prefix-of-secret": f"{origin}/{secret[:-1]}/v1/messages",
        }.items():
            seen[label] = await asyncio.to_thread(_status, url)

    server = legal_server(on_search=probe)
    fake_api.script(
        *loading(tool_search, SEARCH), tool_use(SEARCH, ARGUMENTS), text("Done.")
    )

    from tests.lib import cli_harness

    original = cli_harness.RecordingTransport.__init__

    def remember(self: Any, inner: Any) -> None:
        original(self, inner)
        holder["turn_transport"] = self

    cli_harness.RecordingTransport.__init__ = remember  # type: ignore[method-assign]
    try:
        turn = await relay_turn(claude_cli, e2e_cwd, relay_env(tool_search), server)
    finally:
        cli_harness.RecordingTransport.__init__ = original  # type: ignore[method-assign]

    assert turn.result is not None and not turn.result.is_error
    assert seen["base"].startswith("http://127.0.0.1:")
    assert len(seen["secret"]) >= 22  # >= 128 bits of base64url
    assert {"127.0.0.1", "localhost"} <= set(seen["no_proxy"].split(","))
    assert (seen["none"], seen["wrong"], seen["prefix-of-secret"]) == (404, 404, 404)
    # None of them was forwarded: the stand-in saw only the CLI's requests.
    assert all(r.headers.get("x-api-key") != "sk-ant-stolen" for r in fake_api.requests)
    assert all(seen["secret"] not in r.path for r in fake_api.requests)


async def test_https_proxy_in_the_callers_environment_keeps_the_loopback_leg(
    claude_cli: str,
    fake_api: FakeMessagesAPI,
    relay_env: Any,
    e2e_cwd: Path,
    tool_search: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A proxy that refuses every connection: any request the CLI sent
    # through it would fail. The caller's NO_PROXY names only the API's own
    # port (so the relay, taking Claude Code's path, reaches it directly),
    # not the relay's.
    dead_proxy = "http://127.0.0.1:9"
    env = relay_env(tool_search)
    for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        env.pop(name, None)
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", dead_proxy)
    monkeypatch.setenv("NO_PROXY", fake_api.url.removeprefix("http://"))
    server = legal_server()
    fake_api.script(
        *loading(tool_search, SEARCH), tool_use(SEARCH, ARGUMENTS), text("Done.")
    )
    turn = await relay_turn(claude_cli, e2e_cwd, env, server)
    assert turn.result is not None and not turn.result.is_error
    assert server.calls == [ARGUMENTS]
    assert with_tool(fake_api, SEARCH)[0].tool(SEARCH)["strict"] is True  # type: ignore[index]


async def test_bedrock_is_refused_before_anything_starts(
    claude_cli: str, relay_env: Any, e2e_cwd: Path
) -> None:
    # Two platforms at once (each alone is served: test_e2e_platforms.py).
    env = relay_env("false", CLAUDE_CODE_USE_BEDROCK="1", CLAUDE_CODE_USE_VERTEX="1")
    with pytest.raises(ValueError, match="CLAUDE_CODE_USE_BEDROCK"):
        await relay_turn(claude_cli, e2e_cwd, env, legal_server())
