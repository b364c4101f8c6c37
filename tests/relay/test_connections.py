"""The relay's outbound pool (patch ``relay-connections``) against loopback servers.

Plain and HTTPS upstreams, a CONNECT proxy, parallel streams; the running
relay on top of it is tested in ``test_relay.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate

try:
    from claude_agent_sdk._internal._mcp_compat import http_transport_module
    from claude_agent_sdk._internal.relay.connections import (
        outbound_pool,
        transport_errors,
    )
except ImportError:  # a tree without the patch: these tests must fail
    http_transport_module = None  # type: ignore[assignment]
    outbound_pool = None  # type: ignore[assignment]
    transport_errors = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("relay-connections")


async def _post(pool: Any, url: str, path: str = "/v1/messages") -> tuple[int, bytes]:
    core = http_transport_module()
    host = url.split("//", 1)[1].encode()
    response = await pool.handle_async_request(
        core.Request(
            b"POST",
            url + path,
            headers=[(b"host", host), (b"content-length", b"2")],
            content=b"{}",
        )
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


async def test_parallel_streams_each_get_a_connection_at_once(
    upstream: Upstream,
) -> None:
    # /slow sends one chunk, then holds the response open until all 16 are
    # in flight at once (or a long pause ends): a cap of 10 would never let
    # them be. Logic, not speed: a starved machine only makes it slower.
    streams = 16
    upstream.pause = 60.0
    upstream.release_when = streams

    async def one_stream(pool: Any) -> None:
        core = http_transport_module()
        response = await pool.handle_async_request(
            core.Request(
                b"POST",
                upstream.url + "/slow",
                headers=[(b"host", b"relay-test"), (b"content-length", b"0")],
            )
        )
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
