"""The tool-fields relay's outbound connections to the upstream API.

Keep-alive HTTP/1.1 connections (``UpstreamPool``) on asyncio's own
transports, directly or through the caller's plain-``http`` proxy; an
``https://`` or SOCKS proxy is left to httpcore, configured as httpx would
be (``_core_pool``). Why no HTTP client: docs/relay.md, "How it is built"."""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import functools
import importlib
import re
import ssl
import sys
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from .._mcp_compat import MCP_MAJOR


def http_client_module() -> Any:
    """The HTTP client package the installed mcp depends on: ``httpx`` for
    mcp 1.x, ``httpx2`` (same API, another import name) for 2.x, so the relay
    adds no dependency."""
    return importlib.import_module("httpx2" if MCP_MAJOR >= 2 else "httpx")


def http_transport_module() -> Any:
    """``httpcore`` under ``httpx``, ``httpcore2`` under ``httpx2``."""
    return importlib.import_module("httpcore2" if MCP_MAJOR >= 2 else "httpcore")


UPSTREAM_KEEPALIVE_S = 600.0
"""How long an idle upstream connection is kept for reuse: as long as
Claude Code keeps its own to the relay (``server.IDLE_TIMEOUT_S``), so a tool
run longer than a few seconds does not cost the next turn a new TCP and TLS
handshake to the API."""

MAX_IDLE_CONNECTIONS = 20
"""Idle upstream connections kept at most (the oldest is closed first)."""

CONNECT_TIMEOUT_S = 30.0
WRITE_TIMEOUT_S = 60.0
# No read timeout: a long generation streams for minutes, and the CLI
# applies its own API timeout.

_MAX_HEAD_BYTES = 64 * 1024
_WRITE_PIECE = 256 * 1024
_READ_AHEAD_BYTES = 256 * 1024
"""Response bytes received but not yet passed on beyond which the upstream
is not read until they are (back-pressure from a slow CLI)."""


class UpstreamError(Exception):
    """The upstream could not be reached, or broke off (the class name says
    which; the text never quotes the URL)."""


class ConnectError(UpstreamError):
    pass


class ConnectTimeoutError(UpstreamError):
    pass


class ProxyError(UpstreamError):
    pass


class ReadError(UpstreamError):
    pass


class WriteTimeoutError(UpstreamError):
    pass


class WriteError(UpstreamError):
    pass


class RemoteProtocolError(UpstreamError):
    pass


def transport_errors() -> tuple[type[Exception], ...]:
    """What a pool raises when the upstream cannot be reached or breaks off."""
    core = http_transport_module()
    return (
        UpstreamError,
        core.NetworkError,
        core.TimeoutException,
        core.ProtocolError,
        core.ProxyError,
        core.UnsupportedProtocol,
    )


def outbound_pool(proxy: str | None, verify: ssl.SSLContext | bool) -> UpstreamPool:
    """The relay's connections to its upstream, through ``proxy`` if given,
    verifying TLS as ``verify`` says (what they mean to ``httpx.AsyncClient``:
    the context is made by the client's own helper)."""
    return UpstreamPool(proxy, verify)


class UpstreamPool:
    """Keep-alive connections to the relay's upstream (one origin, one proxy)."""

    def __init__(self, proxy: str | None, verify: ssl.SSLContext | bool) -> None:
        self._verify = verify
        self._proxy = urllib.parse.urlsplit(proxy) if proxy else None
        self._core: Any = None
        if self._proxy is not None and self._proxy.scheme.lower() != "http":
            self._core = _core_pool(proxy, verify)
        self._idle: dict[tuple[str, str, int], collections.deque[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._closed = False

    @functools.cached_property
    def ssl_context(self) -> ssl.SSLContext:
        if self._verify is True:
            return _default_ssl_context()
        context: ssl.SSLContext = http_client_module().create_ssl_context(
            verify=self._verify, trust_env=False
        )
        return context

    @property
    def connections(self) -> int:
        """Open connections (idle and in use), for the relay's tests."""
        return len(self._busy) + sum(len(idle) for idle in self._idle.values())

    async def request(
        self,
        method: bytes,
        scheme: bytes,
        host: bytes,
        port: int,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: Sequence[bytes | memoryview],
    ) -> UpstreamResponse:
        """Send one request (its body in ``body``'s pieces, one after the
        other); returns once the response's head has arrived. (Through
        httpcore, its response: the same ``status``, ``reason``,
        ``headers``, ``stream`` and ``aclose``.)"""
        if self._core is not None:
            response: UpstreamResponse = await _core_request(
                self._core, method, scheme, host, port, target, headers, body
            )
            return response
        origin = (scheme.decode("ascii"), host.decode("ascii"), port)
        if self._proxy is not None and origin[0] == "http":
            # Through the proxy with the absolute URL: the proxy's own
            # credentials go with each request.
            default = 80
            authority = host if port == default else b"%s:%d" % (host, port)
            target = b"http://" + authority + target
            headers = [*headers, *self._proxy_headers()]
        connection = self._idle_connection(origin) or await self._connect(origin)
        self._busy.add(connection)
        try:
            return await connection.send(method, target, headers, body)
        except BaseException:
            self._busy.discard(connection)
            connection.close()
            raise

    def release(self, connection: _Connection) -> None:
        """A connection whose response is over: kept for reuse, or closed."""
        self._busy.discard(connection)
        if self._closed or not connection.reusable:
            connection.close()
            return
        idle = self._idle.setdefault(connection.origin, collections.deque())
        idle.append(connection)
        connection.idle_since(UPSTREAM_KEEPALIVE_S)
        while len(idle) > MAX_IDLE_CONNECTIONS:
            idle.popleft().close()

    def forget(self, connection: _Connection) -> None:
        """An idle connection that closed or expired."""
        idle = self._idle.get(connection.origin)
        if idle is not None:
            with contextlib.suppress(ValueError):
                idle.remove(connection)
            if not idle:
                del self._idle[connection.origin]
        self._busy.discard(connection)

    def _idle_connection(self, origin: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()  # the most recently used
            if connection.reusable:
                connection.in_use()
                return connection
            connection.close()
        return None

    def _proxy_headers(self) -> list[tuple[bytes, bytes]]:
        proxy = self._proxy
        assert proxy is not None
        if proxy.username is None:
            return []
        credentials = (
            f"{urllib.parse.unquote(proxy.username)}:"
            f"{urllib.parse.unquote(proxy.password or '')}"
        )
        return [
            (b"Proxy-Authorization", b"Basic " + base64.b64encode(credentials.encode()))
        ]

    async def _connect(self, origin: tuple[str, str, int]) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        connection = _Connection(self, origin)
        tls = scheme == "https"

        async def connect() -> None:
            if self._proxy is None:
                await loop.create_connection(
                    lambda: connection,
                    host,
                    port,
                    ssl=self.ssl_context if tls else None,
                    server_hostname=host if tls else None,
                    ssl_handshake_timeout=CONNECT_TIMEOUT_S if tls else None,
                )
                return
            await loop.create_connection(
                lambda: connection, self._proxy.hostname or "", self._proxy.port or 80
            )
            if tls:
                await connection.tunnel(host, port, self._proxy_headers())
                await connection.start_tls(self.ssl_context, host)

        try:
            await asyncio.wait_for(connect(), CONNECT_TIMEOUT_S)
            return connection
        except asyncio.TimeoutError as error:
            connection.close()
            raise ConnectTimeoutError() from error
        except UpstreamError:
            connection.close()
            raise
        except OSError as error:  # ssl.SSLError (verification) included
            connection.close()
            raise ConnectError(type(error).__name__) from error
        except BaseException:
            connection.close()
            raise

    async def aclose(self) -> None:
        self._closed = True
        for idle in list(self._idle.values()):
            for connection in list(idle):
                connection.close()
        self._idle.clear()
        for connection in list(self._busy):
            connection.close()
        self._busy.clear()
        if self._core is not None:
            await self._core.aclose()


# -- one connection -------------------------------------------------------------

_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\r\n]*))?\r?\Z")
_HEADER_NAME = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\Z")
_NO_BODY_STATUS = (204, 304)
_FRAMING_NAME_LENGTHS = frozenset(
    map(len, (b"connection", b"transfer-encoding", b"content-length"))
)


class _Connection(asyncio.Protocol):
    """One upstream connection, one exchange at a time."""

    def __init__(self, pool: UpstreamPool, origin: tuple[str, str, int]) -> None:
        self._pool = pool
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._response: UpstreamResponse | None = None
        self._head: asyncio.Future[None] | None = None  # the response's head
        self._tunnel: asyncio.Future[None] | None = None  # the proxy's answer
        self._writable: asyncio.Future[None] | None = None
        self._eof = False
        self._broken = False
        self._closed = False
        self._expiry: asyncio.TimerHandle | None = None
        self._idle_until: float | None = None

    # -- asyncio's callbacks ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._tunnel is not None:
            self._buffer += data
            self._read_tunnel_answer()
            return
        response = self._response
        if response is None or response.abandoned:
            # Nothing asked (a broken connection), or the request was
            # abandoned (the CLI went away as its answer began): the rest of
            # the answer is nobody's, and the connection is not reused.
            self._broken = True
            self.close()
            return
        try:
            if self._buffer or not response.take(data):
                self._buffer += data
                response.feed(self._buffer)
        except RemoteProtocolError as error:
            self._fail(error)

    def eof_received(self) -> bool:
        self._eof = True
        if self._response is not None:
            self._response.end_of_input()
        return False  # asyncio closes the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._eof = True
        self._cancel_expiry()
        if self._tunnel is not None and not self._tunnel.done():
            self._tunnel.set_exception(ProxyError())
        if self._response is not None:
            self._response.end_of_input()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._pool.forget(self)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    # -- the proxy's CONNECT ---------------------------------------------------

    async def tunnel(
        self, host: str, port: int, headers: list[tuple[bytes, bytes]]
    ) -> None:
        assert self.transport is not None
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        head = [
            b"CONNECT " + target.encode() + b" HTTP/1.1",
            b"Host: " + target.encode(),
        ]
        head += [name + b": " + value for name, value in headers]
        self._tunnel = asyncio.get_running_loop().create_future()
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n")
        try:
            await self._tunnel
        finally:
            self._tunnel = None

    def _read_tunnel_answer(self) -> None:
        assert self._tunnel is not None
        end = self._buffer.find(b"\r\n\r\n")
        if end == -1:
            if len(self._buffer) > _MAX_HEAD_BYTES and not self._tunnel.done():
                self._tunnel.set_exception(ProxyError())
            return
        status = bytes(self._buffer[:end]).split(b"\r\n", 1)[0].split(b" ")
        rest = self._buffer[end + 4 :]
        self._buffer = bytearray()
        if self._tunnel.done():
            return
        if len(status) >= 2 and status[1][:1] == b"2" and not rest:
            self._tunnel.set_result(None)
        else:
            # The proxy's status, as httpcore words it ("407 ..."): what
            # ``network.describe`` names the refusal by.
            code = status[1].decode("latin-1") if len(status) >= 2 else "?"
            self._tunnel.set_exception(ProxyError(f"{code} from the proxy"))

    async def start_tls(self, context: ssl.SSLContext, host: str) -> None:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        transport = await loop.start_tls(
            self.transport,
            self,
            context,
            server_hostname=host,
            ssl_handshake_timeout=CONNECT_TIMEOUT_S,
        )
        if transport is None:
            raise ConnectError("TLS handshake abandoned")
        self.transport = transport

    # -- an exchange -----------------------------------------------------------

    @property
    def reusable(self) -> bool:
        return (
            self.transport is not None
            and not self._closed
            and not self._eof
            and not self._broken
            and not self.transport.is_closing()
        )

    def idle_since(self, seconds: float) -> None:
        self._response = None
        loop = asyncio.get_running_loop()
        self._idle_until = loop.time() + seconds
        if self._expiry is None:  # one timer, moved lazily
            self._expiry = loop.call_at(self._idle_until, self._expire)

    def in_use(self) -> None:
        self._idle_until = None

    def _expire(self) -> None:
        self._expiry = None
        until = self._idle_until
        if until is None:
            return
        loop = asyncio.get_running_loop()
        if loop.time() < until:
            self._expiry = loop.call_at(until, self._expire)
            return
        self.close()
        self._pool.forget(self)

    def _cancel_expiry(self) -> None:
        self._idle_until = None
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None

    async def send(
        self,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: Sequence[bytes | memoryview],
    ) -> UpstreamResponse:
        transport = self.transport
        assert transport is not None
        response = UpstreamResponse(self, method)
        self._response = response
        self._buffer = bytearray()
        head = b"".join(
            [
                method,
                b" ",
                target,
                b" HTTP/1.1\r\n",
                *[b"%s: %s\r\n" % (name, value) for name, value in headers],
                b"\r\n",
            ]
        )
        if sum(map(len, body)) < _WRITE_PIECE:
            # One write (over TLS, one pass of the TLS layer and one send),
            # the body's pieces not joined first.
            transport.writelines((head, *body))
        else:
            transport.write(head)
            # In pieces, each written out before the next: a TLS transport
            # then encrypts into a buffer the size of a piece, not of the
            # body, and a slow upstream is waited for, not buffered for.
            for part in body:
                view = memoryview(part)
                for start in range(0, len(view), _WRITE_PIECE):
                    await self._drained()
                    transport.write(view[start : start + _WRITE_PIECE])
        await self._drained()
        await response.head_received()
        return response

    async def _drained(self) -> None:
        if self._writable is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._writable), WRITE_TIMEOUT_S)
        except asyncio.TimeoutError as error:
            raise WriteTimeoutError() from error
        if self._closed:
            raise WriteError()

    def pause_reading(self) -> None:
        if self.transport is not None and not self._closed:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None and not self._closed:
            self.transport.resume_reading()

    def _fail(self, error: UpstreamError) -> None:
        self._broken = True
        if self._response is not None:
            self._response.fail(error)
        self.close()

    def done(self, keep_alive: bool) -> None:
        """The response was read to its end (or abandoned: keep_alive False)."""
        if not keep_alive:
            self._broken = True
        self._response = None
        self._pool.release(self)

    def close(self) -> None:
        self._cancel_expiry()
        if self.transport is not None and not self._closed:
            # abort, not close: a TLS close waits for the peer's
            # close_notify, which a dead upstream never sends.
            self.transport.abort()
        self._closed = True


class UpstreamResponse:
    """A response from the upstream: status, reason and headers as sent,
    and the body as it arrives (``stream``), chunked framing undone."""

    def __init__(self, connection: _Connection, method: bytes) -> None:
        self._connection = connection
        self._method = method
        self.status = 0
        self.reason = b""
        self.http_version = b"1.1"
        self.headers: list[tuple[bytes, bytes]] = []
        self._head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._chunks: collections.deque[bytes] = collections.deque()
        self._queued = 0
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._error: UpstreamError | None = None
        self._complete = False
        self._keep_alive = True
        self._closed = False
        # Body framing: "length" (self._left bytes), "chunked", "close", None.
        self._framing: str | None = None
        self._left = 0
        self._chunk_state = "size"  # chunked: size, data, data-end, trailer

    @property
    def extensions(self) -> dict[str, Any]:
        return {"reason_phrase": self.reason}

    @property
    def abandoned(self) -> bool:
        """Whether the wait for its head was cancelled (the CLI went away)."""
        return self._head.cancelled()

    async def head_received(self) -> None:
        await self._head

    # -- fed by the connection -------------------------------------------------

    def feed(self, buffer: bytearray) -> None:
        if not self._head.done() and not self._parse_head(buffer):
            return
        self._feed_body(buffer)

    def _parse_head(self, buffer: bytearray) -> bool:
        while True:
            end = buffer.find(b"\r\n\r\n")
            size = 4
            if end == -1:
                end, size = buffer.find(b"\n\n"), 2
            if end == -1:
                if len(buffer) > _MAX_HEAD_BYTES:
                    raise RemoteProtocolError("response head too large")
                return False
            lines = bytes(buffer[:end]).split(b"\n")
            del buffer[: end + size]
            status = _STATUS_LINE.match(lines[0])
            if status is None:
                raise RemoteProtocolError("bad status line")
            code = int(status.group(2))
            headers: list[tuple[bytes, bytes]] = []
            # What the framing needs, read off in the same pass.
            connection: list[bytes] = []
            codings: list[bytes] = []
            lengths: set[bytes] = set()
            for line in lines[1:]:
                name, colon, value = line.partition(b":")
                if not colon or _HEADER_NAME.fullmatch(name) is None:
                    raise RemoteProtocolError("bad header line")
                value = value.strip(b" \t\r")
                headers.append((name, value))
                if len(name) in _FRAMING_NAME_LENGTHS:
                    lower = name.lower()
                    if lower == b"connection":
                        connection += value.lower().split(b",")
                    elif lower == b"transfer-encoding":
                        codings += value.lower().split(b",")
                    elif lower == b"content-length":
                        lengths.add(value)
            if 100 <= code < 200 and code != 101:
                continue  # interim (100 Continue, 103 Early Hints): the final follows
            self.status = code
            self.http_version = b"1." + status.group(1)
            self.reason = status.group(3) or b""
            self.headers = headers
            self._framing_from(connection, codings, lengths)
            self._head.set_result(None)
            return True

    def _framing_from(
        self, connection: list[bytes], codings: list[bytes], lengths: set[bytes]
    ) -> None:
        if self.http_version == b"1.0" or any(
            token.strip() == b"close" for token in connection
        ):
            self._keep_alive = False
        if (
            self._method == b"HEAD"
            or self.status in _NO_BODY_STATUS
            or 100 <= self.status < 200
        ):
            self._framing = None
            return
        codings = [coding.strip() for coding in codings if coding.strip()]
        if codings:
            # Transfer-Encoding wins over Content-Length (RFC 9112 6.3; the
            # relay passes no Content-Length on with it). The relay undoes
            # chunked and nothing else: an answer in another transfer coding
            # (``gzip, chunked``, or read-until-close ``gzip``) is refused
            # rather than passed on labelled as something it is not.
            if codings != [b"chunked"]:
                raise RemoteProtocolError(
                    "a transfer coding the relay does not undo: "
                    + b", ".join(codings).decode("latin-1")
                )
            self._framing = "chunked"
            return
        if lengths:
            values = {length.strip() for length in lengths}
            if len(values) != 1 or not next(iter(values)).isdigit():
                raise RemoteProtocolError("bad Content-Length")
            self._framing, self._left = "length", int(next(iter(values)))
            return
        self._framing, self._keep_alive = "close", False

    def take(self, data: bytes) -> bool:
        """Pass body bytes on as they came, when nothing is buffered and the
        framing allows (no copy); False when ``feed`` must parse them."""
        if not self._head.done() or self._head.exception() is not None:
            return False
        if self._framing == "close" or (
            self._framing == "length" and len(data) < self._left
        ):
            self._push(data)
            if self._framing == "length":
                self._left -= len(data)
            return True
        return False

    def _feed_body(self, buffer: bytearray) -> None:
        framing = self._framing
        if framing is None:
            if buffer:
                raise RemoteProtocolError("data after a response without a body")
            self._finish()
        elif framing == "length":
            if buffer:
                take = min(len(buffer), self._left)
                self._push(
                    bytes(buffer[:take]) if take < len(buffer) else bytes(buffer)
                )
                del buffer[:take]
                self._left -= take
                if buffer:
                    raise RemoteProtocolError("data after the response")
            if self._left == 0:
                self._finish()
        elif framing == "close":
            if buffer:
                self._push(bytes(buffer))
                buffer.clear()
        else:
            self._feed_chunked(buffer)

    def _feed_chunked(self, buffer: bytearray) -> None:
        while buffer:
            state = self._chunk_state
            if state == "data":
                take = min(len(buffer), self._left)
                self._push(bytes(buffer[:take]))
                del buffer[:take]
                self._left -= take
                if self._left == 0:
                    self._chunk_state = "data-end"
                continue
            end = buffer.find(b"\n")
            if end == -1:
                if len(buffer) > _MAX_HEAD_BYTES:
                    raise RemoteProtocolError("chunk header too large")
                return
            line = bytes(buffer[: end + 1])
            del buffer[: end + 1]
            if state == "data-end":
                if line.rstrip(b"\r\n"):
                    raise RemoteProtocolError("bad chunk end")
                self._chunk_state = "size"
            elif state == "size":
                size = _CHUNK_SIZE.match(line.rstrip(b"\n"))
                if size is None:
                    raise RemoteProtocolError("bad chunk size")
                self._left = int(size.group(1), 16)
                self._chunk_state = "data" if self._left else "trailer"
            elif not line.rstrip(b"\r\n"):  # the trailer's end
                if buffer:
                    raise RemoteProtocolError("data after the response")
                self._finish()
                return

    def end_of_input(self) -> None:
        """The upstream closed its side."""
        if not self._head.done():
            self.fail(RemoteProtocolError("the upstream closed without a response"))
        elif self._framing == "close" and not self._complete:
            self._finish()
        elif not self._complete:
            self.fail(ReadError("the upstream closed mid-response"))

    def _push(self, data: bytes) -> None:
        if not data:
            return
        self._chunks.append(data)
        self._queued += len(data)
        if self._queued > _READ_AHEAD_BYTES and not self._paused:
            self._paused = True
            self._connection.pause_reading()
        self._wake()

    def _finish(self) -> None:
        self._complete = True
        self._wake()

    def fail(self, error: UpstreamError) -> None:
        if not self._head.done():
            self._head.set_exception(error)
        self._error = self._error or error
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # -- read by the relay -----------------------------------------------------

    @property
    def stream(self) -> AsyncIterator[bytes]:
        return self._chunks_as_they_come()

    async def _chunks_as_they_come(self) -> AsyncIterator[bytes]:
        while True:
            if self._chunks:
                data = self._chunks.popleft()
                self._queued -= len(data)
                if self._paused and self._queued <= _READ_AHEAD_BYTES // 2:
                    self._paused = False
                    self._connection.resume_reading()
                yield data
                continue
            if self._error is not None:
                raise self._error
            if self._complete:
                return
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def read_some(
        self, before_waiting: Callable[[], None] | None = None
    ) -> tuple[bytes, bool]:
        """All of the body that has arrived since the last call, as one
        piece, and whether the body is complete with it (``b""`` and True
        at its end): what ``stream`` yields, taken as it queued up, so a
        burst is passed on in one write. ``before_waiting`` is called
        before waiting for more."""
        while True:
            chunks = self._chunks
            if chunks:
                if len(chunks) == 1:
                    data = chunks.popleft()
                else:
                    data = b"".join(chunks)
                    chunks.clear()
                self._queued = 0
                if self._paused:
                    self._paused = False
                    self._connection.resume_reading()
                return data, self._complete and self._error is None
            if self._error is not None:
                raise self._error
            if self._complete:
                return b"", True
            if before_waiting is not None:
                before_waiting()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        clean = self._complete and self._error is None and not self._chunks
        self._connection.done(clean and self._keep_alive)


# -- what it leaves to httpcore -------------------------------------------------


def _core_pool(proxy: str | None, verify: ssl.SSLContext | bool) -> Any:
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
        # them silently.
        max_connections=None,
        max_keepalive_connections=MAX_IDLE_CONNECTIONS,
        keepalive_expiry=UPSTREAM_KEEPALIVE_S,
    )


_TIMEOUTS = {
    "connect": CONNECT_TIMEOUT_S,
    "read": None,
    "write": WRITE_TIMEOUT_S,
    "pool": None,
}


async def _core_request(
    pool: Any,
    method: bytes,
    scheme: bytes,
    host: bytes,
    port: int,
    target: bytes,
    headers: list[tuple[bytes, bytes]],
    body: Sequence[bytes | memoryview],
) -> Any:
    core = http_transport_module()
    response = await pool.handle_async_request(
        core.Request(
            method,
            core.URL(scheme=scheme, host=host, port=port, target=target),
            headers=headers,
            content=b"".join(body),
            extensions={"timeout": _TIMEOUTS},
        )
    )
    response.reason = response.extensions.get("reason_phrase", b"")
    return response


@functools.lru_cache(maxsize=1)
def _default_ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~20 ms; one context serves every relay.
    return http_client_module().create_ssl_context(verify=True, trust_env=False)  # type: ignore[no-any-return]


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
