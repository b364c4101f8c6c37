"""The tool-fields relay's settings and lifecycle (``tool_fields_relay=True``).

What to relay, read from ``options`` and the CLI's environment and refused
before anything starts when it cannot be served (``prepare_for_cli``), and
one ``ToolFieldsRelay`` per CLI process: a loopback server on a thread with
its own event loop, started and stopped from the caller's asyncio or trio
loop. docs/relay.md says what the relay changes and what it guarantees."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import os
import secrets
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server import Server

from .cli_hooks import meta_strict_tools, watch_meta_strict
from .connections import outbound_pool
from .evidence import (
    ReportSink,
    ToolFieldsReport,
    is_set,
    listed_fields,
    normalize_mcp_name,
)
from .evidence import ToolFieldsRelayError as ToolFieldsRelayError
from .network import (
    Failures,
    NetworkPath,
    bypasses_proxy,
    is_public_api,
    point_cli_at,
    point_cli_through,
    trusted_context,
)
from .rewrite import StrictServers
from .server import Acceptor, CliConnection, Forwarder, Live
from .tls import FIRST_PARTY_HOST, SessionCA

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

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 30.0

# Room in the kernel for connections not accepted yet: a flood of local
# connections must not fill it and make Claude Code's SYN wait for its
# retransmission (1 s, then 3 s). asyncio also accepts up to this many per
# wake-up (``server.MAX_UNREAD_CONNECTIONS`` is sized against it).
_LISTEN_BACKLOG = 1024


# --------------------------------------------------------------------------
# Configuration: which fields, which upstream, which proxy
# --------------------------------------------------------------------------


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


def mcp_server_names(mcp_servers: object) -> list[str] | None:
    """The server names ``options.mcp_servers`` configures, or None when
    they cannot be read: a dict's keys, or the ``mcpServers`` of the JSON
    config (a JSON string or a file path) handed to ``--mcp-config``."""
    if isinstance(mcp_servers, Mapping):
        return [str(name) for name in mcp_servers]
    if not isinstance(mcp_servers, (str, os.PathLike)):
        return None
    try:
        text = str(mcp_servers)
        if isinstance(mcp_servers, str) and text.lstrip().startswith("{"):
            config = json.loads(text)
        else:
            config = json.loads(Path(mcp_servers).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(config, dict) and isinstance(config.get("mcpServers"), dict):
        return [str(name) for name in config["mcpServers"]]
    return None


def check_strict_mcp_servers(
    strict_mcp_servers: object, mcp_servers: object, tool_fields_relay: bool
) -> None:
    """Refuse a ``strict_mcp_servers`` the relay cannot honour, before
    anything starts (``ToolFieldsRelayError`` naming the problem).

    Empty or None is no request at all, and passes.
    """
    if strict_mcp_servers is None:
        return
    if isinstance(strict_mcp_servers, (str, bytes)) or not isinstance(
        strict_mcp_servers, Iterable
    ):
        raise ToolFieldsRelayError(
            "strict_mcp_servers must be a list of names of mcp_servers entries "
            f"(got {type(strict_mcp_servers).__name__})"
        )
    names = list(strict_mcp_servers)
    if not names:
        return
    if not tool_fields_relay:
        raise ToolFieldsRelayError(
            "strict_mcp_servers needs tool_fields_relay=True: Claude Code sends "
            "MCP tools without strict, and only the relay can make them strict "
            f"on the way to the API (strict_mcp_servers={names!r})"
        )
    bad = [name for name in names if not isinstance(name, str)]
    if bad:
        raise ToolFieldsRelayError(
            f"strict_mcp_servers holds {bad[0]!r}, which is not a server name"
        )
    configured = mcp_server_names(mcp_servers)
    if configured is None:
        raise ToolFieldsRelayError(
            "strict_mcp_servers needs mcp_servers to be a dict, or a JSON config "
            "(string or file) with an mcpServers object, to check its names "
            "against"
        )
    unknown = [name for name in dict.fromkeys(names) if name not in configured]
    if unknown:
        raise ToolFieldsRelayError(
            f"strict_mcp_servers names {', '.join(map(repr, unknown))}, not "
            "configured in mcp_servers (its servers: "
            f"{', '.join(map(repr, configured)) or 'none'})"
        )
    listed = set(names)
    by_api_name: dict[str, list[str]] = {}
    for name in configured:
        by_api_name.setdefault(normalize_mcp_name(name), []).append(name)
    for api_name, servers in by_api_name.items():
        if (
            len(servers) > 1
            and any(s in listed for s in servers)
            and not all(s in listed for s in servers)
        ):
            raise ToolFieldsRelayError(
                f"strict_mcp_servers cannot tell the tools of "
                f"{' and '.join(map(repr, servers))} apart: Claude Code names both "
                f"mcp__{api_name}__<tool>; list all of them or none"
            )


def strict_servers_for(
    strict_mcp_servers: object, mcp_servers: object
) -> StrictServers | None:
    """What the relay makes strict for ``strict_mcp_servers`` (checked by
    ``check_strict_mcp_servers``), or None when it names no server.

    Besides every tool of the listed servers, the tools any SDK server of
    ``mcp_servers`` marks ``_meta["anthropic/strict"]: true`` on
    ``tools/list``, which the SDK sees on their way to Claude Code.
    """
    if not strict_mcp_servers or not isinstance(strict_mcp_servers, Iterable):
        return None
    names = [str(name) for name in strict_mcp_servers]
    if not names:
        return None
    configured = mcp_server_names(mcp_servers) or []
    sdk_servers: list[tuple[str, Any]] = []
    if isinstance(mcp_servers, Mapping):
        for server_name, config in mcp_servers.items():
            if isinstance(config, Mapping) and config.get("type") == "sdk":
                instance = config.get("instance")
                if instance is not None:
                    watch_meta_strict(instance)
                    sdk_servers.append((normalize_mcp_name(str(server_name)), instance))

    def opted_in() -> frozenset[str]:
        return frozenset(
            f"mcp__{server}__{normalize_mcp_name(tool)}"
            for server, instance in sdk_servers
            for tool in meta_strict_tools(instance)
        )

    return StrictServers(
        frozenset(normalize_mcp_name(name) for name in names),
        tuple(normalize_mcp_name(name) for name in configured),
        opted_in,
        tuple(dict.fromkeys(normalize_mcp_name(name) for name in names)),
    )


def refuse_unservable_provider(env: Mapping[str, str]) -> None:
    """Raise when ``env`` sends the CLI to a provider the relay cannot serve."""
    chosen = [name for name in UNSERVABLE_PROVIDERS if is_set(env.get(name))]
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


def outbound_proxy(upstream: str, env: Mapping[str, str]) -> str | None:
    """The proxy the outbound leg to ``upstream`` uses, per ``env``: the
    one Claude Code would use for that destination (``network.NetworkPath``).
    """
    parts = urllib.parse.urlsplit(upstream)
    return NetworkPath(env).proxy_for(
        parts.hostname or "", parts.port or 0, parts.scheme.lower()
    )


def _check_proxy(
    proxy: str | None, setting: str = "HTTPS_PROXY/HTTP_PROXY/ALL_PROXY"
) -> None:
    """Refuse, before the relay starts, a proxy its outbound leg cannot use.

    The message names the setting and the scheme only: a proxy URL may
    carry credentials.
    """
    if not proxy:
        return
    scheme = urllib.parse.urlsplit(proxy).scheme.lower()
    if scheme not in ("http", "https", "socks5", "socks5h"):
        raise ToolFieldsRelayError(
            f"tool_fields_relay cannot use the {scheme or 'scheme-less'} proxy in "
            f"{setting}; http, https, socks5 and socks5h proxies are supported"
        )
    if scheme.startswith("socks") and importlib.util.find_spec("socksio") is None:
        raise ToolFieldsRelayError(
            f"tool_fields_relay needs the socksio package for the SOCKS proxy in "
            f"{setting} (pip install socksio), as httpx does"
        )


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
        proxy_setting: str = "HTTPS_PROXY/HTTP_PROXY/ALL_PROXY",
        first_party: bool = False,
        no_proxy: str = "",
        user_extra_ca: str | None = None,
        strict_servers: StrictServers | None = None,
        platform: Any = None,
        network: NetworkPath | None = None,
        trust: Mapping[str, str] | None = None,
    ) -> None:
        self.fields_by_name = dict(fields_by_name)
        # Claude Code's proxy for each destination (``network``); without
        # it, ``proxy`` for the upstream and, for tunnels, ``proxy`` unless
        # ``no_proxy`` names the host.
        self.network = network
        # The failures to connect: named once, counted; ``failure`` once
        # the API stays unreachable (``network.Failures``).
        self.failures = Failures()
        # A ``platforms.Platform``: Bedrock, Vertex AI or Foundry.
        self.platform = platform
        self.strict_servers = strict_servers
        self.upstream = upstream.rstrip("/")
        _check_proxy(proxy, proxy_setting)
        self._proxy = proxy
        self._verify = verify
        # What Claude Code trusts, read when the relay starts (on its
        # thread: loading the CA files takes tens of ms), in place of
        # ``verify`` (``network.trusted_context``).
        self._trust = (
            None
            if trust is None
            else {
                name: trust[name]
                for name in (
                    "CLAUDE_CODE_CERT_STORE",
                    "SSL_CERT_FILE",
                    "SSL_CERT_DIR",
                    "NODE_EXTRA_CA_CERTS",
                )
                if name in trust
            }
        )
        # Proxy mode (``proxy``): the CLI keeps api.anthropic.com as
        # its base URL and reaches it through the relay as its HTTPS proxy.
        self.first_party = first_party
        self._no_proxy = no_proxy
        self._user_extra_ca = user_extra_ca
        self._ca: SessionCA | None = None
        # 256 bits; token_urlsafe's alphabet needs no escaping in a path.
        self._secret = secrets.token_urlsafe(32)
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        # start and stop run on worker threads; a stop (after a cancelled
        # start, say) waits for the start to finish, then undoes it.
        self._lifecycle = threading.RLock()
        self._stopped = False
        self._live: Live | None = None  # the open connections, while serving
        # ClaudeAgentOptions.tool_fields_report: given each request's report.
        self.report: ReportSink | None = None

    def __repr__(self) -> str:  # never shows the secret
        return f"<ToolFieldsRelay port={self.port} upstream={self.upstream!r}>"

    @property
    def port(self) -> int | None:
        return None if self._socket is None else int(self._socket.getsockname()[1])

    @property
    def proxy_url(self) -> str:
        """The CLI's ``HTTPS_PROXY`` in proxy mode, credentials included."""
        if self.port is None:
            raise RuntimeError("the relay is not running")
        return f"http://sdk:{self._secret}@127.0.0.1:{self.port}"

    @property
    def ca_bundle(self) -> str | None:
        """The CLI's ``NODE_EXTRA_CA_CERTS`` in proxy mode (the session CA
        and the caller's own extra certificates); removed at stop."""
        bundle = None if self._ca is None else self._ca.bundle
        return None if bundle is None else str(bundle)

    @property
    def failure(self) -> ToolFieldsRelayError | None:
        """Why the relay cannot reach the API, once that has lasted
        ``network.FATAL_AFTER_S`` with no request getting through (the
        WARNING's text), else None. Safe to read from any thread."""
        message = self.failures.fatal()
        return None if message is None else ToolFieldsRelayError(message)

    async def watch(self, terminate: Callable[[], None], every: float = 0.5) -> None:
        """Until the relay has a ``failure``, then call ``terminate`` (the
        SDK ends the CLI, and raises the failure to the caller instead of
        minutes of the CLI's retries). Run on the caller's loop; cancel it
        when the CLI is closed."""
        while self.failures.fatal() is None:
            await anyio.sleep(every)
        with contextlib.suppress(OSError):  # it has exited already
            terminate()

    def point_cli(self, env: MutableMapping[str, str]) -> None:
        """Send the CLI described by ``env`` through this (running) relay."""
        if self.platform is not None:
            self.platform.point_cli(self, env)
        elif self.first_party:
            bundle = self.ca_bundle
            assert bundle is not None
            point_cli_through(env, self.proxy_url, bundle)
        else:
            point_cli_at(env, self.url)

    @property
    def url(self) -> str:
        """The base URL the CLI must use, secret prefix included."""
        if self.port is None:
            raise RuntimeError("the relay is not running")
        return f"http://127.0.0.1:{self.port}/{self._secret}"

    async def start(self) -> None:
        """Start serving. However this fails or is cancelled (anyio, trio or
        native asyncio cancellation), nothing it started is left running."""
        try:
            await anyio.to_thread.run_sync(self._start_blocking)
        except BaseException:
            # A cancelled await may leave the worker thread still starting
            # the relay: stop waits for it, then stops what it started.
            await self.stop()
            raise

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
        with self._lifecycle:
            if self._stopped:
                raise RuntimeError("the relay was stopped")
            if self._thread is not None:
                raise RuntimeError("the relay was already started")
            self._start_locked()

    def _start_locked(self) -> None:
        # IPPROTO_TCP spelled out: asyncio only sets TCP_NODELAY on accepted
        # sockets whose proto says TCP, and without it Nagle's algorithm and
        # the client's delayed ACK hold each response body back ~40 ms.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.bind(("127.0.0.1", 0))
            sock.listen(_LISTEN_BACKLOG)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._socket = sock
        if self._trust is not None:
            self._verify = trusted_context(self._trust)
        if self.first_party:
            self._ca = SessionCA(
                FIRST_PARTY_HOST if self.platform is None else self.platform.proxy_host
            )
            self._ca.write_bundle(self._user_extra_ca)
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
            self._stop_locked()
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
        live = self._live = Live()
        factory: Callable[[], asyncio.BaseProtocol]
        make = Forwarder if self.platform is None else self.platform.forwarder
        if self._ca is not None:
            from .proxy import ProxyConnection, ProxyMode

            no_proxy = self._no_proxy
            network = self.network
            forwarder = make(
                None,
                self.upstream,
                self.fields_by_name,
                pool,
                self.strict_servers,
            )
            forwarder.evidence.sink = self._give_report
            mode = ProxyMode(
                self._secret,
                forwarder,
                self._ca.server_context,
                self._proxy if network is None else network.proxy,
                (
                    lambda host, port: bypasses_proxy(
                        urllib.parse.urlsplit(f"https://{host}:{port}"), no_proxy
                    )
                )
                if network is None
                else network.bypasses,
            )
            mode.failures = self.failures
            mode.proxy_variable = None if network is None else network.variable
            if self.platform is not None:
                mode.terminated_host = self.platform.proxy_host
            factory = lambda: ProxyConnection(mode, live)  # noqa: E731
        else:
            forwarder = make(
                self._secret,
                self.upstream,
                self.fields_by_name,
                pool,
                self.strict_servers,
            )
            forwarder.evidence.sink = self._give_report
            factory = lambda: CliConnection(forwarder, live)  # noqa: E731
        forwarder.failures = self.failures
        forwarder.via = (
            self._proxy,
            None if self.network is None else self.network.variable,
        )
        self._stop_requested = asyncio.Event()
        live.acceptor = Acceptor(sock, factory, live)
        self._ready.set()
        try:
            await self._stop_requested.wait()
        finally:
            # The CLI has exited by the time the relay stops, so there is
            # nothing in flight worth waiting for: drop what is left.
            live.stop()
            await pool.aclose()

    def _give_report(self, report: ToolFieldsReport) -> None:
        # self.report as it is now (it may be set after start).
        if self.report is not None:
            self.report(report)

    def _stop_blocking(self) -> None:
        with self._lifecycle:
            self._stopped = True
            self._stop_locked()

    def _stop_locked(self) -> None:
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
        if self._ca is not None:
            self._ca.remove()


def _cancel_leftover_tasks(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


# --------------------------------------------------------------------------
# The entry point the transport uses
# --------------------------------------------------------------------------


def prepare_for_cli(
    mcp_servers: object,
    cli_env: Mapping[str, str],
    strict_mcp_servers: object = None,
    report: ReportSink | None = None,
) -> ToolFieldsRelay:
    """A relay (not started yet) for a CLI to run with ``cli_env``.

    Every refusal is made here, before anything starts, as a
    ``ToolFieldsRelayError`` naming the setting: a provider the relay cannot
    serve, an ``ANTHROPIC_BASE_URL`` it cannot forward to, a proxy it cannot
    use, a ``strict_mcp_servers`` name that ``mcp_servers`` lacks.
    ``cli_env`` is the caller's environment with ``options.env`` applied.
    """
    check_strict_mcp_servers(strict_mcp_servers, mcp_servers, True)
    from .platforms import detect_platform

    platform = detect_platform(cli_env)
    if platform is None:
        refuse_unservable_provider(cli_env)
    upstream = resolve_upstream(cli_env) if platform is None else platform.upstream
    # Claude Code's own proxy for each destination; a URL the relay cannot
    # use is refused here, naming its variable.
    network = NetworkPath(cli_env)
    network.check()
    # Proxy mode when the caller has no base URL of their own (a gateway
    # keeps the base-URL relay), and tunnels can use their proxy: plain http.
    base_url = (cli_env.get("ANTHROPIC_BASE_URL") or "").strip()
    if platform is None and is_public_api(base_url):
        upstream = DEFAULT_UPSTREAM
        base_url = ""
    target = urllib.parse.urlsplit(upstream)
    proxy = network.proxy_for(
        target.hostname or "", target.port or 0, target.scheme.lower()
    )
    own_base_url = bool(base_url) if platform is None else platform.proxy_host is None
    first_party = not own_base_url and (
        network.proxy is None
        or urllib.parse.urlsplit(network.proxy).scheme.lower() == "http"
    )
    relay = ToolFieldsRelay(
        collect_tool_fields(mcp_servers),
        upstream,
        proxy=proxy,
        proxy_setting=network.variable or "HTTPS_PROXY",
        trust=cli_env,
        first_party=first_party,
        no_proxy=network.no_proxy,
        user_extra_ca=cli_env.get("NODE_EXTRA_CA_CERTS") or None,
        strict_servers=strict_servers_for(strict_mcp_servers, mcp_servers),
        platform=platform,
        network=network,
    )
    relay.report = report
    return relay


async def start_for_cli(
    mcp_servers: object,
    cli_env: MutableMapping[str, str],
    strict_mcp_servers: object = None,
) -> ToolFieldsRelay:
    """Start a relay for one CLI process and point ``cli_env`` at it.

    ``cli_env`` is the environment the CLI will be started with (the
    caller's environment with ``options.env`` applied); the upstream, proxy
    and CA settings are read from it before it is changed.
    """
    relay = prepare_for_cli(mcp_servers, cli_env, strict_mcp_servers)
    await relay.start()
    relay.point_cli(cli_env)
    return relay
