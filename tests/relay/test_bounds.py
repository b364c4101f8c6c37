"""What the running relay accepts and forwards (patch ``tool-fields-relay``):
betas, targets as sent, and bounds before authentication.

Bounded before authenticated: a request without the secret prefix is refused
from its request line, before any of its body is read; an authenticated body
may be 64 MiB (twice the API's own 32 MB limit); headers must come within a
timeout, idle connections are closed, and connections that never sent a
valid request are capped without ever locking the CLI out.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.lib.relay_upstream import Upstream
from tests.relay.cases import EXAMPLES, FIELDS, STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay import server as relay_server
    from claude_agent_sdk._internal.relay.connections import http_client_module
    from claude_agent_sdk._internal.relay.lifecycle import ToolFieldsRelay
except ImportError:  # a tree without the relay patch: these tests must fail
    relay_server = None  # type: ignore[assignment]
    http_client_module = None  # type: ignore[assignment]
    ToolFieldsRelay = None  # type: ignore[assignment, misc]

pytestmark = pytest.mark.requires_patch("tool-fields-relay")

STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-12-15"
ADVANCED_TOOL_USE_BETA = "advanced-tool-use-2025-11-20"
MIB = 1024 * 1024


def _port_and_prefix(relay: ToolFieldsRelay) -> tuple[int, bytes]:
    host_port, _, prefix = relay.url.removeprefix("http://").partition("/")
    return int(host_port.rsplit(":", 1)[1]), b"/" + prefix.encode()


@contextmanager
def _connection(relay: ToolFieldsRelay, timeout: float = 10) -> Iterator[socket.socket]:
    port, _ = _port_and_prefix(relay)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        yield sock


def _read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return _read_until_closed(sock) is not None
    except TimeoutError:
        return False


# -- betas --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "sent", "expected"),
    [
        (
            {"strict": True},
            "claude-code-20250219",
            f"claude-code-20250219,{STRUCTURED_OUTPUTS_BETA}",
        ),
        # Already there: once, where it was.
        (
            {"strict": True},
            f"{STRUCTURED_OUTPUTS_BETA},claude-code-20250219",
            f"{STRUCTURED_OUTPUTS_BETA},claude-code-20250219",
        ),
        ({"input_examples": EXAMPLES}, "x", f"x,{ADVANCED_TOOL_USE_BETA}"),
        (
            {"strict": True, "input_examples": EXAMPLES},
            f"x,{ADVANCED_TOOL_USE_BETA}",
            f"x,{ADVANCED_TOOL_USE_BETA},{STRUCTURED_OUTPUTS_BETA}",
        ),
    ],
)
async def test_the_betas_claude_code_sends_with_the_fields_are_added_once(
    upstream: Upstream, client: Any, declared: dict[str, Any], sent: str, expected: str
) -> None:
    async with ToolFieldsRelay({STRICT: declared}, upstream.url) as r:
        await client.post(
            r.url + "/v1/messages?beta=true",
            json=messages_body(STRICT),
            headers={"anthropic-beta": sent},
        )
    assert upstream.seen[-1].headers["anthropic-beta"] == expected


async def test_an_unmodified_request_gets_no_beta(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any
) -> None:
    await client.post(relay.url + "/v1/messages", json=messages_body("Bash"))
    assert "anthropic-beta" not in upstream.seen[-1].headers


# -- targets as sent ------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "/v1/messages;x=1?beta=true",
        "/v1/models;a;b",
        "/v1/x%2Fy;p=%3B?q=a;b&c",
        "/v1/messages?beta=true&x=%20",
    ],
)
async def test_targets_reach_the_upstream_exactly_as_sent(
    upstream: Upstream, target: str
) -> None:
    for base in ("", "/gateway/v2"):
        async with ToolFieldsRelay(FIELDS, upstream.url + base) as r:
            port, prefix = _port_and_prefix(r)
            request = (
                b"GET " + prefix + target.encode() + b" HTTP/1.1\r\nHost: relay\r\n"
                b"Connection: close\r\n\r\n"
            )
            with _connection(r) as sock:
                sock.sendall(request)
                reply = await asyncio.to_thread(_read_until_closed, sock)
        assert reply.startswith(b"HTTP/1.1 200")
        assert upstream.seen[-1].path == base + target


async def test_a_declared_tool_in_a_messages_path_with_params_is_not_rewritten(
    relay: ToolFieldsRelay, upstream: Upstream, client: Any
) -> None:
    # ;params make it another resource: passed through, not guessed at.
    body = json.dumps(messages_body(STRICT)).encode()
    await client.post(relay.url + "/v1/messages;v=2", content=body)
    assert upstream.seen[-1].path == "/v1/messages;v=2"
    assert upstream.seen[-1].body == body


# -- bounded before authenticated -------------------------------------------------


async def test_a_request_without_the_secret_is_refused_before_its_body(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    # Headers announcing 1 GB, and 64 KiB of it: the body never completes,
    # so a relay that read it before refusing would wait for it until its
    # idle timeout (10 minutes). Logic, not speed: the refusal and the close
    # arrive at all, long before that (the minute allowed is for a starved
    # machine), with the body still owed.
    assert relay_server.IDLE_TIMEOUT_S >= 600
    with _connection(relay, timeout=60) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: relay\r\n"
            b"Content-Length: 1000000000\r\n\r\n" + b"x" * 65536
        )
        reply = await asyncio.to_thread(_read_until_closed, sock)
    assert reply.startswith(b"HTTP/1.1 404 ")
    assert b"connection: close" in reply.lower()
    assert upstream.seen == []


async def test_the_refusal_reads_nothing_more_however_much_is_sent(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    def flood() -> tuple[bytes, int]:
        with _connection(relay) as sock:
            sock.sendall(
                b"POST /wrong/v1/messages HTTP/1.1\r\nHost: relay\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            sent = 0
            try:
                for _ in range(4096):  # up to 256 MiB, if it were being read
                    sock.sendall(b"10000\r\n" + b"x" * 65536 + b"\r\n")
                    sent += 65536
            except OSError:
                pass
            return b"", sent

    _, sent = await asyncio.to_thread(flood)
    assert sent < 64 * MIB  # the relay closed; the kernel buffers the rest
    assert upstream.seen == []


async def test_an_authenticated_body_over_the_limit_is_a_413_without_reading_it(
    relay: ToolFieldsRelay, upstream: Upstream
) -> None:
    assert relay_server.MAX_BODY_BYTES == 64 * MIB  # > the API's 32 MB
    _, prefix = _port_and_prefix(relay)
    with _connection(relay) as sock:
        sock.sendall(
            b"POST " + prefix + b"/v1/messages HTTP/1.1\r\nHost: relay\r\n"
            b"Content-Length: " + str(64 * MIB + 1).encode() + b"\r\n\r\n"
        )
        reply = await asyncio.to_thread(_read_until_closed, sock)
    assert reply.startswith(b"HTTP/1.1 413 ")
    body = json.loads(reply.split(b"\r\n\r\n", 1)[1])
    assert body["type"] == "error" and body["error"]["type"] == "request_too_large"
    assert upstream.seen == []


async def test_a_chunked_body_over_the_limit_is_a_413_and_at_the_limit_passes(
    relay: ToolFieldsRelay, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relay_server, "MAX_BODY_BYTES", 1000)
    _, prefix = _port_and_prefix(relay)

    def send(size: int) -> bytes:
        with _connection(relay) as sock:
            sock.sendall(
                b"POST " + prefix + b"/v1/other HTTP/1.1\r\nHost: relay\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + f"{size:x}\r\n".encode()
                + b"x" * size
                + b"\r\n0\r\n\r\n"
            )
            return _read_until_closed(sock)

    assert (await asyncio.to_thread(send, 1001)).startswith(b"HTTP/1.1 413 ")
    assert upstream.seen == []
    assert (await asyncio.to_thread(send, 1000)).startswith(b"HTTP/1.1 200 ")
    assert upstream.seen[0].body == b"x" * 1000


async def test_headers_that_do_not_arrive_in_time_close_the_connection(
    relay: ToolFieldsRelay, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Logic, not speed: with the timeouts at 0.5 s, nothing but them closes
    # these connections before the idle timeout (10 minutes), so each must
    # be closed at all, within a minute a starved machine cannot exhaust.
    monkeypatch.setattr(relay_server, "HEADER_TIMEOUT_S", 0.5)
    monkeypatch.setattr(relay_server, "PENDING_TIMEOUT_S", 0.5)
    assert relay_server.IDLE_TIMEOUT_S >= 600

    def silent() -> bool:
        with _connection(relay) as sock:
            return _closed_within(sock, 60)

    def trickle() -> int:
        # One byte every 50 ms, never finishing the headers: the connection
        # is never idle, so only a deadline on the whole head cuts it off.
        sent = 0
        with _connection(relay) as sock:
            try:
                for byte in b"POST /x HTTP/1.1\r\nX-A: " + b"a" * 1200:  # >= 60 s
                    sock.sendall(bytes([byte]))
                    sent += 1
                    time.sleep(0.05)
            except OSError:
                return sent
            raise AssertionError("the trickle was never cut off")

    assert await asyncio.to_thread(silent)
    assert await asyncio.to_thread(trickle) > 0


async def test_an_idle_connection_is_closed_but_a_long_response_is_not(
    relay: ToolFieldsRelay, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Logic, not speed: the response is silent for three idle timeouts (at
    # least; a starved machine only makes it longer) and arrives whole; then
    # the idle connection is closed, by nothing but the idle timeout.
    monkeypatch.setattr(relay_server, "IDLE_TIMEOUT_S", 0.5)
    upstream.pause = 1.5
    _, prefix = _port_and_prefix(relay)

    def exchange() -> tuple[bytes, bool]:
        with _connection(relay) as sock:
            sock.sendall(
                b"POST " + prefix + b"/slow HTTP/1.1\r\nHost: relay\r\n"
                b"Content-Length: 2\r\n\r\n{}"
            )
            reply = b""
            while not reply.endswith(b"0\r\n\r\n"):
                chunk = sock.recv(65536)
                assert chunk, f"closed during the response: {reply!r}"
                reply += chunk
            return reply, _closed_within(sock, 60)  # then idle: closed

    reply, closed = await asyncio.to_thread(exchange)
    assert upstream.first in reply and upstream.rest in reply
    assert closed


async def test_connections_that_never_authenticate_are_capped_not_the_clis(
    relay: ToolFieldsRelay, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relay_server, "MAX_PENDING_CONNECTIONS", 8)
    # Made room for by age first; the hard bound holds even when all are young.
    monkeypatch.setattr(relay_server, "MAX_UNREAD_CONNECTIONS", 16)
    upstream.pause = 1.0
    port, prefix = _port_and_prefix(relay)

    def scenario() -> tuple[int, bytes, bytes]:
        # The CLI's stream is open (authenticated) before the flood starts.
        cli = socket.create_connection(("127.0.0.1", port), timeout=10)
        cli.sendall(
            b"POST " + prefix + b"/slow HTTP/1.1\r\nHost: relay\r\n"
            b"Content-Length: 2\r\n\r\n{}"
        )
        first = cli.recv(65536)
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        time.sleep(0.5)
        # A new CLI connection still gets in and is answered.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as late:
            late.sendall(
                b"GET " + prefix + b"/v1/models HTTP/1.1\r\nHost: relay\r\n"
                b"Connection: close\r\n\r\n"
            )
            answered = _read_until_closed(late)
        rest = first
        while not rest.endswith(b"0\r\n\r\n"):
            rest += cli.recv(65536)
        cli.close()
        still_open = sum(not _closed_within(s, 0.05) for s in idle)
        for s in idle:
            s.close()
        return still_open, answered, rest

    still_open, answered, streamed = await asyncio.to_thread(scenario)
    assert still_open <= 16
    assert answered.startswith(b"HTTP/1.1 200 ")
    assert upstream.rest in streamed  # the CLI's stream was never cut
