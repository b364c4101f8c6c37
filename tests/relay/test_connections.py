"""The relay's outbound pool (patch ``relay-connections``) against loopback servers.

Plain and HTTPS upstreams, a CONNECT proxy and a forwarding one, parallel
streams, keep-alive; the running relay on top of it is tested in
``test_relay.py``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate

try:
    from claude_agent_sdk._internal.relay import connections
    from claude_agent_sdk._internal.relay.connections import (
        outbound_pool,
        transport_errors,
    )
except ImportError:  # a tree without the patch: these tests must fail
    connections = None  # type: ignore[assignment]
    outbound_pool = None  # type: ignore[assignment]
    transport_errors = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("relay-connections")


def _origin(url: str) -> tuple[bytes, bytes, int]:
    scheme, _, authority = url.partition("://")
    host, _, port = authority.rpartition(":")
    return scheme.encode(), host.encode(), int(port)


async def _post(
    pool: Any, url: str, path: str = "/v1/messages", body: bytes = b"{}"
) -> tuple[int, bytes]:
    scheme, host, port = _origin(url)
    response = await pool.request(
        b"POST",
        scheme,
        host,
        port,
        path.encode(),
        [(b"host", host), (b"content-length", str(len(body)).encode())],
        [body],
    )
    try:
        return response.status, b"".join([chunk async for chunk in response.stream])
    finally:
        await response.aclose()


async def _with_pool(proxy: str | None, verify: Any, work: Any) -> Any:
    pool = outbound_pool(proxy, verify)
    try:
        return await work(pool)
    finally:
        await pool.aclose()


async def test_a_plain_upstream_answers(upstream: Upstream) -> None:
    status, body = await _with_pool(None, True, lambda pool: _post(pool, upstream.url))
    assert (status, body) == (200, upstream.reply_body)
    assert upstream.seen[0].body == b"{}"


async def test_a_large_body_goes_out_whole_in_pieces(upstream: Upstream) -> None:
    body = bytes(range(256)) * 12289  # 3 MB, not a multiple of a piece
    parts = [body[:1000], memoryview(body)[1000:], b"tail"]
    scheme, host, port = _origin(upstream.url)

    async def work(pool: Any) -> int:
        response = await pool.request(
            b"POST", scheme, host, port, b"/v1/messages",
            [(b"host", host), (b"content-length", str(len(body) + 4).encode())],
            parts,
        )  # fmt: skip
        await response.aclose()
        return int(response.status)

    assert await _with_pool(None, True, work) == 200
    assert upstream.seen[0].body == body + b"tail"


async def test_an_https_upstream_is_verified(
    https_upstream: Upstream, certificate: LoopbackCertificate
) -> None:
    trusted = certificate.client_context()
    status, _ = await _with_pool(
        None, trusted, lambda pool: _post(pool, https_upstream.url)
    )
    assert status == 200
    with pytest.raises(transport_errors()) as refused:
        await _with_pool(None, True, lambda pool: _post(pool, https_upstream.url))
    assert type(refused.value).__name__ == "ConnectError"
    assert len(https_upstream.seen) == 1


async def test_an_https_upstream_through_a_connect_proxy(
    https_upstream: Upstream, upstream: Upstream, certificate: LoopbackCertificate
) -> None:
    status, _ = await _with_pool(
        upstream.url,
        certificate.client_context(),
        lambda pool: _post(pool, https_upstream.url),
    )
    assert status == 200
    assert [(seen.method, seen.path) for seen in upstream.seen] == [
        ("CONNECT", https_upstream.url.removeprefix("https://"))
    ]
    assert https_upstream.seen[0].path == "/v1/messages"


async def test_a_plain_upstream_through_a_forwarding_proxy(
    upstream: Upstream,
) -> None:
    # The proxy gets the absolute URL (and would get its credentials).
    proxy = Upstream().start()
    try:
        target = "http://relay-upstream.invalid:8080"
        status, body = await _with_pool(
            proxy.url.replace("http://", "http://user:pw@"),
            True,
            lambda pool: _post(pool, target),
        )
    finally:
        proxy.stop()
    assert (status, body) == (200, proxy.reply_body)
    seen = proxy.seen[0]
    assert seen.path == "http://relay-upstream.invalid:8080/v1/messages"
    assert seen.headers["proxy-authorization"] == "Basic dXNlcjpwdw=="


async def test_a_proxy_that_refuses_the_connect_is_a_proxy_error(
    https_upstream: Upstream, certificate: LoopbackCertificate
) -> None:
    refusing = Upstream(offline=True).start()  # answers 403 to every CONNECT
    try:
        with pytest.raises(transport_errors()) as refused:
            await _with_pool(
                refusing.url,
                certificate.client_context(),
                lambda pool: _post(pool, https_upstream.url),
            )
    finally:
        refusing.stop()
    assert type(refused.value).__name__ == "ProxyError"


async def test_parallel_streams_each_get_a_connection_at_once(
    upstream: Upstream,
) -> None:
    # /slow sends one chunk, then holds the response open until all 16 are
    # in flight at once (or a long pause ends): a cap of 10 would never let
    # them be. Logic, not speed: a starved machine only makes it slower.
    streams = 16
    upstream.pause = 60.0
    upstream.release_when = streams
    scheme, host, port = _origin(upstream.url)

    async def one_stream(pool: Any) -> None:
        response = await pool.request(
            b"POST", scheme, host, port, b"/slow",
            [(b"host", b"relay-test"), (b"content-length", b"0")], [b""],
        )  # fmt: skip
        try:
            async for _ in response.stream:
                pass
        finally:
            await response.aclose()

    await _with_pool(
        None,
        True,
        lambda pool: asyncio.gather(*(one_stream(pool) for _ in range(streams))),
    )
    assert upstream.slow_most_in_flight == streams


async def test_a_connection_is_reused_after_an_idle_spell(
    https_upstream: Upstream, certificate: LoopbackCertificate
) -> None:
    # One TCP and TLS handshake for three requests with idle time between:
    # nothing closes an idle upstream connection before UPSTREAM_KEEPALIVE_S
    # (600 s, as long as Claude Code keeps its own connection to the relay;
    # the end-to-end test idles 10 s through a real tool run).
    assert connections.UPSTREAM_KEEPALIVE_S >= 600

    async def work(pool: Any) -> list[int]:
        seen = []
        for pause in (0.0, 1.0, 0.5):
            await asyncio.sleep(pause)
            seen.append((await _post(pool, https_upstream.url))[0])
            assert pool.connections == 1
        return seen

    assert await _with_pool(None, certificate.client_context(), work) == [200] * 3
    assert https_upstream.connections == 1


async def test_an_idle_connection_the_upstream_closed_is_not_reused(
    upstream: Upstream,
) -> None:
    # The upstream drops each connection after its response, unannounced:
    # the next request must not go out on the dead one (its end was seen).
    upstream.close_after_response = True

    async def work(pool: Any) -> list[int]:
        statuses = []
        for _ in range(3):
            statuses.append((await _post(pool, upstream.url))[0])
            deadline = time.monotonic() + 30
            while pool.connections and time.monotonic() < deadline:
                await asyncio.sleep(0.01)  # until the close has arrived
        return statuses

    assert await _with_pool(None, True, work) == [200] * 3
    assert upstream.connections == 3
