"""The tool-fields relay on Amazon Bedrock, Google Vertex AI and Microsoft
Foundry (``CLAUDE_CODE_USE_BEDROCK`` / ``_VERTEX`` / ``_FOUNDRY``): which
platform and route (``detect_platform``), which requests are rewritten and
with which betas (``PlatformForwarder``), and a field the platform refuses
left out from then on. docs/relay.md has the table per platform."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import urllib.parse
from collections.abc import AsyncIterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .evidence import ToolFieldsRelayError, is_set
from .network import (
    bypasses_proxy,
    callers_no_proxy,
    point_cli_through,
    set_no_proxy,
)
from .rewrite import (
    ADVANCED_TOOL_USE_BETA,
    STRUCTURED_OUTPUTS_BETA,
    Rewrite,
    StrictServers,
    members_to_the_end,
    skip_bytes,
    with_betas,
)
from .server import (
    NOT_FORWARDED_REQUEST,
    CliConnection,
    Forwarder,
    Request,
    UndecodableError,
    content_encoding,
    decode_body,
)

logger = logging.getLogger(__name__)

TOOL_EXAMPLES_BETA = "tool-examples-2025-10-29"
"""The beta under which Bedrock and Vertex AI accept ``input_examples``."""

SETTINGS = {
    "bedrock": "CLAUDE_CODE_USE_BEDROCK",
    "vertex": "CLAUDE_CODE_USE_VERTEX",
    "foundry": "CLAUDE_CODE_USE_FOUNDRY",
}
BASE_URL_SETTINGS = {
    "bedrock": "ANTHROPIC_BEDROCK_BASE_URL",
    "vertex": "ANTHROPIC_VERTEX_BASE_URL",
    "foundry": "ANTHROPIC_FOUNDRY_BASE_URL",
}

_ROUTES = {
    "bedrock": re.compile(r"/model/[^/]+/invoke(-with-response-stream)?$"),
    "vertex": re.compile(
        r"/publishers/anthropic/models/[^/:]+:(stream)?[rR]awPredict$"
    ),
    "foundry": re.compile(r"/v1/messages(/count_tokens)?$"),
}

# field -> beta that enables it (None: generally available, no beta).
_BETAS: dict[str, dict[str, str | None]] = {
    "bedrock": {"strict": None, "input_examples": TOOL_EXAMPLES_BETA},
    "vertex": {"strict": None, "input_examples": TOOL_EXAMPLES_BETA},
    "foundry": {
        "strict": STRUCTURED_OUTPUTS_BETA,
        "input_examples": ADVANCED_TOOL_USE_BETA,
    },
}

_TITLES = {"bedrock": "Amazon Bedrock", "vertex": "Vertex AI", "foundry": "Foundry"}

# The rewrite of the exchange running in this task (each exchange is its
# own task), for the answer's check of a refusal.
_current: contextvars.ContextVar[Rewrite | None] = contextvars.ContextVar(
    "tool_fields_relay_platform_rewrite", default=None
)


@dataclass
class Platform:
    """Where and how one CLI process reaches its platform's Messages API."""

    name: str
    upstream: str
    proxy_host: str | None
    """The API host proxy mode terminates; None for a gateway (base URL)."""
    signer: Any = None
    """A ``bedrock.BedrockSigner`` when requests are SigV4-signed."""
    betas: dict[str, str | None] = field(default_factory=dict)

    @property
    def base_url_setting(self) -> str:
        return BASE_URL_SETTINGS[self.name]

    def rewritten(self, method: bytes, route: str) -> bool:
        return method == b"POST" and _ROUTES[self.name].search(route) is not None

    def forwarder(
        self,
        secret: str | None,
        upstream: str,
        fields_by_name: Mapping[str, Mapping[str, Any]],
        pool: Any,
        strict_servers: StrictServers | None = None,
    ) -> PlatformForwarder:
        return PlatformForwarder(
            self, secret, upstream, fields_by_name, pool, strict_servers
        )

    def point_cli(self, relay: Any, env: MutableMapping[str, str]) -> None:
        """Send the CLI described by ``env`` through ``relay`` (running)."""
        if relay.first_party:
            assert self.proxy_host is not None
            point_cli_through(env, relay.proxy_url, relay.ca_bundle)
            api = urllib.parse.urlsplit(f"https://{self.proxy_host}")
            entries = [
                e
                for e in env["NO_PROXY"].split(",")
                if e and not bypasses_proxy(api, e)
            ]
        else:
            env[self.base_url_setting] = relay.url
            entries = callers_no_proxy(env)
        set_no_proxy(env, entries)


def _base_url(env: Mapping[str, str], setting: str) -> str | None:
    value = (env.get(setting) or "").strip()
    if not value:
        return None
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolFieldsRelayError(
            f"tool_fields_relay=True needs {setting} to be an http(s) URL "
            f"(got one with scheme {parts.scheme!r})"
        )
    if parts.username is not None or parts.password is not None:
        raise ToolFieldsRelayError(
            f"tool_fields_relay=True cannot forward credentials written into "
            f"{setting} (user:password@); send them as headers instead"
        )
    return value.rstrip("/")


def detect_platform(env: Mapping[str, str]) -> Platform | None:
    """The platform ``env`` sends the CLI to, or None for the Claude API.

    Raises ``ToolFieldsRelayError`` for a combination the relay cannot
    serve, naming the reason: more than one platform chosen, Foundry with
    neither a resource nor a base URL, Bedrock SigV4 without botocore.
    """
    chosen = [name for name, setting in SETTINGS.items() if is_set(env.get(setting))]
    if not chosen:
        return None
    if len(chosen) > 1:
        raise ToolFieldsRelayError(
            "tool_fields_relay=True cannot tell which platform Claude Code will "
            f"use: {', '.join(SETTINGS[n] for n in chosen)} are all set; set one"
        )
    name = chosen[0]
    base = _base_url(env, BASE_URL_SETTINGS[name])
    host: str | None
    if name == "bedrock":
        region = (
            env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        ).strip()
        host = f"bedrock-runtime.{region}.amazonaws.com"
    elif name == "vertex":
        region = (env.get("CLOUD_ML_REGION") or "us-east5").strip()
        host = (
            "aiplatform.googleapis.com"
            if region == "global"
            else f"{region}-aiplatform.googleapis.com"
        )
        others = sorted(
            {
                v.strip()
                for k, v in env.items()
                if k.startswith("VERTEX_REGION_") and v.strip() and v.strip() != region
            }
        )
        if others and base is None:
            logger.warning(
                "tool_fields_relay serves Vertex AI in %s only: requests Claude "
                "Code sends to %s (VERTEX_REGION_*) pass without strict/"
                "input_examples",
                region,
                ", ".join(others),
            )
    else:
        resource = (env.get("ANTHROPIC_FOUNDRY_RESOURCE") or "").strip()
        if base is None and not resource:
            raise ToolFieldsRelayError(
                "tool_fields_relay=True with CLAUDE_CODE_USE_FOUNDRY needs "
                "ANTHROPIC_FOUNDRY_RESOURCE or ANTHROPIC_FOUNDRY_BASE_URL, as "
                "Claude Code does"
            )
        host = f"{resource}.services.ai.azure.com" if resource else None
    signer = None
    if name == "bedrock" and not (
        is_set(env.get("AWS_BEARER_TOKEN_BEDROCK"))
        or is_set(env.get("CLAUDE_CODE_SKIP_BEDROCK_AUTH"))
    ):
        from .bedrock import BedrockSigner

        signer = BedrockSigner(env)
    if base is not None:
        return Platform(name, base, None, signer, dict(_BETAS[name]))
    assert host is not None
    return Platform(name, f"https://{host}", host, signer, dict(_BETAS[name]))


# --------------------------------------------------------------------------
# The exchange
# --------------------------------------------------------------------------

_REFUSAL_WORDS = (
    "not supported",
    "unsupported",
    "not enabled",
    "not available",
    "not allowed",
    "disabled",
    "not permitted",
    "unknown",
    "unexpected",
    "extraneous",
    "invalid beta",
)
# A platform refusing the feature itself, not a schema strict mode rejects
# ("... is not supported for strict tools" must not switch strict off).
_STRICT_REFUSED = re.compile(
    r"structured[ _-]?outputs?|allowedpartnermodelfeatures"
    r"|(extraneous|unknown|unexpected|extra) (key|field|parameter|input)s?\W{0,4}strict\b"
    r"|\bstrict\W{0,4}(extra inputs are not permitted|is not permitted)"
)
_EXAMPLES_REFUSED = re.compile(r"input_examples|tool[ _-]examples")


def refused_fields(status: int, body: bytes) -> list[str]:
    """The fields a platform's error answer says it does not support."""
    if status not in (400, 403, 422):
        return []
    text = body.decode("utf-8", "replace").lower()
    if not any(word in text for word in _REFUSAL_WORDS):
        return []
    refused = []
    if _STRICT_REFUSED.search(text):
        refused.append("strict")
    if _EXAMPLES_REFUSED.search(text):
        refused.append("input_examples")
    return refused


_ANSWER_READ_BYTES = 1024 * 1024
"""An error answer is read this far decoded to find a refusal in it."""


def answer_text(headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """An answer's body with its content codings undone (Claude Code asks
    for gzip, deflate and br answers, and the platforms use them), at most
    ``_ANSWER_READ_BYTES`` of it; as received when it cannot be decoded."""
    encoding = content_encoding(headers)
    if encoding is None:
        return body
    plain = body
    try:
        for coding in reversed(encoding.split(b", ")):
            plain = decode_body(plain, coding, _ANSWER_READ_BYTES)
    except UndecodableError:
        return body
    return plain


class _Replayed:
    """A response whose body was read, to be streamed back as if it came."""

    def __init__(self, response: Any, body: bytes) -> None:
        self.status = response.status
        self.reason = response.reason
        self.headers = response.headers
        self.extensions = response.extensions
        self._body = body

    @property
    def stream(self) -> AsyncIterator[bytes]:
        async def chunks() -> AsyncIterator[bytes]:
            if self._body:
                yield self._body

        return chunks()


class PlatformForwarder(Forwarder):
    """``Forwarder`` for one platform: its routes, betas, signing, refusals."""

    def __init__(
        self,
        platform: Platform,
        secret: str | None,
        upstream: str,
        fields_by_name: Mapping[str, Mapping[str, Any]],
        pool: Any,
        strict_servers: StrictServers | None = None,
    ) -> None:
        super().__init__(secret, upstream, fields_by_name, pool, strict_servers)
        self.platform = platform
        self.evidence.platform = platform.name  # type: ignore[assignment]
        self.refused: set[str] = set()

    async def exchange(
        self, request: Request, rest: bytes, body: bytes, cli: CliConnection
    ) -> None:
        headers = [
            (name, value)
            for name, value in request.headers
            if name not in NOT_FORWARDED_REQUEST
        ]
        route = rest.split(b"?", 1)[0].rstrip(b"/").decode("latin-1")
        rewrite = Rewrite(body)
        encoding = content_encoding(headers)
        if self.platform.rewritten(request.method, route):
            if encoding is None:
                rewrite = self._rewrite(body)
            else:
                rewrite = self._rewrite_encoded(body, encoding)
        self._report(rewrite)
        relayed: list[str] = []
        if rewrite.modified_tools:
            betas = relayed = [
                beta
                for beta in (
                    self.platform.betas.get(_FIELD_OF_BETA[b]) for b in rewrite.betas
                )
                if beta is not None
            ]
            if self.platform.name == "bedrock" and encoding is None:
                try:
                    rewrite.body = with_body_betas(rewrite.body, betas)
                    betas = []
                except (ValueError, IndexError):
                    pass  # Bedrock also reads the anthropic-beta header
            headers = with_betas(headers, betas)
        signer = self.platform.signer
        # The signature covers the body, the betas and the host: signed
        # again when the relay changed the body or forwards elsewhere.
        if (
            signer is not None
            and signer.signed(headers)
            and (rewrite.modified_tools or self.platform.proxy_host is None)
        ):
            url = b"%s://%s%s" % (self._scheme, self._host, self._url(rest))
            signed = await signer.sign(
                request.method.decode("ascii"),
                url.decode("latin-1"),
                headers,
                bytes(rewrite.body),
            )
            if signed is not None:
                headers = signed
            elif rewrite.modified_tools:
                # Cannot sign again: the request goes as Claude Code sent it.
                logger.warning(
                    "tool_fields_relay cannot sign the Bedrock request again "
                    "(no AWS credentials found); sending it without "
                    "strict/input_examples for tools: %s",
                    ", ".join(rewrite.modified_tools),
                )
                headers = [
                    (n, v) for n, v in request.headers if n not in NOT_FORWARDED_REQUEST
                ]
                rewrite = Rewrite(
                    body,
                    unchanged_because="no AWS credentials to sign it again",
                    lost_tools=rewrite.modified_tools,
                )
                relayed = []
        self.evidence.record(route, rewrite, relayed)
        token = _current.set(rewrite)
        try:
            await self._forward(request.method, rest, headers, rewrite, cli)
        finally:
            _current.reset(token)

    async def _stream_back(self, response: Any, cli: CliConnection) -> None:
        rewrite = _current.get()
        if (
            rewrite is not None
            and rewrite.modified_tools
            and response.status in (400, 403, 422)
        ):
            body = b"".join([chunk async for chunk in response.stream])
            self._refused(
                refused_fields(response.status, answer_text(response.headers, body)),
                rewrite,
            )
            response = _Replayed(response, body)
        await super()._stream_back(response, cli)

    def _refused(self, fields: list[str], rewrite: Rewrite) -> None:
        new = [f for f in fields if f not in self.refused]
        if not new:
            return
        self.refused.update(new)
        logger.warning(
            "%s answered that it does not support %s (tools: %s): tool_fields_relay "
            "stops adding %s for this session and passes the answer through",
            _TITLES[self.platform.name],
            " and ".join(new),
            ", ".join(rewrite.modified_tools),
            "it" if len(new) == 1 else "them",
        )
        self._fields_by_name = {
            name: {k: v for k, v in fields_.items() if k not in self.refused}
            for name, fields_ in self._fields_by_name.items()
            if any(k not in self.refused for k in fields_)
        }
        if "strict" in self.refused:
            self._strict_servers = None


_FIELD_OF_BETA = {
    STRUCTURED_OUTPUTS_BETA: "strict",
    ADVANCED_TOOL_USE_BETA: "input_examples",
}


# --------------------------------------------------------------------------
# Bedrock's body betas
# --------------------------------------------------------------------------

_WS = " \t\n\r"
_BETA_KEY = b'"anthropic_beta"'
_DECODER = json.JSONDecoder()


def _top_members(text: str) -> tuple[int, list[tuple[str, int, int, Any]]]:
    """The index of the top-level object's ``{`` and its members (key, value
    start, value end, value): the whole body read (the fallback)."""
    decoder = json.JSONDecoder()
    i = 0
    while text[i] in _WS:
        i += 1
    if text[i] != "{":
        raise ValueError("not an object")
    opening = i
    i += 1
    members: list[tuple[str, int, int, Any]] = []
    while True:
        while text[i] in _WS:
            i += 1
        if text[i] == "}":
            return opening, members
        key, i = decoder.raw_decode(text, i)
        while text[i] in _WS:
            i += 1
        if text[i] != ":":
            raise ValueError("no colon")
        i += 1
        while text[i] in _WS:
            i += 1
        start = i
        value, i = decoder.raw_decode(text, i)
        members.append((key, start, i, value))
        while text[i] in _WS:
            i += 1
        if text[i] == ",":
            i += 1


def _is_key(body: bytes, found: int) -> int | None:
    """Where the value of the key token ``"anthropic_beta"`` at ``found``
    starts, if it is a key token: ``{`` or ``,`` before it, ``:`` after
    (whitespace between); in JSON such a token is never inside a string."""
    before = found - 1
    while before >= 0 and body[before] in b" \t\n\r":
        before -= 1
    if before < 0 or body[before] not in b"{,":
        return None
    colon = skip_bytes(body, found + len(_BETA_KEY))
    if body[colon : colon + 1] != b":":
        return None
    return skip_bytes(body, colon + 1)


def _top_level_betas(body: bytes, first: int) -> tuple[int, int, Any] | None | bool:
    """The top-level ``anthropic_beta`` member's value (start, end, value),
    found from the body's end as the rewrite finds ``tools``: the last key
    token whose value is followed by members up to the body's last ``}``
    (a nested one closes before it). Reads what follows it, not the
    conversation before it. None when the body has no such key token at all;
    False when it has some but none settles it (then the body is read)."""
    end = len(body)
    seen = False
    while True:
        found = body.rfind(_BETA_KEY, first, end)
        if found == -1:
            return False if seen else None
        end = found
        start = _is_key(body, found)
        if start is None:
            continue
        seen = True
        text = body[start:].decode("utf-8")
        try:
            value, length = _DECODER.raw_decode(text, 0)
        except (ValueError, IndexError):
            continue
        if members_to_the_end(text, length) is None:
            continue
        return start, start + len(text[:length].encode("utf-8")), value


def with_body_betas(body: bytes, betas: list[str]) -> bytes:
    """``body`` with each of ``betas`` in its top-level ``anthropic_beta``
    array (Bedrock's place for betas), once; the rest of the bytes as sent.
    The cost follows what comes after that member (Claude Code's Bedrock
    client writes it last), not the conversation."""
    if not betas:
        return body
    first = skip_bytes(body, 0)
    if body[first : first + 1] != b"{":
        raise ValueError("not an object")
    located = _top_level_betas(body, first)
    if located is False:  # a key token that is not settled: read it all
        return _with_body_betas_read(body, betas)
    if located is None:  # no anthropic_beta anywhere: a new first member
        after = skip_bytes(body, first + 1)
        if after >= len(body):
            raise ValueError("not an object")
        member = b'"anthropic_beta":[' + _joined(betas) + b"]"
        comma = b"" if body[after : after + 1] == b"}" else b","
        return _spliced(body, first + 1, member + comma)
    assert not isinstance(located, bool)
    _, end, value = located
    if not isinstance(value, list):
        raise ValueError("anthropic_beta is not an array")
    missing = [b for b in dict.fromkeys(betas) if b not in value]
    if not missing:
        return body
    close = end - 1  # the array's "]"
    return _spliced(body, close, (b"," if value else b"") + _joined(missing))


def _spliced(body: bytes, at: int, added: bytes) -> bytes:
    """``body`` with ``added`` at ``at``, in one copy."""
    view = memoryview(body)
    return b"".join((view[:at], added, view[at:]))


def _joined(betas: list[str]) -> bytes:
    return ",".join(json.dumps(b) for b in betas).encode()


def _with_body_betas_read(body: bytes, betas: list[str]) -> bytes:
    """``with_body_betas`` by reading the whole body, member by member."""
    text = body.decode("utf-8")
    opening, members = _top_members(text)
    present = [m for m in members if m[0] == "anthropic_beta"]
    if present:
        _, start, end, value = present[-1]
        if not isinstance(value, list):
            raise ValueError("anthropic_beta is not an array")
        missing = [b for b in dict.fromkeys(betas) if b not in value]
        if not missing:
            return body
        close = end - 1  # the array's "]"
        added = ",".join(json.dumps(b) for b in missing)
        return (text[:close] + ("," if value else "") + added + text[close:]).encode()
    member = '"anthropic_beta":[' + ",".join(json.dumps(b) for b in betas) + "]"
    return (
        text[: opening + 1] + member + ("," if members else "") + text[opening + 1 :]
    ).encode()
