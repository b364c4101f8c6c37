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
with uvicorn (h11) and forwards with the httpx-style client mcp already
installs (see ``_mcp_compat.http_client_module``). The caller's event loop
(asyncio or trio) only starts and stops that thread, through
``anyio.to_thread``, so the relay works the same under either and never
competes with the caller's tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
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
import uvicorn
from mcp.server import Server
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from ._mcp_compat import http_client_module, listed_fields
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

# uvicorn closes an idle keep-alive connection after this long. The CLI keeps
# one connection for a whole query and may sit idle while a tool runs, so the
# default of 5 s would make it reconnect (and race the close) mid-query.
_KEEP_ALIVE_S = 600
# How long stop() lets in-flight responses finish before they are cancelled.
# The CLI has exited by then, so its connections are normally gone already.
_GRACEFUL_SHUTDOWN_S = 2
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
    rewrite.exceeded = find_limit_violations(
        (str(entry.get("name")), entry.get("input_schema"))
        for entry in tools
        if isinstance(entry, dict) and entry.get("strict") is True
    )
    rewrite.body = _splice(body, replaced) or _compact(request)
    return rewrite


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


def anthropic_error(status: int, error_type: str, message: str) -> JSONResponse:
    """An error response in the Messages API's own shape, so the CLI reports
    ``API Error: <status> <message>`` to the caller as for any API error."""
    return JSONResponse(
        {"type": "error", "error": {"type": error_type, "message": message}},
        status_code=status,
    )


def _limits_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay did not send this request: adding strict to "
        f"{', '.join(rewrite.modified_tools)} goes over strict mode's per-request "
        "limits: " + "; ".join(str(limit) for limit in rewrite.exceeded)
    )


# --------------------------------------------------------------------------
# The ASGI application
# --------------------------------------------------------------------------


class _RelayApp:
    """The relay's request handler (one instance per relay)."""

    def __init__(
        self,
        secret: str,
        upstream: str,
        fields_by_name: Mapping[str, Mapping[str, Any]],
    ) -> None:
        self._prefix = f"/{secret}".encode()
        self._upstream = upstream
        self._fields_by_name = fields_by_name
        self.client: Any = None  # created on the relay's own loop, see _serve
        self._http = http_client_module()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off; websockets are refused
            return
        rest = self._route(scope)
        if rest is None:
            # Never forwarded and nothing echoed: the caller learns only that
            # there is nothing here.
            await anthropic_error(404, "not_found_error", "Not found")(
                scope, receive, send
            )
            return
        request = Request(scope, receive)
        body = await request.body()
        headers = [
            (name, value)
            for name, value in scope["headers"]
            if name.lower() not in _NOT_FORWARDED_REQUEST
        ]
        route = rest.split(b"?", 1)[0].rstrip(b"/").decode("latin-1")
        rewrite = Rewrite(body)
        if (
            scope["method"] == "POST"
            and route in _REWRITTEN_ROUTES
            and not _has_content_encoding(headers)
        ):
            rewrite = rewrite_body(body, self._fields_by_name)
        if rewrite.exceeded:
            message = _limits_message(rewrite)
            logger.warning("%s", message)
            await anthropic_error(400, "invalid_request_error", message)(
                scope, receive, send
            )
            return
        if rewrite.added_examples:
            headers = with_beta(headers)
        await self._forward(scope, receive, send, rest, headers, rewrite)

    def _route(self, scope: Scope) -> bytes | None:
        """The path after the secret prefix (with query), or None without it."""
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
        raw_path = raw_path.split(b"?", 1)[0]
        head, slash, tail = raw_path[1:].partition(b"/")
        if not hmac.compare_digest(b"/" + head, self._prefix):
            return None
        rest = slash + tail
        query: bytes = scope.get("query_string") or b""
        return rest + (b"?" + query if query else b"")

    async def _forward(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        rest: bytes,
        headers: list[tuple[bytes, bytes]],
        rewrite: Rewrite,
    ) -> None:
        http = self._http
        outbound = self.client.build_request(
            scope["method"],
            self._upstream + rest.decode("latin-1"),
            headers=headers,
            content=rewrite.body,
        )
        try:
            response = await self.client.send(outbound, stream=True)
        except http.TransportError as error:
            # The error's class says what failed; its text is not passed on,
            # it may quote the upstream URL.
            logger.warning(
                "tool_fields_relay could not reach the upstream API: %s",
                type(error).__name__,
            )
            await anthropic_error(
                502,
                "api_error",
                f"tool_fields_relay could not reach the upstream API "
                f"({type(error).__name__})",
            )(scope, receive, send)
            return
        try:
            if response.status_code == 400 and rewrite.modified_tools:
                logger.warning(
                    "The API answered 400 to a request to which tool_fields_relay "
                    "added strict/input_examples (tools: %s; request-id: %s); "
                    "passing it through unchanged",
                    ", ".join(rewrite.modified_tools),
                    response.headers.get("request-id", "-"),
                )
            await _stream_back(response, receive, send)
        finally:
            await response.aclose()


def _has_content_encoding(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    return any(
        name.lower() == b"content-encoding" and value.strip().lower() != b"identity"
        for name, value in headers
    )


async def _stream_back(response: Any, receive: Receive, send: Send) -> None:
    """Pass ``response`` to the CLI chunk by chunk, as it arrives.

    Raw bytes (``aiter_raw``) so content-encoding passes through untouched.
    A watcher ends the copy when the CLI disconnects, even while the
    upstream is silent; the caller then closes the upstream response.
    """
    headers = [
        (name, value)
        for name, value in response.headers.raw
        if name.lower() not in _HOP_BY_HOP
    ]
    async with anyio.create_task_group() as group:

        async def watch_disconnect() -> None:
            message: Message = {"type": ""}
            while message["type"] != "http.disconnect":
                message = await receive()
            group.cancel_scope.cancel()

        group.start_soon(watch_disconnect)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": headers,
                }
            )
            async for chunk in response.aiter_raw():
                await send(
                    {"type": "http.response.body", "body": chunk, "more_body": True}
                )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the CLI went away while a chunk was being sent
        except http_client_module().TransportError as error:
            # Headers are out, so the status cannot change any more; ending
            # the response early tells the CLI the stream broke, and it
            # retries as for any dropped stream.
            logger.warning(
                "tool_fields_relay lost the upstream API mid-response: %s",
                type(error).__name__,
            )
        finally:
            group.cancel_scope.cancel()


# --------------------------------------------------------------------------
# The server thread and its lifecycle
# --------------------------------------------------------------------------


class _Server(uvicorn.Server):
    """uvicorn's server, woken for shutdown by an event instead of polling."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.stop_requested = asyncio.Event()
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()

    async def main_loop(self) -> None:
        # uvicorn's own loop wakes every 100 ms to look for should_exit; the
        # relay is told directly, so closing a query is not delayed by it.
        await self.stop_requested.wait()


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
        self._proxy = proxy
        self._verify = verify
        # 256 bits; token_urlsafe's alphabet needs no escaping in a path.
        self._secret = secrets.token_urlsafe(32)
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._server: _Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
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
        config = uvicorn.Config(
            app=_RelayApp(self._secret, self.upstream, self.fields_by_name),
            http="h11",
            loop="none",
            ws="none",
            lifespan="off",
            interface="asgi3",
            log_config=None,
            access_log=False,  # an access log would print the secret path
            proxy_headers=False,
            server_header=False,  # the upstream's headers pass through as sent
            date_header=False,
            timeout_keep_alive=_KEEP_ALIVE_S,
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_S,
        )
        self._server = server = _Server(config)
        self._loop = loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run,
            args=(server, sock, loop),
            name=f"claude-agent-sdk-tool-fields-relay-{self.port}",
            daemon=True,
        )
        self._thread.start()
        if not server.ready.wait(_START_TIMEOUT_S) or self._failure is not None:
            failure = self._failure
            self._stop_blocking()
            raise RuntimeError("tool_fields_relay failed to start") from failure

    def _run(
        self, server: _Server, sock: socket.socket, loop: asyncio.AbstractEventLoop
    ) -> None:
        try:
            loop.run_until_complete(self._serve(server, sock))
        except BaseException as error:  # noqa: BLE001 - reported to start()/stop()
            self._failure = error
            server.ready.set()
        finally:
            try:
                _cancel_leftover_tasks(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()
                sock.close()

    async def _serve(self, server: _Server, sock: socket.socket) -> None:
        http = http_client_module()
        client = http.AsyncClient(
            proxy=self._proxy,
            verify=self._verify,
            trust_env=False,  # proxy and CA settings come from the CLI's env, above
            follow_redirects=False,
            # No overall read limit: a long generation streams for minutes,
            # and the CLI applies its own API timeout.
            timeout=http.Timeout(connect=30.0, read=None, write=60.0, pool=None),
        )
        # The CLI's headers are forwarded as they are; the client must not
        # add its own (User-Agent, Accept-Encoding, ...).
        client.headers.clear()
        app = server.config.app
        assert isinstance(app, _RelayApp)
        app.client = client
        try:
            await server.serve(sockets=[sock])
        finally:
            await client.aclose()

    def _stop_blocking(self) -> None:
        server, loop, thread = self._server, self._loop, self._thread
        if server is not None and loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop just closed
                loop.call_soon_threadsafe(server.stop_requested.set)
        if thread is not None:
            thread.join()
        elif self._socket is not None:
            self._socket.close()
        self._thread = None
        self._server = None
        self._loop = None


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
