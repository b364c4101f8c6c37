"""The pyperf suite of ``tools/bench.py``, run with the interpreter of one venv.

``python bench_worker.py --only NAME [pyperf options]`` measures one
benchmark of ``SUITE`` with ``pyperf.Runner`` (worker processes,
calibration, metadata); ``tools/bench.py`` calls it for fork and upstream in
turn, with the repository's root on ``PYTHONPATH`` (pyperf passes it to its
workers). Everything goes through ``Query._handle_sdk_mcp_request`` in
process, with the JSON-RPC dicts the CLI would send, by the tests' stand-in
CLI (``tests.lib.cli_peer``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import metadata
from typing import Any

import pyperf  # type: ignore[import-untyped, import-not-found, unused-ignore]

# A strict-compatible schema, so the same tools can be defined either way.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {"type": "number", "description": "First operand"},
        "b": {"type": "number", "description": "Second operand"},
        "note": {"type": "string"},
    },
    "required": ["a", "b", "note"],
    "additionalProperties": False,
}
CALL = {"name": "t_0", "arguments": {"a": 2, "b": 3, "note": "bench"}}
PROTOCOL_VERSION = "2025-06-18"  # the handshake's, as these figures were first taken
TOOLS_PER_SERVER = 10  # for definition cost
STRICT_LIMIT = 20  # strict tools per server
TimeFunc = Callable[[int], float]


def define(number: int, first: int = 0, **options: Any) -> list[Any]:
    """Tools ``t_<first>`` … made with ``@tool``."""
    from claude_agent_sdk import tool

    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    return [
        tool(f"t_{i}", f"Tool number {i}", SCHEMA, **options)(add)
        for i in range(first, first + number)
    ]


class Peer:
    """One initialized SDK server behind the tests' stand-in CLI
    (``tests.lib.cli_peer``), its answers timed as the SDK returns them."""

    def __init__(self, tools: list[Any]) -> None:
        from claude_agent_sdk import create_sdk_mcp_server
        from tests.lib.cli_peer import CliPeer

        server = create_sdk_mcp_server(name="bench", tools=tools)
        self.cli = CliPeer({"bench": server}, PROTOCOL_VERSION, client_version="0")
        self.loop = asyncio.new_event_loop()
        self.run(self.cli.initialize("bench"))

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = await self.cli.handle("bench", self.cli.message(method, params))
        if not response or "result" not in response:
            raise RuntimeError(f"{method} failed: {response!r}")
        result: dict[str, Any] = response["result"]
        return result

    async def call(self, times: int) -> None:
        for _ in range(times):
            result = await self.request("tools/call", CALL)
            if result.get("isError") or result["content"][0]["text"] != "5":
                raise RuntimeError(f"tools/call failed: {result!r}")

    def listing(self, expected: list[dict[str, Any]]) -> TimeFunc:
        listed = self.run(self.request("tools/list", {}))["tools"]
        keys = [{k: entry.get(k) for k in expected[0]} for entry in listed]
        if keys != expected:
            raise RuntimeError(f"unexpected tools/list: {listed[:1]!r}")

        async def lists(loops: int) -> float:
            start = time.perf_counter()
            for _ in range(loops):
                await self.request("tools/list", {})
            return time.perf_counter() - start

        return lambda loops: float(self.run(lists(loops)))

    def calls(self, callers: int) -> TimeFunc:
        """Seconds for ``loops`` calls from each of ``callers`` tasks."""

        async def calls(loops: int) -> float:
            start = time.perf_counter()
            await asyncio.gather(*(self.call(loops) for _ in range(callers)))
            return time.perf_counter() - start

        self.run(calls(20))  # each path once before calibration
        return lambda loops: float(self.run(calls(loops)))


def list_plain(size: int) -> TimeFunc:
    return Peer(define(size)).listing([{"name": f"t_{i}"} for i in range(size)])


def list_strict_examples(size: int) -> TimeFunc:
    """Issue 13 #9: the fork copies these fields into every listing. Strict
    mode allows 20 strict tools per server, so the rest carry examples only."""
    examples = [{"a": 1, "b": 2, "note": "example"}]
    tools = define(STRICT_LIMIT, strict=True, input_examples=examples)
    tools += define(size - STRICT_LIMIT, STRICT_LIMIT, input_examples=examples)
    expected: list[dict[str, Any]] = [
        {"strict": i < STRICT_LIMIT or None, "input_examples": examples}
        for i in range(size)
    ]
    return Peer(tools).listing(expected)


def definitions(**options: Any) -> TimeFunc:
    from claude_agent_sdk import create_sdk_mcp_server

    def time_func(loops: int) -> float:
        start = time.perf_counter()
        for _ in range(loops):
            tools = define(TOOLS_PER_SERVER, **options)
            create_sdk_mcp_server(name="defined", tools=tools)
        return time.perf_counter() - start

    return time_func


# name -> (make the time function, operations per loop)
SUITE: dict[str, tuple[Callable[[], TimeFunc], int]] = {
    **{f"list_{n}": (partial(list_plain, n), 1) for n in (1, 10, 100, 1000)},
    "list_100_strict_examples": (lambda: list_strict_examples(100), 1),
    "call_1": (lambda: Peer(define(1)).calls(1), 1),
    "call_50": (lambda: Peer(define(1)).calls(50), 50),
    "define": (lambda: definitions(), TOOLS_PER_SERVER),
    "define_strict": (lambda: definitions(strict=True), TOOLS_PER_SERVER),
}
FORK_ONLY = {"list_100_strict_examples", "define_strict"}  # upstream has no strict
IMPORT = "import"
NAMES = (*SUITE, IMPORT)


def main() -> None:
    runner = pyperf.Runner(
        add_cmdline_args=lambda cmd, args: cmd.extend(("--only", args.only)),
        metadata={
            f"{dist}_version": metadata.version(dist)
            for dist in ("claude-agent-sdk", "mcp", "pydantic", "jsonschema")
        },
    )
    runner.argparser.add_argument("--only", choices=NAMES, required=True)
    args = runner.parse_args()
    if args.only == IMPORT:
        command = [sys.executable, "-I", "-c", "import claude_agent_sdk"]
        runner.bench_command(IMPORT, command)
        return
    make, inner_loops = SUITE[args.only]
    # Only workers measure, so only they set up.
    time_func = make() if args.worker else lambda loops: 0.0
    runner.bench_time_func(args.only, time_func, inner_loops=inner_loops)


if __name__ == "__main__":
    main()
