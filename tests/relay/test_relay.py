"""Unit and contract tests of the tool-fields relay (``tool_fields_relay=True``).

Against a stdlib stand-in upstream (``relay_upstream.py``), without the CLI;
``tests/e2e/test_e2e_relay.py`` covers the real CLI.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool
from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate
from tests.relay.cases import EXAMPLES, FIELDS, PLAIN, SCHEMA, STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay import server as relay_module
    from claude_agent_sdk._internal.relay.connections import http_client_module
    from claude_agent_sdk._internal.relay.evidence import normalize_mcp_name
    from claude_agent_sdk._internal.relay.lifecycle import (
        ToolFieldsRelay,
        ToolFieldsRelayError,
        collect_tool_fields,
        outbound_proxy,
        refuse_unservable_provider,
        resolve_upstream,
        start_for_cli,
    )
    from claude_agent_sdk._internal.relay.network import point_cli_at
    from claude_agent_sdk._internal.relay.rewrite import (
        ADVANCED_TOOL_USE_BETA,
        rewrite_body,
        with_beta,
    )
except ImportError:  # a tree without the relay patch: these tests must fail
    relay_module = None  # type: ignore[assignment]
    http_client_module = None  # type: ignore[assignment]
    ADVANCED_TOOL_USE_BETA = "advanced-tool-use-2025-11-20"
    ToolFieldsRelay = None  # type: ignore[assignment, misc]
    ToolFieldsRelayError = None  # type: ignore[assignment, misc]
    collect_tool_fields = None  # type: ignore[assignment]
    normalize_mcp_name = None  # type: ignore[assignment]
    outbound_proxy = None  # type: ignore[assignment]
    point_cli_at = None  # type: ignore[assignment]
    refuse_unservable_provider = None  # type: ignore[assignment]
    resolve_upstream = None  # type: ignore[assignment]
    rewrite_body = None  # type: ignore[assignment]
    start_for_cli = None  # type: ignore[assignment]
    with_beta = None  # type: ignore[assignment]
from claude_agent_sdk._internal.transport.subprocess_cli import (
    SubprocessCLITransport,
)

pytestmark = pytest.mark.requires_patch("tool-fields-relay")

STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-12-15"

http = http_client_module() if http_client_module is not None else None
API_KEY = "sk-ant-api03-SECRET-never-logged"
BEARER = "Bearer oauth-SECRET-never-logged"


def relay_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name.startswith("claude-agent-sdk-tool")
    ]


def open_fds() -> set[str]:
    return {entry.name for entry in Path("/proc/self/fd").iterdir()}


def new_fds(before: set[str], within: float = 10.0) -> set[str]:
    """Descriptors opened since ``before`` that are still open after ``within`` s.

    The stand-in upstream closes its side of a connection on its own handler
    thread, a moment after the relay has closed its side; a descriptor the
    relay leaked would stay open for good, so a short wait keeps the check
    strict without racing that thread.
    """
    deadline = time.monotonic() + within
    while (extra := open_fds() - before) and time.monotonic() < deadline:
        time.sleep(0.02)
    return extra


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------


def test_collect_tool_fields_from_sdk_servers() -> None:
    @tool("search", "s", SCHEMA, strict=True, input_examples=EXAMPLES)
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("strict.only", "s", SCHEMA, strict=True)
    async def strict_only(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("loose", "s", SCHEMA, strict=False, extra_fields={"title": "T"})
    async def loose(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("plain", "s", SCHEMA)
    async def plain(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    server = create_sdk_mcp_server("x", tools=[search, strict_only, loose, plain])
    fields = collect_tool_fields(
        {
            "case law": server,
            "stdio": {"type": "stdio", "command": "x"},
            "bad": {"type": "sdk", "instance": object()},
        }
    )
    assert fields == {
        "mcp__case_law__search": {"strict": True, "input_examples": EXAMPLES},
        "mcp__case_law__strict_only": {"strict": True},
    }
    assert collect_tool_fields(None) == {}


def test_names_normalize_as_the_cli_does() -> None:
    assert normalize_mcp_name("docs") == "docs"
    assert normalize_mcp_name("case law.v2") == "case_law_v2"
    assert normalize_mcp_name("lagrum-ö📚") == "lagrum-___"


@pytest.mark.parametrize(
    "name",
    ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"],
)
def test_unservable_providers_are_refused(name: str) -> None:
    with pytest.raises(ToolFieldsRelayError, match=name):
        refuse_unservable_provider({name: "1"})
    for unset in ("", "0", "false"):
        refuse_unservable_provider({name: unset})


async def test_transport_refuses_a_provider_from_options_env_before_starting() -> None:
    before = relay_threads()
    transport = SubprocessCLITransport(
        prompt="x",
        options=ClaudeAgentOptions(
            cli_path="/nonexistent/claude",
            # Two platforms at once: which one the CLI uses cannot be told.
            env={"CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_USE_BEDROCK": "1"},
            tool_fields_relay=True,
        ),
    )
    with pytest.raises(ToolFieldsRelayError, match="CLAUDE_CODE_USE_VERTEX"):
        await transport.connect()
    assert relay_threads() == before


async def test_transport_refuses_a_provider_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Foundry without a resource or base URL: nothing to serve.
    monkeypatch.setenv("CLAUDE_CODE_USE_FOUNDRY", "true")
    monkeypatch.delenv("ANTHROPIC_FOUNDRY_RESOURCE", raising=False)
    monkeypatch.delenv("ANTHROPIC_FOUNDRY_BASE_URL", raising=False)
    transport = SubprocessCLITransport(
        prompt="x",
        options=ClaudeAgentOptions(
            cli_path="/nonexistent/claude", tool_fields_relay=True
        ),
    )
    with pytest.raises(ToolFieldsRelayError, match="CLAUDE_CODE_USE_FOUNDRY"):
        await transport.connect()


def test_upstream_comes_from_env_else_the_public_api() -> None:
    assert resolve_upstream({}) == "https://api.anthropic.com"
    assert resolve_upstream({"ANTHROPIC_BASE_URL": ""}) == "https://api.anthropic.com"
    assert resolve_upstream({"ANTHROPIC_BASE_URL": "https://gw.example/a/"}) == (
        "https://gw.example/a"
    )
    with pytest.raises(ToolFieldsRelayError):
        resolve_upstream({"ANTHROPIC_BASE_URL": "ftp://x"})


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, None),
        ({"HTTPS_PROXY": "http://p:3128"}, "http://p:3128"),
        ({"https_proxy": "http://low:1", "HTTPS_PROXY": "http://up:2"}, "http://low:1"),
        # As Claude Code 2.1.332 (measured, docs/relay.md): a SOCKS ALL_PROXY
        # is ignored, an http one used; HTTP_PROXY serves https too.
        ({"ALL_PROXY": "socks5://p:1080"}, None),
        ({"ALL_PROXY": "http://p:3128"}, "http://p:3128"),
        ({"HTTP_PROXY": "http://p:3128"}, "http://p:3128"),
        ({"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "api.anthropic.com"}, None),
        ({"HTTPS_PROXY": "http://p:3128", "no_proxy": ".anthropic.com"}, None),
        ({"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "*"}, None),
        ({"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "example.com"}, "http://p:3128"),
        (
            {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "anthropic.com:8443"},
            "http://p:3128",
        ),
    ],
)
def test_outbound_proxy_follows_https_proxy_and_no_proxy(
    env: dict[str, str], expected: str | None
) -> None:
    assert outbound_proxy("https://api.anthropic.com", env) == expected


def test_cli_env_points_at_the_relay_and_bypasses_proxies_for_loopback() -> None:
    env = {
        "NO_PROXY": "corp.example",
        "no_proxy": "internal",
        "ANTHROPIC_BASE_URL": "u",
    }
    point_cli_at(env, "http://127.0.0.1:1/s")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1/s"
    assert (
        env["NO_PROXY"]
        == env["no_proxy"]
        == "corp.example,internal,127.0.0.1,localhost"
    )
    fresh: dict[str, str] = {}
    point_cli_at(fresh, "http://127.0.0.1:1/s")
    assert fresh["NO_PROXY"] == "127.0.0.1,localhost"


# --------------------------------------------------------------------------
# The running relay
# --------------------------------------------------------------------------


async def test_messages_request_is_rewritten_and_forwarded(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any
) -> None:
    response = await client.post(
        relay.url + "/v1/messages?beta=true",
        json=messages_body(PLAIN, STRICT),
        headers={"x-api-key": API_KEY, "anthropic-beta": "claude-code-20250219"},
    )
    assert response.status_code == 200 and response.json() == {"ok": True}
    seen = upstream.seen[-1]
    assert seen.path == "/v1/messages?beta=true"
    assert seen.headers["x-api-key"] == API_KEY
    assert seen.headers["anthropic-beta"] == (
        f"claude-code-20250219,{STRUCTURED_OUTPUTS_BETA},{ADVANCED_TOOL_USE_BETA}"
    )
    tools = {t["name"]: t for t in seen.json()["tools"]}
    assert tools[STRICT]["strict"] is True
    assert "strict" not in tools[PLAIN]
    assert response.headers["request-id"] == "req_upstream"


async def test_count_tokens_is_rewritten_too(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any
) -> None:
    await client.post(
        relay.url + "/v1/messages/count_tokens?beta=true", json=messages_body(STRICT)
    )
    assert upstream.seen[-1].json()["tools"][0]["strict"] is True


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/complete"),
        ("POST", "/v1/messages/batches"),
        ("PUT", "/v1/messages"),
        ("GET", "/v1/models?limit=5"),
    ],
)
async def test_other_paths_and_methods_pass_untouched(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any, method: str, path: str
) -> None:
    body = json.dumps(messages_body(STRICT)).encode()
    content = None if method == "GET" else body
    await client.request(method, relay.url + path, content=content)
    seen = upstream.seen[-1]
    assert (seen.method, seen.path) == (method, path)
    assert seen.body == (content or b"")
    assert "anthropic-beta" not in seen.headers


def _compress(plain: bytes, encoding: str) -> bytes:
    import zlib

    if encoding == "gzip":
        return gzip.compress(plain)
    if encoding == "deflate":
        return zlib.compress(plain)
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate
    return compressor.compress(plain) + compressor.flush()


def _decompress(body: bytes, encoding: str) -> bytes:
    import zlib

    return zlib.decompress(body, {"gzip": 31, "deflate": 15}.get(encoding, -15))


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
async def test_compressed_request_bodies_are_rewritten_in_their_encoding(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any, encoding: str
) -> None:
    # CLAUDE_CODE_GZIP_REQUEST_BODIES=1: the fields must reach such bodies
    # too, and the body goes on in the coding it came in (header unchanged).
    header = "deflate" if encoding == "raw-deflate" else encoding
    body = _compress(json.dumps(messages_body(PLAIN, STRICT)).encode(), encoding)
    response = await client.post(
        relay.url + "/v1/messages", content=body, headers={"content-encoding": header}
    )
    assert response.status_code == 200
    seen = upstream.seen[-1]
    assert seen.headers["content-encoding"] == header
    assert int(seen.headers["content-length"]) == len(seen.body)
    tools = {
        t["name"]: t for t in json.loads(_decompress(seen.body, encoding))["tools"]
    }
    assert tools[STRICT]["strict"] is True
    assert tools[STRICT]["input_examples"] == EXAMPLES
    assert "strict" not in tools[PLAIN]
    assert STRUCTURED_OUTPUTS_BETA in seen.headers["anthropic-beta"]


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", b"\x1f\x8bnot gzip at all mcp__docs__search"),
        ("zstd", b"(\xb5/\xfd mcp__docs__search"),
        # mtime=0: the parameter id is the body, and pytest-xdist's workers
        # must collect the same ids.
        ("gzip, gzip", gzip.compress(gzip.compress(b'{"tools": []}'), mtime=0)),
    ],
    ids=["not-gzip", "zstd", "gzip-twice"],
)
async def test_an_undecodable_body_is_forwarded_unchanged_with_the_warning(
    relay: ToolFieldsRelay,
    upstream: Upstream,
    client: Any,
    caplog: pytest.LogCaptureFixture,
    encoding: str,
    body: bytes,
) -> None:
    caplog.set_level(logging.WARNING)
    await client.post(
        relay.url + "/v1/messages", content=body, headers={"content-encoding": encoding}
    )
    assert upstream.seen[-1].body == body
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "unchanged" in warnings[0], warnings
    assert STRICT in warnings[0]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/messages",
        "/{wrong}/v1/messages",
        "/{short}/v1/messages",
        "/v1/{secret}/messages",
        "/",
    ],
)
async def test_requests_without_the_secret_prefix_are_refused(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any, path: str
) -> None:
    secret = relay.url.rsplit("/", 1)[1]
    assert len(secret) >= 22  # 128+ bits of base64url
    origin = relay.url.rsplit("/", 1)[0]
    url = origin + path.format(
        wrong="x" * len(secret), short=secret[:-1], secret=secret
    )
    response = await client.post(
        url, json=messages_body(STRICT), headers={"x-api-key": API_KEY}
    )
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"
    assert API_KEY not in response.text and secret not in response.text
    assert upstream.seen == []


async def test_over_a_cap_the_request_is_sent_with_the_first_strict(
    upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    names = [f"mcp__docs__t{i}" for i in range(21)]
    async with ToolFieldsRelay(
        dict.fromkeys(names, {"strict": True}), upstream.url
    ) as r:
        response = await client.post(r.url + "/v1/messages", json=messages_body(*names))
    assert response.status_code == 200
    tools = upstream.seen[-1].json()["tools"]
    assert [t.get("strict") for t in tools] == [True] * 20 + [None]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and names[-1] in warnings[0]
    assert "21 strict tools" in warnings[0] and "limit of 20" in warnings[0]
    assert any("21 strict tools" in rec.getMessage() for rec in caplog.records)


async def test_an_api_400_to_a_modified_request_passes_through_and_warns(
    relay: ToolFieldsRelay,
    upstream: Upstream,
    client: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream.reply_status = 400
    upstream.reply_body = json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    ).encode()
    caplog.set_level(logging.WARNING)
    response = await client.post(relay.url + "/v1/messages", json=messages_body(STRICT))
    assert response.status_code == 400
    assert response.content == upstream.reply_body
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and STRICT in warnings[0].getMessage()
    assert "req_upstream" in warnings[0].getMessage()


async def test_an_api_400_to_an_unmodified_request_is_not_logged(
    relay: ToolFieldsRelay,
    upstream: Upstream,
    client: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream.reply_status = 400
    caplog.set_level(logging.WARNING)
    response = await client.post(relay.url + "/v1/messages", json=messages_body(PLAIN))
    assert response.status_code == 400
    assert not [r for r in caplog.records if r.name == relay_module.__name__]


async def test_unreachable_upstream_is_a_502_in_the_apis_shape(client: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    async with ToolFieldsRelay(FIELDS, dead) as r:
        response = await client.post(r.url + "/v1/messages", json=messages_body())
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "api_error"


# --------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------


async def test_a_delayed_chunk_streams_through_before_the_response_ends(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any
) -> None:
    # Logic, not speed: the stand-in sends the rest only once the client has
    # the first chunk (or after 60 s), so a relay that held the first back
    # until the response ended gets it to the client after the rest was
    # sent; one that streams, before, however starved the machine.
    upstream.pause = 60.0
    upstream.release_when = 1_000_000  # released by this test, not by a count
    arrivals: list[tuple[float, bytes]] = []
    async with client.stream("POST", relay.url + "/slow", json={}) as response:
        assert response.headers["content-type"] == "text/event-stream"
        async for chunk in response.aiter_raw():
            arrivals.append((time.time(), chunk))
            upstream._slow_released.set()  # noqa: SLF001
    assert b"".join(c for _, c in arrivals) == upstream.first + upstream.rest
    first_at = arrivals[0][0]
    assert arrivals[0][1] == upstream.first
    assert first_at < upstream.events["rest_sent"]


async def test_headers_and_content_encoding_pass_unchanged(
    relay: ToolFieldsRelay, client: Any
) -> None:
    async with client.stream(
        "POST", relay.url + "/gzip", json={}, headers={"accept-encoding": "gzip"}
    ) as response:
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["x-custom"] == "kept"
    assert gzip.decompress(raw) == b"data: compressed\n\n"
    assert (
        "server" not in response.headers or "uvicorn" not in response.headers["server"]
    )


async def test_many_parallel_streams_are_not_held_back_by_a_pool_limit(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    # The CLI may run many requests at once (subagents, side requests); each
    # gets its own upstream connection at once, not a place in a queue. The
    # stand-in holds every stream open until all of them are in flight at
    # once (then lets them go): with a pool limit below that number they
    # never are, and the streams end only after the long pause. Logic, not
    # speed: a starved machine only makes it slower.
    streams = 24
    upstream.pause = 60.0
    upstream.release_when = streams

    async def one_stream(c: Any) -> None:
        async with c.stream("POST", relay.url + "/slow", json={}) as response:
            async for _ in response.aiter_raw():  # all of it: the stream stays open
                pass

    # One client, its connections made as the streams start (a client each
    # would spend the test's time loading CA bundles, one after the other).
    async with http.AsyncClient(trust_env=False, timeout=90) as c:
        await asyncio.gather(*(one_stream(c) for _ in range(streams)))
    assert upstream.slow_most_in_flight == streams


async def test_client_disconnect_closes_the_upstream_request(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    # Logic, not speed: the stand-in is silent for 60 s unless the relay
    # hangs up on it first; it records which came first.
    upstream.pause = 60.0
    async with (
        http.AsyncClient(trust_env=False, timeout=30) as c,
        c.stream("POST", relay.url + "/slow", json={}) as response,
    ):
        async for _ in response.aiter_raw():
            break  # got the first chunk; now hang up
    deadline = time.monotonic() + 90  # a guard: the pause ends after 60 s
    while not upstream.events.keys() & {"disconnected_at", "rest_sent"}:
        assert time.monotonic() < deadline, upstream.events
        await asyncio.sleep(0.05)
    assert "disconnected_at" in upstream.events
    assert "rest_sent" not in upstream.events  # not kept to the pause's end


def _raw_exchange(url: str, data: bytes, *, responses: int = 1) -> bytes:
    """Send ``data`` as is on one connection to the relay and read until
    ``responses`` responses have ended (or the relay closes)."""
    host_port, _, prefix = url.removeprefix("http://").partition("/")
    port = int(host_port.rsplit(":", 1)[1])
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data.replace(b"/PREFIX", b"/" + prefix.encode()))
        while received.count(b'{"ok": true}') + received.count(b"error") < responses:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def _request(path: bytes, body: bytes = b"{}", *extra: bytes) -> bytes:
    head = [b"POST /PREFIX" + path + b" HTTP/1.1", b"Host: relay"]
    head += [*extra, b"Content-Length: " + str(len(body)).encode()]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


async def test_a_malformed_request_gets_a_400_and_is_never_forwarded(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    for garbage in (
        b"NOT HTTP AT ALL\r\n\r\n",
        b"POST /PREFIX/v1/messages HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        b"POST /PREFIX/v1/messages HTTP/1.1\r\n" + b"X: " + b"y" * 70000 + b"\r\n\r\n",
    ):
        reply = await asyncio.to_thread(_raw_exchange, relay.url, garbage)
        assert reply.startswith(b"HTTP/1.1 4"), reply[:80]
        assert b'"type":"error"' in reply.replace(b" ", b"")
    assert upstream.seen == []


async def test_pipelined_requests_on_one_connection_are_each_answered(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    three = b"".join(_request(b"/v1/other/" + str(i).encode()) for i in range(3))
    reply = await asyncio.to_thread(_raw_exchange, relay.url, three, responses=3)
    assert reply.count(b"HTTP/1.1 200") == 3
    assert [seen.path for seen in upstream.seen] == [f"/v1/other/{i}" for i in range(3)]


async def test_expect_100_continue_is_answered_before_the_body(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    host_port, _, prefix = relay.url.removeprefix("http://").partition("/")
    body = json.dumps(messages_body(STRICT)).encode()

    def exchange() -> bytes:
        with socket.create_connection(
            ("127.0.0.1", int(host_port.rsplit(":", 1)[1])), timeout=10
        ) as sock:
            head = _request(b"/v1/messages", b"", b"Expect: 100-continue")
            head = head.replace(
                b"Content-Length: 0", f"Content-Length: {len(body)}".encode()
            )
            sock.sendall(head.replace(b"/PREFIX", b"/" + prefix.encode()))
            interim = sock.recv(65536)
            sock.sendall(body)
            reply = b""
            while b'{"ok": true}' not in reply:
                reply += sock.recv(65536)
            return interim + reply

    reply = await asyncio.to_thread(exchange)
    assert reply.startswith(b"HTTP/1.1 100 ")
    assert b"HTTP/1.1 200 " in reply
    assert upstream.seen[0].json()["tools"][0]["strict"] is True


async def test_a_reader_that_stops_reading_is_not_buffered_for(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    # The upstream streams 96 MB as fast as it can; the "CLI" reads one
    # chunk and then nothing. The relay must stop reading from the upstream
    # once the CLI's socket and a small buffer are full, not take it all in.
    host_port, _, prefix = relay.url.removeprefix("http://").partition("/")

    def stalled_reader() -> tuple[int, int]:
        with socket.create_connection(
            ("127.0.0.1", int(host_port.rsplit(":", 1)[1])), timeout=10
        ) as sock:
            sock.sendall(_request(b"/big").replace(b"/PREFIX", b"/" + prefix.encode()))
            sock.recv(4096)
            time.sleep(1.5)
            stalled_at = int(upstream.events["big_written"])
            time.sleep(0.5)
            return stalled_at, int(upstream.events["big_written"])

    stalled_at, later = await asyncio.to_thread(stalled_reader)
    assert later == stalled_at  # no progress while the CLI reads nothing
    assert stalled_at < upstream.big // 3


async def test_a_failure_of_the_rewrite_forwards_the_request_unchanged_and_warns(
    relay: ToolFieldsRelay,
    upstream: Upstream,
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Never a 500 for a valid request: whatever goes wrong in the rewrite,
    # the request goes out as sent, with one WARNING naming the tools.
    module = relay_module
    real = rewrite_body

    def broken_once(body: bytes, fields: Any, *args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(module, "rewrite_body", real)
        raise RuntimeError("boom " + API_KEY)

    monkeypatch.setattr(module, "rewrite_body", broken_once)
    body = json.dumps(messages_body(STRICT)).encode()
    with caplog.at_level(logging.DEBUG):
        passed = await client.post(
            relay.url + "/v1/messages", content=body, headers={"x-api-key": API_KEY}
        )
    assert passed.status_code == 200
    assert upstream.seen[0].body == body
    assert "anthropic-beta" not in upstream.seen[0].headers
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert STRICT in warnings[0].getMessage()
    assert "RuntimeError" in caplog.text and API_KEY not in caplog.text
    ok = await client.post(relay.url + "/v1/messages", json=messages_body(STRICT))
    assert ok.status_code == 200 and upstream.seen[1].json()["tools"][0]["strict"]


async def test_a_failure_elsewhere_in_the_relay_is_a_500_and_the_next_request_works(
    relay: ToolFieldsRelay,
    upstream: Upstream,
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    module = relay_module
    real = getattr(module, "with_betas")  # noqa: B009 - not re-exported

    def broken_once(headers: Any, betas: Any) -> Any:
        monkeypatch.setattr(module, "with_betas", real)
        raise RuntimeError("boom " + API_KEY)

    monkeypatch.setattr(module, "with_betas", broken_once)
    with caplog.at_level(logging.DEBUG):
        failed = await client.post(
            relay.url + "/v1/messages", json=messages_body(STRICT)
        )
    assert failed.status_code == 500
    assert failed.json()["type"] == "error"
    assert "RuntimeError" in caplog.text and API_KEY not in caplog.text
    assert upstream.seen == []
    ok = await client.post(relay.url + "/v1/messages", json=messages_body(STRICT))
    assert ok.status_code == 200 and upstream.seen[0].json()["tools"][0]["strict"]


async def test_stop_ends_a_response_still_streaming(upstream: Upstream) -> None:
    upstream.pause = 30.0
    fds = open_fds()
    r = ToolFieldsRelay(FIELDS, upstream.url)
    await r.start()
    port = r.port
    assert port is not None
    async with (
        http.AsyncClient(trust_env=False, timeout=30) as c,
        c.stream("POST", r.url + "/slow", json={}) as response,
    ):
        async for _ in response.aiter_raw():
            break  # mid-stream: the upstream is silent for 30 s
        await r.stop()
        # Logic, not speed: stop returned before the upstream's pause ended,
        # without waiting for the response.
        assert "rest_sent" not in upstream.events
    _assert_gone(port)
    assert new_fds(fds) == set()


# --------------------------------------------------------------------------
# Proxies and credentials
# --------------------------------------------------------------------------


async def test_outbound_leg_goes_through_the_configured_proxy(
    upstream: Upstream, client: Any
) -> None:
    # The stand-in doubles as a forward proxy: it records the absolute URI.
    target = "http://upstream.invalid:8080/base"
    proxy = outbound_proxy(target, {"HTTP_PROXY": upstream.url})
    assert proxy == upstream.url
    async with ToolFieldsRelay(FIELDS, target, proxy=proxy) as r:
        response = await client.post(r.url + "/v1/messages", json=messages_body(STRICT))
    assert response.status_code == 200
    assert upstream.seen[-1].path == "http://upstream.invalid:8080/base/v1/messages"
    assert upstream.seen[-1].json()["tools"][0]["strict"] is True


async def test_an_https_upstream_is_verified_and_streams(
    https_upstream: Upstream, certificate: LoopbackCertificate, client: Any
) -> None:
    trusted = certificate.client_context()
    async with ToolFieldsRelay(FIELDS, https_upstream.url, verify=trusted) as r:
        response = await client.post(r.url + "/v1/messages", json=messages_body(STRICT))
        async with client.stream("POST", r.url + "/slow", json={}) as streamed:
            body = b"".join([chunk async for chunk in streamed.aiter_raw()])
    assert response.status_code == 200
    assert https_upstream.seen[0].json()["tools"][0]["strict"] is True
    assert body == https_upstream.first + https_upstream.rest
    # Not trusted: the certificate is checked, and the CLI gets a 502.
    async with ToolFieldsRelay(FIELDS, https_upstream.url) as r:
        refused = await client.post(r.url + "/v1/messages", json=messages_body(STRICT))
    assert refused.status_code == 502
    assert "certificate verify failed" in refused.json()["error"]["message"]
    assert len(https_upstream.seen) == 2


async def test_an_https_upstream_through_a_connect_proxy(
    https_upstream: Upstream,
    upstream: Upstream,
    certificate: LoopbackCertificate,
    client: Any,
) -> None:
    # The plain stand-in is the proxy: it records the CONNECT and tunnels it.
    proxy = outbound_proxy(https_upstream.url, {"HTTPS_PROXY": upstream.url})
    assert proxy == upstream.url
    async with ToolFieldsRelay(
        FIELDS, https_upstream.url, proxy=proxy, verify=certificate.client_context()
    ) as r:
        response = await client.post(r.url + "/v1/messages", json=messages_body(STRICT))
    assert response.status_code == 200
    assert [seen.method for seen in upstream.seen] == ["CONNECT"]
    assert upstream.seen[0].path == https_upstream.url.removeprefix("https://")
    assert https_upstream.seen[0].json()["tools"][0]["strict"] is True


async def test_the_clis_ca_setting_is_honoured(
    https_upstream: Upstream, certificate: LoopbackCertificate, client: Any
) -> None:
    cli_env = {
        "ANTHROPIC_BASE_URL": https_upstream.url,
        "NODE_EXTRA_CA_CERTS": str(certificate.cert),
    }
    r = await start_for_cli({}, cli_env)
    try:
        response = await client.post(
            cli_env["ANTHROPIC_BASE_URL"] + "/v1/messages", json=messages_body(STRICT)
        )
    finally:
        await r.stop()
    assert response.status_code == 200
    assert https_upstream.seen[0].path == "/v1/messages"


async def test_credentials_are_never_logged_or_echoed(
    upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    headers = {"x-api-key": API_KEY, "authorization": BEARER}
    upstream.reply_status = 400
    async with ToolFieldsRelay(FIELDS, upstream.url) as r:
        answers = [
            await client.post(
                r.url + "/v1/messages", json=messages_body(STRICT), headers=headers
            ),
            await client.post(
                r.url.rsplit("/", 1)[0] + "/v1/messages", headers=headers
            ),
        ]
        names = [f"mcp__docs__t{i}" for i in range(21)]
        async with ToolFieldsRelay(
            dict.fromkeys(names, {"strict": True}), upstream.url
        ) as capped:
            answers.append(
                await client.post(
                    capped.url + "/v1/messages",
                    json=messages_body(*names),
                    headers=headers,
                )
            )
        text = repr(r) + str(vars(r))
    async with ToolFieldsRelay(FIELDS, "http://127.0.0.1:9") as dead:
        answers.append(
            await client.post(
                dead.url + "/v1/messages", json=messages_body(STRICT), headers=headers
            )
        )
    logged = "\n".join(rec.getMessage() + str(rec.args) for rec in caplog.records)
    echoed = "\n".join(a.text + str(a.headers) for a in answers)
    for secret in (API_KEY, BEARER, "SECRET-never-logged"):
        assert secret not in logged
        assert secret not in echoed
        assert secret not in text
    assert upstream.seen[0].headers["authorization"] == BEARER  # forwarded


# --------------------------------------------------------------------------
# Lifecycle
# --------------------------------------------------------------------------


async def _start_use_stop(url: str) -> tuple[int, str]:
    async with ToolFieldsRelay(FIELDS, url) as r:
        async with http.AsyncClient(trust_env=False) as c:
            response = await c.post(r.url + "/v1/messages", json=messages_body(STRICT))
            assert response.status_code == 200
        port, secret = r.port, r.url
    assert port is not None
    return port, secret


def _assert_gone(port: int) -> None:
    assert relay_threads() == []
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


async def test_lifecycle_leaves_no_thread_or_socket_asyncio(upstream: Upstream) -> None:
    fds = open_fds()
    port, _ = await _start_use_stop(upstream.url)
    _assert_gone(port)
    assert new_fds(fds) == set()
    leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert leftover == []


def test_lifecycle_under_trio(upstream: Upstream) -> None:
    import trio

    fds = open_fds()
    port, _ = trio.run(_start_use_stop, upstream.url)
    _assert_gone(port)
    assert new_fds(fds) == set()


async def test_stop_is_idempotent_and_works_when_cancelled(upstream: Upstream) -> None:
    r = ToolFieldsRelay(FIELDS, upstream.url)
    await r.start()
    port = r.port
    assert port is not None
    with anyio.CancelScope() as scope:
        scope.cancel()
        await r.stop()  # shielded: runs to completion even in a cancelled scope
    await r.stop()
    _assert_gone(port)


async def test_two_relays_in_parallel_are_independent(upstream: Upstream) -> None:
    results = await asyncio.gather(*(_start_use_stop(upstream.url) for _ in range(2)))
    (port_a, url_a), (port_b, url_b) = results
    assert port_a != port_b and url_a.rsplit("/", 1)[1] != url_b.rsplit("/", 1)[1]
    assert len(upstream.seen) == 2
    assert relay_threads() == []


async def test_transport_stops_its_relay_when_the_cli_cannot_start(
    upstream: Upstream,
) -> None:
    transport = SubprocessCLITransport(
        prompt="x",
        options=ClaudeAgentOptions(
            cli_path="/nonexistent/claude",
            env={"ANTHROPIC_BASE_URL": upstream.url},
            tool_fields_relay=True,
        ),
    )
    with pytest.raises(Exception, match="Claude Code not found"):
        await transport.connect()
    assert relay_threads() == []


async def test_transport_close_stops_the_relay_and_the_cli_sees_it(
    upstream: Upstream, tmp_path: Path
) -> None:
    # A stand-in "CLI" that prints its ANTHROPIC_BASE_URL and NO_PROXY, then
    # waits for stdin to close.
    fake_cli = tmp_path / "claude"
    fake_cli.write_text(
        "#!/bin/sh\n"
        'echo "{\\"base\\": \\"$ANTHROPIC_BASE_URL\\", \\"no_proxy\\": \\"$NO_PROXY\\"}"\n'
        "cat > /dev/null\n"
    )
    fake_cli.chmod(0o755)

    @tool("search", "s", SCHEMA, strict=True)
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    transport = SubprocessCLITransport(
        prompt="x",
        options=ClaudeAgentOptions(
            cli_path=str(fake_cli),
            mcp_servers={"docs": create_sdk_mcp_server("docs", tools=[search])},
            env={
                "ANTHROPIC_BASE_URL": upstream.url,
                "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
            },
            tool_fields_relay=True,
        ),
    )
    await transport.connect()
    try:
        assert len(relay_threads()) == 1
        first = await transport.read_messages().__anext__()
        assert first["base"].startswith("http://127.0.0.1:")
        assert first["no_proxy"].endswith("127.0.0.1,localhost")
        async with http.AsyncClient(trust_env=False) as c:
            response = await c.post(
                first["base"] + "/v1/messages", json=messages_body(STRICT)
            )
        assert response.status_code == 200
        assert upstream.seen[-1].json()["tools"][0]["strict"] is True
    finally:
        await transport.close()
    assert relay_threads() == []
