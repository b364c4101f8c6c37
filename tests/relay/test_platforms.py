"""The relay on Amazon Bedrock, Vertex AI and Foundry (patch
``relay-platforms``), against the loopback stand-in of each platform
(``tests/lib/platform_api.py``), which checks what the real service checks:
the path, the body's shape, the Bearer token or the SigV4 signature
recomputed with the test's credentials."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import socket
import ssl
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from tests.lib.platform_api import (
    API_KEY,
    AWS_CREDENTIALS,
    BEARER,
    PlatformAPI,
    sigv4_sign,
)
from tests.relay.cases import EXAMPLES, FIELDS, STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay.lifecycle import (
        ToolFieldsRelayError,
        prepare_for_cli,
    )
    from claude_agent_sdk._internal.relay.platforms import (
        TOOL_EXAMPLES_BETA,
        detect_platform,
        refused_fields,
        with_body_betas,
    )
except ImportError:  # a tree without the patch: these tests must fail
    ToolFieldsRelayError = ValueError  # type: ignore[assignment, misc]
    prepare_for_cli = None  # type: ignore[assignment]
    detect_platform = None  # type: ignore[assignment]
    refused_fields = None  # type: ignore[assignment]
    with_body_betas = None  # type: ignore[assignment]
    TOOL_EXAMPLES_BETA = "tool-examples-2025-10-29"

pytestmark = pytest.mark.requires_patch("relay-platforms")

STRUCTURED = "structured-outputs-2025-12-15"
ADVANCED = "advanced-tool-use-2025-11-20"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
BEDROCK_PATH = (
    f"/model/{urllib.parse.quote(MODEL, safe='')}/invoke-with-response-stream"
)
VERTEX_PATH = (
    "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
    "claude-sonnet-4-5@20250929:streamRawPredict"
)


def _bedrock_body(**extra: Any) -> dict[str, Any]:
    body = messages_body(STRICT, "mcp__docs__lookup", **extra)
    del body["model"], body["stream"]
    return {"anthropic_version": "bedrock-2023-05-31", **body}


def _vertex_body() -> dict[str, Any]:
    body = messages_body(STRICT, "mcp__docs__lookup")
    del body["model"]
    return {"anthropic_version": "vertex-2023-10-16", **body}


def _post(
    url: str, path: str, body: bytes, headers: dict[str, str]
) -> tuple[int, bytes]:
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname is not None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("POST", parts.path + path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


async def _relay(mcp_fields: dict[str, Any], env: dict[str, str]) -> Any:
    relay = prepare_for_cli({}, env)
    relay.fields_by_name = dict(mcp_fields)
    await relay.start()
    return relay


# -- configuration ----------------------------------------------------------


def _detect(env: dict[str, str]) -> Any:
    platform = detect_platform(env)
    assert platform is not None
    return platform


def test_each_platform_and_route_is_detected() -> None:
    bedrock = _detect(
        {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1", **AWS_CREDENTIALS}
    )
    assert (bedrock.name, bedrock.proxy_host) == (
        "bedrock",
        "bedrock-runtime.eu-west-1.amazonaws.com",
    )
    assert bedrock.signer is not None
    bearer = _detect({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_BEARER_TOKEN_BEDROCK": "t"})
    assert bearer.signer is None
    vertex = _detect({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "global"})
    assert vertex.proxy_host == "aiplatform.googleapis.com"
    foundry = _detect(
        {"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "res"}
    )
    assert foundry.upstream == "https://res.services.ai.azure.com"
    gateway = _detect(
        {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "ANTHROPIC_VERTEX_BASE_URL": "https://gw.example/vertex/",
            "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
        }
    )
    assert (gateway.upstream, gateway.proxy_host) == ("https://gw.example/vertex", None)
    assert detect_platform({"CLAUDE_CODE_USE_VERTEX": "0"}) is None


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        (
            {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1"},
            "CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX are all set",
        ),
        ({"CLAUDE_CODE_USE_FOUNDRY": "1"}, "ANTHROPIC_FOUNDRY_RESOURCE"),
        (
            {"CLAUDE_CODE_USE_VERTEX": "1", "ANTHROPIC_VERTEX_BASE_URL": "ftp://x"},
            "ANTHROPIC_VERTEX_BASE_URL",
        ),
    ],
)
def test_what_cannot_be_served_is_refused_with_the_reason(
    env: dict[str, str], reason: str
) -> None:
    with pytest.raises(ToolFieldsRelayError, match=reason):
        prepare_for_cli({}, env)


def test_sigv4_without_botocore_is_refused_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "botocore" else real(name, *a),
    )
    with pytest.raises(ToolFieldsRelayError, match=r"claude-agent-sdk\[bedrock\]"):
        prepare_for_cli({}, {"CLAUDE_CODE_USE_BEDROCK": "1"})
    # A bearer token needs no signing, so no botocore.
    relay = prepare_for_cli(
        {}, {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_BEARER_TOKEN_BEDROCK": "t"}
    )
    assert relay.platform.signer is None


async def test_proxy_mode_terminates_only_the_platform_api_host() -> None:
    env = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "europe-west1"}
    relay = prepare_for_cli({}, env)
    assert relay.first_party
    await relay.start()
    try:
        relay.point_cli(env)
        assert "ANTHROPIC_VERTEX_BASE_URL" not in env
        assert env["HTTPS_PROXY"] == relay.proxy_url
        host = "europe-west1-aiplatform.googleapis.com"
        context = ssl.create_default_context(cafile=env["NODE_EXTRA_CA_CERTS"])
        credentials = relay.proxy_url.removeprefix("http://").rpartition("@")[0]

        def handshake() -> str:
            import base64

            assert relay.port is not None
            sock = socket.create_connection(("127.0.0.1", relay.port), timeout=10)
            auth = base64.b64encode(credentials.encode()).decode()
            sock.sendall(
                f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n"
                f"Proxy-Authorization: Basic {auth}\r\n\r\n".encode()
            )
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
            with context.wrap_socket(sock, server_hostname=host) as tls:
                certificate = tls.getpeercert()
                assert certificate is not None
                return str(certificate["subject"])

        assert host in await asyncio.to_thread(handshake)
    finally:
        await relay.stop()


def test_gateway_route_points_the_platform_base_url_at_the_relay() -> None:
    env = {
        "CLAUDE_CODE_USE_FOUNDRY": "1",
        "ANTHROPIC_FOUNDRY_BASE_URL": "https://gw.example/anthropic",
        "NO_PROXY": "corp.example",
    }
    relay = prepare_for_cli({}, env)
    assert not relay.first_party
    relay._socket = socket.socket()  # a port, without starting
    relay._socket.bind(("127.0.0.1", 0))
    try:
        relay.point_cli(env)
        assert env["ANTHROPIC_FOUNDRY_BASE_URL"] == relay.url
        assert "ANTHROPIC_BASE_URL" not in env
        assert env["NO_PROXY"] == "corp.example,127.0.0.1,localhost"
    finally:
        relay._socket.close()


def test_bedrock_body_betas_join_the_anthropic_beta_array() -> None:
    assert with_body_betas(b'{"a":1}', ["x"]) == b'{"anthropic_beta":["x"],"a":1}'
    assert (
        with_body_betas(b'{"anthropic_beta": ["i"], "a": 1}', ["x", "i"])
        == b'{"anthropic_beta": ["i","x"], "a": 1}'
    )
    assert (
        with_body_betas(b'{"anthropic_beta":[]}', ["x"]) == b'{"anthropic_beta":["x"]}'
    )
    assert with_body_betas(b'{"a":1}', []) == b'{"a":1}'


@pytest.mark.parametrize(
    ("status", "message", "refused"),
    [
        (400, "Structured outputs are not supported in this workspace", ["strict"]),
        (
            403,
            "structured_outputs is disabled by constraints/vertexai."
            "allowedPartnerModelFeatures",
            ["strict"],
        ),
        (400, "tools.0.custom.strict: Extra inputs are not permitted", ["strict"]),
        (
            400,
            "tools.0.input_examples: Extra inputs are not permitted",
            ["input_examples"],
        ),
        # A schema strict mode rejects is the caller's to fix: strict stays.
        (400, "For 'strict' tools, the keyword 'pattern' is not supported", []),
        (500, "structured outputs are not supported", []),
    ],
)
def test_only_a_refusal_of_the_feature_switches_it_off(
    status: int, message: str, refused: list[str]
) -> None:
    body = json.dumps({"message": message}).encode()
    assert refused_fields(status, body) == refused


# -- requests through the relay ----------------------------------------------


async def test_bedrock_sigv4_request_is_rewritten_and_signed_again() -> None:
    with PlatformAPI("bedrock") as api:
        env = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": api.base_url,
            **AWS_CREDENTIALS,
        }
        relay = await _relay(FIELDS, env)
        try:
            body = json.dumps(
                _bedrock_body(anthropic_beta=["interleaved-thinking-2025-05-14"])
            ).encode()
            relay_host = f"127.0.0.1:{relay.port}"
            headers = sigv4_sign(
                "POST",
                f"http://{relay_host}{urllib.parse.urlsplit(relay.url).path}{BEDROCK_PATH}",
                {
                    "content-type": "application/json",
                    "anthropic-beta": "context-1m-2025-08-07",
                },
                body,
            )
            status, answer = await asyncio.to_thread(
                _post, relay.url, BEDROCK_PATH, body, headers
            )
        finally:
            await relay.stop()
    assert api.failures == [] and status == 200
    assert answer.startswith(b"\x00")  # event-stream frames, passed through
    (seen,) = api.messages
    assert seen.signature_valid is True
    assert seen.tool(STRICT)["strict"] is True
    assert seen.tool(STRICT)["input_examples"] == EXAMPLES
    sent = seen.json()
    # Bedrock's betas go in the body; strict is GA there and takes none.
    assert sent["anthropic_beta"] == [
        "interleaved-thinking-2025-05-14",
        TOOL_EXAMPLES_BETA,
    ]
    assert seen.headers["anthropic-beta"] == "context-1m-2025-08-07"
    assert STRUCTURED not in seen.body.decode() + seen.headers["anthropic-beta"]
    assert AWS_CREDENTIALS["AWS_SECRET_ACCESS_KEY"] not in seen.headers["authorization"]


async def test_bedrock_bearer_request_is_not_signed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with PlatformAPI("bedrock") as api:
        env = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": api.base_url,
            "AWS_BEARER_TOKEN_BEDROCK": BEARER,
        }
        relay = await _relay({STRICT: {"strict": True}}, env)
        try:
            status, _ = await asyncio.to_thread(
                _post,
                relay.url,
                BEDROCK_PATH,
                json.dumps(_bedrock_body()).encode(),
                {"authorization": f"Bearer {BEARER}"},
            )
        finally:
            await relay.stop()
    assert api.failures == [] and status == 200
    (seen,) = api.messages
    assert seen.headers["authorization"] == f"Bearer {BEARER}"
    assert seen.tool(STRICT)["strict"] is True
    assert "anthropic_beta" not in seen.json()
    assert BEARER not in caplog.text


async def test_bedrock_without_credentials_forwards_unchanged_with_a_warning(
    no_aws: None, caplog: pytest.LogCaptureFixture
) -> None:
    with PlatformAPI("bedrock") as api:
        env = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": api.base_url,
        }
        relay = await _relay(FIELDS, env)
        try:
            body = json.dumps(_bedrock_body()).encode()
            headers = sigv4_sign("POST", f"{api.base_url}{BEDROCK_PATH}", {}, body)
            with caplog.at_level(logging.WARNING):
                await asyncio.to_thread(_post, relay.url, BEDROCK_PATH, body, headers)
        finally:
            await relay.stop()
    (seen,) = api.messages
    assert seen.body == body
    assert "cannot sign the Bedrock request again" in caplog.text
    assert STRICT in caplog.text


async def test_vertex_gets_strict_and_the_examples_beta_in_the_header() -> None:
    with PlatformAPI("vertex") as api:
        env = {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "ANTHROPIC_VERTEX_BASE_URL": api.base_url + "/v1",
        }
        relay = await _relay(FIELDS, env)
        try:
            body = json.dumps(_vertex_body()).encode()
            status, answer = await asyncio.to_thread(
                _post,
                relay.url,
                VERTEX_PATH.removeprefix("/v1"),
                body,
                {"authorization": f"Bearer {BEARER}", "anthropic-beta": "oauth-x"},
            )
        finally:
            await relay.stop()
    assert api.failures == [] and status == 200
    assert b"event: message_stop" in answer
    (seen,) = api.messages
    assert seen.headers["authorization"] == f"Bearer {BEARER}"
    assert seen.headers["anthropic-beta"] == f"oauth-x,{TOOL_EXAMPLES_BETA}"
    assert seen.tool(STRICT)["strict"] is True
    assert seen.tool("mcp__docs__lookup") == json.loads(body)["tools"][1]


async def test_foundry_gets_the_first_party_betas_and_stops_after_a_refusal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with PlatformAPI("foundry") as api:
        env = {
            "CLAUDE_CODE_USE_FOUNDRY": "1",
            "ANTHROPIC_FOUNDRY_BASE_URL": api.base_url + "/anthropic",
        }
        relay = await _relay({STRICT: {"strict": True}}, env)
        body = json.dumps(messages_body(STRICT)).encode()
        headers = {"x-api-key": API_KEY}
        try:
            await asyncio.to_thread(
                _post, relay.url, "/v1/messages?beta=true", body, headers
            )
            api.refusal = "Structured outputs are not supported in this workspace"
            with caplog.at_level(logging.WARNING):
                refused = await asyncio.to_thread(
                    _post, relay.url, "/v1/messages?beta=true", body, headers
                )
                # Claude Code retries without strict: the relay adds none.
                await asyncio.to_thread(
                    _post, relay.url, "/v1/messages?beta=true", body, headers
                )
                await asyncio.to_thread(
                    _post, relay.url, "/v1/messages?beta=true", body, headers
                )
        finally:
            await relay.stop()
    assert refused[0] == 400 and b"not supported in this workspace" in refused[1]
    first, second, third, fourth = api.messages
    assert first.headers["x-api-key"] == API_KEY
    assert first.headers["anthropic-beta"] == STRUCTURED
    assert first.tool(STRICT)["strict"] is True
    assert second.tool(STRICT)["strict"] is True
    assert "strict" not in third.tool(STRICT) and "strict" not in fourth.tool(STRICT)
    assert third.body == body
    assert caplog.text.count("does not support strict") == 1


async def test_strict_mcp_servers_work_on_bedrock_too() -> None:
    with PlatformAPI("bedrock") as api:
        env = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": api.base_url,
            **AWS_CREDENTIALS,
        }
        relay = prepare_for_cli(
            {"ext": {"type": "stdio", "command": "x"}}, env, strict_mcp_servers=["ext"]
        )
        await relay.start()
        try:
            body = {
                "anthropic_version": "bedrock-2023-05-31",
                "max_tokens": 8,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [
                    {
                        "name": "mcp__ext__find",
                        "description": "d",
                        "input_schema": {
                            "type": "object",
                            "properties": {"q": {"type": "string"}},
                        },
                    }
                ],
            }
            raw = json.dumps(body).encode()
            headers = sigv4_sign(
                "POST",
                f"http://127.0.0.1:{relay.port}"
                f"{urllib.parse.urlsplit(relay.url).path}{BEDROCK_PATH}",
                {"content-type": "application/json"},
                raw,
            )
            status, _ = await asyncio.to_thread(
                _post, relay.url, BEDROCK_PATH, raw, headers
            )
        finally:
            await relay.stop()
    assert api.failures == [] and status == 200
    (seen,) = api.messages
    assert seen.signature_valid is True
    find = seen.tool("mcp__ext__find")
    assert find["strict"] is True
    assert find["input_schema"]["additionalProperties"] is False
    # strict alone takes no beta on Bedrock.
    assert "anthropic_beta" not in seen.json()


@pytest.fixture(autouse=True)
def _no_process_platform(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
        "HTTPS_PROXY",
        "https_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    yield
