"""The relay takes Claude Code's network path, cell by cell (issue 40, item 1).

``tests.lib.network_path.TABLE`` is what Claude Code 2.1.332 does with each
proxy setting, for the Messages API and for an https MCP server (measured
with the real CLI: ``tests/e2e/test_e2e_network_path.py``, docs/relay.md).
Here the relay runs in proxy mode with each row's settings, as
``prepare_for_cli`` builds it for the SDK, and is made to reach both
destinations as Claude Code makes it (a Messages request on the terminated
``api.anthropic.com``, a ``CONNECT`` for the MCP host); loopback recorders
say which way each went: the stand-in of which proxy variable got the
``CONNECT``, or the destination's own (loopback) address. Names resolve to
loopback through a patched ``getaddrinfo``, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.lib.network_path import (
    API,
    DESTINATIONS,
    MCP,
    MESSAGES,
    TABLE,
    Recorder,
    Row,
)

try:
    from claude_agent_sdk._internal.relay.lifecycle import (
        ToolFieldsRelay,
        ToolFieldsRelayError,
        prepare_for_cli,
    )
except ImportError:  # a tree without the relay patch: these tests must fail
    ToolFieldsRelay = None  # type: ignore[assignment, misc]
    ToolFieldsRelayError = ValueError  # type: ignore[assignment, misc]
    prepare_for_cli = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("tool-fields-relay")


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Recorder]]:
    """A recorder for each destination's own address: its name resolves to
    the recorder (port included, so parallel tests do not meet); any other
    name but loopback's fails, as offline."""
    recorders = {name: Recorder().start() for name in DESTINATIONS}
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name in recorders:
            return original("127.0.0.1", recorders[name].port, *args, **kwargs)
        if name not in ("127.0.0.1", "localhost", None):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return original(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield recorders
    for recorder in recorders.values():
        recorder.stop()


def _exchange(relay: ToolFieldsRelay, target: str, request: bool) -> None:
    """CONNECT ``target`` through the relay as Claude Code does; for the
    API, then a Messages request over TLS (trusting the session CA)."""
    url = relay.proxy_url.removeprefix("http://")
    credentials, _, host_port = url.rpartition("@")
    port = int(host_port.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(
            f"CONNECT {target}:443 HTTP/1.1\r\nHost: {target}:443\r\n".encode()
            + b"Proxy-Authorization: Basic "
            + base64.b64encode(credentials.encode())
            + b"\r\n\r\n"
        )
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                return
            reply += chunk
        if not request or b" 200 " not in reply.split(b"\r\n", 1)[0] + b" ":
            return
        assert relay.ca_bundle is not None
        context = ssl.create_default_context(cafile=relay.ca_bundle)
        with context.wrap_socket(sock, server_hostname=target) as tls:
            body = b'{"model": "m", "max_tokens": 1, "messages": []}'
            tls.sendall(
                b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: api.anthropic.com\r\n"
                b"content-type: application/json\r\nx-api-key: sk-ant-dummy\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            tls.recv(65536)  # the answer (a 502: the recorders refuse)


async def _relay_routes(row: Row, direct: dict[str, Recorder]) -> dict[str, str]:
    recorders: dict[str, Recorder] = {}
    env: dict[str, str] = {}
    for name, value in row.env.items():
        if value in ("{proxy}", "{socks}"):
            recorder = recorders[name] = Recorder().start()
            scheme = "http" if value == "{proxy}" else "socks5h"
            env[name] = f"{scheme}://127.0.0.1:{recorder.port}"
        else:
            env[name] = value
    try:
        relay = prepare_for_cli({}, env)
        assert relay.first_party, "proxy mode, as for a first-party user"
        async with relay:
            for target, request in ((API, True), (MCP, False)):
                await asyncio.to_thread(_exchange, relay, target, request)

            def routes() -> dict[str, str]:
                taken = {}
                for column, host in ((MESSAGES, API), (MCP, MCP)):
                    found = [
                        variable
                        for variable, recorder in recorders.items()
                        if host in recorder.targets() or "<socks>" in recorder.targets()
                    ]
                    if direct[host].accepted:
                        found.append("direct")
                    taken[column] = "+".join(sorted(found)) or "none"
                return taken

            # A direct tunnel's connection reaches its recorder's accept()
            # after the relay has answered the CONNECT: wait (bounded) until
            # every destination was reached some way, never for a given way.
            deadline = time.monotonic() + 5
            while "none" in routes().values() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            return routes()
    finally:
        for recorder in recorders.values():
            recorder.stop()


@pytest.mark.parametrize("row", TABLE, ids=[row.label for row in TABLE])
async def test_the_relay_goes_where_claude_code_goes(
    row: Row,
    direct: dict[str, Recorder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [*row.env, "NO_PROXY", "no_proxy"]:
        monkeypatch.delenv(name, raising=False)
    expected = {MESSAGES: row.routes[MESSAGES], MCP: row.routes[MCP]}
    assert await _relay_routes(row, direct) == expected


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"HTTPS_PROXY": "proxy.corp:3128"}, "HTTPS_PROXY"),
        ({"http_proxy": "ftp://proxy.corp:21"}, "http_proxy"),
        ({"HTTP_PROXY": "http://proxy.corp:port"}, "HTTP_PROXY"),
    ],
)
def test_a_proxy_the_relay_cannot_use_is_refused_naming_the_setting(
    env: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ToolFieldsRelayError, match=named):
        prepare_for_cli({}, env)
