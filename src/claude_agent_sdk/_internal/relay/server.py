"""The tool-fields relay's HTTP side: the CLI's connections and the exchange.

h11 parses each request from the CLI on a plain asyncio protocol; the
``Forwarder`` rewrites it (``rewrite``) and forwards it through
httpcore's pool (``connections``), streaming the response back as it
arrives. ``lifecycle.py`` owns the thread, the loop and the listening
socket these run on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import h11

from .._mcp_compat import http_client_module, http_transport_module
from .connections import transport_errors
from .rewrite import (
    Rewrite,
    StrictServers,
    limits_message,
    not_strict_message,
    over_caps_message,
    rewrite_body,
    unchanged_message,
    with_betas,
)

logger = logging.getLogger(__name__)

_REWRITTEN_ROUTES = ("/v1/messages", "/v1/messages/count_tokens")

# Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection and
# are never forwarded; host and content-length are set again for the
# outbound request (Forwarder._forward).
_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)
_NOT_FORWARDED_REQUEST = _HOP_BY_HOP

_URL_CACHE_SIZE = 64
_METHODS_WITH_BODY = frozenset({b"POST", b"PUT", b"PATCH"})
# Outbound timeouts. No read limit: a long generation streams for minutes,
# and the CLI applies its own API timeout. No idle limit on the CLI's side
# either: it keeps one connection for a whole query, idle while tools run.
_TIMEOUTS = {"connect": 30.0, "read": None, "write": 60.0, "pool": None}

MAX_BODY_BYTES = 64 * 1024 * 1024
"""The largest request body the relay accepts (from the CLI, with the secret):
twice the Messages API's own 32 MB request limit, so every request the API
could take gets through and the API, not the relay, answers the rest;
larger ones get a 413 in the API's shape without being read."""

HEADER_TIMEOUT_S = 10.0
"""How long a request line and headers may take to arrive, from the
connection's first byte (or a request's): Claude Code writes them at once."""

IDLE_TIMEOUT_S = 600.0
"""How long a connection may sit between requests, or in a request body,
before it is closed. Claude Code keeps one connection for a whole query,
idle while tools run, so this is long; a connection that never sent a
request is held for ``PENDING_TIMEOUT_S`` only."""

MAX_PIPELINED_BYTES = 1024 * 1024
"""Bytes read ahead of the request in flight at most; beyond that the
connection is not read until the exchange is done (back-pressure)."""

MAX_PENDING_CONNECTIONS = 64
"""Connections that have not yet sent a request with the secret (or, in
proxy mode, a ``CONNECT`` with the relay's credentials) beyond which a new
one makes room: the oldest of them that has had ``ADMISSION_GRACE_S`` to
speak is closed. A connection is never closed for room before it could be
read, so a flood of connections that send nothing cannot push Claude
Code's new connection out before its first bytes (it writes them at once).
Connections that did authenticate are never capped or closed for room:
their number is Claude Code's parallel streams (subagents, side requests),
which must never queue."""

MAX_UNREAD_CONNECTIONS = 4096
"""The hard bound on such connections (memory, about 4 KB each, and
descriptors): past it the oldest is closed even if young. Larger than the
connections asyncio can accept between a connection's accept and its first
read (two accept bursts of the listen backlog, 1024, at most), so even then
the closed one is a flood's, not the newest arrival's."""

ADMISSION_GRACE_S = 0.25
"""How long a new connection may stay silent before it may be closed for
room (Claude Code's request line arrives within milliseconds)."""

PENDING_TIMEOUT_S = 2.0
"""How long a connection may take to send its first request line and
headers: Claude Code sends them with the connection. Later requests on an
authenticated connection get ``HEADER_TIMEOUT_S``."""


class Live:
    """A relay's open connections (``stop`` aborts them all) and, in the
    order they were accepted, those that have not authenticated yet."""

    def __init__(self) -> None:
        self._all: dict[Any, None] = {}
        self.pending: dict[Any, None] = {}

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._all))

    def __len__(self) -> int:
        return len(self._all)

    def add(self, connection: Any) -> None:
        """Admit ``connection``, making room first if it is one more that
        has not authenticated (``MAX_PENDING_CONNECTIONS``)."""
        if not connection.authenticated:
            self.make_room(asyncio.get_running_loop())
            self.pending[connection] = None
        self._all[connection] = None

    def admitted(self, connection: Any) -> None:
        """``connection`` authenticated: never closed for room any more."""
        self.pending.pop(connection, None)

    def discard(self, connection: Any) -> None:
        self._all.pop(connection, None)
        self.pending.pop(connection, None)

    def make_room(self, loop: asyncio.AbstractEventLoop) -> None:
        if len(self.pending) < MAX_PENDING_CONNECTIONS:
            return
        oldest = next(iter(self.pending))
        if (
            loop.time() - oldest.accepted_at >= ADMISSION_GRACE_S
            or len(self.pending) >= MAX_UNREAD_CONNECTIONS
        ):
            oldest.abort()
            self.discard(oldest)


def error_body(error_type: str, message: str) -> bytes:
    """An error in the Messages API's own shape, so the CLI reports
    ``API Error: <status> <message>`` to the caller as for any API error."""
    return json.dumps(
        {"type": "error", "error": {"type": error_type, "message": message}}
    ).encode()


class Forwarder:
    """What the relay does with each request (one instance per relay)."""

    def __init__(
        self,
        secret: str | None,
        upstream: str,
        fields_by_name: Mapping[str, Mapping[str, Any]],
        pool: Any,
        strict_servers: StrictServers | None = None,
    ) -> None:
        # None: no prefix (proxy mode, where the CONNECT authenticated).
        self._prefix = None if secret is None else f"/{secret}".encode()
        self._upstream = upstream
        url = http_client_module().URL(upstream)
        self._host = url.netloc
        self._scheme = url.raw_scheme
        self._raw_host = url.raw_host
        self._port = url.port
        self._base_path = url.raw_path.partition(b"?")[0].rstrip(b"/")
        self._fields_by_name = fields_by_name
        self._strict_servers = strict_servers
        # Tools of strict_mcp_servers already named in a warning as sent
        # without strict: once per tool for the relay's lifetime.
        self._warned_not_strict: set[str] = set()
        # Tools sent without strict at the per-request caps: named once.
        self._warned_over_caps: set[str] = set()
        self._pool = pool
        self._core = http_transport_module()
        self._errors = transport_errors()
        self._urls: dict[bytes, Any] = {}

    def route(self, target: bytes) -> bytes | None:
        """The target after the secret prefix (with query), or None without it."""
        if self._prefix is None:
            return target if target.startswith(b"/") else None
        path, question, query = target.partition(b"?")
        head, slash, tail = path[1:].partition(b"/")
        if not path.startswith(b"/") or not hmac.compare_digest(
            b"/" + head, self._prefix
        ):
            return None
        return slash + tail + question + query

    async def exchange(
        self, request: h11.Request, rest: bytes, body: bytes, cli: CliConnection
    ) -> None:
        """Forward ``request`` (already authorized: ``rest`` is its target
        after the secret prefix) with its ``body``, and stream the answer."""
        headers = [
            (name, value)
            for name, value in request.headers
            if name not in _NOT_FORWARDED_REQUEST
        ]
        route = rest.split(b"?", 1)[0].rstrip(b"/").decode("latin-1")
        rewrite = Rewrite(body)
        if request.method == b"POST" and route in _REWRITTEN_ROUTES:
            encoding = _content_encoding(headers)
            if encoding is None:
                rewrite = self._rewrite(body)
            else:
                rewrite = self._rewrite_encoded(body, encoding)
        if not self._report(rewrite, cli):
            return
        if rewrite.modified_tools:
            headers = with_betas(headers, rewrite.betas)
        await self._forward(request.method, rest, headers, rewrite, cli)

    def _report(self, rewrite: Rewrite, cli: CliConnection) -> bool:
        """Warn (once per tool) of what ``rewrite`` could not do; answer the
        CLI and return False when the request must not go out."""
        if rewrite.unchanged_because:
            logger.warning("%s", unchanged_message(rewrite))
        for tool, reason in rewrite.not_strict:
            if tool not in self._warned_not_strict:
                self._warned_not_strict.add(tool)
                logger.warning("%s", not_strict_message(tool, reason))
        demoted = [t for t in rewrite.over_caps if t not in self._warned_over_caps]
        if demoted:
            self._warned_over_caps.update(demoted)
            logger.warning("%s", over_caps_message(demoted, rewrite))
        if rewrite.exceeded:
            message = limits_message(rewrite)
            logger.warning("%s", message)
            cli.respond_error(400, "invalid_request_error", message)
            return False
        return True

    def _rewrite(self, body: bytes) -> Rewrite:
        """``rewrite_body``, but never an error: a body it fails on goes
        out unchanged (the caller warns, naming the tools)."""
        try:
            if self._strict_servers is None:
                return rewrite_body(body, self._fields_by_name)
            return rewrite_body(body, self._fields_by_name, self._strict_servers)
        except Exception as error:  # noqa: BLE001 - forwarded unchanged instead
            markers = (
                []
                if self._strict_servers is None
                else [
                    marker
                    for marker in self._strict_servers.markers()
                    if marker.encode() in body
                ]
            )
            return Rewrite(
                body,
                unchanged_because=f"the rewrite failed ({type(error).__name__})",
                lost_tools=[n for n in self._fields_by_name if n.encode() in body]
                + [m + "*" if m.endswith("__") else m for m in markers],
            )

    def _rewrite_encoded(self, body: bytes, encoding: bytes) -> Rewrite:
        """``_rewrite`` on a body sent with ``Content-Encoding``: decoded,
        rewritten, and encoded again in the same encoding when changed (the
        header stays as sent); one that cannot be decoded goes out unchanged,
        with the warning naming what it may have lost."""
        if not self._fields_by_name and self._strict_servers is None:
            return Rewrite(body)
        try:
            plain = decode_body(body, encoding)
        except _UndecodableError as why:
            declared = list(self._fields_by_name) + (
                []
                if self._strict_servers is None
                else [
                    m + "*" if m.endswith("__") else m
                    for m in self._strict_servers.markers()
                ]
            )
            return Rewrite(
                body,
                unchanged_because=f"its {encoding.decode('latin-1')} body {why}",
                lost_tools=[f"{', '.join(declared)} (if present)"],
            )
        rewrite = self._rewrite(plain)
        if rewrite.body is plain:
            rewrite.body = body  # nothing added: the bytes as sent
        else:
            rewrite.body = encode_body(rewrite.body, encoding, body)
        return rewrite

    def _url(self, rest: bytes) -> Any:
        # The target goes out byte for byte as the CLI sent it (``;params``
        # included, which URL parsing would split off), after the upstream's
        # own path. The CLI uses a handful of paths, so each URL is built once.
        url = self._urls.get(rest)
        if url is None:
            if len(self._urls) >= _URL_CACHE_SIZE:
                self._urls.clear()
            url = self._urls[rest] = self._core.URL(
                scheme=self._scheme,
                host=self._raw_host,
                port=self._port,
                target=(self._base_path + rest) or b"/",
            )
        return url

    async def _forward(
        self,
        method: bytes,
        rest: bytes,
        headers: list[tuple[bytes, bytes]],
        rewrite: Rewrite,
        cli: CliConnection,
    ) -> None:
        # Host and Content-Length set again, where the CLI had them: the
        # headers keep the CLI's order.
        length = str(len(rewrite.body)).encode()
        out: list[tuple[bytes, bytes]] = []
        host = has_length = False
        for name, value in headers:
            if name == b"host":
                out.append((name, self._host))
                host = True
            elif name == b"content-length":
                out.append((name, length))
                has_length = True
            else:
                out.append((name, value))
        if not host:
            out.insert(0, (b"host", self._host))
        if not has_length and (rewrite.body or method in _METHODS_WITH_BODY):
            out.append((b"content-length", length))
        headers = out
        outbound = self._core.Request(
            method,
            self._url(rest),
            headers=headers,
            content=rewrite.body,
            extensions={"timeout": _TIMEOUTS},
        )
        try:
            response = await self._pool.handle_async_request(outbound)
        except self._errors as error:
            # The error's class says what failed; its text is not passed on,
            # it may quote the upstream URL.
            logger.warning(
                "tool_fields_relay could not reach the upstream API: %s",
                type(error).__name__,
            )
            cli.respond_error(
                502,
                "api_error",
                f"tool_fields_relay could not reach the upstream API "
                f"({type(error).__name__})",
            )
            return
        try:
            if response.status == 400 and rewrite.modified_tools:
                request_id = next(
                    (v for k, v in response.headers if k.lower() == b"request-id"),
                    b"-",
                )
                logger.warning(
                    "The API answered 400 to a request to which tool_fields_relay "
                    "added strict/input_examples (tools: %s; request-id: %s); "
                    "passing it through unchanged",
                    ", ".join(rewrite.modified_tools),
                    request_id.decode("latin-1"),
                )
            await self._stream_back(response, cli)
        finally:
            await response.aclose()

    async def _stream_back(self, response: Any, cli: CliConnection) -> None:
        """Pass ``response`` to the CLI chunk by chunk, as it arrives.

        The body as received (httpcore decodes nothing), so content-encoding
        passes through untouched. If the CLI disconnects, its connection
        cancels this task and the caller closes the upstream response.
        """
        cli.send(
            h11.Response(
                status_code=response.status,
                headers=[
                    (name, value)
                    for name, value in response.headers
                    if name.lower() not in _HOP_BY_HOP
                ],
                reason=response.extensions.get("reason_phrase", b""),
            )
        )
        try:
            async for chunk in response.stream:
                cli.send(h11.Data(data=chunk))
                await cli.drain()
        except self._errors as error:
            # Headers are out, so the status cannot change any more; ending
            # the response early tells the CLI the stream broke, and it
            # retries as for any dropped stream.
            logger.warning(
                "tool_fields_relay lost the upstream API mid-response: %s",
                type(error).__name__,
            )
            cli.abort()
            return
        cli.send(h11.EndOfMessage())


def _content_encoding(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """The request's content coding(s), lower case, or None for identity."""
    codings = [
        part.strip().lower()
        for name, value in headers
        if name.lower() == b"content-encoding"
        for part in value.split(b",")
    ]
    codings = [c for c in codings if c and c != b"identity"]
    return b", ".join(codings) if codings else None


class _UndecodableError(Exception):
    """Why a body's content coding cannot be undone (its text ends a sentence)."""


def _brotli() -> Any:
    for name in ("brotli", "brotlicffi"):
        with contextlib.suppress(ImportError):
            return __import__(name)
    return None


def decode_body(body: bytes, encoding: bytes) -> bytes:
    """``body`` with its content coding ``encoding`` (``gzip``, ``x-gzip``,
    ``deflate`` as zlib or raw, ``br`` when a brotli module is installed)
    undone, at most ``MAX_BODY_BYTES`` of it."""
    if encoding in (b"gzip", b"x-gzip", b"deflate"):
        formats = (31,) if encoding != b"deflate" else (15, -15)
        for wbits in formats:
            decoder = zlib.decompressobj(wbits)
            try:
                plain = decoder.decompress(body, MAX_BODY_BYTES + 1)
            except zlib.error:
                continue
            if len(plain) > MAX_BODY_BYTES:
                raise _UndecodableError("is larger than the relay reads decoded")
            if decoder.eof and not decoder.unused_data:
                return plain
        raise _UndecodableError("is not valid")
    if encoding == b"br":
        brotli = _brotli()
        if brotli is None:
            raise _UndecodableError("needs the brotli package to be read")
        try:
            plain = bytes(brotli.decompress(body))
        except Exception as error:  # noqa: BLE001 - any failure: not valid
            raise _UndecodableError("is not valid") from error
        if len(plain) > MAX_BODY_BYTES:
            raise _UndecodableError("is larger than the relay reads decoded")
        return plain
    raise _UndecodableError("is in a coding the relay does not read")


def encode_body(body: bytes, encoding: bytes, sent: bytes = b"") -> bytes:
    """``body`` in the content coding ``decode_body`` undid; a ``deflate``
    body in the form ``sent`` had (zlib, as RFC 9110 names it, or raw)."""
    if encoding == b"br":
        return bytes(_brotli().compress(body))
    wbits = 31
    if encoding == b"deflate":
        zlib_form = (
            len(sent) >= 2
            and sent[0] & 0x0F == 8
            and ((sent[0] << 8) | sent[1]) % 31 == 0
        )
        wbits = 15 if zlib_form else -15
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(body) + compressor.flush()


class CliConnection(asyncio.Protocol):
    """One connection from the CLI, parsed by h11, one exchange at a time.

    A plain protocol rather than an ASGI server: the relay needs none of a
    web framework's layers, and on a ~70 KB request they cost about half a
    millisecond per API call. h11 does all the HTTP parsing and framing.

    Bounded before authenticated: a request's target is checked for the
    secret prefix as soon as its request line and headers are parsed, before
    any of its body is read; a request without it is refused and the
    connection closed. Headers must arrive within ``HEADER_TIMEOUT_S`` (and
    fit h11's 16 KiB), bodies may be ``MAX_BODY_BYTES``, and connections
    that never authenticated are capped (``MAX_PENDING_CONNECTIONS``).
    """

    def __init__(
        self,
        forwarder: Forwarder,
        live: Live,
        *,
        authenticated: bool = False,
    ) -> None:
        self._forwarder = forwarder
        self._live = live
        self._h11 = h11.Connection(h11.SERVER)
        self._transport: asyncio.Transport | None = None
        self._request: h11.Request | None = None
        self._rest = b""
        self._body: list[bytes] = []
        self._body_size = 0
        self._task: asyncio.Task[None] | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self.authenticated = authenticated
        self.accepted_at = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._idle = False  # between requests (the idle timeout runs)
        self._paused = False  # reading paused: pipelined input is bounded

    # -- asyncio's callbacks ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self.accepted_at = asyncio.get_running_loop().time()
        self._live.add(self)
        self._arm(HEADER_TIMEOUT_S if self.authenticated else PENDING_TIMEOUT_S)
        # Behind TLS (proxy mode) the first request can arrive before the
        # handshake's waiter hands the transport over: serve what is buffered.
        self._next()

    def connection_lost(self, exc: Exception | None) -> None:
        self._live.discard(self)
        self._transport = None
        self._disarm()
        self._writable.set()
        if self._task is not None:
            # The CLI went away: stop the exchange, which closes the upstream
            # request even while the upstream is silent.
            self._task.cancel()

    def data_received(self, data: bytes) -> None:
        if self._idle:  # a next request begins: its headers are timed
            self._idle = False
            self._arm(HEADER_TIMEOUT_S)
        elif self._request is not None:  # a body arriving: not idle
            self._arm(IDLE_TIMEOUT_S)
        self._h11.receive_data(data)
        self._next()
        if (
            self._task is not None
            and self._transport is not None
            and not self._paused
            and len(self._h11.trailing_data[0]) > MAX_PIPELINED_BYTES
        ):
            # Bytes pipelined behind a request in flight wait in the
            # kernel, not here: reading resumes when the exchange is done.
            self._paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool:
        self._h11.receive_data(b"")
        self._next()
        return False  # close: the relay never answers a half-closed connection

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # -- timers ----------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._timer = asyncio.get_running_loop().call_later(seconds, self.abort)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- reading requests ------------------------------------------------------

    def _next(self) -> None:
        while self._task is None and self._transport is not None:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as error:
                self._bad_request(error)
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                if not self._admit(event):
                    return
            elif isinstance(event, h11.Data):
                self._body_size += len(event.data)
                if self._body_size > MAX_BODY_BYTES:
                    self._too_large()
                    return
                self._body.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                assert self._request is not None
                self._disarm()  # the CLI now waits for the answer
                self._task = asyncio.get_running_loop().create_task(
                    self._exchange(self._request, self._rest, b"".join(self._body))
                )
                self._request, self._body = None, []
            else:  # ConnectionClosed
                self.abort()
                return

    def _admit(self, request: h11.Request) -> bool:
        """Check ``request``'s line and headers before any of its body is
        read; refuse it (and close) when it has no secret or is too large."""
        rest = self._forwarder.route(request.target)
        if rest is None:
            # Never forwarded, its body never read, nothing echoed: the
            # caller learns only that there is nothing here.
            self._refuse(404, "not_found_error", "Not found")
            return False
        self.authenticated = True
        self._live.admitted(self)
        length = next(
            (value for name, value in request.headers if name == b"content-length"),
            None,
        )
        if length is not None and int(length) > MAX_BODY_BYTES:  # h11 checked digits
            self._too_large()
            return False
        self._request, self._rest, self._body, self._body_size = request, rest, [], 0
        self._arm(IDLE_TIMEOUT_S)
        if self._h11.they_are_waiting_for_100_continue:
            self.send(h11.InformationalResponse(status_code=100, headers=[]))
        return True

    def _too_large(self) -> None:
        self._refuse(
            413,
            "request_too_large",
            f"tool_fields_relay takes request bodies of at most {MAX_BODY_BYTES} bytes",
        )

    def _refuse(self, status: int, error_type: str, message: str) -> None:
        with contextlib.suppress(h11.LocalProtocolError):
            self.respond_error(status, error_type, message, close=True)
        self._live.discard(self)
        if self._transport is not None:
            self._transport.close()

    async def _exchange(self, request: h11.Request, rest: bytes, body: bytes) -> None:
        try:
            await self._forwarder.exchange(request, rest, body, self)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - answer, log the class only
            logger.error(
                "tool_fields_relay failed on a request: %s", type(error).__name__
            )
            if self._h11.our_state is h11.SEND_RESPONSE:
                self.respond_error(500, "api_error", "tool_fields_relay failed")
            else:
                self.abort()
        finally:
            self._task = None
        if self._transport is None:
            return
        if self._paused:
            self._paused = False
            self._transport.resume_reading()
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            self._idle = True
            self._arm(IDLE_TIMEOUT_S)
            self._next()
        else:
            self._transport.close()

    def _bad_request(self, error: h11.RemoteProtocolError) -> None:
        if self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            with contextlib.suppress(h11.LocalProtocolError):
                self.respond_error(
                    error.error_status_hint, "invalid_request_error", "Bad request"
                )
        if self._transport is not None:
            self._transport.close()

    # -- writing responses -----------------------------------------------------

    def send(self, event: h11.Event) -> None:
        data = self._h11.send(event)
        if data and self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    async def drain(self) -> None:
        """Wait while the CLI is not reading, so a slow reader is never
        buffered for."""
        await self._writable.wait()

    def respond_error(
        self, status: int, error_type: str, message: str, *, close: bool = False
    ) -> None:
        body = error_body(error_type, message)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        if close:
            headers.append((b"connection", b"close"))
        self.send(h11.Response(status_code=status, headers=headers))
        self.send(h11.Data(data=body))
        self.send(h11.EndOfMessage())

    def abort(self) -> None:
        self._disarm()
        self._live.discard(self)  # at once: connection_lost comes later
        if self._transport is not None:
            self._transport.abort()
