"""The relay on the platforms in the field (issue 40, item 5): refusals
recognised in any content coding the platform answers in, Bedrock's body
beta inserted without reading the conversation, and botocore's request
logging never carrying the relay's signed values into the application's
logs."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import urllib.parse
from typing import Any

import pytest

from tests.lib.platform_api import (
    API_KEY,
    AWS_CREDENTIALS,
    BEARER,
    PlatformAPI,
    sigv4_sign,
)
from tests.relay.cases import FIELDS, STRICT, messages_body
from tests.relay.test_platforms import (
    BEDROCK_PATH,
    VERTEX_PATH,
    _bedrock_body,
    _post,
    _relay,
    _vertex_body,
)

try:
    from claude_agent_sdk._internal.relay import platforms
    from claude_agent_sdk._internal.relay.platforms import (
        TOOL_EXAMPLES_BETA,
        with_body_betas,
    )
except ImportError:  # a tree without the patch: these tests must fail
    platforms = None  # type: ignore[assignment]
    with_body_betas = None  # type: ignore[assignment]
    TOOL_EXAMPLES_BETA = "tool-examples-2025-10-29"

pytestmark = pytest.mark.requires_patch("relay-platforms")


# -- refusals in any content coding -----------------------------------------------------


@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate"])
@pytest.mark.parametrize("platform", ["vertex", "foundry"])
async def test_a_compressed_refusal_switches_strict_off_once(
    platform: str, encoding: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Claude Code asks for gzip/br/deflate answers on every request; a
    # refusal that came compressed was not recognised, so strict was added
    # again to every following request, each refused: no query could run.
    with PlatformAPI(platform) as api:
        if platform == "vertex":
            env = {
                "CLAUDE_CODE_USE_VERTEX": "1",
                "ANTHROPIC_VERTEX_BASE_URL": api.base_url + "/v1",
            }
            path = VERTEX_PATH.removeprefix("/v1")
            body = json.dumps(_vertex_body()).encode()
            headers = {"authorization": f"Bearer {BEARER}"}
        else:
            env = {
                "CLAUDE_CODE_USE_FOUNDRY": "1",
                "ANTHROPIC_FOUNDRY_BASE_URL": api.base_url + "/anthropic",
            }
            path = "/v1/messages?beta=true"
            body = json.dumps(messages_body(STRICT)).encode()
            headers = {"x-api-key": API_KEY}
        headers["accept-encoding"] = "gzip, deflate, br, zstd"
        relay = await _relay({STRICT: {"strict": True}}, env)
        try:
            api.refusal = "structured outputs are not enabled for this project"
            api.refusal_encoding = encoding
            with caplog.at_level(logging.WARNING):
                refused = await asyncio.to_thread(_post, relay.url, path, body, headers)
                await asyncio.to_thread(_post, relay.url, path, body, headers)
        finally:
            await relay.stop()
    assert refused[0] == 400
    first, second = api.messages
    assert first.tool(STRICT)["strict"] is True
    assert "strict" not in second.tool(STRICT)
    assert caplog.text.count("does not support strict") == 1


def test_an_answer_in_a_coding_that_cannot_be_read_is_looked_at_as_sent() -> None:
    answer = json.dumps({"message": "structured outputs are not enabled"}).encode()
    assert platforms.answer_text([(b"Content-Encoding", b"zstd")], answer) == answer
    assert platforms.answer_text([], answer) == answer


# -- Bedrock's body beta: the cost follows the tools ------------------------------------


def _bedrock_conversation(turns: int) -> bytes:
    text = 'see {\\"anthropic_beta\\": [1]} and the anthropic_beta key ' * 40
    body = _bedrock_body()
    body["messages"] = [
        {"role": "user", "content": [{"type": "text", "text": text}]}
        for _ in range(turns)
    ]
    body["anthropic_beta"] = ["interleaved-thinking-2025-05-14"]  # last, as sent
    return json.dumps(body, separators=(",", ":")).encode()


def test_bedrock_body_betas_do_not_read_the_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted, not timed: what the JSON decoder is given to read. Every
    # member of a 4 MB body was decoded to insert the beta (+27 to +146 ms
    # at 4 MB); now only what follows the top-level anthropic_beta member.
    read: list[int] = []
    real = json.JSONDecoder.raw_decode

    def counting(self: Any, text: str, index: int = 0) -> tuple[Any, int]:
        value, end = real(self, text, index)
        read.append(end - index)
        return value, end

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    body = _bedrock_conversation(2500)
    assert len(body) > 4_000_000
    changed = with_body_betas(body, [TOOL_EXAMPLES_BETA])
    assert 0 < sum(read) < 200, sum(read)
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", real)
    decoded = json.loads(changed)
    assert decoded["anthropic_beta"] == [
        "interleaved-thinking-2025-05-14",
        TOOL_EXAMPLES_BETA,
    ]
    assert decoded["messages"] == json.loads(body)["messages"]
    assert changed.replace(b',"' + TOOL_EXAMPLES_BETA.encode() + b'"', b"") == body


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":1}',
        b"{}",
        b'{"anthropic_beta": ["i"], "a": 1}',
        b' { "x": {"anthropic_beta": [1]}, "anthropic_beta" : [ "q" ] } ',
        b'{"x": {"anthropic_beta": [1]}}',
        b'{"anthropic_beta":["a"],"x":{"anthropic_beta":["b"]}}',
        b'{"m":"\\"anthropic_beta\\":[]","z":1}',
    ],
)
def test_bedrock_body_betas_land_where_json_parse_reads_them(body: bytes) -> None:
    changed = with_body_betas(body, ["x", "i"])
    decoded = json.loads(changed)
    original = json.loads(body)
    before = original.get("anthropic_beta", [])
    assert decoded.pop("anthropic_beta") == before + [
        b for b in ["x", "i"] if b not in before
    ]
    original.pop("anthropic_beta", None)
    assert decoded == original


# -- botocore's logging carries none of the relay's signed values --------------------------


async def test_botocore_logs_nothing_the_relay_signed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # With the root logger at DEBUG, botocore logged the canonical request
    # of each re-signing: x-amz-security-token and every signed header value
    # (a gateway's key) into the application's logs. The records botocore
    # makes while it signs for the relay are dropped, and only those: the
    # application's own signing (on this thread) still logs.
    gateway_key = "gateway-key-in-a-signed-header"
    with PlatformAPI("bedrock") as api:
        env = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": api.base_url,
            **AWS_CREDENTIALS,
        }
        relay = await _relay(FIELDS, env)
        try:
            body = json.dumps(_bedrock_body()).encode()
            path = urllib.parse.urlsplit(relay.url).path
            headers = sigv4_sign(
                "POST",
                f"http://127.0.0.1:{relay.port}{path}{BEDROCK_PATH}",
                {"content-type": "application/json", "x-gateway-key": gateway_key},
                body,
            )
            with caplog.at_level(logging.DEBUG):
                status, _ = await asyncio.to_thread(
                    _post, relay.url, BEDROCK_PATH, body, headers
                )
                # The application's own signing, on this thread, logs as ever.
                sigv4_sign("POST", "http://app.example/", {}, b"{}")
        finally:
            await relay.stop()
    assert api.failures == [] and status == 200
    (seen,) = api.messages
    assert seen.signature_valid is True
    token = AWS_CREDENTIALS["AWS_SESSION_TOKEN"]
    here = threading.current_thread().name
    leaked = {
        (record.name, record.threadName)
        for record in caplog.records
        if (token in record.getMessage() or gateway_key in record.getMessage())
        and record.threadName != here
    }
    assert leaked == set()
    assert any(
        r.name == "botocore.auth" and r.threadName == here and token in r.getMessage()
        for r in caplog.records
    )
