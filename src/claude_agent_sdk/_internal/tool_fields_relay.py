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

How it runs: a dedicated thread with its own asyncio loop serves the relay
(h11 parses the CLI's requests) and forwards with the transport of the
httpx-style client mcp already installs (see
``_mcp_compat.http_client_module``). The caller's event loop
(asyncio or trio) only starts and stops that thread, through
``anyio.to_thread``, so the relay works the same under either and never
competes with the caller's tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import importlib.util
import json
import logging
import secrets
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import h11
from mcp.server import Server

from ._mcp_compat import http_client_module, http_transport_module, listed_fields
from .relay_connections import outbound_pool, transport_errors
from .strict_schema import StrictLimitExceeded, find_limit_violations

logger = logging.getLogger(__name__)

DEFAULT_UPSTREAM = "https://api.anthropic.com"
"""Where requests go when neither ``options.env`` nor the environment set
``ANTHROPIC_BASE_URL``: the public API, as for the CLI itself."""

ADVANCED_TOOL_USE_BETA = "advanced-tool-use-2025-11-20"
"""The beta under which the Messages API accepts ``input_examples``."""

RELAYED_FIELDS = ("strict", "input_examples")
"""The tool fields the relay adds; everything else the SDK lists stays on
``tools/list``, because the Messages API defines no other tool fields."""

UNSERVABLE_PROVIDERS = (
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)
"""Settings that send the CLI to a provider with its own API shape, auth and
endpoints, which ``ANTHROPIC_BASE_URL`` does not reach."""

_REWRITTEN_ROUTES = ("/v1/messages", "/v1/messages/count_tokens")

# Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection and
# are never forwarded; host and content-length are set again for the
# outbound request by the HTTP client.
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
_NOT_FORWARDED_REQUEST = _HOP_BY_HOP | {b"host", b"content-length"}

_LOOPBACK_NAMES = ("127.0.0.1", "localhost")

_START_TIMEOUT_S = 30.0
_URL_CACHE_SIZE = 64
_METHODS_WITH_BODY = frozenset({b"POST", b"PUT", b"PATCH"})
# Outbound timeouts. No read limit: a long generation streams for minutes,
# and the CLI applies its own API timeout. No idle limit on the CLI's side
# either: it keeps one connection for a whole query, idle while tools run.
_TIMEOUTS = {"connect": 30.0, "read": None, "write": 60.0, "pool": None}


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
# The rewrite (pure functions, no I/O)
# --------------------------------------------------------------------------


@dataclass
class Rewrite:
    """What the relay did to one request body."""

    body: bytes
    modified_tools: list[str] = field(default_factory=list)
    added_examples: bool = False
    exceeded: list[StrictLimitExceeded] = field(default_factory=list)


def rewrite_body(
    body: bytes, fields_by_name: Mapping[str, Mapping[str, Any]]
) -> Rewrite:
    """Add the declared fields to the matching ``tools`` entries of ``body``.

    Returns the body unchanged (the same bytes) when there is nothing to add
    or it is not a JSON object. When something was added, the strict tools
    of the resulting request (those marked ``strict: true``, whoever marked
    them) are counted against strict mode's per-request caps; any cap they go
    over is in ``exceeded``, and such a request must not be sent.
    """
    unchanged = Rewrite(body)
    # Cheap test first: tool names are plain ASCII, so a name that is not in
    # the raw bytes is not in the request, and most requests (tool search's
    # first turn, side requests) skip JSON parsing altogether.
    if not fields_by_name or not any(name.encode() in body for name in fields_by_name):
        return unchanged
    try:
        request = json.loads(body)
    except ValueError:
        return unchanged
    tools = request.get("tools") if isinstance(request, dict) else None
    if not isinstance(tools, list):
        return unchanged
    rewrite = Rewrite(body)
    replaced: list[tuple[bytes, dict[str, Any]]] = []
    for entry in tools:
        if not isinstance(entry, dict):
            continue
        declared = fields_by_name.get(entry.get("name"))  # type: ignore[arg-type]
        if not declared:
            continue
        before = _compact(entry)
        changed = False
        for key in RELAYED_FIELDS:
            if key in declared and entry.get(key) != declared[key]:
                entry[key] = declared[key]
                changed = True
                if key == "input_examples":
                    rewrite.added_examples = True
        if changed:
            rewrite.modified_tools.append(str(entry["name"]))
            replaced.append((before, entry))
    if not rewrite.modified_tools:
        return unchanged
    rewrite.exceeded = list(
        _limit_violations(
            tuple(
                (str(entry.get("name")), _compact(entry.get("input_schema")))
                for entry in tools
                if isinstance(entry, dict) and entry.get("strict") is True
            )
        )
    )
    rewrite.body = _splice(body, replaced) or _compact(request)
    return rewrite


@functools.lru_cache(maxsize=64)
def _limit_violations(
    strict_tools: tuple[tuple[str, bytes], ...],
) -> tuple[StrictLimitExceeded, ...]:
    # The CLI sends the same tools on every turn of a query, so the counts
    # are kept (keyed by the encoded schemas) instead of walked each time.
    return tuple(
        find_limit_violations(
            (name, json.loads(schema)) for name, schema in strict_tools
        )
    )


def _compact(value: Any) -> bytes:
    # How the CLI writes its request bodies: compact, non-ASCII as is.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _splice(body: bytes, replaced: list[tuple[bytes, dict[str, Any]]]) -> bytes | None:
    """``body`` with each changed tool entry swapped in place, or None.

    Re-serializing a whole ~70 KB request costs about half a millisecond per
    API call; writing back only the changed entries costs a few
    microseconds. It is used only where each entry's original bytes are found
    exactly once, so the result is the same JSON the full rewrite produces;
    anything else (other formatting or escaping) takes the full rewrite.
    """
    for before, entry in replaced:
        if body.count(before) != 1:
            return None
        body = body.replace(before, _compact(entry))
    return body


def with_beta(
    headers: list[tuple[bytes, bytes]], beta: str = ADVANCED_TOOL_USE_BETA
) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``beta`` in ``anthropic-beta`` (appended if missing)."""
    encoded = beta.encode()
    betas = [
        (index, value)
        for index, (name, value) in enumerate(headers)
        if name.lower() == b"anthropic-beta"
    ]
    for _, value in betas:
        if encoded in (part.strip() for part in value.split(b",")):
            return headers
    result = list(headers)
    if betas:
        index, value = betas[0]
        joined = value.rstrip(b", ") + b"," + encoded if value.strip() else encoded
        result[index] = (b"anthropic-beta", joined)
    else:
        result.append((b"anthropic-beta", encoded))
    return result


def error_body(error_type: str, message: str) -> bytes:
    """An error in the Messages API's own shape, so the CLI reports
    ``API Error: <status> <message>`` to the caller as for any API error."""
    return json.dumps(
        {"type": "error", "error": {"type": error_type, "message": message}}
    ).encode()


def _limits_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay did not send this request: adding strict to "
        f"{', '.join(rewrite.modified_tools)} goes over strict mode's per-request "
        "limits: " + "; ".join(str(limit) for limit in rewrite.exceeded)
    )


# --------------------------------------------------------------------------
# One exchange: CLI request in, upstream response out
# --------------------------------------------------------------------------


class _Forwarder:
    """What the relay does with each request (one instance per relay)."""

    def __init__(
        self,
        secret: str,
        upstream: str,
        fields_by_name: Mapping[str, Mapping[str, Any]],
        pool: Any,
    ) -> None:
        self._prefix = f"/{secret}".encode()
        self._upstream = upstream
        self._host = http_client_module().URL(upstream).netloc
        self._fields_by_name = fields_by_name
        self._pool = pool
        self._core = http_transport_module()
        self._errors = transport_errors()
        self._urls: dict[bytes, Any] = {}

    def route(self, target: bytes) -> bytes | None:
        """The target after the secret prefix (with query), or None without it."""
        path, question, query = target.partition(b"?")
        head, slash, tail = path[1:].partition(b"/")
        if not path.startswith(b"/") or not hmac.compare_digest(
            b"/" + head, self._prefix
        ):
            return None
        return slash + tail + question + query

    async def exchange(
        self, request: h11.Request, body: bytes, cli: _CliConnection
    ) -> None:
        rest = self.route(request.target)
        if rest is None:
            # Never forwarded and nothing echoed: the caller learns only that
            # there is nothing here.
            cli.respond_error(404, "not_found_error", "Not found")
            return
        headers = [
            (name, value)
            for name, value in request.headers
            if name not in _NOT_FORWARDED_REQUEST
        ]
        route = rest.split(b"?", 1)[0].rstrip(b"/").decode("latin-1")
        rewrite = Rewrite(body)
        if (
            request.method == b"POST"
            and route in _REWRITTEN_ROUTES
            and not _has_content_encoding(headers)
        ):
            rewrite = rewrite_body(body, self._fields_by_name)
        if rewrite.exceeded:
            message = _limits_message(rewrite)
            logger.warning("%s", message)
            cli.respond_error(400, "invalid_request_error", message)
            return
        if rewrite.added_examples:
            headers = with_beta(headers)
        await self._forward(request.method, rest, headers, rewrite, cli)

    def _url(self, rest: bytes) -> Any:
        # The CLI uses a handful of paths; parsing each URL once saves a
        # twentieth of a millisecond per request.
        url = self._urls.get(rest)
        if url is None:
            if len(self._urls) >= _URL_CACHE_SIZE:
                self._urls.clear()
            url = self._urls[rest] = self._core.URL(
                self._upstream + rest.decode("latin-1")
            )
        return url

    async def _forward(
        self,
        method: bytes,
        rest: bytes,
        headers: list[tuple[bytes, bytes]],
        rewrite: Rewrite,
        cli: _CliConnection,
    ) -> None:
        # Host and Content-Length as the HTTP client would set them.
        headers = [(b"host", self._host), *headers]
        if rewrite.body or method in _METHODS_WITH_BODY:
            headers.append((b"content-length", str(len(rewrite.body)).encode()))
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

    async def _stream_back(self, response: Any, cli: _CliConnection) -> None:
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


def _has_content_encoding(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    return any(
        name.lower() == b"content-encoding" and value.strip().lower() != b"identity"
        for name, value in headers
    )


# --------------------------------------------------------------------------
# The CLI's connections
# --------------------------------------------------------------------------


class _CliConnection(asyncio.Protocol):
    """One connection from the CLI, parsed by h11, one exchange at a time.

    A plain protocol rather than an ASGI server: the relay needs none of a
    web framework's layers, and on a ~70 KB request they cost about half a
    millisecond per API call. h11 does all the HTTP parsing and framing.
    """

    def __init__(self, forwarder: _Forwarder, live: set[_CliConnection]) -> None:
        self._forwarder = forwarder
        self._live = live
        self._h11 = h11.Connection(h11.SERVER)
        self._transport: asyncio.Transport | None = None
        self._request: h11.Request | None = None
        self._body: list[bytes] = []
        self._task: asyncio.Task[None] | None = None
        self._writable = asyncio.Event()
        self._writable.set()

    # -- asyncio's callbacks ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._live.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._live.discard(self)
        self._transport = None
        self._writable.set()
        if self._task is not None:
            # The CLI went away: stop the exchange, which closes the upstream
            # request even while the upstream is silent.
            self._task.cancel()

    def data_received(self, data: bytes) -> None:
        self._h11.receive_data(data)
        self._next()

    def eof_received(self) -> bool:
        self._h11.receive_data(b"")
        self._next()
        return False  # close: the relay never answers a half-closed connection

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

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
                self._request, self._body = event, []
                if self._h11.they_are_waiting_for_100_continue:
                    self.send(h11.InformationalResponse(status_code=100, headers=[]))
            elif isinstance(event, h11.Data):
                self._body.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                assert self._request is not None
                self._task = asyncio.get_running_loop().create_task(
                    self._exchange(self._request, b"".join(self._body))
                )
                self._request, self._body = None, []
            else:  # ConnectionClosed
                self.abort()
                return

    async def _exchange(self, request: h11.Request, body: bytes) -> None:
        try:
            await self._forwarder.exchange(request, body, self)
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
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
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

    def respond_error(self, status: int, error_type: str, message: str) -> None:
        body = error_body(error_type, message)
        self.send(
            h11.Response(
                status_code=status,
                headers=[
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            )
        )
        self.send(h11.Data(data=body))
        self.send(h11.EndOfMessage())

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()


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
        forwarder = _Forwarder(self._secret, self.upstream, self.fields_by_name, pool)
        live: set[_CliConnection] = set()
        self._stop_requested = asyncio.Event()
        server = await asyncio.get_running_loop().create_server(
            lambda: _CliConnection(forwarder, live), sock=sock
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
