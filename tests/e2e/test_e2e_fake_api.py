"""The stand-in Messages API on its own (no CLI): what it streams and records."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.lib.fake_api import FakeMessagesAPI, broken_tool_use, text, tool_use

pytestmark = pytest.mark.e2e

TOOLS = [{"name": "t", "description": "d", "input_schema": {"type": "object"}}]


def post(url: str, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "k"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["content-type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


def sse(payload: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in payload.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as server:
        yield server


def test_tool_use_is_streamed_as_the_api_streams_it(api: FakeMessagesAPI) -> None:
    tool_input = {"terms": ["payout", "claims"], "jurisdiction": "se"}
    api.script(tool_use("mcp__s__t", tool_input, tool_use_id="toolu_1", chunk_size=5))
    status, content_type, payload = post(
        api.url, "/v1/messages", {"model": "m", "stream": True, "tools": TOOLS}
    )
    assert status == 200 and content_type == "text/event-stream"
    events = sse(payload)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * len(range(0, len(json.dumps(tool_input)), 5)),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[1][1]["content_block"]
    assert start == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "mcp__s__t",
        "input": {},
    }
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert {d["type"] for d in deltas} == {"input_json_delta"}
    assert json.loads("".join(d["partial_json"] for d in deltas)) == tool_input
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_broken_tool_use_streams_the_raw_text_verbatim(api: FakeMessagesAPI) -> None:
    raw = '{"terms": [payout, claims]}'
    api.script(broken_tool_use("mcp__s__t", raw))
    _, _, payload = post(api.url, "/v1/messages", {"stream": True, "tools": TOOLS})
    deltas = [d["delta"] for n, d in sse(payload) if n == "content_block_delta"]
    assert "".join(d["partial_json"] for d in deltas) == raw


def test_side_requests_do_not_consume_the_script(api: FakeMessagesAPI) -> None:
    api.script(text("scripted"))
    status, content_type, payload = post(api.url, "/v1/messages", {"max_tokens": 1})
    assert status == 200 and content_type == "application/json"
    assert json.loads(payload)["content"][0]["text"] == api.default_text
    status, _, payload = post(api.url, "/v1/messages/count_tokens", {"messages": []})
    assert status == 200 and json.loads(payload)["input_tokens"] >= 1
    status, _, payload = post(api.url, "/v1/nothing", {})
    assert status == 404 and json.loads(payload)["type"] == "error"
    with urllib.request.urlopen(api.url + "/", timeout=10) as response:
        assert response.status == 200

    _, _, payload = post(api.url, "/v1/messages", {"stream": True, "tools": TOOLS})
    texts = [d["delta"]["text"] for n, d in sse(payload) if n == "content_block_delta"]
    assert "".join(texts) == "scripted"
    assert api.unused_script == []
    assert [(r.method, r.route, r.answered_with) for r in api.requests] == [
        ("POST", "/v1/messages", "text"),
        ("POST", "/v1/messages/count_tokens", "count_tokens"),
        ("POST", "/v1/nothing", "404"),
        ("GET", "/", "probe"),
        ("POST", "/v1/messages", "text"),
    ]
    assert len(api.messages_requests()) == 1
    assert api.requests[0].headers["x-api-key"] == "k"


def test_recording_proxy_forwards_and_streams_back(api: FakeMessagesAPI) -> None:
    api.script(tool_use("mcp__s__t", {"a": 1}))
    with FakeMessagesAPI(upstream=api.url) as proxy:
        status, content_type, payload = post(
            proxy.url, "/v1/messages?beta=true", {"stream": True, "tools": TOOLS}
        )
        assert status == 200 and content_type == "text/event-stream"
        assert [n for n, _ in sse(payload)][-1] == "message_stop"
        (recorded,) = proxy.requests
        assert recorded.answered_with == "upstream 200"
        assert recorded.tool("t") == TOOLS[0]
    (forwarded,) = api.requests
    assert forwarded.path == "/v1/messages?beta=true"
    assert forwarded.body == recorded.body
    assert forwarded.headers["x-api-key"] == "k"
