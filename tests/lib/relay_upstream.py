"""A scriptable stand-in upstream (and forward proxy) for the relay's tests.

Stdlib only, on a daemon thread, so it behaves the same under asyncio and
trio callers. Every request is recorded with its raw body; the reply is
chosen by path:

- ``/v1/messages``, ``/v1/messages/count_tokens``, anything else: a JSON
  echo (status ``reply_status``, default 200);
- ``/slow``: chunked, ``first`` chunk, then ``pause`` seconds, then ``rest``;
  records ``disconnected_at`` when the relay closes the connection meanwhile;
- ``/gzip``: a gzip-encoded body with ``Content-Encoding: gzip``;
- ``/big``: ``big`` bytes in 64 KB writes as fast as the reader takes them,
  counting what has been written so far in ``events["big_written"]``.

As a forward proxy it records the absolute-URI request line and answers it
itself; a ``CONNECT`` it records and tunnels to the named host. With
``tls`` set it serves HTTPS.
"""

from __future__ import annotations

import gzip
import json
import select
import socket
import ssl
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.lib.loopback import Loopback


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Upstream:
    reply_status: int = 200
    reply_body: bytes = b'{"ok": true}'
    first: bytes = b"data: first\n\n"
    rest: bytes = b"data: rest\n\n"
    pause: float = 1.0
    big: int = 96 * 1024 * 1024
    tls: ssl.SSLContext | None = None
    seen: list[Seen] = field(default_factory=list)
    events: dict[str, float] = field(default_factory=dict)
    _server: Loopback | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self._server.port}"

    def start(self) -> Upstream:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                upstream.seen.append(
                    Seen(
                        self.command,
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                route = self.path.split("?", 1)[0]
                if route.endswith("/slow"):
                    self._slow()
                elif route.endswith("/big"):
                    self._big()
                elif route.endswith("/gzip"):
                    payload = gzip.compress(b"data: compressed\n\n")
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("X-Custom", "kept")
                    self.end_headers()
                    self.wfile.write(payload)
                else:
                    self.send_response(upstream.reply_status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(upstream.reply_body)))
                    self.send_header("request-id", "req_upstream")
                    self.end_headers()
                    self.wfile.write(upstream.reply_body)

            def _slow(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self._chunk(upstream.first)
                upstream.events["first_sent"] = time.time()
                # Silent until the pause is over or the relay hangs up (EOF).
                deadline = time.time() + upstream.pause
                while (left := deadline - time.time()) > 0:
                    readable, _, _ = select.select([self.connection], [], [], left)
                    if readable and not self.connection.recv(1, 0):
                        upstream.events["disconnected_at"] = time.time()
                        self.close_connection = True
                        return
                upstream.events["rest_sent"] = time.time()
                self._chunk(upstream.rest)
                self.wfile.write(b"0\r\n\r\n")

            def _big(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(upstream.big))
                self.end_headers()
                block = b"x" * 65536
                written = 0
                upstream.events["big_written"] = 0
                try:
                    while written < upstream.big:
                        part = block[: upstream.big - written]
                        self.wfile.write(part)
                        written += len(part)
                        upstream.events["big_written"] = written
                except OSError:
                    self.close_connection = True

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def do_CONNECT(self) -> None:  # noqa: N802
                upstream.seen.append(Seen("CONNECT", self.path, {}, b""))
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
                            (
                                far if end is self.connection else self.connection
                            ).sendall(data)

            do_POST = do_GET = do_PUT = do_DELETE = _handle  # noqa: N815

        self._server = Loopback(Handler, "relay-upstream", tls=self.tls)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
