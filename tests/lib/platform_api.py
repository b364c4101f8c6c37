"""A loopback stand-in for Claude on Amazon Bedrock, Vertex AI or Foundry.

It checks what the real service would check, and answers in the
platform's own framing:

- **Bedrock**: the path (``/model/<id>/invoke[-with-response-stream]``),
  ``anthropic_version: bedrock-2023-05-31``, no ``model`` in the body; a
  SigV4 ``Authorization`` is verified with the test's credentials
  (``AWS_CREDENTIALS``: the signature recomputed by botocore over the
  signed headers, and ``x-amz-content-sha256`` against the body), a Bearer
  against ``BEARER``; answers in AWS event-stream frames (``chunk`` events
  whose ``bytes`` are the Messages stream's events).
- **Vertex**: ``.../publishers/anthropic/models/<id>:streamRawPredict`` (or
  ``:rawPredict``), ``anthropic_version: vertex-2023-10-16``, the OAuth
  Bearer; answers server-sent events.
- **Foundry**: ``.../v1/messages``, ``x-api-key`` or the Bearer; answers
  server-sent events.

``PlatformProxy`` plays the platform's public endpoint: an HTTP proxy (the
caller's ``HTTPS_PROXY``) that terminates ``CONNECT <api host>:443`` with a
test CA's certificate (trusted through ``NODE_EXTRA_CA_CERTS``) and serves
the stand-in on the decrypted connection; every other host is refused, as
the tests run offline.

A check that fails is a 403 in the platform's shape, and is recorded in
``failures``; every request is recorded in ``seen``. ``refusal`` makes the
next Messages request a 400 with that message (what a platform answers when
structured outputs are not enabled), in the content coding
``refusal_encoding`` when set (``gzip``, ``deflate``, ``br``: Claude Code
asks for compressed answers).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import re
import struct
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.lib.fake_api import ScriptedResponse
from tests.lib.fake_api import text as text_response
from tests.lib.loopback import Loopback, Served, terminate_tls

AWS_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "AKIDPLATFORMSTANDIN",
    "AWS_SECRET_ACCESS_KEY": "platform-stand-in-secret-key-never-logged",
    "AWS_SESSION_TOKEN": "platform-stand-in-session-token",
}
BEARER = "platform-stand-in-bearer-never-logged"
API_KEY = "platform-stand-in-api-key"

_PATHS = {
    "bedrock": re.compile(r"/model/[^/]+/invoke(-with-response-stream)?$"),
    "vertex": re.compile(
        r"/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/[^/:]+"
        r":(stream)?[rR]awPredict$"
    ),
    "foundry": re.compile(r"/v1/messages(/count_tokens)?$"),
}
_VERSIONS = {"bedrock": "bedrock-2023-05-31", "vertex": "vertex-2023-10-16"}


@dataclass
class PlatformSeen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    signature_valid: bool | None = None

    def json(self) -> Any:
        return json.loads(self.body)

    def tool(self, name: str) -> dict[str, Any]:
        return next(t for t in self.json()["tools"] if t["name"] == name)


def sigv4_sign(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    credentials: dict[str, str] = AWS_CREDENTIALS,
    region: str = "us-east-1",
) -> dict[str, str]:
    """``headers`` signed as Claude Code signs a Bedrock request (service
    ``bedrock``, ``x-amz-content-sha256`` signed)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
    request.headers["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
    SigV4Auth(
        Credentials(
            credentials["AWS_ACCESS_KEY_ID"],
            credentials["AWS_SECRET_ACCESS_KEY"],
            credentials.get("AWS_SESSION_TOKEN"),
        ),
        "bedrock",
        region,
    ).add_auth(request)
    return dict(request.headers.items())


def verify_sigv4(
    method: str, host: str, path: str, headers: dict[str, str], body: bytes
) -> bool:
    """Whether the request's SigV4 signature is the one the test's
    credentials give, over its signed headers and body."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    lower = {k.lower(): v for k, v in headers.items()}
    auth = lower.get("authorization", "")
    match = re.match(
        r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,"
        r"\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]+)$",
        auth,
    )
    if match is None or match.group(1) != AWS_CREDENTIALS["AWS_ACCESS_KEY_ID"]:
        return False
    if lower.get("x-amz-content-sha256") != hashlib.sha256(body).hexdigest():
        return False
    signed = match.group(5).split(";")
    request = AWSRequest(
        method=method,
        url=f"http://{host}{path}",
        data=body,
        headers={name: lower[name] for name in signed if name in lower},
    )
    request.context["timestamp"] = lower.get("x-amz-date", "")
    signer = SigV4Auth(
        Credentials(
            AWS_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            AWS_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            AWS_CREDENTIALS["AWS_SESSION_TOKEN"],
        ),
        match.group(4),
        match.group(3),
    )
    if ";".join(sorted(signer.headers_to_sign(request))) != match.group(5):
        return False
    string_to_sign = signer.string_to_sign(request, signer.canonical_request(request))
    return bool(signer.signature(string_to_sign, request) == match.group(6))


def event_stream_frame(payload: bytes, headers: dict[str, str]) -> bytes:
    """One AWS event-stream message (string headers only)."""
    head = b"".join(
        bytes([len(name)])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def messages_events(text: str = "ok") -> list[dict[str, Any]]:
    """The events of a short Messages stream answering ``text``."""
    return [
        {
            "type": "message_start",
            "message": {
                "id": "msg_platform",
                "type": "message",
                "role": "assistant",
                "model": "claude-stand-in",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]


@dataclass
class PlatformAPI(Served):
    """The stand-in for ``platform`` (``bedrock``, ``vertex``, ``foundry``)."""

    platform: str
    seen: list[PlatformSeen] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    refusal: str | None = None
    refusal_encoding: str | None = None
    events: list[dict[str, Any]] = field(default_factory=messages_events)
    script: list[ScriptedResponse] = field(default_factory=list)
    """Replies to the agent-loop requests (those with ``tools``), in order,
    as ``fake_api`` scripts them; other requests get ``events``."""
    require_auth: bool = True
    """False for a gateway route whose CLI sends no credentials
    (``CLAUDE_CODE_SKIP_*_AUTH``)."""

    def _loopback(self) -> Loopback:
        return Loopback(_handler(self), f"platform-api-{self.platform}")

    @property
    def messages(self) -> list[PlatformSeen]:
        return [
            s for s in self.seen if _PATHS[self.platform].search(s.path.split("?")[0])
        ]

    def check(self, seen: PlatformSeen, host: str) -> str | None:
        """Why the real service would refuse ``seen``, or None."""
        if not _PATHS[self.platform].search(seen.path.split("?")[0]):
            return f"path {seen.path!r} is not a {self.platform} Messages path"
        headers = {k.lower(): v for k, v in seen.headers.items()}
        auth = headers.get("authorization", "")
        if self.platform == "bedrock" and auth.startswith("AWS4-HMAC-SHA256 "):
            seen.signature_valid = verify_sigv4(
                seen.method, host, seen.path, seen.headers, seen.body
            )
            if not seen.signature_valid:
                return "The request signature we calculated does not match"
        elif auth:
            if auth != f"Bearer {BEARER}":
                return "bad bearer token"
        elif self.require_auth and headers.get("x-api-key") != API_KEY:
            return "no credentials"
        body = seen.json()
        version = _VERSIONS.get(self.platform)
        if version is not None and (
            body.get("anthropic_version") != version or "model" in body
        ):
            return f"not a {self.platform} body"
        return None


def _handler(api: PlatformAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            seen = PlatformSeen("POST", self.path, dict(self.headers.items()), body)
            api.seen.append(seen)
            failure = api.check(seen, self.headers.get("host", ""))
            if failure is not None:
                api.failures.append(failure)
                self._json(403, {"message": failure})
                return
            if api.refusal is not None:
                message, api.refusal = api.refusal, None
                error = {"type": "invalid_request_error", "message": message}
                self._json(
                    400,
                    {"message": message}
                    if api.platform == "bedrock"
                    else {"type": "error", "error": error},
                    api.refusal_encoding,
                )
                return
            body_json = seen.json()
            scripted = None
            if body_json.get("tools") and api.script:
                scripted = api.script.pop(0)
            path = self.path.split("?")[0]
            if api.platform == "foundry" and path.endswith("/count_tokens"):
                self._json(200, {"input_tokens": max(1, len(body) // 4)})
                return
            streaming = (
                path.endswith("-with-response-stream")
                if api.platform == "bedrock"
                else bool(body_json.get("stream"))
            )
            if scripted is not None and scripted.status != 200:
                self._json(scripted.status, {"message": scripted.error_message})
                return
            if not streaming:
                reply = scripted or text_response("ok")
                self._json(200, reply.message("claude-stand-in"))
                return
            events = (
                [data for _, data in scripted.sse_events("claude-stand-in")]
                if scripted is not None
                else api.events
            )
            if api.platform == "bedrock":
                data = b"".join(
                    event_stream_frame(
                        json.dumps(
                            {"bytes": base64.b64encode(json.dumps(e).encode()).decode()}
                        ).encode(),
                        {
                            ":event-type": "chunk",
                            ":content-type": "application/json",
                            ":message-type": "event",
                        },
                    )
                    for e in events
                )
                content_type = "application/vnd.amazon.eventstream"
            else:
                data = b"".join(
                    f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                    for e in events
                )
                content_type = "text/event-stream"
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            api.seen.append(
                PlatformSeen("GET", self.path, dict(self.headers.items()), b"")
            )
            self._json(200, {})

        def _json(self, status: int, value: Any, encoding: str | None = None) -> None:
            data = json.dumps(value).encode()
            if encoding is not None:
                data = _encoded(data, encoding)
            self.send_response(status)
            self.send_header("content-type", "application/json")
            if encoding is not None:
                self.send_header("content-encoding", encoding)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _encoded(data: bytes, encoding: str) -> bytes:
    if encoding == "br":
        brotli = importlib.import_module("brotli")

        return bytes(brotli.compress(data))
    wbits = {"gzip": 31, "deflate": 15}[encoding]
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


@dataclass
class PlatformProxy(Served):
    """``api`` as the public endpoint ``host`` behind an intercepting proxy."""

    api: PlatformAPI
    host: str
    directory: Path
    connects: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from tests.lib.tls import host_certificate

        self.directory.mkdir(parents=True, exist_ok=True)
        self.certificate = host_certificate(self.directory, self.host)

    def _loopback(self) -> Loopback:
        return Loopback(_proxy_handler(self), f"platform-proxy-{self.api.platform}")

    def env(self) -> dict[str, str]:
        """The caller's settings to reach the public endpoint through it."""
        return {
            "HTTPS_PROXY": self.base_url,
            "https_proxy": self.base_url,
            "NODE_EXTRA_CA_CERTS": str(self.certificate.ca),
        }


def _proxy_handler(proxy: PlatformProxy) -> type[BaseHTTPRequestHandler]:
    api_handler = _handler(proxy.api)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_CONNECT(self) -> None:  # noqa: N802
            proxy.connects.append(self.path)
            if self.path != f"{proxy.host}:443":
                self.send_error(403, "the platform stand-in is offline")
                self.close_connection = True
                return
            terminate_tls(self, proxy.certificate.server_context, api_handler)

    return Handler
