"""Malformed JSON-RPC storm against a server with strict tools.

Hundreds of dicts with random, missing or mistyped ``jsonrpc``, ``id``,
``method`` and ``params`` go to ``_handle_sdk_mcp_request``: no exception
escapes, nothing hangs, every request-shaped message gets a JSON-RPC response
or error carrying its id, and afterwards the server still lists (with its
strict fields intact) and calls tools correctly.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import CliPeer

MESSAGES = 400
METHODS = [
    "initialize", "notifications/initialized", "tools/list", "tools/call",
    "ping", "resources/list", "prompts/list", "notifications/cancelled",
    "completion/complete", "logging/setLevel", "no/such/method", "",
]  # fmt: skip
SCHEMA = {
    "type": "object",
    "properties": {"terms": {"type": "array", "items": {"type": "string"}}},
    "required": ["terms"],
    "additionalProperties": False,
}


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["none", "bool", "int", "float", "str", "list", "dict"]
    kind = rng.choice(kinds if depth < 2 else kinds[:5])
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 2**31, -(2**63), rng.randint(-999, 999)])
    if kind == "float":
        return rng.choice([0.5, -1e308, 1e-9])
    if kind == "str":
        return rng.choice(["", "x", "tools/call", "ünïcødé", "2.0", "\x00"])
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {
        rng.choice(["name", "arguments", "terms", "requestId", "cursor", "k"]): (
            random_value(rng, depth + 1)
        )
        for _ in range(rng.randint(0, 3))
    }


def random_message(rng: random.Random, index: int) -> dict[str, Any]:
    message: dict[str, Any] = {}
    if rng.random() < 0.8:
        message["jsonrpc"] = "2.0" if rng.random() < 0.7 else random_value(rng)
    if rng.random() < 0.7:
        # Unique ids for the well-formed ones, so each response is traceable.
        message["id"] = 10_000 + index if rng.random() < 0.7 else random_value(rng)
    if rng.random() < 0.9:
        message["method"] = (
            rng.choice(METHODS) if rng.random() < 0.8 else random_value(rng)
        )
    if rng.random() < 0.7:
        params = random_value(rng)
        if message.get("method") == "tools/call" and rng.random() < 0.5:
            params = {"name": "search", "arguments": random_value(rng)}
        message["params"] = params
    if rng.random() < 0.1:
        message[rng.choice(["result", "error"])] = random_value(rng)
    return message


def request_shaped(message: dict[str, Any]) -> bool:
    """A request by JSON-RPC's rules. A message that also carries ``result`` or
    ``error`` is response-shaped too; mcp reads those as responses, which
    expect no reply, so they only have to pass without an exception."""
    return (
        message.get("jsonrpc") == "2.0"
        and "result" not in message
        and "error" not in message
        and isinstance(message.get("id"), (str, int))
        and not isinstance(message.get("id"), bool)
        and isinstance(message.get("method"), str)
    )


@pytest.mark.requires_patch("serve-extra-tool-fields")
@pytest.mark.parametrize("seed", [1, 2])
async def test_storm_leaves_server_answering(seed: int) -> None:
    calls: list[dict[str, Any]] = []

    @tool(
        "search",
        "Search",
        SCHEMA,
        strict=True,
        input_examples=[{"terms": ["payout"]}],
        extra_fields={"x-tier": 2},
    )
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": ",".join(args["terms"])}]}

    peer = CliPeer({"srv": create_sdk_mcp_server("srv", tools=[search])})
    rng = random.Random(seed)
    try:
        await peer.initialize("srv")
        unanswered = []
        for index in range(MESSAGES):
            message = random_message(rng, index)
            with anyio.fail_after(5):
                response = await peer.send("srv", message)
            answered = (
                isinstance(response, dict)
                and response.get("jsonrpc") == "2.0"
                and response.get("id") == message.get("id")
                and ("result" in response) != ("error" in response)
            )
            if request_shaped(message) and not answered:
                unanswered.append((message, response))
        assert not unanswered, unanswered[:5]

        # Whatever the storm did (including re-initializing), the server serves.
        await peer.initialize("srv")
        (listed,) = await peer.list_tools("srv")
        assert listed["strict"] is True
        assert listed["input_examples"] == [{"terms": ["payout"]}]
        assert listed["x-tier"] == 2
        calls.clear()
        result = await peer.call_tool("srv", "search", {"terms": ["a", "b"]})
        assert result["content"] == [{"type": "text", "text": "a,b"}]
        assert calls == [{"terms": ["a", "b"]}]
    finally:
        await peer.aclose()
