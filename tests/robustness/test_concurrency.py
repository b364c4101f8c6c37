"""Concurrency: many calls in flight on one server, listings in between,
and cancellations mid-storm.

Every call is answered once, with its own result (no crossed responses);
every listing carries the strict fields; cancelling in-flight calls leaves
the server serving.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import CliPeer

CALLS = 500
LISTINGS = 50
SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


def echo_server(gate: anyio.Event | None = None) -> Any:
    @tool(
        "echo",
        "Echo n",
        SCHEMA,
        strict=True,
        input_examples=[{"n": 1}],
        extra_fields={"title": "Echo"},
    )
    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        # Yield so that calls genuinely interleave inside the server.
        await anyio.sleep(0)
        if gate is not None and args["n"] < 0:
            await gate.wait()
        return {"content": [{"type": "text", "text": str(args["n"])}]}

    return create_sdk_mcp_server("srv", tools=[echo])


def check_listing(tools: list[dict[str, Any]]) -> None:
    (entry,) = tools
    assert entry["strict"] is True
    assert entry["input_examples"] == [{"n": 1}]
    assert entry["title"] == "Echo"


@pytest.mark.requires_patch("serve-extra-tool-fields")
async def test_concurrent_calls_and_listings_do_not_cross() -> None:
    peer = CliPeer({"srv": echo_server()})
    answers: dict[int, list[str]] = {}
    listings = 0
    try:
        await peer.initialize("srv")

        async def call(n: int) -> None:
            result = await peer.call_tool("srv", "echo", {"n": n})
            answers.setdefault(n, []).append(result["content"][0]["text"])

        async def listing() -> None:
            nonlocal listings
            check_listing(await peer.list_tools("srv"))
            listings += 1

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for n in range(CALLS):
                    tg.start_soon(call, n)
                    if n % (CALLS // LISTINGS) == 0:
                        tg.start_soon(listing)
        assert answers == {n: [str(n)] for n in range(CALLS)}
        assert listings == LISTINGS
    finally:
        await peer.aclose()


@pytest.mark.requires_patch("serve-extra-tool-fields")
async def test_cancelling_in_flight_calls_leaves_the_server_serving() -> None:
    gate = anyio.Event()
    peer = CliPeer({"srv": echo_server(gate)})
    try:
        await peer.initialize("srv")
        stuck_ids = list(range(90_000, 90_050))
        outcomes: dict[int, Any] = {}

        async def stuck_call(request_id: int) -> None:
            outcomes[request_id] = await peer.send(
                "srv",
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"n": -1}},
                },
            )

        async def quick_call(n: int) -> None:
            result = await peer.call_tool("srv", "echo", {"n": n})
            assert result["content"][0]["text"] == str(n)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for request_id in stuck_ids:
                    tg.start_soon(stuck_call, request_id)
                for n in range(100):
                    tg.start_soon(quick_call, n)
                await anyio.sleep(0.05)
                # The CLI gives up on half of the stuck calls; the rest are
                # released afterwards and complete normally.
                for request_id in stuck_ids[::2]:
                    await peer.send(
                        "srv",
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": request_id, "reason": "user"},
                        },
                    )
                await anyio.sleep(0.05)
                gate.set()
        # Every stuck call ended with exactly one answer: a result or an error.
        assert sorted(outcomes) == stuck_ids
        for request_id, response in outcomes.items():
            assert response["id"] == request_id
            assert ("result" in response) != ("error" in response)
        check_listing(await peer.list_tools("srv"))
        result = await peer.call_tool("srv", "echo", {"n": 7})
        assert result["content"][0]["text"] == "7"
    finally:
        await peer.aclose()
