"""The stand-in upstream: the one server that plays the Messages API behind
the relay, for the relay's tests, the first-party e2e tests and the bench.

Stdlib only (``cryptography`` for the first-party certificate), on a daemon
thread, so it behaves the same under asyncio and trio callers. TCP_NODELAY
on every connection, as a real API's server sets it. Configured by its
fields, one ``Upstream`` serves each use:

- **the relay's upstream** (``tests/relay``): ``Upstream()`` over plain
  HTTP, ``Upstream(tls=...)`` over HTTPS;
- **the caller's forward proxy**: a ``CONNECT`` is recorded and tunnelled to
  the named host (refused with 403 when ``offline``);
- **first party** (``Upstream.first_party(directory)``: ``api.anthropic.com``
  as Claude Code reaches it): an HTTP proxy (the CLI's ``HTTPS_PROXY``, see
  ``env()``) that terminates ``CONNECT api.anthropic.com:443`` with a
  certificate from a test CA (trusted through ``NODE_EXTRA_CA_CERTS``) and
  serves ``api``, the scripted stand-in Messages API (``fake_api``), on the
  decrypted connection. The CLI keeps its default base URL, so it behaves as
  against the real API; every other host is refused (the tests run offline);
- **the bench's reference side** (``tools/bench_relay.py``, a process of its
  own): ``record=False`` and the streaming routes below, sized by the bench.

Every request is recorded in ``seen`` (unless ``record`` is off) with its raw
body; the reply is chosen by the path's last segment:

- ``/slow``: chunked, ``first`` chunk, then ``pause`` seconds, then ``rest``;
  records ``disconnected_at`` when the relay closes the connection meanwhile;
- ``/gzip``: a gzip-encoded body with ``Content-Encoding: gzip``;
- ``/big``: ``big`` bytes in writes of ``block`` as fast as the reader takes
  them, counting what has been written so far in ``events["big_written"]``;
- ``/events``: ``event_count`` times ``event``, one write each, as the API
  streams;
- ``/paced``: ``paced_count`` events at ``paced_rate`` per second, each stamped
  with the ``time.monotonic()`` of its write (``paced_event``; the clock is
  shared by every process of the machine);
- anything else (``/v1/messages``, ``/v1/messages/count_tokens``, ...):
  ``reply_body`` as ``reply_type``, status ``reply_status``.
"""

from __future__ import annotations

import gzip
import json
import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.lib.fake_api import FakeMessagesAPI, _make_handler
from tests.lib.loopback import Loopback, Served, terminate_tls

if TYPE_CHECKING:
    from tests.lib.tls import HostCertificate

FIRST_PARTY_HOST = "api.anthropic.com"


def paced_event(stamp: float) -> bytes:
    """The ``/paced`` event written at ``stamp`` (all of one length)."""
    return f"data: {stamp:020.6f}\n\n".encode()


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Upstream(Served):
    # What is served (see the module's docstring).
    reply_status: int = 200
    reply_body: bytes = b'{"ok": true}'
    reply_type: str = "application/json"
    first: bytes = b"data: first\n\n"
    rest: bytes = b"data: rest\n\n"
    pause: float = 1.0
    release_when: int | None = None
    """End every ``/slow`` pause early once this many are in flight at once."""
    big: int = 96 * 1024 * 1024
    block: bytes = b"x" * 65536
    event: bytes = b"data: event\n\n"
    event_count: int = 1000
    paced_count: int = 100
    paced_rate: float = 1000.0
    # How it is reached.
    tls: ssl.SSLContext | None = None
    """Serve HTTPS with this context."""
    intercept: str | None = None
    """A ``CONNECT`` to this host's port 443 is terminated with ``certificate``
    and the decrypted connection served by ``api``."""
    certificate: HostCertificate | None = None
    api: FakeMessagesAPI = field(default_factory=FakeMessagesAPI)
    offline: bool = False
    """Refuse every other ``CONNECT`` instead of tunnelling it."""
    record: bool = True
    close_after_response: bool = False
    """End each connection after its response, without saying so (as an
    upstream that drops idle connections)."""
    # What it saw.
    seen: list[Seen] = field(default_factory=list)
    events: dict[str, float] = field(default_factory=dict)
    slow_in_flight: int = 0
    slow_most_in_flight: int = 0
    _slow_lock: threading.Lock = field(default_factory=threading.Lock)
    _slow_released: threading.Event = field(default_factory=threading.Event)
    accepted: list[float] = field(default_factory=list)
    """When each connection was accepted (``time.monotonic()``)."""

    @property
    def connections(self) -> int:
        """Connections accepted so far (each a TCP, and over TLS a TLS,
        handshake)."""
        return len(self.accepted)

    @classmethod
    def first_party(cls, directory: Path) -> Upstream:
        """``api.anthropic.com`` through a proxy, served by a fresh ``api``;
        the test CA and certificate are written into ``directory``."""
        from tests.lib.tls import host_certificate  # cryptography: only here

        directory.mkdir(parents=True, exist_ok=True)
        return cls(
            intercept=FIRST_PARTY_HOST,
            certificate=host_certificate(directory, FIRST_PARTY_HOST),
            offline=True,
        )

    @property
    def url(self) -> str:
        """The base URL, or the proxy URL of a first-party stand-in."""
        return self.base_url

    @property
    def connects(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.method == "CONNECT"]

    @property
    def ca(self) -> Path:
        assert self.certificate is not None
        return self.certificate.ca

    def env(self) -> dict[str, str]:
        """The CLI's (or the caller's) settings to reach a first-party stand-in."""
        return {
            "HTTPS_PROXY": self.url,
            "https_proxy": self.url,
            "NODE_EXTRA_CA_CERTS": str(self.ca),
            "ANTHROPIC_BASE_URL": "",
        }

    def _loopback(self) -> Loopback:
        return Loopback(_handler(self), "relay-upstream", tls=self.tls)


def _handler(upstream: Upstream) -> type[BaseHTTPRequestHandler]:
    api_handler = _make_handler(upstream.api)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # http.server writes headers and body separately: without this,
        # Nagle and the peer's delayed ACK add ~40 ms to some exchanges.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def setup(self) -> None:
            upstream.accepted.append(time.monotonic())
            super().setup()

        def _record(self, body: bytes) -> None:
            if upstream.record:
                headers = {k.lower(): v for k, v in self.headers.items()}
                upstream.seen.append(Seen(self.command, self.path, headers, body))

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            self._record(body)
            route = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
            serve = self._routes.get(route)
            if serve is not None:
                serve(self)
                return
            self.send_response(upstream.reply_status)
            self.send_header("Content-Type", upstream.reply_type)
            self.send_header("Content-Length", str(len(upstream.reply_body)))
            self.send_header("request-id", "req_upstream")
            if upstream.close_after_response:  # without saying so
                self.close_connection = True
            self.end_headers()
            self.wfile.write(upstream.reply_body)

        def _start(self, length: int, extra: dict[str, str] | None = None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(length))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()

        def _gzip(self) -> None:
            payload = gzip.compress(b"data: compressed\n\n")
            self._start(len(payload), {"Content-Encoding": "gzip", "X-Custom": "kept"})
            self.wfile.write(payload)

        def _slow(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunk(upstream.first)
            upstream.events["first_sent"] = time.time()
            with upstream._slow_lock:
                upstream.slow_in_flight += 1
                upstream.slow_most_in_flight = max(
                    upstream.slow_most_in_flight, upstream.slow_in_flight
                )
                if (
                    upstream.release_when is not None
                    and upstream.slow_in_flight >= upstream.release_when
                ):
                    upstream._slow_released.set()
            try:
                # Silent until the pause is over (or released) or the relay
                # hangs up (EOF).
                deadline = time.time() + upstream.pause
                while (left := deadline - time.time()) > 0:
                    if upstream._slow_released.is_set():
                        break
                    wait = min(left, 0.05) if upstream.release_when else left
                    readable, _, _ = select.select([self.connection], [], [], wait)
                    if readable and not self.connection.recv(1, 0):
                        upstream.events["disconnected_at"] = time.time()
                        self.close_connection = True
                        return
            finally:
                with upstream._slow_lock:
                    upstream.slow_in_flight -= 1
            upstream.events["rest_sent"] = time.time()
            self._chunk(upstream.rest)
            self.wfile.write(b"0\r\n\r\n")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _big(self) -> None:
            self._start(upstream.big)
            block, size = upstream.block, upstream.big
            written = 0
            upstream.events["big_written"] = 0
            try:
                while written < size:
                    part = block[: size - written]
                    self.wfile.write(part)
                    written += len(part)
                    upstream.events["big_written"] = written
            except OSError:
                self.close_connection = True

        def _events(self) -> None:
            event, count = upstream.event, upstream.event_count
            self._start(len(event) * count)
            for _ in range(count):
                self.wfile.write(event)

        def _paced(self) -> None:
            count, rate = upstream.paced_count, upstream.paced_rate
            self._start(len(paced_event(0.0)) * count)
            begin = time.monotonic()
            for i in range(count):
                delay = begin + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                self.wfile.write(paced_event(time.monotonic()))

        _routes = {
            "slow": _slow,
            "gzip": _gzip,
            "big": _big,
            "events": _events,
            "paced": _paced,
        }

        def do_CONNECT(self) -> None:  # noqa: N802
            self._record(b"")
            if upstream.intercept and self.path == f"{upstream.intercept}:443":
                self._terminate()
            elif upstream.offline:
                self.send_error(403, "the stand-in upstream is offline")
                self.close_connection = True
            else:
                self._tunnel()

        def _terminate(self) -> None:
            """Serve the CONNECT's decrypted connection by ``api``."""
            assert upstream.certificate is not None
            terminate_tls(self, upstream.certificate.server_context, api_handler)

        def _tunnel(self) -> None:
            host, _, port = self.path.rpartition(":")
            with socket.create_connection((host, int(port)), timeout=10) as far:
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                ends = [self.connection, far]
                while True:
                    readable, _, _ = select.select(ends, [], [], 10)
                    if not readable:
                        break
                    for end in readable:
                        data = end.recv(65536)
                        if not data:
                            self.close_connection = True
                            return
                        (far if end is self.connection else self.connection).sendall(
                            data
                        )

        do_POST = do_GET = do_PUT = do_DELETE = _handle  # noqa: N815

    return Handler
