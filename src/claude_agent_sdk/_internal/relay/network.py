"""Claude Code's network path and trust, for the relay's own connections
(``NetworkPath``, ``trusted_context``); failures that name their cause
(``Failures``); and how Claude Code's environment is pointed through the
relay (``point_cli_at``, ``point_cli_through``). docs/relay.md, "Claude
Code's network path and trust", has the rules as measured with the real CLI."""

from __future__ import annotations

import functools
import importlib
import logging
import os
import socket
import ssl
import time
import urllib.parse
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from .evidence import ToolFieldsRelayError
from .tls import FIRST_PARTY_HOST

logger = logging.getLogger(__name__)

PROXY_VARIABLES = (
    "https_proxy",
    "HTTPS_PROXY",
    "http_proxy",
    "HTTP_PROXY",
    "all_proxy",
    "ALL_PROXY",
)
"""The variables Claude Code's API and MCP connections take their proxy
from, first non-empty wins (``ALL_PROXY`` only with an http(s) URL)."""

_SUPPORTED_SCHEMES = ("http", "https", "socks5", "socks5h")


# --------------------------------------------------------------------------
# The proxy for each destination
# --------------------------------------------------------------------------


class NetworkPath:
    """The proxy Claude Code uses for each destination, read from ``env``.

    As measured with the real Claude Code CLI for its Messages requests and its
    MCP connections (docs/relay.md, "Claude Code's network path"): the
    first non-empty of ``PROXY_VARIABLES``, for https destinations and
    http ones alike, except that an ``ALL_PROXY`` that is not an http(s)
    URL (``socks5h://``) is ignored; ``no_proxy`` when set, else
    ``NO_PROXY``, judged for each destination.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        found = None
        for name in PROXY_VARIABLES:
            value = (env.get(name) or "").strip()
            if not value:
                continue
            if name.lower() == "all_proxy" and not value.lower().startswith(
                ("http://", "https://")
            ):
                continue  # Claude Code does not use a SOCKS ALL_PROXY
            found = name
            break
        self.variable = found
        self.proxy = (env.get(found) or "").strip() if found is not None else None
        lower = (env.get("no_proxy") or "").strip()
        self.no_proxy_variable = "no_proxy" if lower else "NO_PROXY"
        self.no_proxy = lower or (env.get("NO_PROXY") or "").strip()
        self._entries = tuple(
            entry for entry in self.no_proxy.lower().replace(",", " ").split() if entry
        )

    def check(self) -> None:
        """Refuse a proxy URL the relay cannot use, naming its variable."""
        if self.proxy is None:
            return
        try:
            parts = urllib.parse.urlsplit(self.proxy)
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            raise ToolFieldsRelayError(
                f"tool_fields_relay cannot read the proxy URL in {self.variable}: "
                "it is not a URL (expected http://host:port)"
            ) from None
        scheme = parts.scheme.lower()
        if scheme not in _SUPPORTED_SCHEMES or not parts.hostname:
            raise ToolFieldsRelayError(
                f"tool_fields_relay cannot use the proxy in {self.variable}: "
                f"{'scheme ' + repr(scheme) if scheme else 'no scheme'}"
                f"{'' if parts.hostname else ', no host'}; it needs a URL such as "
                "http://host:port (http, https, socks5 and socks5h proxies are "
                "supported)"
            )

    def bypasses(self, host: str, port: int, scheme: str = "https") -> bool:
        """Whether ``NO_PROXY`` sends ``host:port`` direct, as Claude Code
        judges it: ``*``; a name covers itself and every name under it
        (``anthropic.com``, ``.anthropic.com`` and ``*.anthropic.com``
        alike); ``name:port`` only that port; commas or spaces between
        entries, any case."""
        host = host.lower().strip("[]").rstrip(".")
        port = port or (443 if scheme in ("https", "wss") else 80)
        for entry in self._entries:
            if entry == "*":
                return True
            name, port_text = entry, ""
            if entry.startswith("["):  # [v6]:port
                name, _, rest = entry[1:].partition("]")
                port_text = rest.removeprefix(":")
            elif entry.count(":") == 1:
                name, _, port_text = entry.partition(":")
            if port_text and port_text != str(port):
                continue
            name = name.removeprefix("*").lstrip(".").rstrip(".")
            if name and (host == name or host.endswith("." + name)):
                return True
        return False

    def proxy_for(self, host: str, port: int, scheme: str = "https") -> str | None:
        """The proxy URL for ``host:port``, or None for a direct connection."""
        if self.proxy is None or self.bypasses(host, port, scheme):
            return None
        return self.proxy

    def route(self, host: str, port: int, scheme: str = "https") -> str:
        """``proxy_for`` as the variable's name, or ``"direct"``."""
        proxy = self.proxy_for(host, port, scheme)
        return "direct" if proxy is None else str(self.variable)


def shown(proxy: str | None) -> str:
    """A proxy URL as it may be logged: without credentials."""
    if proxy is None:
        return "a direct connection"
    parts = urllib.parse.urlsplit(proxy)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


# --------------------------------------------------------------------------
# Claude Code's own path: through the relay
# --------------------------------------------------------------------------

LOOPBACK_NAMES = ("127.0.0.1", "localhost")


def is_public_api(url: str) -> bool:
    """Whether ``url`` is a spelling of the public API: ``https``, host
    ``api.anthropic.com`` in any case, port 443 or none, no path beyond
    ``/``, no query. Such a base URL is what Claude Code uses by default, so
    the relay keeps it first-party (proxy mode) rather than base-URL mode."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme.lower() == "https"
        and (parts.hostname or "").rstrip(".") == FIRST_PARTY_HOST
        and port in (None, 443)
        and parts.username is None
        and parts.password is None
        and parts.path in ("", "/")
        and not parts.query
        and not parts.fragment
    )


def bypasses_proxy(url: urllib.parse.SplitResult, no_proxy: str) -> bool:
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
        # ``*.example.com`` is read as ``.example.com`` (as Node's and
        # Python's proxy settings read it): every name under it.
        name = name.removeprefix("*").lstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def point_cli_at(env: MutableMapping[str, str], relay_url: str) -> None:
    """Send the CLI described by ``env`` to the relay at ``relay_url``.

    Also adds loopback to ``NO_PROXY``: with ``HTTPS_PROXY`` set, the CLI
    sends even a loopback base URL through the proxy (API key included)
    unless ``NO_PROXY`` names it. Both spellings get the same merged list, so
    whichever one the CLI reads keeps the user's own entries.
    """
    env["ANTHROPIC_BASE_URL"] = relay_url
    set_no_proxy(env, callers_no_proxy(env))


def callers_no_proxy(env: Mapping[str, str]) -> list[str]:
    """The entries of ``NO_PROXY`` and ``no_proxy`` in ``env``, merged in order."""
    entries: list[str] = []
    for name in ("NO_PROXY", "no_proxy"):
        for entry in (env.get(name) or "").split(","):
            entry = entry.strip()
            if entry and entry not in entries:
                entries.append(entry)
    return entries


def set_no_proxy(env: MutableMapping[str, str], entries: list[str]) -> None:
    """Both spellings of ``NO_PROXY`` to ``entries`` and loopback."""
    entries += [name for name in LOOPBACK_NAMES if name not in entries]
    env["NO_PROXY"] = env["no_proxy"] = ",".join(entries)


def point_cli_through(
    env: MutableMapping[str, str], proxy_url: str, bundle: str
) -> None:
    """Send the CLI described by ``env`` through the relay as its HTTPS proxy.

    ``ANTHROPIC_BASE_URL`` stays unset, so the CLI stays first-party. The
    relay's CA joins the caller's own extra certificates (``bundle`` holds
    both). ``NO_PROXY`` keeps the caller's entries, except any that would
    send api.anthropic.com around the relay (the relay itself honours them
    for its own connections), and gains loopback.
    """
    env["HTTPS_PROXY"] = env["https_proxy"] = proxy_url
    env["NODE_EXTRA_CA_CERTS"] = bundle
    # A base URL that spells the public API differently (``/``, ``:443``,
    # case) is the default; unset, Claude Code is first-party for certain.
    if is_public_api(env.get("ANTHROPIC_BASE_URL") or ""):
        del env["ANTHROPIC_BASE_URL"]
    api = urllib.parse.urlsplit(f"https://{FIRST_PARTY_HOST}")
    entries: list[str] = []
    removed: list[str] = []
    # The list Claude Code's API and MCP connections judge by (``no_proxy``
    # when set, else ``NO_PROXY``: ``network.NetworkPath``), for both
    # spellings, so that what it sends direct stays what it was.
    for entry in NetworkPath(env).no_proxy.replace(",", " ").split():
        if entry in entries or entry in removed:
            continue
        api_entry = bypasses_proxy(api, entry) or NetworkPath(
            {"NO_PROXY": entry}
        ).bypasses(FIRST_PARTY_HOST, 443)
        (removed if api_entry else entries).append(entry)
    set_no_proxy(env, entries)
    if removed:
        # Once per CLI process: the relay would otherwise never see the
        # Messages requests, and no field would reach them without a word.
        logger.warning(
            "tool_fields_relay removed %s from NO_PROXY for Claude Code: they "
            "send %s around the relay (the relay's own connections still "
            "honour them)",
            ", ".join(removed),
            FIRST_PARTY_HOST,
        )


# --------------------------------------------------------------------------
# What it trusts
# --------------------------------------------------------------------------

CERT_STORE_SOURCES = ("bundled", "system")


def cert_store_sources(env: Mapping[str, str]) -> tuple[str, ...]:
    """``CLAUDE_CODE_CERT_STORE`` as Claude Code reads it: comma-separated
    ``bundled``/``system``; an unknown source is ignored (with a warning);
    unset or nothing valid means both."""
    value = env.get("CLAUDE_CODE_CERT_STORE") or ""
    sources: list[str] = []
    for part in value.split(","):
        source = part.strip().lower()
        if source in CERT_STORE_SOURCES:
            if source not in sources:
                sources.append(source)
        elif source:
            logger.warning(
                "tool_fields_relay ignores the CLAUDE_CODE_CERT_STORE source %r "
                "(as Claude Code does): the sources are bundled and system",
                source,
            )
    return tuple(sources) or CERT_STORE_SOURCES


def trusted_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The client context for the relay's upstream TLS: what Claude Code
    with ``env`` trusts (see the module's docstring)."""
    sources = cert_store_sources(env)
    cafile = env.get("SSL_CERT_FILE") or None
    capath = env.get("SSL_CERT_DIR") or None
    extra = env.get("NODE_EXTRA_CA_CERTS") or None
    return _context(sources, cafile, capath, extra, _stamp(cafile, capath, extra))


def _stamp(*paths: str | None) -> tuple[float, ...]:
    """The files' modification times, so a changed bundle is read again."""
    stamps = []
    for path in paths:
        try:
            stamps.append(Path(path).stat().st_mtime if path else 0.0)
        except OSError:
            stamps.append(-1.0)
    return tuple(stamps)


@functools.lru_cache(maxsize=8)
def _context(
    sources: tuple[str, ...],
    cafile: str | None,
    capath: str | None,
    extra: str | None,
    _stamps: tuple[float, ...],
) -> ssl.SSLContext:
    # Loading the CA bundles takes tens of ms: one context per setting.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    if "bundled" in sources:
        try:
            certifi = importlib.import_module("certifi")
        except ImportError:
            # mcp 2.x brings no certifi: the Mozilla roots are then those
            # of the system store (on most systems the same list).
            logger.info(
                "tool_fields_relay trusts the system store in place of the "
                "bundled roots: certifi is not installed (pip install certifi)"
            )
            if "system" not in sources:
                _load_system(context, None, None)
        else:
            try:
                context.load_verify_locations(cafile=certifi.where())
            except (OSError, ssl.SSLError) as error:
                logger.warning(
                    "tool_fields_relay could not load the bundled root "
                    "certificates (certifi): %s",
                    _reason(error),
                )
    if "system" in sources:
        _load_system(context, cafile, capath)
    if extra:
        try:
            context.load_verify_locations(cafile=extra)
        except (OSError, ssl.SSLError) as error:
            logger.warning(
                "tool_fields_relay is ignoring extra certs from NODE_EXTRA_CA_CERTS "
                "(%s), load failed: %s",
                extra,
                _reason(error),
            )
    return context


def _load_system(
    context: ssl.SSLContext, cafile: str | None, capath: str | None
) -> None:
    """The operating system's store, or the files ``SSL_CERT_FILE`` and
    ``SSL_CERT_DIR`` put in its place (as OpenSSL and Claude Code read
    them)."""
    defaults = ssl.get_default_verify_paths()
    file = cafile or defaults.openssl_cafile
    folder = capath or defaults.openssl_capath
    for name, kind, path in (
        ("SSL_CERT_FILE", "cafile", file),
        ("SSL_CERT_DIR", "capath", folder),
    ):
        if not path or not Path(path).exists():
            if path and (cafile if kind == "cafile" else capath):
                logger.warning(
                    "tool_fields_relay is ignoring the CAs of %s (%s): not found",
                    name,
                    path,
                )
            continue
        try:
            context.load_verify_locations(**{kind: path})
        except (OSError, ssl.SSLError) as error:
            logger.warning(
                "tool_fields_relay is ignoring the CAs of %s (%s), load failed: %s",
                name,
                path,
                _reason(error),
            )
    if os.name == "nt" or not (defaults.openssl_cafile or defaults.openssl_capath):
        context.load_default_certs()  # the platform's own store (Windows)


def _reason(error: BaseException) -> str:
    return getattr(error, "strerror", None) or type(error).__name__


# --------------------------------------------------------------------------
# Failures that name their cause
# --------------------------------------------------------------------------

FATAL_AFTER_S = 5.0
"""How long the API may stay unreachable for a named cause (no request to it
succeeding in between) before the relay gives up and the caller is told."""

MAX_FAILURE_KINDS = 256
"""Distinct (destination, proxy, cause) kept for counting; beyond, the rest
are still logged once by cause but not counted apart."""


def describe(
    error: BaseException, destination: str, proxy: str | None, variable: str | None
) -> tuple[str, str, bool]:
    """``(cause, message, fatal)`` for a failure to reach ``destination``
    (``host`` or ``host:port``) through ``proxy`` (None: direct)."""
    via = shown(proxy)
    setting = variable or "HTTPS_PROXY"
    found = _root(error)
    status = _proxy_status(error)
    if isinstance(found, ssl.SSLCertVerificationError) or (
        isinstance(found, ssl.SSLError) and "CERTIFICATE_VERIFY_FAILED" in str(found)
    ):
        detail = getattr(found, "verify_message", "") or ""
        detail = f" ({detail})" if detail else ""
        if proxy is not None:
            fix = (
                f"the proxy's CA is not trusted{detail}; set SSL_CERT_FILE or "
                "NODE_EXTRA_CA_CERTS to a file holding it (a TLS-inspecting "
                "proxy's CA)"
            )
        else:
            fix = (
                f"the server's CA is not trusted{detail}; set "
                "NODE_EXTRA_CA_CERTS or SSL_CERT_FILE to a file holding it"
            )
        cause = "certificate verify failed"
        return cause, f"{cause} for {destination} via {via}: {fix}", True
    if status in (407, 403):
        if status == 407:
            cause = "the proxy refused with 407 Proxy Authentication Required"
            fix = (
                f"put the proxy's credentials into {setting} "
                "(http://user:password@host:port)"
            )
        else:
            cause = "the proxy refused with 403 Forbidden"
            fix = (
                "the proxy does not allow this destination; have it allowed, or "
                "name it in NO_PROXY if it is reachable directly"
            )
        return cause, f"{cause} for {destination} via {via}: {fix}", True
    if isinstance(found, socket.gaierror):
        cause = "name lookup failed"
        if proxy is not None:
            fix = (
                f"the proxy's host name {_host_of(proxy)} does not resolve; "
                f"check {setting}"
            )
        else:
            fix = "the name does not resolve; check it and this machine's DNS"
        return cause, f"{cause} for {destination} via {via}: {fix}", True
    if isinstance(found, ConnectionRefusedError):
        cause = "connection refused"
        if proxy is not None:
            fix = f"nothing listens at the proxy's address; check {setting}"
        else:
            fix = (
                "nothing listens there; check the address, or the proxy "
                "Claude Code should use (HTTPS_PROXY)"
            )
        return cause, f"{cause} for {destination} via {via}: {fix}", True
    if status is not None:
        cause = f"the proxy refused with {status}"
        return cause, f"{cause} for {destination} via {via}", False
    cause = type(found).__name__
    if isinstance(found, OSError) and found.strerror:
        cause = f"{cause} ({found.strerror})"
    return cause, f"{cause} for {destination} via {via}", False


def _root(error: BaseException) -> BaseException:
    """The innermost cause (``__cause__``, ``__context__``, or an exception
    given as the first argument, as httpcore wraps them)."""
    seen: set[int] = set()
    while id(error) not in seen:
        seen.add(id(error))
        inner = error.__cause__ or error.__context__
        if inner is None and error.args and isinstance(error.args[0], BaseException):
            inner = error.args[0]
        if inner is None:
            break
        error = inner
    return error


def _proxy_status(error: BaseException) -> int | None:
    """The status a proxy refused a ``CONNECT`` with, if that is the error."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        status = getattr(current, "status", None)
        if isinstance(status, int):
            return status
        if type(current).__name__ == "ProxyError" and current.args:
            head = str(current.args[0]).split(" ", 1)[0]
            if head.isdigit():
                return int(head)
        current = current.__cause__ or current.__context__
    return None


def _host_of(proxy: str) -> str:
    return urllib.parse.urlsplit(proxy).hostname or proxy


class Failures:
    """The relay's failures to connect: each kind named once, then counted;
    the API's, when they last, become ``failure``."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = {}
        # Whether the API's last connection failed (a success clears it):
        # the one thing a forwarded request reads.
        self.failing = False
        self._first_api_failure: float | None = None
        self._api_message: str | None = None
        self._api_fatal = False
        self.failure: str | None = None

    def failed(
        self,
        error: BaseException,
        destination: str,
        proxy: str | None,
        variable: str | None,
        *,
        api: bool,
    ) -> str:
        """Record one failure; returns its message (logged the first time)."""
        cause, message, fatal = describe(error, destination, proxy, variable)
        key = (destination, shown(proxy), cause)
        count = self.counts.get(key)
        if count is None:
            if len(self.counts) < MAX_FAILURE_KINDS:
                self.counts[key] = 1
            logger.warning("tool_fields_relay: %s", message)
        else:
            self.counts[key] = count + 1
        if api:
            now = time.monotonic()
            self.failing = True
            if self._first_api_failure is None:
                self._first_api_failure = now
            self._api_message, self._api_fatal = message, fatal
            self._check(now)
        return message

    def succeeded(self) -> None:
        """A request to the API got an answer: earlier failures were passing."""
        self.failing = False
        self._first_api_failure = None
        self._api_message = None

    def _check(self, now: float) -> None:
        since = self._first_api_failure
        if (
            self.failure is None
            and self._api_fatal
            and since is not None
            and now - since >= FATAL_AFTER_S
        ):
            self.failure = self._api_message

    def fatal(self) -> str | None:
        """The cause that keeps the API unreachable, once it has for
        ``FATAL_AFTER_S`` (read from any thread)."""
        if self.failure is None and self._first_api_failure is not None:
            self._check(time.monotonic())
        return self.failure

    def repeated(self) -> dict[tuple[str, str, str], int]:
        """The kinds that failed more than once, with their counts."""
        return {key: n for key, n in self.counts.items() if n > 1}
