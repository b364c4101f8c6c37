"""The tool-fields relay's HTTP side: the CLI's connections (``CliConnection``,
HTTP/1.1 framed here) and the exchange (``Forwarder``: rewrite, forward over
``connections``, stream the answer back)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import json
import logging
import re
import socket
import sys
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .connections import transport_errors
from .evidence import RequestEvidence
from .rewrite import (
    Rewrite,
    RewriteMemo,
    StrictServers,
    limits_message,
    lost_tools,
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
NOT_FORWARDED_REQUEST = _HOP_BY_HOP
_HOP_BY_HOP_AND_LENGTH = _HOP_BY_HOP | {b"content-length"}

_METHODS_WITH_BODY = frozenset({b"POST", b"PUT", b"PATCH"})

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
one makes room, by closing the oldest of them that is *silent*: it has sent
nothing, none of its bytes wait in the kernel unread (``FIONREAD``), and it
has had ``ADMISSION_GRACE_S`` to speak. So a flood of connections that send
nothing cannot push out a connection that has spoken, however slowly the
relay gets to read it (a starved relay's backlog is in the kernel, where it
is counted), nor one younger than the grace. Connections that did
authenticate are never capped or closed for room: their number is Claude
Code's parallel streams (subagents, side requests), which must never
queue."""

MAX_UNREAD_CONNECTIONS = 4096
"""The hard bound on connections that have not authenticated (memory, about
4 KB each, and descriptors: at most a quarter of the process's descriptor
limit, so a flood never makes the relay's ``accept`` fail for the host
application's lack of descriptors): past it the oldest silent one is closed
even if young (the oldest, if none is silent). Larger than the connections
asyncio accepts in one burst (the listen backlog, 1024), so the closed one
is a flood's, not the newest arrival's."""

ADMISSION_GRACE_S = 0.25
"""How long a new connection may stay silent before it may be closed for
room (Claude Code writes its request line with the connection)."""

PENDING_TIMEOUT_S = 2.0
"""How long a connection may take to send its first request line and
headers: Claude Code sends them with the connection. Later requests on an
authenticated connection get ``HEADER_TIMEOUT_S``."""

_READ_SIZE = 256 * 1024


def _descriptor_bound() -> int | None:
    """A quarter of the process's descriptor limit, if it has one."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # no such limit (Windows)
        return None
    return None if soft == resource.RLIM_INFINITY else max(16, soft // 4)


def unread_bytes(sock: Any) -> int:
    """Bytes the kernel holds for ``sock`` (a socket or a transport's), not
    read yet (0 where that cannot be asked: then only bytes read count)."""
    if _FIONREAD is None or sock is None:
        return 0
    try:
        answer = _FIONREAD(sock.fileno())
    except (OSError, ValueError):
        return 0
    return int.from_bytes(answer, sys.byteorder)


def _fionread() -> Any:
    try:
        import fcntl
        import termios
    except ImportError:  # Windows
        return None
    return lambda fd: fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")


_FIONREAD = _fionread()


class Waiting:
    """An accepted connection that has sent nothing yet: its socket, watched
    for its first bytes, and nothing else. The relay makes a transport and
    a protocol for a connection only once it speaks, so a connection that
    never does (a flood's) costs an ``accept`` and a close, and Claude
    Code's, which writes with the connection, is served at once behind any
    number of them."""

    __slots__ = ("sock", "accepted_at", "_live", "task", "started")

    authenticated = False
    spoke = False
    transport = None

    def __init__(self, sock: socket.socket, accepted_at: float, live: Live) -> None:
        self.sock = sock
        self.accepted_at = accepted_at
        self._live = live
        # Once it spoke: the task making its transport and protocol, and
        # whether that began (from then on the transport owns the socket).
        self.task: asyncio.Task[Any] | None = None
        self.started = False

    def abort(self) -> None:
        """Close it unheard (made room for, silent too long, relay stopped)."""
        self._live.discard(self)
        if self.task is not None:
            self.task.cancel()
            if self.started:
                return  # its transport closes the socket
        if self.sock.fileno() != -1:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self.sock)
            self.sock.close()


class Acceptor:
    """The relay's listening socket: accepts connections as they come (as
    many as are queued, each one ``accept`` call), keeps each as a
    ``Waiting`` socket until its first bytes, then makes its transport and
    protocol (``factory``); one that ends unheard is just closed."""

    def __init__(
        self,
        sock: socket.socket,
        factory: Callable[[], asyncio.BaseProtocol],
        live: Live,
    ) -> None:
        self._sock = sock
        self._factory = factory
        self._live = live
        self._loop = asyncio.get_running_loop()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._retry: asyncio.TimerHandle | None = None
        self._loop.add_reader(sock, self._accept)

    def _accept(self) -> None:
        loop, live = self._loop, self._live
        for _ in range(_ACCEPT_BURST):
            if live.at_bound():
                # Every descriptor the bound allows is held (or closing):
                # make room, and leave the rest in the kernel's queue until
                # a closing one is closed (a loop turn), so the bound holds
                # however fast connections come.
                live.make_room(loop)
                if live.at_bound():
                    return
            try:
                sock, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as error:
                # Out of descriptors or memory (the bound keeps the relay's
                # own connections under a quarter of the limit): wait a
                # moment, as asyncio's own servers do.
                logger.warning(
                    "tool_fields_relay could not accept a connection: %s",
                    type(error).__name__,
                )
                loop.remove_reader(self._sock)
                self._retry = loop.call_later(1.0, self._resume)
                return
            sock.setblocking(False)
            waiting = Waiting(sock, loop.time(), live)
            live.add_waiting(waiting)
            loop.add_reader(sock, self._readable, waiting)

    def _resume(self) -> None:
        self._retry = None
        if self._sock.fileno() != -1:
            self._loop.add_reader(self._sock, self._accept)

    def _readable(self, waiting: Waiting) -> None:
        """Its first bytes (or its end) arrived."""
        self.promote(waiting)

    def promote(self, waiting: Waiting) -> None:
        """Give ``waiting`` its transport and protocol (it spoke), or close
        it (it ended without a word)."""
        sock = waiting.sock
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(sock)
        try:
            spoken = sock.recv(1, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            spoken = b"?"  # nothing after all: let the transport wait
        except OSError:
            spoken = b""
        if not spoken:
            self._live.discard(waiting)
            sock.close()
            return
        # Still counted (among those that spoke) until its protocol takes
        # its place: a connection is counted from accept until closed.
        self._live.promoted(waiting)
        task = self._loop.create_task(self._serve(waiting))
        waiting.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, waiting: Waiting) -> None:
        waiting.started = True
        sock = waiting.sock

        def protocol() -> asyncio.BaseProtocol:
            made = self._factory()
            made.accepted_at = waiting.accepted_at  # type: ignore[attr-defined]
            made.replacing = waiting  # type: ignore[attr-defined]
            return made

        try:
            await self._loop.connect_accepted_socket(protocol, sock)
        except OSError:
            self._live.discard(waiting)
            sock.close()

    def close(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(self._sock)
        for task in list(self._tasks):
            task.cancel()


_ACCEPT_BURST = 1024


class Live:
    """A relay's open connections (``stop`` aborts them all) and, in the
    order they were accepted, those that have not authenticated yet: the
    silent ones (``Waiting``: nothing received), those that spoke (a
    ``Waiting`` whose protocol is being made, then its protocol), and the
    sockets of those closed but not yet released by their transport (a
    loop turn): each is counted from its accept until its descriptor is
    closed, so the descriptor bound holds whatever the connections send."""

    def __init__(self) -> None:
        self._all: dict[Any, None] = {}
        self.silent: dict[Waiting, None] = {}
        self.spoken: dict[Any, None] = {}
        # Sockets of unauthenticated connections aborted or refused whose
        # transport closes them a loop turn later.
        self._closing: collections.deque[Any] = collections.deque()
        self._descriptors = _descriptor_bound()
        # One read buffer for every connection of the relay: a transport
        # reads into it and the protocol copies out at once (asyncio calls
        # get_buffer and buffer_updated back to back, on one thread).
        self.read_buffer = bytearray(_READ_SIZE)
        self.closed_for_room = 0
        self.acceptor: Acceptor | None = None
        self._sweep: asyncio.TimerHandle | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._all))

    def __len__(self) -> int:
        return len(self._all)

    @property
    def pending(self) -> int:
        """Descriptors held by connections that have not authenticated."""
        closing = self._closing
        while closing and closing[0].fileno() == -1:
            closing.popleft()
        return len(self.silent) + len(self.spoken) + len(closing)

    def at_bound(self) -> bool:
        """Whether those descriptors are at the hard bound (the sockets
        already closed are counted out first, wherever they are queued)."""
        if self.pending < self.hard_bound:
            return False
        self._closing = collections.deque(
            sock for sock in self._closing if sock.fileno() != -1
        )
        return self.pending >= self.hard_bound

    @property
    def hard_bound(self) -> int:
        if self._descriptors is None:
            return MAX_UNREAD_CONNECTIONS
        return max(
            MAX_PENDING_CONNECTIONS, min(MAX_UNREAD_CONNECTIONS, self._descriptors)
        )

    def add_waiting(self, waiting: Waiting) -> None:
        """Keep ``waiting`` (just accepted), making room first if it is one
        more that has not authenticated (``MAX_PENDING_CONNECTIONS``)."""
        loop = asyncio.get_running_loop()
        self.make_room(loop)
        self.silent[waiting] = None
        self._all[waiting] = None
        if self._sweep is None:
            self._sweep = loop.call_later(PENDING_TIMEOUT_S / 4, self._sweep_silent)

    def promoted(self, waiting: Waiting) -> None:
        """``waiting`` spoke: its protocol is being made (counted meanwhile)."""
        self.silent.pop(waiting, None)
        self.spoken[waiting] = None

    def add(self, connection: Any) -> None:
        """Keep ``connection`` (one with a protocol: it spoke, or it came
        through TLS after an authenticated CONNECT), in the place of the
        ``Waiting`` it was made for, if any."""
        replacing = getattr(connection, "replacing", None)
        if replacing is not None:
            connection.replacing = None
            self.spoken.pop(replacing, None)
            self._all.pop(replacing, None)
        if not connection.authenticated:
            if replacing is None and self.pending >= self.hard_bound:
                self.make_room(asyncio.get_running_loop())
            self.spoken[connection] = None
        self._all[connection] = None

    def spoke(self, connection: Any) -> None:
        """``connection`` sent its first bytes (kept for compatibility: a
        protocol's connection has spoken already)."""

    def admitted(self, connection: Any) -> None:
        """``connection`` authenticated: never closed for room any more."""
        self.spoken.pop(connection, None)

    def discard(self, connection: Any) -> None:
        self._all.pop(connection, None)
        held = self.spoken.pop(connection, self) is not self
        if type(connection) is Waiting:
            self.silent.pop(connection, None)
            return
        if held and connection.transport is not None:
            # Counted until its transport closes the socket (a turn later).
            sock = connection.transport.get_extra_info("socket")
            if sock is not None and sock.fileno() != -1:
                self._closing.append(sock)

    def make_room(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.pending < MAX_PENDING_CONNECTIONS:
            return
        full = self.pending >= self.hard_bound
        now = loop.time()
        while self.silent:
            oldest = next(iter(self.silent))
            if unread_bytes(oldest.sock):
                # It spoke; its turn to be read has not come (a busy loop).
                if self.acceptor is not None:
                    self.acceptor.promote(oldest)
                else:
                    self.discard(oldest)
                continue
            if full or now - oldest.accepted_at >= ADMISSION_GRACE_S:
                self._close(oldest)
            return
        if full:
            for connection in self.spoken:
                if type(connection) is Waiting and connection.started:
                    continue  # its protocol is on the way: closed as that
                self._close(connection)
                return

    def _close(self, connection: Any) -> None:
        self.closed_for_room += 1
        connection.abort()
        self.discard(connection)

    def _sweep_silent(self) -> None:
        """Close the silent connections that had ``PENDING_TIMEOUT_S`` to
        speak (one timer for all of them)."""
        loop = asyncio.get_running_loop()
        self._sweep = None
        deadline = loop.time() - PENDING_TIMEOUT_S
        while self.silent:
            oldest = next(iter(self.silent))
            if oldest.accepted_at > deadline:
                break
            oldest.abort()
        if self.silent:
            self._sweep = loop.call_later(PENDING_TIMEOUT_S / 4, self._sweep_silent)

    def stop(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        if self.acceptor is not None:
            self.acceptor.close()
        for connection in list(self._all):
            connection.abort()


def error_body(error_type: str, message: str) -> bytes:
    """An error in the Messages API's own shape, so the CLI reports
    ``API Error: <status> <message>`` to the caller as for any API error."""
    return json.dumps(
        {"type": "error", "error": {"type": error_type, "message": message}}
    ).encode()


class _NoFailures:
    """``network.Failures`` for a forwarder no relay set one on: logs only."""

    failing = False

    def failed(
        self, error: BaseException, destination: str, *args: Any, **_: Any
    ) -> str:
        from .network import describe

        message = describe(error, destination, None, None)[1]
        logger.warning("tool_fields_relay: %s", message)
        return message


_NO_FAILURES = _NoFailures()


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
        url = urllib.parse.urlsplit(upstream)
        self._scheme = url.scheme.lower().encode("ascii")
        self._raw_host = (url.hostname or "").encode("idna")
        self._port = url.port or (443 if self._scheme == b"https" else 80)
        default = url.port is None or url.port == (443 if url.scheme == "https" else 80)
        host = (
            self._raw_host if b":" not in self._raw_host else b"[%s]" % self._raw_host
        )
        # The Host the upstream gets: its port only when not the default.
        self._host = host if default else b"%s:%d" % (host, self._port)
        self._base_path = url.path.encode("ascii").rstrip(b"/")
        self._fields_by_name = fields_by_name
        self._strict_servers = strict_servers
        # Tools of strict_mcp_servers already named in a warning as sent
        # without strict: once per tool for the relay's lifetime.
        self._warned_not_strict: set[str] = set()
        # How the relay reaches the upstream (its proxy and that proxy's
        # variable) and what it makes of failing to (``network.Failures``):
        # set by the relay.
        self.via: tuple[str | None, str | None] = (None, None)
        self.failures: Any = _NO_FAILURES
        # Tools sent without strict at the per-request caps: named once.
        self._warned_over_caps: set[str] = set()
        self._warned_exceeded: set[frozenset[str]] = set()
        self._pool = pool
        self._errors = transport_errors()
        # The last tools array and what the rewrite made of it: Claude Code
        # sends the same tools on every turn.
        self._memo = RewriteMemo()
        self._memo.prepare(fields_by_name)
        # One record (log and tool_fields_report) per request changed or not.
        self.evidence = RequestEvidence(
            fields_by_name, strict_servers, "proxy" if secret is None else "base_url"
        )

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
        self, request: Request, rest: bytes, body: bytes, cli: CliConnection
    ) -> None:
        """Forward ``request`` (already authorized: ``rest`` is its target
        after the secret prefix) with its ``body``, and stream the answer."""
        headers = [
            (name, value)
            for name, value in request.headers
            if name not in NOT_FORWARDED_REQUEST
        ]
        route = rest.split(b"?", 1)[0].rstrip(b"/").decode("latin-1")
        rewrite = Rewrite(body)
        if request.method == b"POST" and route in _REWRITTEN_ROUTES:
            encoding = content_encoding(headers)
            if encoding is None:
                rewrite = self._rewrite(body)
            else:
                rewrite = self._rewrite_encoded(body, encoding)
        self._report(rewrite)
        if rewrite.modified_tools:
            headers = with_betas(headers, rewrite.betas)
        self.evidence.record(route, rewrite, rewrite.betas)
        await self._forward(request.method, rest, headers, rewrite, cli)

    def _report(self, rewrite: Rewrite) -> None:
        """Warn (once per tool, or per cap) of what ``rewrite`` could not do;
        the request goes out either way."""
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
            # Over a cap by the tools the request itself marked strict: the
            # relay added no strict (it degrades its own to fit), so the
            # request is not its to refuse.
            caps = frozenset(limit.limit for limit in rewrite.exceeded)
            if caps not in self._warned_exceeded:
                self._warned_exceeded.add(caps)
                logger.warning("%s", limits_message(rewrite))

    def _rewrite(self, body: bytes) -> Rewrite:
        """``rewrite_body``, but never an error: a body it fails on goes
        out unchanged (the caller warns, naming the tools)."""
        try:
            return rewrite_body(
                body, self._fields_by_name, self._strict_servers, memo=self._memo
            )
        except Exception as error:  # noqa: BLE001 - forwarded unchanged instead
            self._memo = RewriteMemo()
            self._memo.prepare(self._fields_by_name)
            return Rewrite(
                body,
                unchanged_because=f"the rewrite failed ({type(error).__name__})",
                lost_tools=lost_tools(body, self._fields_by_name, self._strict_servers),
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
        except UndecodableError as why:
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

    def _url(self, rest: bytes) -> bytes:
        """The target the upstream gets: byte for byte as the CLI sent it
        (``;params`` included, which URL parsing would split off), after the
        upstream's own path."""
        return (self._base_path + rest) or b"/"

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
        body = rewrite.pieces
        length = str(rewrite.length).encode()
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
        if not has_length and (length != b"0" or method in _METHODS_WITH_BODY):
            out.append((b"content-length", length))
        try:
            response = await self._pool.request(
                method,
                self._scheme,
                self._raw_host,
                self._port,
                self._url(rest),
                out,
                body,
            )
        except self._errors as error:
            # Named once at WARNING (destination, proxy, cause, fix), then
            # counted (``network.Failures``); the CLI gets the same words.
            proxy, variable = self.via
            message = self.failures.failed(
                error, self._raw_host.decode("ascii"), proxy, variable, api=True
            )
            cli.respond_error(
                502,
                "api_error",
                f"tool_fields_relay could not reach the API: {message}",
            )
            return
        if self.failures.failing:
            self.failures.succeeded()
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

        The body as received (nothing is decoded but chunked framing), so
        content-encoding passes through untouched. If the CLI disconnects,
        its connection cancels this task and the caller closes the upstream
        response.
        """
        headers = response.headers
        # With Transfer-Encoding, Content-Length is not the body's length
        # (RFC 9112 6.3): the body is passed on de-chunked, framed anew.
        dropped = (
            _HOP_BY_HOP_AND_LENGTH
            if any(name.lower() == b"transfer-encoding" for name, _ in headers)
            else _HOP_BY_HOP
        )
        cli.start_response(
            response.status,
            response.reason,
            [(name, value) for name, value in headers if name.lower() not in dropped],
        )
        read = getattr(response, "read_some", None)
        try:
            if read is None:  # httpcore's response, or a replayed one
                cli.flush()
                async for chunk in response.stream:
                    cli.send_data(chunk)
                    await cli.drain()
            else:
                # What has arrived goes in one write, the response's head
                # (held until then, or until there is a wait) and its end
                # included: one pass of the TLS layer and one send for a
                # response that came at once.
                while True:
                    data, done = await read(cli.flush)
                    if done:
                        cli.end_response(data)
                        return
                    cli.send_data(data)
                    await cli.drain()
        except self._errors as error:
            # Headers are out, so the status cannot change any more; ending
            # the response early tells the CLI the stream broke, and it
            # retries as for any dropped stream.
            logger.warning(
                "tool_fields_relay lost the upstream API mid-response: %s",
                type(error).__name__,
            )
            cli.flush()
            cli.abort()
            return
        cli.end_response()


def content_encoding(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """The request's content coding(s), lower case, or None for identity."""
    codings = [
        part.strip().lower()
        for name, value in headers
        if name.lower() == b"content-encoding"
        for part in value.split(b",")
    ]
    codings = [c for c in codings if c and c != b"identity"]
    return b", ".join(codings) if codings else None


class UndecodableError(Exception):
    """Why a body's content coding cannot be undone (its text ends a sentence)."""


def _brotli() -> Any:
    for name in ("brotli", "brotlicffi"):
        with contextlib.suppress(ImportError):
            return __import__(name)
    return None


_DECODE_STEP = 1024 * 1024
"""Decoded bytes made at most per step of a decoder, so that no body is
inflated past its bound before the bound is checked."""


def decode_body(body: bytes, encoding: bytes, limit: int = MAX_BODY_BYTES) -> bytes:
    """``body`` with its content coding ``encoding`` (``gzip``, ``x-gzip``,
    ``deflate`` as zlib or raw, ``br`` when a brotli module is installed)
    undone, at most ``limit`` bytes of it: the bound holds while decoding
    (a body that would decode to more is refused once ``limit`` is passed,
    never inflated whole first)."""
    if encoding in (b"gzip", b"x-gzip", b"deflate"):
        formats = (31,) if encoding != b"deflate" else (15, -15)
        for wbits in formats:
            decoder = zlib.decompressobj(wbits)
            plain = bytearray()
            rest = body
            try:
                # A step at a time: each makes at most ``_DECODE_STEP``.
                while rest and not decoder.eof:
                    plain += decoder.decompress(rest, _DECODE_STEP)
                    rest = decoder.unconsumed_tail
                    if len(plain) > limit:
                        raise UndecodableError("is larger than the relay reads decoded")
            except zlib.error:
                continue
            if decoder.eof and not decoder.unused_data:
                return bytes(plain)
        raise UndecodableError("is not valid")
    if encoding == b"br":
        brotli = _brotli()
        if brotli is None:
            raise UndecodableError("needs the brotli package to be read")
        try:
            return _brotli_decoded(brotli, body, limit)
        except UndecodableError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure: not valid
            raise UndecodableError("is not valid") from error
    raise UndecodableError("is in a coding the relay does not read")


def _brotli_decoded(brotli: Any, body: bytes, limit: int) -> bytes:
    """``body`` brotli-decoded, refused as soon as it passes ``limit``."""
    decoder = brotli.Decompressor()
    plain = bytearray()
    too_large = UndecodableError("is larger than the relay reads decoded")
    try:
        decoder.process(b"", output_buffer_limit=_DECODE_STEP)
        bounded = True
    except TypeError:  # brotli before 1.2, brotlicffi: no output limit
        bounded = False
    if bounded:
        # brotli 1.2: each step makes at most about ``_DECODE_STEP`` bytes.
        plain += decoder.process(body, output_buffer_limit=_DECODE_STEP)
        while not decoder.can_accept_more_data():
            if len(plain) > limit:
                raise too_large
            plain += decoder.process(b"", output_buffer_limit=_DECODE_STEP)
    else:
        # Without an output limit: fed in small slices, checked after each.
        view = memoryview(body)
        for start in range(0, len(view), 256):
            plain += decoder.process(bytes(view[start : start + 256]))
            if len(plain) > limit:
                raise too_large
    if len(plain) > limit:
        raise too_large
    if not decoder.is_finished():
        raise UndecodableError("is not valid")
    return bytes(plain)


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


_TOKEN = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
# h11's grammar (RFC 9110/9112 as h11 reads it), compiled once.
_REQUEST_LINE = re.compile(
    rb"(?P<method>" + _TOKEN + rb") (?P<target>[\x21-\x7e]+) "
    rb"HTTP/(?P<version>[0-9]\.[0-9])\Z"
)
_HEADER_NAME = re.compile(_TOKEN)
# A field value is anything but these once its surrounding blanks are
# stripped (h11: visible characters, blanks between them).
_NOT_IN_VALUE = re.compile(rb"[\x00\n\r\x0b\x0c]")
_CHUNK_HEADER = re.compile(rb"(?P<size>[0-9A-Fa-f]{1,20})[ \t]*(?:;[^\r\n]*)?\Z")
MAX_HEAD_BYTES = 16 * 1024
"""A request line and headers may take this much at most (h11's default)."""


class _BadRequestError(Exception):
    """A request head that is not HTTP/1.1 as h11 reads it (its status)."""

    def __init__(self, status: int = 400) -> None:
        super().__init__(status)
        self.status = status


class Request:
    """A request's line and headers as parsed (header names in lower case,
    in the order sent), with what its framing needs read off once."""

    __slots__ = (
        "method",
        "target",
        "http_version",
        "headers",
        "length",
        "chunked",
        "expects_continue",
        "keep_alive",
    )

    def __init__(
        self,
        method: bytes,
        target: bytes,
        http_version: bytes,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        self.method = method
        self.target = target
        self.http_version = http_version
        self.headers = headers
        self.length = 0
        self.chunked = False
        self.expects_continue = False
        self.keep_alive = http_version == b"1.1"


def _parse_head(head: bytes) -> Request:
    """The request a head (request line and header lines, no blank line)
    holds, checked as h11 checks it: the grammar of each line, one Host on
    HTTP/1.1, Content-Length digits that agree, Transfer-Encoding chunked
    only (501 otherwise), once."""
    lines = head.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines or not lines[0].rstrip(b"\r"):
        raise _BadRequestError()
    line = _REQUEST_LINE.match(lines[0].rstrip(b"\r"))
    if line is None:
        raise _BadRequestError()
    version = line.group("version")
    if version[:1] != b"1":
        raise _BadRequestError(505)
    request = Request(line.group("method"), line.group("target"), version, [])
    headers = request.headers
    hosts = 0
    length: bytes | None = None
    for text in lines[1:]:
        name, colon, value = text.partition(b":")
        value = value.strip(b" \t\r")
        if (
            not colon
            or _HEADER_NAME.fullmatch(name) is None  # obs-fold included
            or _NOT_IN_VALUE.search(value) is not None
        ):
            raise _BadRequestError()
        name = name.lower()
        if name == b"content-length":
            lengths = {part.strip() for part in value.split(b",")}
            if len(lengths) != 1:
                raise _BadRequestError()
            value = lengths.pop()
            if not value.isdigit() or len(value) > 20:
                raise _BadRequestError()
            if length is not None:
                if length != value:
                    raise _BadRequestError()
                continue  # the same length again: kept once, as h11 does
            length = value
        elif name == b"transfer-encoding":
            if request.chunked or value.lower() != b"chunked":
                raise _BadRequestError(501)
            value = value.lower()
            request.chunked = True
        elif name == b"host":
            hosts += 1
        elif name == b"connection":
            if b"close" in (t.strip().lower() for t in value.split(b",")):
                request.keep_alive = False
        elif name == b"expect":
            request.expects_continue = value.lower() == b"100-continue"
        headers.append((name, value))
    if hosts > 1 or (version == b"1.1" and hosts == 0):
        raise _BadRequestError()
    if length is not None and not request.chunked:
        request.length = int(length)
    return request


class CliConnection(asyncio.BufferedProtocol):
    """One connection from the CLI, one exchange at a time.

    A buffered protocol with its own HTTP/1.1 framing: a request's head is
    parsed and checked as h11 checks it (``Request``), and a body of
    known length is read by the transport (after TLS decryption, in proxy
    mode) straight into the buffer it is forwarded from, so a 2 MB request
    is not copied from buffer to buffer on its way through. Chunked bodies,
    pipelining, ``Expect: 100-continue`` and keep-alive work as with h11.

    Bounded before authenticated: a request's target is checked for the
    secret prefix as soon as its request line and headers are parsed, before
    any of its body is read; a request without it is refused and the
    connection closed. Headers must arrive within ``HEADER_TIMEOUT_S`` (and
    fit ``MAX_HEAD_BYTES``), bodies may be ``MAX_BODY_BYTES``, and
    connections that never authenticated are bounded (``Live``).
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
        self._transport: asyncio.Transport | None = None
        self._staging = bytearray()  # received, not parsed yet
        self._searched = 0  # how far the staging was searched for a head's end
        self._request: Request | None = None
        self._current: Request | None = None  # the one being answered
        self._rest = b""
        self._body: bytearray | None = None  # a body of known length
        self._filled = 0
        self._direct = False  # the transport reads into the body itself
        # A chunked body, its chunks' data joined as they come: one buffer
        # whatever the chunking (a body in 1-byte chunks costs its size, not
        # an object per chunk).
        self._chunks: bytearray | None = None
        self._chunk_left = 0
        self._chunk_state = "size"
        self._body_size = 0
        self._keep_alive = True
        self._task: asyncio.Task[None] | None = None
        # The response under way: how its body is framed for the CLI.
        self._framing: str | None = None
        self._responding = False
        self._head = b""  # the response's head, held for its first data
        self._writable = asyncio.Event()
        self._writable.set()
        self.authenticated = authenticated
        self.spoke = False  # sent a byte
        self.accepted_at = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None
        self._idle = False  # between requests (the idle timeout runs)
        self._paused = False  # reading paused: pipelined input is bounded

    # -- asyncio's callbacks ---------------------------------------------------

    @property
    def transport(self) -> asyncio.Transport | None:
        return self._transport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        now = asyncio.get_running_loop().time()
        self.accepted_at = self.accepted_at or now
        self._live.add(self)
        # The first request line and headers are due PENDING_TIMEOUT_S after
        # the accept (the relay's own connection from an authenticated
        # CONNECT gets HEADER_TIMEOUT_S).
        self._arm(
            HEADER_TIMEOUT_S
            if self.authenticated
            else max(0.0, PENDING_TIMEOUT_S - (now - self.accepted_at))
        )
        # Behind TLS (proxy mode) the first request can arrive before the
        # handshake's waiter hands the transport over: serve what is buffered.
        self._next()

    def connection_lost(self, exc: Exception | None) -> None:
        self._live.discard(self)
        self._transport = None
        self._stop_timer()
        self._writable.set()
        if self._task is not None:
            # The CLI went away: stop the exchange, which closes the upstream
            # request even while the upstream is silent.
            self._task.cancel()

    def get_buffer(self, sizehint: int) -> memoryview:
        body = self._body
        if body is not None and self._filled < len(body) - _READ_SIZE:
            # A body of known length is read in place, but for its last
            # part: that comes through the read buffer, so that the read
            # that ends the body never fills its buffer exactly (asyncio's
            # TLS reader would look for more at once, in a pass of its own).
            self._direct = True
            return memoryview(body)[self._filled : len(body) - _READ_SIZE]
        self._direct = False
        return memoryview(self._live.read_buffer)

    def buffer_updated(self, nbytes: int) -> None:
        if not self.spoke:
            self.spoke = True
            self._live.spoke(self)
        if self._direct:
            self._filled += nbytes
            self._arm(IDLE_TIMEOUT_S)  # a body arriving: not idle
            return
        data = memoryview(self._live.read_buffer)[:nbytes]
        body = self._body
        if body is not None:
            take = min(nbytes, len(body) - self._filled)
            body[self._filled : self._filled + take] = data[:take]
            self._filled += take
            if self._filled < len(body):
                self._arm(IDLE_TIMEOUT_S)
                return
            self._staging += data[take:]  # pipelined behind the body
            self._dispatch(body)
            self._bound_pipelined()
            return
        if self._idle:  # a next request begins: its headers are timed
            self._idle = False
            self._arm(HEADER_TIMEOUT_S)
        elif self._chunks is not None:
            self._arm(IDLE_TIMEOUT_S)
        self._staging += data
        self._next()
        self._bound_pipelined()

    def _bound_pipelined(self) -> None:
        if (
            self._task is not None
            and self._transport is not None
            and not self._paused
            and len(self._staging) > MAX_PIPELINED_BYTES
        ):
            # Bytes pipelined behind a request in flight wait in the
            # kernel, not here: reading resumes when the exchange is done.
            self._paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool:
        if self._task is None and self._transport is not None:
            self.abort()
        return False  # close: the relay never answers a half-closed connection

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # -- timers ----------------------------------------------------------------

    # One timer per connection, moved lazily: re-arming for a later time
    # (most re-arms) costs nothing until the timer fires and looks again.

    def _arm(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        self._deadline = deadline
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._expire)

    def _disarm(self) -> None:
        self._deadline = None

    def _expire(self) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None:
            return
        loop = asyncio.get_running_loop()
        if loop.time() < deadline:
            self._timer = loop.call_at(deadline, self._expire)
            return
        self.abort()

    def _stop_timer(self) -> None:
        self._deadline = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- reading requests ------------------------------------------------------

    def _next(self) -> None:
        """Parse what is staged, as far as it goes."""
        while self._task is None and self._transport is not None:
            if self._chunks is not None:
                if not self._read_chunked():
                    return
                continue
            staged = self._staging
            end = staged.find(b"\n\r\n", max(0, self._searched - 2))
            size = 3
            if end == -1:
                end, size = staged.find(b"\n\n", max(0, self._searched - 1)), 2
            if end == -1:
                self._searched = len(staged)
                if len(staged) > MAX_HEAD_BYTES:
                    self._bad_request(431)
                return
            if end + size > MAX_HEAD_BYTES:
                self._bad_request(431)
                return
            head = bytes(staged[: end + 1])
            del staged[: end + size]
            self._searched = 0
            try:
                request = _parse_head(head)
            except _BadRequestError as error:
                self._bad_request(error.status)
                return
            if not self._admit(request):
                return

    def _admit(self, request: Request) -> bool:
        """Check ``request``'s line and headers before any of its body is
        read; refuse it (and close) when it has no secret or is too large;
        else set up the reading of its body."""
        self._current = request
        self._keep_alive = request.keep_alive
        self._framing = None
        rest = self._forwarder.route(request.target)
        if rest is None:
            # Never forwarded, its body never read, nothing echoed: the
            # caller learns only that there is nothing here.
            self._refuse(404, "not_found_error", "Not found")
            return False
        self.authenticated = True
        self._live.admitted(self)
        self._request, self._rest = request, rest
        self._arm(IDLE_TIMEOUT_S)
        length = request.length
        if length > MAX_BODY_BYTES:
            self._too_large()
            return False
        if (
            request.expects_continue
            and request.http_version == b"1.1"
            and not self._staging
            and (request.chunked or length)
        ):
            self._write(b"HTTP/1.1 100 \r\n\r\n")
        if request.chunked:
            self._chunks, self._chunk_state, self._body_size = bytearray(), "size", 0
            return True
        if not length:
            self._dispatch(b"")
            return True
        body = bytearray(length)
        staged = self._staging
        take = min(length, len(staged))
        if take:
            body[:take] = memoryview(staged)[:take]
            del staged[:take]
        if take == length:
            self._dispatch(body)
        else:
            self._body, self._filled = body, take
        return True

    def _read_chunked(self) -> bool:
        """Read the staged part of a chunked body; True when it is done."""
        staged = self._staging
        chunks = self._chunks
        assert chunks is not None
        while True:
            if self._chunk_state == "data":
                take = min(len(staged), self._chunk_left)
                if not take:
                    return False
                chunks += memoryview(staged)[:take]
                del staged[:take]
                self._chunk_left -= take
                if not self._chunk_left:
                    self._chunk_state = "data-end"
                continue
            end = staged.find(b"\n")
            if end == -1:
                if len(staged) > MAX_HEAD_BYTES:
                    self._bad_request(431)
                return False
            line = bytes(staged[:end]).rstrip(b"\r")
            del staged[: end + 1]
            if self._chunk_state == "data-end":
                if line:
                    self._bad_request(400)
                    return False
                self._chunk_state = "size"
            elif self._chunk_state == "size":
                header = _CHUNK_HEADER.match(line)
                if header is None:
                    self._bad_request(400)
                    return False
                self._chunk_left = int(header.group("size"), 16)
                self._body_size += self._chunk_left
                if self._body_size > MAX_BODY_BYTES:
                    self._too_large()
                    return False
                self._chunk_state = "data" if self._chunk_left else "trailer"
            elif not line:  # the end of the trailer
                self._chunks = None
                self._dispatch(chunks)
                return True

    def _dispatch(self, body: bytes | bytearray) -> None:
        request = self._request
        assert request is not None
        self._body = None
        self._disarm()  # the CLI now waits for the answer
        self._task = asyncio.get_running_loop().create_task(
            self._exchange(request, self._rest, body)  # type: ignore[arg-type]
        )
        self._request = None

    def _too_large(self) -> None:
        self._refuse(
            413,
            "request_too_large",
            f"tool_fields_relay takes request bodies of at most {MAX_BODY_BYTES} bytes",
        )

    def _refuse(self, status: int, error_type: str, message: str) -> None:
        if not self._responding:
            self.respond_error(status, error_type, message, close=True)
        self._live.discard(self)
        if self._transport is not None:
            self._transport.close()

    async def _exchange(self, request: Request, rest: bytes, body: bytes) -> None:
        try:
            await self._forwarder.exchange(request, rest, body, self)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - answer, log the class only
            logger.error(
                "tool_fields_relay failed on a request: %s", type(error).__name__
            )
            if not self._responding:
                self.respond_error(500, "api_error", "tool_fields_relay failed")
            else:
                self.flush()
                self.abort()
        finally:
            self._task = None
        transport = self._transport
        if transport is None:
            return
        if self._paused:
            self._paused = False
            transport.resume_reading()
        if self._responding or not self._keep_alive or transport.is_closing():
            # The response did not end (or the connection ends with it).
            transport.close()
            return
        self._idle = True
        self._arm(IDLE_TIMEOUT_S)
        self._next()

    def _bad_request(self, status: int) -> None:
        self._current = None
        if not self._responding and self._task is None:
            self.respond_error(
                status, "invalid_request_error", "Bad request", close=True
            )
        if self._transport is not None:
            self._transport.close()

    # -- writing responses -----------------------------------------------------

    def _write(self, data: bytes) -> None:
        transport = self._transport
        if data and transport is not None and not transport.is_closing():
            transport.write(data)

    def start_response(
        self, status: int, reason: bytes, headers: list[tuple[bytes, bytes]]
    ) -> None:
        """The response's status line and headers, framed for the CLI as h11
        frames them: its own ``Content-Length``, else chunked (HTTP/1.1) or
        until close (HTTP/1.0); ``Connection: close`` when the connection
        ends after it."""
        request_method = self._method
        if request_method == b"HEAD" or status in (204, 304) or status < 200:
            framing = "none"
        elif any(name.lower() == b"content-length" for name, _ in headers):
            framing = "length"
        elif self._http_version == b"1.1":
            framing = "chunked"
            headers = [*headers, (b"transfer-encoding", b"chunked")]
        else:
            framing, self._keep_alive = "close", False
        if not self._keep_alive:
            tokens = {
                token.strip().lower()
                for name, value in headers
                if name.lower() == b"connection"
                for token in value.split(b",")
            }
            tokens.discard(b"keep-alive")
            tokens.discard(b"")
            tokens.add(b"close")
            headers = [(n, v) for n, v in headers if n.lower() != b"connection"]
            headers.append((b"connection", b",".join(sorted(tokens))))
        self._framing = framing
        self._responding = True
        # Held until the first data, the end or a wait (``flush``), and
        # written with it.
        self._head = b"".join(
            [
                b"HTTP/1.1 %d %s\r\n" % (status, reason),
                *[b"%s: %s\r\n" % (name, value) for name, value in headers],
                b"\r\n",
            ]
        )

    def flush(self) -> None:
        """Write the response's head now, if it is held."""
        if self._head:
            head, self._head = self._head, b""
            self._write(head)

    def _framed(self, data: bytes) -> list[bytes]:
        if not data or self._framing in (None, "none"):
            return []
        if self._framing == "chunked":
            if len(data) < 16384:
                return [b"%x\r\n%s\r\n" % (len(data), data)]
            return [b"%x\r\n" % len(data), data, b"\r\n"]
        return [data]

    def _write_pieces(self, pieces: list[bytes]) -> None:
        """The held head and ``pieces`` in one write."""
        if self._head:
            pieces.insert(0, self._head)
            self._head = b""
        transport = self._transport
        if not pieces or transport is None or transport.is_closing():
            return
        if len(pieces) == 1:
            transport.write(pieces[0])
        else:
            transport.writelines(pieces)

    def send_data(self, data: bytes) -> None:
        pieces = self._framed(data)
        if pieces:
            self._write_pieces(pieces)

    def end_response(self, data: bytes = b"") -> None:
        """The response's last ``data`` (if any) and its end, in one write."""
        pieces = self._framed(data)
        if self._framing == "chunked":
            pieces.append(b"0\r\n\r\n")
        self._write_pieces(pieces)
        self._framing = None
        self._responding = False

    async def drain(self) -> None:
        """Wait while the CLI is not reading, so a slow reader is never
        buffered for."""
        if not self._writable.is_set():
            await self._writable.wait()

    def respond_error(
        self, status: int, error_type: str, message: str, *, close: bool = False
    ) -> None:
        if close:
            self._keep_alive = False
        body = error_body(error_type, message)
        self.start_response(
            status,
            b"",
            [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        )
        self.send_data(body)
        self.end_response()

    @property
    def _method(self) -> bytes:
        return getattr(self._current, "method", b"")

    @property
    def _http_version(self) -> bytes:
        return getattr(self._current, "http_version", b"1.1")

    def abort(self) -> None:
        self._stop_timer()
        self._live.discard(self)  # at once: connection_lost comes later
        if self._transport is not None:
            self._transport.abort()
