"""A stdlib HTTP server on 127.0.0.1, served from a daemon thread.

The stand-in Messages API (``fake_api``) and the stand-in upstream
(``relay_upstream``) both run on one, so they behave the same under asyncio
and trio callers and never keep the interpreter alive.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

_Self = TypeVar("_Self", bound="Served")


class _Server(ThreadingHTTPServer):
    # Tests open a few dozen connections at once; the default backlog of 5
    # makes a loaded machine reset some of them.
    request_queue_size = 128


class Loopback:
    """``handler`` served on ``(host, port)`` (port 0: any free one) until ``stop``,
    over TLS with ``tls``."""

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        name: str,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.server = _Server((host, port), handler)
        self.server.daemon_threads = True
        if tls is not None:  # HTTPS: the handshake happens as a connection is accepted
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=name,
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


def terminate_tls(
    request: BaseHTTPRequestHandler,
    tls: Callable[[], ssl.SSLContext],
    handler: type[BaseHTTPRequestHandler],
) -> None:
    """Accept ``request``'s CONNECT and serve what comes through it over TLS
    (``tls()``, the intercepted host's certificate) by ``handler``."""
    request.send_response(200, "Connection established")
    request.end_headers()
    request.wfile.flush()
    request.close_connection = True
    try:
        secure = tls().wrap_socket(request.connection, server_side=True)
    except (ssl.SSLError, OSError):
        return
    try:
        handler(secure, request.client_address, request.server)
    finally:
        secure.close()


class Served:
    """A stand-in served on a ``Loopback`` from ``start`` (or ``with``) until
    ``stop``; ``_loopback`` says how."""

    _server: Loopback | None = None

    def _loopback(self) -> Loopback:
        raise NotImplementedError

    def start(self: _Self) -> _Self:
        self._server = self._loopback()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self: _Self) -> _Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http(s)://host:port``, while served."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        server = self._server.server
        scheme = "https" if isinstance(server.socket, ssl.SSLSocket) else "http"
        host, port = server.server_address[:2]
        return f"{scheme}://{host!s}:{port}"
