"""Proxy mode (patch ``tool-fields-relay``): with no ``ANTHROPIC_BASE_URL`` of
the caller's, the relay is Claude Code's HTTPS proxy, so Claude Code stays
first-party.

Only ``CONNECT api.anthropic.com:443`` with the relay's credentials is
terminated (TLS from a per-session CA) and rewritten; every other host is
tunnelled byte for byte, through the caller's own proxy where one applies;
the CA's certificate file is private and removed at stop, and no private key
is ever written to it. ``tests/e2e/test_e2e_relay_fidelity.py`` runs it with
the real CLI.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate
from tests.relay.cases import EXAMPLES, FIELDS, STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay.lifecycle import (
        DEFAULT_UPSTREAM,
        ToolFieldsRelay,
        ToolFieldsRelayError,
        prepare_for_cli,
    )
    from claude_agent_sdk._internal.relay.network import point_cli_through
except ImportError:  # a tree without the relay patch: these tests must fail
    DEFAULT_UPSTREAM = "https://api.anthropic.com"
    ToolFieldsRelay = None  # type: ignore[assignment, misc]
    ToolFieldsRelayError = ValueError  # type: ignore[assignment, misc]
    point_cli_through = None  # type: ignore[assignment]
    prepare_for_cli = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("tool-fields-relay")


@pytest.fixture
def first_party(tmp_path: Path) -> Iterator[Upstream]:
    with Upstream.first_party(tmp_path / "first-party") as stand_in:
        yield stand_in


def _relay_for(stand_in: Upstream, **options: Any) -> ToolFieldsRelay:
    """A proxy-mode relay whose way to api.anthropic.com is the stand-in,
    as the caller's own HTTPS proxy with its CA trusted."""
    return ToolFieldsRelay(
        FIELDS,
        DEFAULT_UPSTREAM,
        proxy=stand_in.url,
        verify=ssl.create_default_context(cafile=str(stand_in.ca)),
        first_party=True,
        **options,
    )


def _proxy_parts(relay: ToolFieldsRelay) -> tuple[int, bytes]:
    url = relay.proxy_url.removeprefix("http://")
    credentials, _, host_port = url.rpartition("@")
    return int(host_port.rsplit(":", 1)[1]), base64.b64encode(credentials.encode())


def _connect(
    relay: ToolFieldsRelay, target: bytes, auth: bytes | None
) -> tuple[socket.socket, bytes]:
    port, credentials = _proxy_parts(relay)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n"
    if auth is not None:
        head += b"Proxy-Authorization: Basic " + (auth or credentials) + b"\r\n"
    sock.sendall(head + b"\r\n")
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(65536)
        if not chunk:
            break
        reply += chunk
    return sock, reply


def _read_all(sock: Any) -> bytes:
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            return received
        if not chunk:
            return received
        received += chunk


# -- choosing the mode ----------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "first_party"),
    [
        ({}, True),
        ({"ANTHROPIC_BASE_URL": ""}, True),
        ({"HTTPS_PROXY": "http://corp:3128"}, True),
        ({"ANTHROPIC_BASE_URL": "https://gateway.example"}, False),  # a gateway
        ({"HTTPS_PROXY": "https://corp:3128"}, False),  # tunnels need plain http
        ({"HTTPS_PROXY": "socks5://corp:1080"}, False),
    ],
)
def test_proxy_mode_when_the_caller_has_no_base_url(
    env: dict[str, str], first_party: bool
) -> None:
    if "socks" in env.get("HTTPS_PROXY", "") and not _has_socksio():
        # Refused at start, naming the setting, rather than a base-URL relay
        # that could not reach the API through that proxy.
        with pytest.raises(ToolFieldsRelayError, match="socksio"):
            prepare_for_cli({}, env)
        return
    assert prepare_for_cli({}, env).first_party is first_party


def _has_socksio() -> bool:
    import importlib.util

    return importlib.util.find_spec("socksio") is not None


def test_the_cli_env_keeps_its_base_url_and_goes_through_the_relay() -> None:
    env = {
        "NO_PROXY": "corp.example,api.anthropic.com,.anthropic.com",
        "no_proxy": "*,internal",
        "HTTP_PROXY": "http://corp:3128",
    }
    point_cli_through(env, "http://sdk:s@127.0.0.1:1", "/tmp/bundle.pem")
    assert "ANTHROPIC_BASE_URL" not in env
    assert env["HTTPS_PROXY"] == env["https_proxy"] == "http://sdk:s@127.0.0.1:1"
    assert env["NODE_EXTRA_CA_CERTS"] == "/tmp/bundle.pem"
    # Nothing may send api.anthropic.com around the relay; the rest of the
    # list Claude Code judges by (no_proxy, when set) stays.
    assert env["NO_PROXY"] == env["no_proxy"] == "internal,127.0.0.1,localhost"
    assert env["HTTP_PROXY"] == "http://corp:3128"


# -- the CA ---------------------------------------------------------------------


async def test_the_ca_file_is_private_holds_no_key_and_is_removed_at_stop(
    first_party: Upstream,
    certificate: LoopbackCertificate,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A temporary directory of this test's own: relays of other test workers
    # write theirs to the shared one meanwhile.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    earlier = set(tmp_path.glob("claude-agent-sdk-relay-*"))
    relay = _relay_for(first_party, user_extra_ca=str(certificate.cert))
    await relay.start()
    bundle = Path(relay.ca_bundle or "")
    try:
        assert stat.S_IMODE(bundle.stat().st_mode) == 0o600
        content = bundle.read_bytes()
        assert content.count(b"BEGIN CERTIFICATE") == 2  # the session CA, the user's
        assert certificate.cert.read_bytes().strip() in content
        assert b"PRIVATE KEY" not in content
        assert bundle.parent == tmp_path
        created = set(tmp_path.glob("claude-agent-sdk-relay-*")) - earlier
        assert created == {bundle}  # the leaf's key went through memory
    finally:
        await relay.stop()
    assert not bundle.exists()


# -- what is served ---------------------------------------------------------------


async def test_connect_without_the_relays_credentials_is_refused(
    first_party: Upstream,
) -> None:
    async with _relay_for(first_party) as relay:
        for auth in (None, base64.b64encode(b"sdk:wrong")):
            sock, reply = await asyncio.to_thread(
                _connect, relay, b"api.anthropic.com:443", auth
            )
            with sock:
                assert reply.startswith(b"HTTP/1.1 407 ")
                rest = await asyncio.to_thread(_read_all, sock)  # until closed
                assert b"authentication required" in reply + rest
    assert first_party.connects == []


async def test_only_connect_is_served(first_party: Upstream) -> None:
    async with _relay_for(first_party) as relay:
        port, credentials = _proxy_parts(relay)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n"
                b"Proxy-Authorization: Basic " + credentials + b"\r\n\r\n"
            )
            reply = await asyncio.to_thread(_read_all, sock)
    assert reply.startswith(b"HTTP/1.1 405 ")


async def test_api_anthropic_com_is_terminated_and_rewritten(
    first_party: Upstream,
) -> None:
    body = messages_body(STRICT)
    async with _relay_for(first_party) as relay:
        trusted = ssl.create_default_context(cafile=relay.ca_bundle)

        def exchange() -> bytes:
            sock, reply = _connect(relay, b"api.anthropic.com:443", b"")
            assert reply.startswith(b"HTTP/1.1 200 ")
            with trusted.wrap_socket(sock, server_hostname="api.anthropic.com") as tls:
                import json

                payload = json.dumps(body).encode()
                tls.sendall(
                    b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: api.anthropic.com\r\n"
                    b"x-api-key: k\r\nanthropic-beta: b1\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\nContent-Length: "
                    + str(len(payload)).encode()
                    + b"\r\n\r\n"
                    + payload
                )
                return _read_all(tls)

        reply = await asyncio.to_thread(exchange)
    assert reply.startswith(b"HTTP/1.1 200 ")
    (seen,) = [r for r in first_party.api.requests if r.method == "POST"]
    assert seen.path == "/v1/messages?beta=true"
    assert seen.headers["host"] == "api.anthropic.com"
    assert seen.headers["anthropic-beta"] == (
        "b1,structured-outputs-2025-12-15,advanced-tool-use-2025-11-20"
    )
    assert seen.body["tools"][0]["strict"] is True
    assert seen.body["tools"][0]["input_examples"] == EXAMPLES
    # Through the caller's own proxy (the stand-in), as Claude Code would go.
    assert [seen.path for seen in first_party.connects] == ["api.anthropic.com:443"]


@pytest.mark.parametrize("bypass", [False, True])
async def test_other_hosts_are_tunnelled_untouched_through_the_callers_proxy(
    upstream: Upstream, first_party: Upstream, tmp_path: Path, bypass: bool
) -> None:
    # The target: another stand-in, reached by CONNECT 127.0.0.1:<port>; the
    # caller's proxy: ``upstream`` (it records CONNECTs and tunnels them).
    target = Upstream().start()
    try:
        relay = ToolFieldsRelay(
            FIELDS,
            DEFAULT_UPSTREAM,
            proxy=upstream.url,
            first_party=True,
            no_proxy="127.0.0.1" if bypass else "",
        )
        async with relay:
            host_port = target.url.removeprefix("http://").encode()

            def exchange() -> bytes:
                sock, reply = _connect(relay, host_port, b"")
                assert reply.startswith(b"HTTP/1.1 200 ")
                with sock:
                    sock.sendall(
                        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        b"Content-Length: 2\r\n\r\n{}"
                    )
                    return _read_all(sock)

            reply = await asyncio.to_thread(exchange)
        assert reply.startswith(b"HTTP/1.1 200 ") and b'{"ok": true}' in reply
        assert target.seen[0].body == b"{}"  # untouched: a tunnel, not the relay
        assert first_party.connects == []
        assert [s.method for s in upstream.seen] == ([] if bypass else ["CONNECT"])
    finally:
        target.stop()


async def test_stop_closes_open_tunnels_and_terminated_connections(
    upstream: Upstream, first_party: Upstream
) -> None:
    import threading
    import time
    from pathlib import Path as _Path

    def fds() -> set[str]:
        return {entry.name for entry in _Path("/proc/self/fd").iterdir()}

    before = fds()
    relay = _relay_for(first_party, no_proxy="127.0.0.1")  # tunnels go direct
    await relay.start()
    target = upstream.url.removeprefix("http://").encode()
    tunnel, reply = await asyncio.to_thread(_connect, relay, target, b"")
    assert reply.startswith(b"HTTP/1.1 200 ")
    terminated, reply = await asyncio.to_thread(
        _connect, relay, b"api.anthropic.com:443", b""
    )
    assert reply.startswith(b"HTTP/1.1 200 ")
    await relay.stop()
    with tunnel, terminated:
        assert await asyncio.to_thread(_read_all, tunnel) == b""  # closed by stop
        assert await asyncio.to_thread(_read_all, terminated) == b""
    assert not [
        t for t in threading.enumerate() if t.name.startswith("claude-agent-sdk-tool")
    ]
    deadline = time.monotonic() + 10  # returns at once when they are closed
    while fds() - before and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert fds() - before == set()
