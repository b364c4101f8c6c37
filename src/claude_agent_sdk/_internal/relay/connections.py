"""The tool-fields relay's outbound connections: httpcore's pool on asyncio.

Why not the HTTP client itself: the relay forwards each request exactly as
the CLI sent it, so the client's layers (auth, redirects, cookies, default
headers, content decoding) are all things it must not do, and on every API
call they cost time the CLI waits for. httpcore, the transport under httpx
and httpx2, does the HTTP (h11), the pool, proxies and TLS; this module only
builds the pool as the client would and gives it asyncio's own sockets
through httpcore's ``network_backend`` hook instead of its anyio backend,
which spends a tenth of a millisecond per request on cancel scopes. The
relay always runs on its own asyncio loop, so nothing else is needed.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import sys
from collections.abc import Iterable
from typing import Any

from .._mcp_compat import http_client_module, http_transport_module


def outbound_pool(proxy: str | None, verify: ssl.SSLContext | bool) -> Any:
    """An httpcore connection pool configured as the HTTP client would be.

    ``verify`` and ``proxy`` mean what they mean to ``httpx.AsyncClient``;
    the SSL context and the proxy's URL, credentials and headers are made
    by the client's own helpers, so both behave exactly as before.
    """
    http = http_client_module()
    core = http_transport_module()
    ssl_context = (
        _default_ssl_context()
        if verify is True
        else http.create_ssl_context(verify=verify, trust_env=False)
    )
    core_proxy = None
    if proxy:
        parsed = http.Proxy(url=proxy)
        core_proxy = core.Proxy(
            url=core.URL(
                scheme=parsed.url.raw_scheme,
                host=parsed.url.raw_host,
                port=parsed.url.port,
                target=parsed.url.raw_path,
            ),
            auth=parsed.raw_auth,
            headers=parsed.headers.raw,
            ssl_context=parsed.ssl_context,
        )
    # StreamWriter.start_tls (TLS to the upstream, and TLS inside a proxy's
    # TLS) needs Python 3.11; on 3.10 httpcore keeps its own backend.
    backend = _AsyncioBackend(core) if sys.version_info >= (3, 11) else None
    return core.AsyncConnectionPool(
        ssl_context=ssl_context,
        proxy=core_proxy,
        network_backend=backend,
        # No cap on connections: the CLI decides how many requests run at
        # once (subagents stream in parallel), and a cap here would queue
        # them silently. Idle ones are kept as long as Claude Code keeps its
        # own to the relay (``server.IDLE_TIMEOUT_S``): a tool run longer
        # than a few seconds must not cost the next turn a new TCP and TLS
        # handshake; a connection the API closed meanwhile is noticed
        # before reuse (``is_readable`` below) and replaced.
        max_connections=None,
        max_keepalive_connections=20,
        keepalive_expiry=UPSTREAM_KEEPALIVE_S,
    )


UPSTREAM_KEEPALIVE_S = 600.0
"""How long an idle upstream connection is kept for reuse."""


@functools.lru_cache(maxsize=1)
def _default_ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~20 ms; one context serves every relay.
    return http_client_module().create_ssl_context(verify=True, trust_env=False)  # type: ignore[no-any-return]


def transport_errors() -> tuple[type[Exception], ...]:
    """What the pool raises when the upstream cannot be reached or breaks off."""
    core = http_transport_module()
    return (
        core.NetworkError,
        core.TimeoutException,
        core.ProtocolError,
        core.ProxyError,
        core.UnsupportedProtocol,
    )


class _AsyncioStream:
    """One connection, as httpcore's ``AsyncNetworkStream``."""

    def __init__(
        self, core: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self._core = core
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            if timeout is None:
                return await self._reader.read(max_bytes)
            async with asyncio.timeout(timeout):  # type: ignore[attr-defined, unused-ignore]
                return await self._reader.read(max_bytes)
        except TimeoutError as error:
            raise self._core.ReadTimeout(error) from error
        except OSError as error:
            raise self._core.ReadError(error) from error

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            self._writer.write(buffer)
            async with asyncio.timeout(timeout):  # type: ignore[attr-defined, unused-ignore]
                await self._writer.drain()
        except TimeoutError as error:
            raise self._core.WriteTimeout(error) from error
        except OSError as error:
            raise self._core.WriteError(error) from error

    async def aclose(self) -> None:
        # abort, not close: a TLS close waits for the peer's close_notify,
        # which a dead upstream never sends, and nothing is left to flush.
        self._writer.transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> _AsyncioStream:
        try:
            await self._writer.start_tls(  # type: ignore[attr-defined, unused-ignore]
                ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except TimeoutError as error:
            self._writer.transport.abort()
            raise self._core.ConnectTimeout(error) from error
        except OSError as error:  # ssl.SSLError included
            self._writer.transport.abort()
            raise self._core.ConnectError(error) from error
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # httpcore asks before reusing an idle connection: a connection
            # the upstream closed (EOF seen) must not be reused.
            return self._reader.at_eof() or self._writer.is_closing()
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        return self._writer.get_extra_info(name)


class _AsyncioBackend:
    """httpcore's ``AsyncNetworkBackend`` on asyncio's streams."""

    def __init__(self, core: Any) -> None:
        self._core = core

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _AsyncioStream:
        try:
            async with asyncio.timeout(timeout):  # type: ignore[attr-defined, unused-ignore]
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    local_addr=(local_address, 0) if local_address else None,
                )
        except TimeoutError as error:
            raise self._core.ConnectTimeout(error) from error
        except OSError as error:
            raise self._core.ConnectError(error) from error
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _AsyncioStream(self._core, reader, writer)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _AsyncioStream:
        raise self._core.ConnectError("the relay does not connect to unix sockets")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
