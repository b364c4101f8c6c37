"""Benchmark worker, run inside a venv that has one claude-agent-sdk installed.

Started by ``tools/bench.py`` (never imported by it) with the venv's own
interpreter. It stays alive for the whole benchmark and takes one command
per line on stdin, answering each with one JSON line on stdout, so the
driver can alternate short measurements between fork and upstream processes
and let drift in the machine's speed fall on both alike. It only measures
and returns raw samples (seconds); statistics and comparisons are the
driver's job, so fork and upstream are measured by exactly the same code.

Everything goes through ``Query._handle_sdk_mcp_request`` in process, the
way upstream's ``tests/test_sdk_mcp_integration.py`` drives SDK servers: a
``Query`` over an ``AsyncMock`` transport receives the JSON-RPC dicts the
CLI would send. The one difference between installations this file looks
for is whether ``tool`` accepts the fork's additions (``strict``,
``input_examples``, ``extra_fields``); the figures that need them are
measured only where it does.

Run as ``bench_worker.py ROLE``: ``serve`` (tools/list and tools/call),
``extra`` (tools/list of tools carrying the fork's fields; fork only) or
``define`` (definition cost and import time). Commands (JSON objects, key
``op``):
  {"op": "info"}
  {"op": "list", "server": S, "samples": K}     seconds per tools/list
                      (S: "list1" ... "list1000"; "list1000" or "extra1000"
                       for the extra role)
  {"op": "latency", "samples": K}               seconds per tools/call
  {"op": "throughput", "callers": C, "calls": K}  calls per second
  {"op": "define", "tools": N, "strict": bool}  seconds per tool defined
  {"op": "import", "samples": K}                seconds per fresh import
  {"op": "quit"}
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from itertools import count
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock, Mock

LIST_SIZES = (1, 10, 100, 1000)
# Fork only ("extra" role): a server whose tools all carry the fork's fields.
EXTRA_SIZE = 1000
EXTRA_SERVER = f"extra{EXTRA_SIZE}"
# Strict mode accepts at most 20 strict tools per request, and the fork
# refuses a server that holds more.
STRICT_TOOL_LIMIT = 20
TOOLS_PER_DEFINED_SERVER = 10

INITIALIZE_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0.0.0"},
}

# A strict-compatible schema (no numeric or length bounds, closed object), so
# the same tools can be defined with and without ``strict=True``.
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
CALL_PARAMS = {"name": "add_0", "arguments": {"a": 2, "b": 3, "note": "bench"}}

IMPORT_PROBE = (
    "import time\n"
    "t = time.perf_counter()\n"
    "import claude_agent_sdk\n"
    "print(time.perf_counter() - t)\n"
)


def now() -> float:
    return time.perf_counter()


# The fork's additions to ``tool`` (patch 0001); upstream has none of them.
FORK_TOOL_FIELDS = ("strict", "input_examples", "extra_fields")


def supports(parameter: str) -> bool:
    from claude_agent_sdk import tool

    return parameter in inspect.signature(tool).parameters


def define_tools(
    number: int, prefix: str, *, strict: bool = False, extra: bool = False
) -> list[Any]:
    """``number`` tools made with ``@tool``, each with its own handler.

    ``extra`` gives each tool the fields the fork adds (an input example and
    an extra top-level field, plus ``strict`` for as many tools as strict
    mode allows in one request), which is what makes the fork's tools/list
    attach fields after mcp has serialized the result.
    """
    from claude_agent_sdk import tool

    options: dict[str, Any] = {"strict": True} if strict else {}
    tools = []
    for index in range(number):

        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

        if extra:
            options = {
                "input_examples": [{"a": 1, "b": index, "note": "example"}],
                "extra_fields": {"title": f"Tool {index}"},
            }
            if index < STRICT_TOOL_LIMIT:
                options["strict"] = True
        decorate = tool(f"{prefix}_{index}", f"Tool number {index}", SCHEMA, **options)
        tools.append(decorate(handler))
    return tools


class Bench:
    """One Query serving the servers of one role, initialized once and
    reused by every command.

    "serve": one server per tools/list size plus a one-tool server for
    calls. "extra" (the fork only): a plain 1000-tool server and one whose
    1000 tools carry every field the fork adds, side by side in one process
    so that the two lists are compared in the same heap; kept apart from
    "serve" so that the fork's serving process holds what upstream's holds.
    """

    def __init__(self, role: str) -> None:
        from claude_agent_sdk import create_sdk_mcp_server
        from claude_agent_sdk._internal.query import Query

        sizes = LIST_SIZES if role == "serve" else (EXTRA_SIZE,)
        servers = {
            f"list{size}": create_sdk_mcp_server(
                name=f"list{size}", tools=define_tools(size, "t")
            )
            for size in sizes
        }
        if role == "serve":
            servers["calc"] = create_sdk_mcp_server(
                name="calc", tools=define_tools(1, "add")
            )
        else:
            servers[EXTRA_SERVER] = create_sdk_mcp_server(
                name=EXTRA_SERVER, tools=define_tools(EXTRA_SIZE, "x", extra=True)
            )
        transport = AsyncMock()
        transport.is_ready = Mock(return_value=True)
        self.query = Query(
            transport=transport,
            is_streaming_mode=True,
            sdk_mcp_servers={name: cfg["instance"] for name, cfg in servers.items()},
        )
        self.sizes = sizes
        self.servers = list(servers)
        self._ids = count(0)

    async def request(
        self, server: str, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        message["params"] = params
        response = await self.query._handle_sdk_mcp_request(server, message)
        if not response or "result" not in response:
            raise RuntimeError(f"{method} on {server!r} failed: {response!r}")
        result: dict[str, Any] = response["result"]
        return result

    async def start(self) -> None:
        for server in self.servers:
            await self.request(server, "initialize", INITIALIZE_PARAMS)
            await self.query._handle_sdk_mcp_request(
                server, {"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
        # Check once that every server answers as the benchmark expects, and
        # warm up each path before anything is timed.
        for size in self.sizes:
            for _ in range(2):
                listed = await self.request(f"list{size}", "tools/list", {})
            if len(listed["tools"]) != size:
                raise RuntimeError(f"listed {len(listed['tools'])} of {size} tools")
        if EXTRA_SERVER in self.servers:
            for _ in range(2):
                listed = await self.request(EXTRA_SERVER, "tools/list", {})
            served = [
                (entry.get("strict"), entry.get("title"), len(entry["input_examples"]))
                for entry in listed["tools"]
            ]
            expected = [
                (True if i < STRICT_TOOL_LIMIT else None, f"Tool {i}", 1)
                for i in range(EXTRA_SIZE)
            ]
            if served != expected:
                raise RuntimeError("the fork's extra fields are not on tools/list")
        if "calc" in self.servers:
            for _ in range(20):
                await self.call()

    async def close(self) -> None:
        await self.query.close()
        self.query.close_receive_stream()

    async def call(self) -> None:
        result = await self.request("calc", "tools/call", CALL_PARAMS)
        if result.get("isError") or result["content"][0]["text"] != "5":
            raise RuntimeError(f"tools/call failed: {result!r}")

    async def timed(
        self, action: Callable[[], Awaitable[Any]], samples: int
    ) -> list[float]:
        gc.collect()
        timings = []
        for _ in range(samples):
            start = now()
            await action()
            timings.append(now() - start)
        return timings

    async def list(self, server: str, samples: int) -> list[float]:
        return await self.timed(lambda: self.request(server, "tools/list", {}), samples)

    async def latency(self, samples: int) -> list[float]:
        return await self.timed(self.call, samples)

    async def throughput(self, callers: int, calls: int) -> float:
        """Calls per second with ``callers`` concurrent tasks sharing ``calls``."""
        per_caller = max(1, calls // callers)

        async def caller() -> None:
            for _ in range(per_caller):
                await self.call()

        gc.collect()
        start = now()
        await asyncio.gather(*(caller() for _ in range(callers)))
        return callers * per_caller / (now() - start)


def definition_cost(number: int, strict: bool) -> float:
    """Seconds per tool for ``@tool`` plus ``create_sdk_mcp_server``.

    The tools go into servers of ``TOOLS_PER_DEFINED_SERVER`` each, strict or
    not, so that the strict figure stays within strict mode's per-request
    limit and both figures include the same share of server construction.
    """
    from claude_agent_sdk import create_sdk_mcp_server

    gc.collect()
    start = now()
    tools = define_tools(number, "d", strict=strict)
    for first in range(0, number, TOOLS_PER_DEFINED_SERVER):
        create_sdk_mcp_server(
            name=f"defined{first}",
            tools=tools[first : first + TOOLS_PER_DEFINED_SERVER],
        )
    return (now() - start) / number


def import_times(samples: int) -> list[float]:
    """Seconds to ``import claude_agent_sdk`` in a fresh interpreter each time
    (the interpreter's own start-up not included)."""
    times = []
    with tempfile.TemporaryDirectory() as cwd:
        for _ in range(samples):
            done = subprocess.run(
                [sys.executable, "-I", "-c", IMPORT_PROBE],
                cwd=cwd,
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(float(done.stdout.strip().splitlines()[-1]))
    return times


def info() -> dict[str, Any]:
    import claude_agent_sdk

    return {
        "sdk_version": claude_agent_sdk.__version__,
        "sdk_dir": str(Path(claude_agent_sdk.__file__ or ".").parent),
        "mcp_version": metadata.version("mcp"),
        "jsonschema_version": metadata.version("jsonschema"),
        "pydantic_version": metadata.version("pydantic"),
        "python": sys.version.split()[0],
        "has_strict": supports("strict"),
        "has_fork_fields": all(supports(field) for field in FORK_TOOL_FIELDS),
    }


def main() -> None:
    # A "define" worker never serves or calls anything, so definition cost is
    # measured in a heap that only ever held definitions, the same on both
    # sides, whatever the serving path of either installation leaves behind.
    role = sys.argv[1] if len(sys.argv) > 1 else "serve"
    if role not in ("serve", "extra", "define"):
        raise SystemExit(f"unknown role {role!r}")
    loop = asyncio.new_event_loop()
    bench = None
    if role != "define":
        bench = Bench(role)
        loop.run_until_complete(bench.start())
    else:
        definition_cost(10, strict=False)  # warm-up
    reply = sys.stdout
    # Replies go over the original stdout only; anything the SDK or mcp might
    # print goes to stderr instead of corrupting the protocol.
    sys.stdout = sys.stderr
    reply.write(json.dumps({"ready": True}) + "\n")
    reply.flush()
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        answer: Any
        if op == "quit":
            break
        if op == "info":
            answer = info()
        elif op == "define" and role == "define":
            answer = definition_cost(command["tools"], command["strict"])
        elif op == "import" and role == "define":
            answer = import_times(command["samples"])
        elif bench is None:
            raise ValueError(f"{op!r} is not a command for a {role} worker")
        elif op == "list":
            answer = loop.run_until_complete(
                bench.list(command["server"], command["samples"])
            )
        elif op == "latency":
            answer = loop.run_until_complete(bench.latency(command["samples"]))
        elif op == "throughput":
            answer = loop.run_until_complete(
                bench.throughput(command["callers"], command["calls"])
            )
        else:
            raise ValueError(f"{op!r} is not a command for a {role} worker")
        reply.write(json.dumps({"result": answer}) + "\n")
        reply.flush()
    if bench is not None:
        loop.run_until_complete(bench.close())
    loop.close()


if __name__ == "__main__":
    main()
