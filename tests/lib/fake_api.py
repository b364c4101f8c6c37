"""A loopback stand-in for the Anthropic Messages API, for driving the real CLI.

Claude Code honours ``ANTHROPIC_BASE_URL``, so pointing it at this server lets
a test (or ``tools/demo.py``) run a whole agent turn offline and see every
request the CLI makes: the tool definitions it sends to the model, and the
``tool_result`` it sends back after running a tool.

Stdlib only (``http.server`` on a daemon thread), so it works the same under
any event loop the caller uses and can be imported by scripts outside pytest.

Usage::

    api = FakeMessagesAPI()
    api.start()                       # binds 127.0.0.1, a free port
    api.script(
        tool_use("mcp__legal__search", {"terms": ["payout"]}),
        text("Found one case."),
    )
    env = {"ANTHROPIC_BASE_URL": api.url, ...}
    ...
    api.messages_requests()           # the agent-loop requests, in order
    api.stop()

Which requests consume the script
---------------------------------
The CLI also sends side requests to ``/v1/messages`` (for example a title or
topic for the session, depending on version and settings). Those must not eat
the scripted turn, so by default a scripted response is consumed only by a
*streaming* request that offers at least one tool -- the shape of the agent
loop. Every other ``/v1/messages`` request gets a short text answer, in the
form it asked for (SSE or JSON). ``script_predicate`` can be replaced.

Recording proxy
---------------
With ``upstream="https://api.anthropic.com"`` nothing is scripted: every
request is recorded and then forwarded unchanged, and the upstream answer is
streamed back as it arrives. ``tools/demo.py --real-api`` uses this to show
what the CLI sends to the real API.
"""

from __future__ import annotations

import http.client
import itertools
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.lib.loopback import Loopback, Served

__all__ = [
    "FakeMessagesAPI",
    "RecordedRequest",
    "ScriptedResponse",
    "api_error",
    "broken_tool_use",
    "loading",
    "text",
    "tool_use",
]

MODEL_ECHO_DEFAULT = "claude-fake-1"
_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):06d}"


# --------------------------------------------------------------------------
# Scripted responses
# --------------------------------------------------------------------------


@dataclass
class ScriptedResponse:
    """One assistant message the stand-in answers with.

    ``blocks`` holds the content blocks in API shape. A ``tool_use`` block may
    carry ``_raw_input_json`` (a string): then the streamed
    ``input_json_delta`` chunks are cut from that string verbatim instead of
    from ``json.dumps(block["input"])`` -- which is how a broken input is
    sent. ``chunk_size`` is the length of each ``partial_json`` chunk.
    """

    blocks: list[dict[str, Any]]
    stop_reason: str
    chunk_size: int = 7
    label: str = ""
    pause_after_event: int | None = None
    """Streamed only: send this many SSE events, then wait ``pause_s``
    before the rest (the request records ``paused_at``/``resumed_at``)."""
    pause_s: float = 0.0
    status: int = 200
    """Not 200: answer with an API error of this status (``error_message``)."""
    error_message: str = ""
    sticky: bool = False
    """Answer every later agent-loop request too (the CLI retries errors)."""

    def message(self, model: str) -> dict[str, Any]:
        """The complete (non-streaming) message for this response."""
        content = []
        for block in self.blocks:
            block = {k: v for k, v in block.items() if not k.startswith("_")}
            content.append(block)
        return {
            "id": _new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def sse_events(self, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The SSE events the real API streams for this message, in order."""
        message_id = _new_id("msg")
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 10,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        )
        for index, block in enumerate(self.blocks):
            if block["type"] == "text":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                body = block["text"]
                for start in range(0, max(len(body), 1), self.chunk_size * 4):
                    yield (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {
                                "type": "text_delta",
                                "text": body[start : start + self.chunk_size * 4],
                            },
                        },
                    )
            elif block["type"] == "tool_use":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
                raw = block.get("_raw_input_json")
                if raw is None:
                    raw = json.dumps(block["input"])
                for start in range(0, len(raw), self.chunk_size):
                    yield (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": raw[start : start + self.chunk_size],
                            },
                        },
                    )
            else:  # pragma: no cover - only text and tool_use are scripted
                raise ValueError(f"cannot stream block type {block['type']!r}")
            yield ("content_block_stop", {"type": "content_block_stop", "index": index})
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": self.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
        yield ("message_stop", {"type": "message_stop"})


def text(body: str) -> ScriptedResponse:
    """An assistant message that is just text (``stop_reason: end_turn``)."""
    return ScriptedResponse(
        blocks=[{"type": "text", "text": body}], stop_reason="end_turn", label="text"
    )


def api_error(status: int, message: str) -> ScriptedResponse:
    """An API error answer (``{"type": "error", ...}``), for every later turn."""
    return ScriptedResponse(
        blocks=[],
        stop_reason="",
        label=f"error {status}",
        status=status,
        error_message=message,
        sticky=True,
    )


def tool_use(
    name: str,
    tool_input: dict[str, Any],
    *,
    tool_use_id: str | None = None,
    preamble: str | None = None,
    chunk_size: int = 7,
) -> ScriptedResponse:
    """An assistant message calling ``name`` with ``tool_input``.

    Streamed as the API streams it: the input arrives as ``input_json_delta``
    chunks of ``chunk_size`` characters, and the message ends with
    ``stop_reason: tool_use``.
    """
    blocks: list[dict[str, Any]] = []
    if preamble:
        blocks.append({"type": "text", "text": preamble})
    blocks.append(
        {
            "type": "tool_use",
            "id": tool_use_id or _new_id("toolu"),
            "name": name,
            "input": tool_input,
        }
    )
    return ScriptedResponse(
        blocks=blocks, stop_reason="tool_use", chunk_size=chunk_size, label="tool_use"
    )


def broken_tool_use(
    name: str,
    raw_input_json: str = '{"terms": [payout, claims]}',
    *,
    tool_use_id: str | None = None,
    chunk_size: int = 7,
) -> ScriptedResponse:
    """A ``tool_use`` whose streamed input is not valid JSON.

    The default is the upstream report's case: an array written as bare
    words. The non-streaming form (which cannot carry invalid JSON inside a
    JSON body) falls back to an empty input object.
    """
    return ScriptedResponse(
        blocks=[
            {
                "type": "tool_use",
                "id": tool_use_id or _new_id("toolu"),
                "name": name,
                "input": {},
                "_raw_input_json": raw_input_json,
            }
        ],
        stop_reason="tool_use",
        chunk_size=chunk_size,
        label="broken_tool_use",
    )


def loading(tool_search: str, *names: str) -> list[ScriptedResponse]:
    """The steps that make the model load ``names`` with ``ToolSearch`` when
    the CLI runs with ``ENABLE_TOOL_SEARCH=tool_search``: none when it is off."""
    if tool_search != "true":
        return []
    return [tool_use("ToolSearch", {"query": "select:" + ",".join(names)})]


# --------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One HTTP request the stand-in received, and what it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, raw text if it was not JSON, or None
    received_at: float
    answered_with: str = ""  # label of the scripted response, or a description
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.route.rstrip("/") == "/v1/messages"

    @property
    def tools(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict):
            return list(self.body.get("tools") or [])
        return []

    def tool(self, name: str) -> dict[str, Any] | None:
        """The definition of tool ``name`` in this request's ``tools``."""
        for entry in self.tools:
            if entry.get("name") == name:
                return entry
        return None

    def tool_results(self) -> list[dict[str, Any]]:
        """Every ``tool_result`` block in this request's messages."""
        found: list[dict[str, Any]] = []
        if not isinstance(self.body, dict):
            return found
        for message in self.body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, list):
                found.extend(
                    block
                    for block in content
                    if isinstance(block, dict) and block.get("type") == "tool_result"
                )
        return found


def default_script_predicate(request: RecordedRequest) -> bool:
    """Whether ``request`` is an agent-loop turn that should take a scripted reply."""
    body = request.body
    return (
        request.is_messages
        and isinstance(body, dict)
        and bool(body.get("stream"))
        and bool(body.get("tools"))
    )


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


class FakeMessagesAPI(Served):
    """Threaded HTTP stand-in for ``/v1/messages`` on 127.0.0.1."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_text: str = "(stand-in API: nothing scripted)",
        script_predicate: Callable[[RecordedRequest], bool] = default_script_predicate,
        upstream: str | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/") if upstream else None
        self._host = host
        self._port = port
        self.default_text = default_text
        self.script_predicate = script_predicate
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._script: list[ScriptedResponse] = []

    # -- lifecycle (start, stop, with: Served) -------------------------------

    def _loopback(self) -> Loopback:
        return Loopback(
            _make_handler(self), "fake-messages-api", self._host, self._port
        )

    @property
    def url(self) -> str:
        """Base URL for ``ANTHROPIC_BASE_URL`` (no trailing slash)."""
        return self.base_url

    # -- script ------------------------------------------------------------

    def script(self, *responses: ScriptedResponse) -> None:
        """Append responses for the next agent-loop requests, in order."""
        with self._lock:
            self._script.extend(responses)

    @property
    def unused_script(self) -> list[ScriptedResponse]:
        with self._lock:
            return list(self._script)

    def _next_scripted(self, request: RecordedRequest) -> ScriptedResponse:
        with self._lock:
            if self._script and self.script_predicate(request):
                if self._script[0].sticky:
                    return self._script[0]
                return self._script.pop(0)
        return text(self.default_text)

    # -- observations ------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (any path, any method), in order."""
        with self._lock:
            return list(self._requests)

    def messages_requests(
        self, *, agent_loop_only: bool = True
    ) -> list[RecordedRequest]:
        """``POST /v1/messages`` requests; by default only agent-loop turns."""
        return [
            r
            for r in self.requests
            if r.is_messages and (not agent_loop_only or self.script_predicate(r))
        ]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)


def _make_handler(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fake-messages-api/1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # keep test output clean; everything is in api.requests

        raw_body: bytes = b""

        def _read_body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0:
                self.raw_body = b""
                return None
            raw = self.raw_body = self.rfile.read(length)
            try:
                return json.loads(raw)
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _forward(self, request: RecordedRequest) -> None:
            """Send the request on to ``api.upstream``; stream the answer back."""
            assert api.upstream is not None
            target = urllib.parse.urlsplit(api.upstream)
            connection_class = (
                http.client.HTTPSConnection
                if target.scheme == "https"
                else http.client.HTTPConnection
            )
            connection = connection_class(
                target.hostname or "", target.port, timeout=600
            )
            hop_by_hop = {"host", "content-length", "connection", "accept-encoding"}
            headers = {
                k: v for k, v in self.headers.items() if k.lower() not in hop_by_hop
            }
            headers["Host"] = target.netloc
            headers["Accept-Encoding"] = "identity"
            try:
                connection.request(
                    self.command,
                    target.path.rstrip("/") + self.path,
                    body=self.raw_body or None,
                    headers=headers,
                )
                upstream = connection.getresponse()
                request.answered_with = f"upstream {upstream.status}"
                self.send_response(upstream.status)
                for key, value in upstream.getheaders():
                    if key.lower() not in {
                        "transfer-encoding",
                        "connection",
                        "content-length",
                    }:
                        self.send_header(key, value)
                # No length: the body ends when this connection closes, so
                # a server-sent event stream is passed on as it arrives.
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                if self.command == "HEAD":
                    return
                while chunk := upstream.read1(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()
            finally:
                connection.close()

        def _recorded(self, body: Any) -> RecordedRequest:
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                received_at=time.time(),
            )
            api._record(request)
            return request

        def _send_json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", _new_id("req"))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _send_sse(
            self,
            response: ScriptedResponse,
            model: str,
            request: RecordedRequest | None = None,
        ) -> None:
            chunks = []
            for event, data in response.sse_events(model):
                chunks.append(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            payload = b"".join(chunks)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", _new_id("req"))
            self.end_headers()
            if response.pause_after_event is None:
                self.wfile.write(payload)
                return
            head = b"".join(chunks[: response.pause_after_event])
            self.wfile.write(head)
            self.wfile.flush()
            if request is not None:
                request.extra["paused_at"] = time.time()
            time.sleep(response.pause_s)
            if request is not None:
                request.extra["resumed_at"] = time.time()
            self.wfile.write(payload[len(head) :])

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            request = self._recorded(self._read_body())
            if api.upstream:
                self._forward(request)
                return
            route = request.route.rstrip("/")
            body = request.body if isinstance(request.body, dict) else {}
            model = str(body.get("model") or MODEL_ECHO_DEFAULT)
            if route == "/v1/messages":
                response = api._next_scripted(request)
                request.answered_with = response.label
                if response.status != 200:
                    error_type = (
                        "invalid_request_error"
                        if response.status == 400
                        else "api_error"
                    )
                    self._send_json(
                        response.status,
                        {
                            "type": "error",
                            "error": {
                                "type": error_type,
                                "message": response.error_message,
                            },
                        },
                    )
                elif body.get("stream"):
                    self._send_sse(response, model, request)
                else:
                    self._send_json(200, response.message(model))
            elif route == "/v1/messages/count_tokens":
                request.answered_with = "count_tokens"
                size = len(json.dumps(body))
                self._send_json(200, {"input_tokens": max(1, size // 4)})
            else:
                request.answered_with = "404"
                self._send_json(
                    404,
                    {
                        "type": "error",
                        "error": {
                            "type": "not_found_error",
                            "message": f"stand-in API has no {request.route}",
                        },
                    },
                )

        def do_GET(self) -> None:  # noqa: N802
            request = self._recorded(self._read_body())
            if api.upstream:
                self._forward(request)
                return
            request.answered_with = "probe"
            self._send_json(200, {})

        do_HEAD = do_GET  # noqa: N815

    return Handler
