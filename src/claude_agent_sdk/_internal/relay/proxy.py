"""The tool-fields relay as Claude Code's HTTPS proxy (proxy mode).

Each connection authenticates first (``CONNECT`` with the relay's
``Proxy-Authorization``); ``CONNECT`` to the API host is terminated under the
session CA (``tls``) and served as in base-URL mode; every other host is
tunnelled byte for byte. Why this mode: docs/relay.md, "What else differs"."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
import urllib.parse
from typing import Any

import h11

from . import server as relay_server
from .network import Failures
from .server import CliConnection, Forwarder
from .tls import FIRST_PARTY_HOST

logger = logging.getLogger(__name__)

_TUNNEL_CONNECT_TIMEOUT_S = 30.0


def proxy_authorization(secret: str) -> bytes:
    """The ``Proxy-Authorization`` value Claude Code sends for the proxy URL
    ``http://sdk:<secret>@127.0.0.1:<port>``."""
    return b"Basic " + base64.b64encode(f"sdk:{secret}".encode())


class ProxyMode:
    """What every proxy connection of one relay shares."""

    def __init__(
        self,
        secret: str,
        forwarder: Forwarder,
        server_context: Any,
        tunnel_proxy: str | None,
        bypasses_proxy: Any,
    ) -> None:
        self.expected = proxy_authorization(secret)
        self.forwarder = forwarder
        self.server_context = server_context
        self.tunnel_proxy = tunnel_proxy
        self.bypasses_proxy = bypasses_proxy  # (host, port) -> bool
        self.terminated_host = FIRST_PARTY_HOST  # a platform's API host instead
        # The relay's ``network.Failures``, and the variable ``tunnel_proxy``
        # came from (for the fix a failure names).
        self.failures: Any = Failures()
        self.proxy_variable: str | None = None


class ProxyConnection(asyncio.Protocol):
    """One connection from Claude Code to the relay as its proxy."""

    def __init__(self, mode: ProxyMode, live: relay_server.Live) -> None:
        self._mode = mode
        self._live = live
        self._h11 = h11.Connection(h11.SERVER)
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._peer: asyncio.Transport | None = None  # the tunnel's far end
        # Which ends of a tunnel have sent their EOF: when both have, both
        # sockets are closed (a half-close passes through until then).
        self._eof_near = False
        self._eof_far = False
        self.authenticated = False
        self.spoke = False  # sent a byte
        self.accepted_at = 0.0

    # -- asyncio's callbacks ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.accepted_at = self.accepted_at or now
        self._live.add(self)
        self._timer = loop.call_later(
            max(0.0, relay_server.PENDING_TIMEOUT_S - (now - self.accepted_at)),
            self.abort,
        )

    def connection_lost(self, exc: Exception | None) -> None:
        self._live.discard(self)
        self._transport = None
        self._disarm()
        if self._peer is not None:
            self._peer.close()
        if self._task is not None:
            self._task.cancel()

    @property
    def transport(self) -> asyncio.Transport | None:
        return self._transport

    def data_received(self, data: bytes) -> None:
        if not self.spoke:
            self.spoke = True
            self._live.spoke(self)
        if self._peer is not None:  # a tunnel: bytes pass untouched
            self._peer.write(data)
            return
        if self._task is not None:
            return  # nothing is read while the CONNECT is being set up
        self._h11.receive_data(data)
        try:
            event = self._h11.next_event()
        except h11.RemoteProtocolError:
            self._refuse(400, "Bad request")
            return
        if isinstance(event, h11.Request):
            self._admit(event)
        elif event is not h11.NEED_DATA:
            self.abort()

    def eof_received(self) -> bool:
        if self._peer is not None and self._peer.can_write_eof():
            self._peer.write_eof()
            self._eof_near = True
            return not self.tunnel_done()  # half-close through the tunnel
        return False

    def tunnel_done(self) -> bool:
        """Close both sockets of a tunnel once each side has sent its EOF."""
        if not (self._eof_near and self._eof_far):
            return False
        if self._peer is not None:
            self._peer.close()
        if self._transport is not None:
            self._transport.close()
        return True

    def pause_writing(self) -> None:
        if self._peer is not None:
            self._peer.pause_reading()

    def resume_writing(self) -> None:
        if self._peer is not None:
            self._peer.resume_reading()

    # -- the CONNECT -----------------------------------------------------------

    def _admit(self, request: h11.Request) -> None:
        given = next(
            (v for k, v in request.headers if k == b"proxy-authorization"), b""
        )
        if not hmac.compare_digest(given, self._mode.expected):
            self._refuse(407, "Proxy authentication required")
            return
        self.authenticated = True
        self._live.admitted(self)
        if request.method != b"CONNECT":
            self._refuse(405, "Only CONNECT is served")
            return
        host, _, port_text = request.target.decode("ascii", "replace").rpartition(":")
        host = host.strip("[]")
        if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            self._refuse(400, "Bad CONNECT target")
            return
        self._disarm()
        port = int(port_text)
        if (host.lower(), port) == (self._mode.terminated_host, 443):
            self._task = asyncio.get_running_loop().create_task(self._terminate())
        else:
            self._task = asyncio.get_running_loop().create_task(
                self._tunnel(host, port)
            )

    def _established(self) -> bool:
        self._send(
            h11.Response(status_code=200, headers=[], reason=b"Connection established")
        )
        data, _closed = self._h11.trailing_data
        if data:  # a client that did not wait for the 200: not Claude Code
            self.abort()
            return False
        return self._transport is not None

    async def _terminate(self) -> None:
        """TLS for api.anthropic.com, then the base-URL relay's exchange."""
        if not self._established():
            return
        transport = self._transport
        assert transport is not None
        cli = CliConnection(self._mode.forwarder, self._live, authenticated=True)
        try:
            tls = await asyncio.get_running_loop().start_tls(
                transport,
                cli,
                self._mode.server_context,
                server_side=True,
                ssl_handshake_timeout=relay_server.HEADER_TIMEOUT_S,
            )
        except (OSError, asyncio.TimeoutError, ConnectionError) as error:
            logger.warning(
                "tool_fields_relay: TLS with Claude Code failed: %s",
                type(error).__name__,
            )
            transport.abort()
            return
        finally:
            self._task = None
            # Handed over (to the CliConnection) or failed: either way this
            # protocol gets no connection_lost any more, so nothing of it
            # may stay in ``live``.
            self._live.discard(self)
            self._transport = None
        if tls is None:  # the handshake was abandoned
            transport.abort()
            return
        cli.connection_made(tls)

    async def _tunnel(self, host: str, port: int) -> None:
        """Pipe the connection to ``host:port``, untouched."""
        loop = asyncio.get_running_loop()
        via = self._mode.tunnel_proxy
        try:
            if via is not None and self._mode.bypasses_proxy(
                f"[{host}]" if ":" in host else host, port
            ):
                via = None
            far, end, leftover = await asyncio.wait_for(
                _open_tunnel(loop, self, host, port, via), _TUNNEL_CONNECT_TIMEOUT_S
            )
        except Exception as error:  # noqa: BLE001 - every refusal is answered
            # Named once at WARNING (destination, proxy, cause), then counted.
            self._mode.failures.failed(
                error, f"{host}:{port}", via, self._mode.proxy_variable, api=False
            )
            self._task = None
            self._refuse(502, "Bad gateway")
            return
        self._task = None
        if self._transport is None:
            far.close()
            return
        self._peer = far
        if not self._established():
            far.close()
            return
        early, end.early = leftover + end.early, b""
        if early:
            self._transport.write(early)

    # -- answers ---------------------------------------------------------------

    def _send(self, event: h11.Event) -> None:
        data = self._h11.send(event)
        if data and self._transport is not None:
            self._transport.write(data)

    def _refuse(self, status: int, message: str) -> None:
        body = relay_server.error_body("invalid_request_error", message)
        with contextlib.suppress(h11.LocalProtocolError):
            self._send(
                h11.Response(
                    status_code=status,
                    headers=[
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                )
            )
            self._send(h11.Data(data=body))
            self._send(h11.EndOfMessage())
        self._live.discard(self)
        if self._transport is not None:
            self._transport.close()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def abort(self) -> None:
        self._disarm()
        self._live.discard(self)
        if self._transport is not None:
            self._transport.abort()


class _ProxyRefusedError(Exception):
    """The upstream proxy refused the tunnel (its status, when it gave one)."""

    def __init__(self, code: str = "?") -> None:
        super().__init__(code)
        self.status = int(code) if code.isdigit() else None


class _FarEnd(asyncio.Protocol):
    """The tunnel's far side: bytes go to the proxy connection as they come;
    before that, the upstream proxy's answer to our own CONNECT is read."""

    def __init__(self, near: ProxyConnection, via_proxy: bool) -> None:
        self._near = near
        self._handshake: asyncio.Future[bytes] | None = (
            asyncio.get_running_loop().create_future() if via_proxy else None
        )
        self._buffer = b""
        self.early = b""  # what came before the tunnel was established
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._handshake is not None and not self._handshake.done():
            self._buffer += data
            head, found, rest = self._buffer.partition(b"\r\n\r\n")
            if found:
                status = head.split(b"\r\n", 1)[0].split(b" ")
                if len(status) >= 2 and status[1].startswith(b"2"):
                    self._handshake.set_result(rest)
                else:
                    code = status[1].decode("latin-1") if len(status) >= 2 else "?"
                    self._handshake.set_exception(_ProxyRefusedError(code))
            elif len(self._buffer) > 65536:
                self._handshake.set_exception(_ProxyRefusedError())
            return
        near = self._near._transport  # noqa: SLF001 - the two ends of one pipe
        if self._near._peer is None:  # noqa: SLF001 - not established yet
            self.early += data
        elif near is not None:
            near.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._handshake is not None and not self._handshake.done():
            self._handshake.set_exception(ConnectionError("closed"))
        near = self._near._transport  # noqa: SLF001
        # Before the tunnel is established the CONNECT is still to be
        # answered (a 502, by ``_tunnel``), so the near end stays open.
        if near is not None and self._near._peer is not None:  # noqa: SLF001
            near.close()

    def eof_received(self) -> bool:
        near = self._near._transport  # noqa: SLF001
        if self._near._peer is None:  # noqa: SLF001 - not established: no tunnel
            return False
        if near is not None and near.can_write_eof():
            near.write_eof()
            self._near._eof_far = True  # noqa: SLF001
            return not self._near.tunnel_done()
        return False

    def pause_writing(self) -> None:
        near = self._near._transport  # noqa: SLF001
        if near is not None:
            near.pause_reading()

    def resume_writing(self) -> None:
        near = self._near._transport  # noqa: SLF001
        if near is not None:
            near.resume_reading()


async def _open_tunnel(
    loop: asyncio.AbstractEventLoop,
    near: ProxyConnection,
    host: str,
    port: int,
    via: str | None,
) -> tuple[asyncio.Transport, _FarEnd, bytes]:
    end = _FarEnd(near, via_proxy=via is not None)
    if via is None:
        transport, _ = await loop.create_connection(lambda: end, host, port)
        return transport, end, b""
    proxy = urllib.parse.urlsplit(via)
    transport, _ = await loop.create_connection(
        lambda: end, proxy.hostname or "", proxy.port or 80
    )
    target = (
        f"{host}:{port}".encode() if ":" not in host else f"[{host}]:{port}".encode()
    )
    head = [b"CONNECT " + target + b" HTTP/1.1", b"Host: " + target]
    if proxy.username is not None:
        credentials = (
            f"{urllib.parse.unquote(proxy.username)}:"
            f"{urllib.parse.unquote(proxy.password or '')}"
        )
        head.append(
            b"Proxy-Authorization: Basic " + base64.b64encode(credentials.encode())
        )
    transport.write(b"\r\n".join(head) + b"\r\n\r\n")
    try:
        assert end._handshake is not None  # noqa: SLF001
        leftover = await end._handshake  # noqa: SLF001
    except BaseException:
        transport.abort()
        raise
    return transport, end, leftover
