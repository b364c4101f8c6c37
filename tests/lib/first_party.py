"""A first-party stand-in: ``api.anthropic.com`` as Claude Code reaches it.

An HTTP proxy on 127.0.0.1 (the CLI's ``HTTPS_PROXY``) that terminates
``CONNECT api.anthropic.com:443`` with a certificate from a test CA (the
CLI trusts it through ``NODE_EXTRA_CA_CERTS``) and serves the stand-in
Messages API (``fake_api``) on the decrypted connection. The CLI keeps its
default base URL, so it behaves as it does against the real API: first-party
side requests, betas, headers and body. Every ``CONNECT`` is recorded; one
for any other host is refused (the tests run offline).

Stdlib and ``cryptography`` only, on a daemon thread.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.lib.fake_api import FakeMessagesAPI, _make_handler
from tests.lib.loopback import Loopback
from tests.lib.tls import HostCertificate, host_certificate

FIRST_PARTY_HOST = "api.anthropic.com"


@dataclass
class FirstPartyStandIn:
    """``api`` served as ``https://api.anthropic.com`` through a proxy."""

    directory: Path
    api: FakeMessagesAPI = field(default_factory=FakeMessagesAPI)
    connects: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    certificate: HostCertificate | None = None
    _server: Loopback | None = None

    @property
    def proxy_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.port}"

    @property
    def ca(self) -> Path:
        assert self.certificate is not None
        return self.certificate.ca

    def env(self) -> dict[str, str]:
        """The CLI's (or the caller's) settings to reach the stand-in."""
        return {
            "HTTPS_PROXY": self.proxy_url,
            "https_proxy": self.proxy_url,
            "NODE_EXTRA_CA_CERTS": str(self.ca),
            "ANTHROPIC_BASE_URL": "",
        }

    def start(self) -> FirstPartyStandIn:
        self.certificate = host_certificate(self.directory, FIRST_PARTY_HOST)
        tls = self.certificate.server_context()
        api_handler = _make_handler(self.api)
        stand_in = self

        class Proxy(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def setup(self) -> None:
                # http.server writes headers and body separately: without
                # this, Nagle and the peer's delayed ACK add ~40 ms to some
                # exchanges, which a real API does not.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                super().setup()

            def do_CONNECT(self) -> None:  # noqa: N802
                stand_in.connects.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()})
                )
                if self.path != f"{FIRST_PARTY_HOST}:443":
                    self.send_error(403, "the first-party stand-in is offline")
                    self.close_connection = True
                    return
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                try:
                    secure = tls.wrap_socket(self.connection, server_side=True)
                except (ssl.SSLError, OSError):
                    self.close_connection = True
                    return
                try:
                    api_handler(secure, self.client_address, self.server)
                finally:
                    secure.close()
                self.close_connection = True

        self._server = Loopback(Proxy, "first-party-stand-in")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
