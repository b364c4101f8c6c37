"""A loopback relay that adds SDK tools' ``strict`` and ``input_examples`` to
the Messages API requests Claude Code sends (``tool_fields_relay=True``).

Why it exists: the SDK serves ``strict`` and ``input_examples`` on MCP
``tools/list``, but Claude Code does not copy either into the
``tools`` of its API request, so strict tool use never switches on and the
model never sees the examples. Claude Code honours ``ANTHROPIC_BASE_URL``,
its supported hook for gateways, so the SDK can put itself on that path: it
starts this relay before the CLI, points the CLI at it, and the relay
forwards every request to the user's own upstream, adding the declared
fields to the SDK tools' entries on the way.

What it guarantees:

- It listens on 127.0.0.1 only, on a free port, under a random secret path
  prefix (256 bits). A request without the prefix is answered with an error
  and never forwarded, so other local processes cannot use it as an open
  proxy carrying the user's credentials.
- Only ``POST .../v1/messages`` and ``.../v1/messages/count_tokens`` bodies
  are rewritten, and only the ``tools`` entries named
  ``mcp__<server>__<tool>`` of SDK tools that declare the fields. A body the
  relay has nothing to add to is forwarded byte for byte; everything else
  (paths, methods, headers, other tools and fields) passes through as sent.
- Responses stream back as they arrive (server-sent events), with status,
  headers and content-encoding unchanged; when the CLI goes away, the
  upstream request is closed.
- No silent downgrade: a request that the additions would push over strict
  mode's per-request caps is not sent (the CLI gets a 400-shaped error naming
  the cap and the tools), and an API 400 to a modified request is passed
  through unchanged and logged at WARNING with the tools that were modified.
- ``x-api-key`` and ``Authorization`` are forwarded and never logged, stored
  or echoed.

How it runs: this module owns a dedicated thread with its own asyncio loop,
on which ``relay_server`` serves the CLI's connections (h11 on an asyncio
protocol), ``relay_rewrite`` changes the request bodies and
``relay_connections`` forwards them through httpcore's pool, the transport
of the httpx-style client mcp already installs. The caller's event loop
(asyncio or trio) only starts and stops that thread, through
``anyio.to_thread``, so the relay works the same under either and never
competes with the caller's tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import secrets
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Mapping, MutableMapping
from typing import Any

import anyio
import anyio.to_thread
from mcp.server import Server

from ._mcp_compat import listed_fields
from .relay_connections import outbound_pool
from .relay_server import CliConnection, Forwarder

DEFAULT_UPSTREAM = "https://api.anthropic.com"
"""Where requests go when neither ``options.env`` nor the environment set
``ANTHROPIC_BASE_URL``: the public API, as for the CLI itself."""

UNSERVABLE_PROVIDERS = (
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)
"""Settings that send the CLI to a provider with its own API shape, auth and
endpoints, which ``ANTHROPIC_BASE_URL`` does not reach."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost")

_START_TIMEOUT_S = 30.0


class ToolFieldsRelayError(ValueError):
    """``tool_fields_relay=True`` cannot work with this configuration."""


# --------------------------------------------------------------------------
# Configuration: which fields, which upstream, which proxy
# --------------------------------------------------------------------------


def normalize_mcp_name(name: str) -> str:
    """A server or tool name as Claude Code spells it in ``mcp__<server>__<tool>``.

    Claude Code replaces each UTF-16 code unit outside ``[A-Za-z0-9_-]`` with
    an underscore, so a character beyond the BMP (an emoji) becomes two
    (server ``"lagrum-ö📚"`` is ``lagrum-___``, tool
    ``"find.v1"`` is ``find_v1``; see ``tests/e2e/test_e2e_relay.py``).
    """
    return "".join(
        c
        if c.isascii() and (c.isalnum() or c in "_-")
        else "__"
        if ord(c) > 0xFFFF
        else "_"
        for c in name
    )


def collect_tool_fields(mcp_servers: object) -> dict[str, dict[str, Any]]:
    """The fields to add to each API tool name, for ``options.mcp_servers``.

    Only SDK servers (``type: "sdk"``) built by ``create_sdk_mcp_server``
    declare fields; of those, ``strict`` is relayed when it is ``True`` and
    ``input_examples`` when present, with the values served on
    ``tools/list``.
    """
    if not isinstance(mcp_servers, Mapping):
        return {}
    fields_by_api_name: dict[str, dict[str, Any]] = {}
    for server_name, config in mcp_servers.items():
        if not (isinstance(config, Mapping) and config.get("type") == "sdk"):
            continue
        instance = config.get("instance")
        if not isinstance(instance, Server):
            continue
        for tool_name, fields in listed_fields(instance).items():
            relayed: dict[str, Any] = {}
            if fields.get("strict") is True:
                relayed["strict"] = True
            if "input_examples" in fields:
                relayed["input_examples"] = fields["input_examples"]
            if relayed:
                api_name = (
                    f"mcp__{normalize_mcp_name(str(server_name))}"
                    f"__{normalize_mcp_name(tool_name)}"
                )
                fields_by_api_name[api_name] = relayed
    return fields_by_api_name


def _set(value: str | None) -> bool:
    # What counts as "set" is deliberately broad: the relay refuses rather
    # than let a CLI that reads the value as true bypass it unnoticed.
    return value is not None and value.strip().lower() not in _UNSET_VALUES


_UNSET_VALUES = frozenset({"", "0", "false", "no", "off"})


def refuse_unservable_provider(env: Mapping[str, str]) -> None:
    """Raise when ``env`` sends the CLI to a provider the relay cannot serve."""
    chosen = [name for name in UNSERVABLE_PROVIDERS if _set(env.get(name))]
    if chosen:
        raise ToolFieldsRelayError(
            f"tool_fields_relay=True cannot be used with {', '.join(chosen)}: the "
            "relay serves the Anthropic Messages API only (ANTHROPIC_BASE_URL), "
            "and Claude Code talks to Bedrock, Vertex and Foundry directly. Turn "
            "tool_fields_relay off for this provider, or unset the variable."
        )


def resolve_upstream(env: Mapping[str, str]) -> str:
    """The user's own API base URL: ``ANTHROPIC_BASE_URL`` if set, else the public API."""
    upstream = (env.get("ANTHROPIC_BASE_URL") or "").strip() or DEFAULT_UPSTREAM
    parts = urllib.parse.urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolFieldsRelayError(
            "tool_fields_relay=True needs ANTHROPIC_BASE_URL to be an http(s) URL "
            f"(got one with scheme {parts.scheme!r})"
        )
    if parts.username is not None or parts.password is not None:
        # The relay forwards to the URL's host and the CLI's own headers; a
        # user:password in the URL would silently go nowhere.
        raise ToolFieldsRelayError(
            "tool_fields_relay=True cannot forward credentials written into "
            "ANTHROPIC_BASE_URL (user:password@); send them as headers instead "
            "(ANTHROPIC_AUTH_TOKEN or ANTHROPIC_CUSTOM_HEADERS)"
        )
    return upstream.rstrip("/")


def _env_value(env: Mapping[str, str], name: str) -> str:
    # Lower case wins when both are set, as in curl and urllib.
    return (env.get(name.lower()) or env.get(name.upper()) or "").strip()


def outbound_proxy(upstream: str, env: Mapping[str, str]) -> str | None:
    """The proxy the outbound leg to ``upstream`` uses, per ``env``.

    ``HTTPS_PROXY`` (or ``HTTP_PROXY`` for an ``http`` upstream), else
    ``ALL_PROXY``; none when ``NO_PROXY`` names the upstream host. Decided
    once, from the same environment the CLI would have used, since the relay
    only ever talks to one upstream.
    """
    parts = urllib.parse.urlsplit(upstream)
    proxy = _env_value(env, f"{parts.scheme}_proxy") or _env_value(env, "all_proxy")
    if not proxy or _bypasses_proxy(parts, _env_value(env, "no_proxy")):
        return None
    return proxy


def _check_proxy(proxy: str | None) -> None:
    """Refuse, before the relay starts, a proxy its outbound leg cannot use.

    The message names the scheme only: a proxy URL may carry credentials.
    """
    if not proxy:
        return
    scheme = urllib.parse.urlsplit(proxy).scheme.lower()
    if scheme not in ("http", "https", "socks5", "socks5h"):
        raise ToolFieldsRelayError(
            f"tool_fields_relay cannot use a {scheme or 'scheme-less'} proxy from "
            "HTTPS_PROXY/HTTP_PROXY/ALL_PROXY; http, https, socks5 and socks5h "
            "are supported"
        )
    if scheme.startswith("socks") and importlib.util.find_spec("socksio") is None:
        raise ToolFieldsRelayError(
            "tool_fields_relay needs the socksio package for the SOCKS proxy in "
            "HTTPS_PROXY/HTTP_PROXY/ALL_PROXY (pip install socksio), as httpx does"
        )


def _bypasses_proxy(url: urllib.parse.SplitResult, no_proxy: str) -> bool:
    """Whether ``no_proxy`` names ``url``'s host, as curl reads it: ``*``, or
    comma-separated host names (a name also covers its subdomains, a leading
    dot is ignored), each optionally with ``:port``."""
    host = (url.hostname or "").lower()
    for entry in no_proxy.lower().split(","):
        entry = entry.strip()
        if entry == "*":
            return True
        name, _, port = (
            entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        )
        effective_port = url.port or (443 if url.scheme == "https" else 80)
        if port and port != str(effective_port):
            continue
        name = name.lstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _ssl_verify(env: Mapping[str, str]) -> ssl.SSLContext | bool:
    """Certificate verification for the outbound leg, honouring the CA bundles
    the CLI's environment names (``SSL_CERT_FILE``/``SSL_CERT_DIR``, and
    ``NODE_EXTRA_CA_CERTS``, the CLI's own way to trust a gateway's CA)."""
    cafile = env.get("SSL_CERT_FILE") or None
    capath = env.get("SSL_CERT_DIR") or None
    extra = env.get("NODE_EXTRA_CA_CERTS") or None
    if not (cafile or capath or extra):
        return True
    context = ssl.create_default_context(cafile=cafile, capath=capath)
    if extra:
        context.load_verify_locations(cafile=extra)
    return context


def point_cli_at(env: MutableMapping[str, str], relay_url: str) -> None:
    """Send the CLI described by ``env`` to the relay at ``relay_url``.

    Also adds loopback to ``NO_PROXY``: with ``HTTPS_PROXY`` set, the CLI
    sends even a loopback base URL through the proxy (API key included)
    unless ``NO_PROXY`` names it. Both spellings get the same merged list, so
    whichever one the CLI reads keeps the user's own entries.
    """
    env["ANTHROPIC_BASE_URL"] = relay_url
    entries: list[str] = []
    for name in ("NO_PROXY", "no_proxy"):
        for entry in (env.get(name) or "").split(","):
            entry = entry.strip()
            if entry and entry not in entries:
                entries.append(entry)
    for name in _LOOPBACK_NAMES:
        if name not in entries:
            entries.append(name)
    env["NO_PROXY"] = env["no_proxy"] = ",".join(entries)


# --------------------------------------------------------------------------
# The server thread and its lifecycle
# --------------------------------------------------------------------------


class ToolFieldsRelay:
    """One relay: a loopback server on its own thread, for one CLI process.

    ``start()`` and ``stop()`` may be awaited from asyncio or trio. Use
    ``url`` as the CLI's ``ANTHROPIC_BASE_URL``.
    """

    def __init__(
        self,
        fields_by_name: Mapping[str, Mapping[str, Any]],
        upstream: str = DEFAULT_UPSTREAM,
        *,
        proxy: str | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.fields_by_name = dict(fields_by_name)
        self.upstream = upstream.rstrip("/")
        _check_proxy(proxy)
        self._proxy = proxy
        self._verify = verify
        # 256 bits; token_urlsafe's alphabet needs no escaping in a path.
        self._secret = secrets.token_urlsafe(32)
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    def __repr__(self) -> str:  # never shows the secret
        return f"<ToolFieldsRelay port={self.port} upstream={self.upstream!r}>"

    @property
    def port(self) -> int | None:
        return None if self._socket is None else int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        """The base URL the CLI must use, secret prefix included."""
        if self.port is None:
            raise RuntimeError("the relay is not running")
        return f"http://127.0.0.1:{self.port}/{self._secret}"

    async def start(self) -> None:
        await anyio.to_thread.run_sync(self._start_blocking)

    async def stop(self) -> None:
        """Stop serving and wait for the thread; idempotent, safe on any path."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._stop_blocking)

    async def __aenter__(self) -> ToolFieldsRelay:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- the thread -----------------------------------------------------------

    def _start_blocking(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the relay was already started")
        # IPPROTO_TCP spelled out: asyncio only sets TCP_NODELAY on accepted
        # sockets whose proto says TCP, and without it Nagle's algorithm and
        # the client's delayed ACK hold each response body back ~40 ms.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._socket = sock
        self._loop = loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run,
            args=(sock, loop),
            name=f"claude-agent-sdk-tool-fields-relay-{self.port}",
            daemon=True,
        )
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT_S) or self._failure is not None:
            failure = self._failure
            self._stop_blocking()
            raise RuntimeError("tool_fields_relay failed to start") from failure

    def _run(self, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        try:
            loop.run_until_complete(self._serve(sock))
        except BaseException as error:  # noqa: BLE001 - reported to start()/stop()
            self._failure = error
        finally:
            self._ready.set()
            try:
                _cancel_leftover_tasks(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()
                sock.close()

    async def _serve(self, sock: socket.socket) -> None:
        pool = outbound_pool(self._proxy, self._verify)
        forwarder = Forwarder(self._secret, self.upstream, self.fields_by_name, pool)
        live: set[CliConnection] = set()
        self._stop_requested = asyncio.Event()
        server = await asyncio.get_running_loop().create_server(
            lambda: CliConnection(forwarder, live), sock=sock
        )
        self._ready.set()
        try:
            await self._stop_requested.wait()
        finally:
            # The CLI has exited by the time the relay stops, so there is
            # nothing in flight worth waiting for: drop what is left.
            server.close()
            for connection in list(live):
                connection.abort()
            await pool.aclose()

    def _stop_blocking(self) -> None:
        loop, thread, stop_requested = self._loop, self._thread, self._stop_requested
        if loop is not None and stop_requested is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop just closed
                loop.call_soon_threadsafe(stop_requested.set)
        if thread is not None:
            thread.join()
        elif self._socket is not None:
            self._socket.close()
        self._thread = None
        self._loop = None
        self._stop_requested = None


def _cancel_leftover_tasks(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


# --------------------------------------------------------------------------
# The entry point the transport uses
# --------------------------------------------------------------------------


async def start_for_cli(
    mcp_servers: object, cli_env: MutableMapping[str, str]
) -> ToolFieldsRelay:
    """Start a relay for one CLI process and point ``cli_env`` at it.

    ``cli_env`` is the environment the CLI will be started with (the
    caller's environment with ``options.env`` applied); the upstream, proxy
    and CA settings are read from it before it is changed.
    """
    refuse_unservable_provider(cli_env)
    upstream = resolve_upstream(cli_env)
    relay = ToolFieldsRelay(
        collect_tool_fields(mcp_servers),
        upstream,
        proxy=outbound_proxy(upstream, cli_env),
        verify=_ssl_verify(cli_env),
    )
    await relay.start()
    point_cli_at(cli_env, relay.url)
    return relay
