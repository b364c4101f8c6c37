"""Measure what ``tool_fields_relay=True`` costs: relay vs no relay, one run.

    tools/nox -s bench_relay                    # both mcp majors, rewrites docs/relay.md
    python -m tools.bench_relay --rounds 300    # one run in this environment

Three processes, as in use: this one plays the CLI (a keep-alive
``http.client`` connection, TCP_NODELAY as Node sets it), a second hosts the
relay as the SDK does (``ToolFieldsRelay`` on its own thread, the main thread
idle), a third is the stand-in upstream the relay's tests use
(``tests/lib/relay_upstream.py``: stdlib, threaded, HTTP/1.1 keep-alive,
recording nothing). Each round sends the same request straight to the
stand-in and through the relay, in alternating order, so drift in the
machine's speed falls on both alike.

- **Time to first byte** on a ~70 KB ``POST /v1/messages`` request shaped as
  Claude Code sends it (compact JSON, ~40 built-in tools and the SDK tool the
  relay adds ``strict``/``input_examples`` to): from sending the request to
  reading the first byte of the SSE body. Median and p99 per path, and the
  relay's added time (median and p99 of the paired differences).
- **Streaming**: SSE events written one at a time as fast as the stand-in
  can (events/s), and raw bulk (MB/s), per path.
- **The relay's CPU time** (its process's user + system time) per request
  and per 100 MB streamed: what it costs the SDK's process, and the rate
  at which it would saturate a core.

Timings are reported, never asserted. ``--json`` keeps the figures;
``--publish`` rewrites the table in docs/relay.md from every
``.cache/bench/relay-*.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

from tests.lib.cases import CASE_SCHEMA, SEARCH, STRICT_FIELDS
from tests.lib.relay_upstream import Upstream
from tools.doc_blocks import write_block

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench"
DOC = ROOT / "docs" / "relay.md"

SDK_TOOL = SEARCH
FIELDS = {SDK_TOOL: STRICT_FIELDS}
EVENT = (
    b"event: content_block_delta\ndata: "
    + json.dumps(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "x" * 200},
        }
    ).encode()
    + b"\n\n"
)
EVENTS = 20000
PACED, PACED_RATE = 2000, 2000.0
FIRST = b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n'


def request_body(target_kb: int = 70) -> bytes:
    """A compact JSON body of about ``target_kb`` KB, shaped like the CLI's."""
    schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run. " * 8},
            "timeout": {"type": "number", "description": "Optional timeout"},
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    tools: list[dict[str, Any]] = [
        {
            "name": f"Builtin{i}",
            "description": "A built-in tool of the CLI. " * 40,
            "input_schema": schema,
        }
        for i in range(40)
    ]
    tools.append(
        {
            "name": SDK_TOOL,
            "description": "Search case law",
            "input_schema": CASE_SCHEMA,
        }
    )
    body: dict[str, Any] = {
        "model": "claude-opus-4-5",
        "max_tokens": 32000,
        "stream": True,
        "system": [{"type": "text", "text": "You are Claude Code. "}],
        "messages": [{"role": "user", "content": "Find Swedish cases."}],
        "tools": tools,
        "metadata": {"user_id": "bench"},
    }
    encoded = json.dumps(body, separators=(",", ":")).encode()
    pad = max(0, target_kb * 1024 - len(encoded))
    body["system"][0]["text"] += "y" * pad
    return json.dumps(body, separators=(",", ":")).encode()


# --------------------------------------------------------------------------
# The two helper processes
# --------------------------------------------------------------------------


def serve_stand_in(stream_bytes: int) -> None:
    """The stand-in upstream (``tests.lib.relay_upstream``) as the bench's
    reference side: ``/v1/messages`` answers one SSE event, ``/events`` many
    small writes, ``/big`` ``stream_bytes`` in large writes, ``/paced`` events
    at a set rate; nothing is recorded."""
    upstream = Upstream(
        reply_body=FIRST,
        reply_type="text/event-stream",
        big=len(EVENT) * max(1, stream_bytes // len(EVENT)),
        block=EVENT * 64,
        event=EVENT,
        event_count=EVENTS,
        paced_count=PACED,
        paced_rate=PACED_RATE,
        record=False,
    ).start()
    print(upstream.url, flush=True)
    sys.stdin.read()  # until the bench closes our stdin


def serve_relay(upstream: str) -> None:
    """Host a relay as the SDK does; answer each ``cpu`` line on stdin with
    this process's CPU seconds so far."""
    from claude_agent_sdk._internal.relay.lifecycle import ToolFieldsRelay

    relay = ToolFieldsRelay(FIELDS, upstream)
    asyncio.run(relay.start())
    print(relay.url, flush=True)
    for _ in sys.stdin:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(usage.ru_utime + usage.ru_stime, flush=True)
    asyncio.run(relay.stop())


class Helper:
    """One helper process, started with ``--role``; its first line is a URL."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.bench_relay", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.url = self.stdout.readline().strip()
        if not self.url:
            raise SystemExit(f"bench helper {args} failed to start")

    def cpu(self) -> float:
        self.stdin.write("cpu\n")
        self.stdin.flush()
        return float(self.stdout.readline())

    def stop(self) -> None:
        self.stdin.close()
        self.process.wait(30)


# --------------------------------------------------------------------------
# The client (the CLI's part)
# --------------------------------------------------------------------------


class Client:
    """A keep-alive connection to one base URL, as the CLI keeps one."""

    def __init__(self, base: str) -> None:
        parts = urllib.parse.urlsplit(base)
        self.prefix = parts.path.rstrip("/")
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port)
        self.conn.connect()
        # As the CLI (Node) does; without it Nagle's algorithm and delayed
        # ACKs add ~40 ms to a request sent as headers and body separately.
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {
            "content-type": "application/json",
            "x-api-key": "sk-ant-bench",
            "anthropic-beta": "claude-code-20250219",
        }

    def first_byte(self, body: bytes) -> float:
        start = time.perf_counter()
        self.conn.request(
            "POST", self.prefix + "/v1/messages?beta=true", body, self.headers
        )
        response = self.conn.getresponse()
        response.read(1)
        elapsed = time.perf_counter() - start
        response.read()
        return elapsed

    def stream(self, path: str) -> tuple[float, int]:
        start = time.perf_counter()
        self.conn.request("POST", self.prefix + path, b"{}", self.headers)
        response = self.conn.getresponse()
        total = 0
        while chunk := response.read(1 << 16):
            total += len(chunk)
        return time.perf_counter() - start, total

    def paced(self) -> tuple[float, list[float]]:
        """Events/s delivered, and each event's delay from write to read."""
        self.conn.request("POST", self.prefix + "/paced", b"{}", self.headers)
        response = self.conn.getresponse()
        delays: list[float] = []
        start = time.monotonic()
        while line := response.readline():
            if line.startswith(b"data: "):
                delays.append(time.monotonic() - float(line[6:]))
        response.read()  # ends the response, so the connection is reused
        return len(delays) / (time.monotonic() - start), delays


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import importlib.metadata as md

    stand_in = Helper("--role", "stand-in", "--stream-mb", str(args.stream_mb))
    relay = Helper("--role", "relay", "--upstream", stand_in.url)
    try:
        body = request_body()
        clients = {"direct": Client(stand_in.url), "relay": Client(relay.url)}
        for _ in range(args.warmup):
            for client in clients.values():
                client.first_byte(body)
        ttfb: dict[str, list[float]] = {"direct": [], "relay": []}
        added: list[float] = []
        cpu_before = relay.cpu()
        for i in range(args.rounds):
            order = ("direct", "relay") if i % 2 == 0 else ("relay", "direct")
            pair = {name: clients[name].first_byte(body) for name in order}
            for name, value in pair.items():
                ttfb[name].append(value)
            added.append(pair["relay"] - pair["direct"])
        cpu_per_request = (relay.cpu() - cpu_before) / args.rounds
        throughput: dict[str, list[float]] = {"direct": [], "relay": []}
        event_rate: dict[str, list[float]] = {"direct": [], "relay": []}
        paced_rate: dict[str, list[float]] = {"direct": [], "relay": []}
        paced_delays: dict[str, list[float]] = {"direct": [], "relay": []}
        cpu_stream = 0.0
        streamed = 0
        for i in range(args.stream_rounds):
            order = ("direct", "relay") if i % 2 == 0 else ("relay", "direct")
            for name in order:
                cpu_before = relay.cpu()
                seconds, size = clients[name].stream("/big")
                if name == "relay":
                    cpu_stream += relay.cpu() - cpu_before
                    streamed += size
                throughput[name].append(size / seconds / 1e6)
                seconds, size = clients[name].stream("/events")
                event_rate[name].append(EVENTS / seconds)
                rate, delays = clients[name].paced()
                paced_rate[name].append(rate)
                paced_delays[name].extend(delays)
    finally:
        relay.stop()
        stand_in.stop()
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "mcp": md.version("mcp"),
        "http_client": "httpx2" if md.version("mcp").startswith("2") else "httpx",
        "date": time.strftime("%Y-%m-%d"),
        "request_bytes": len(body),
        "rounds": args.rounds,
        "ttfb_ms": {
            name: {
                "median": statistics.median(values) * 1e3,
                "p99": percentile(values, 99) * 1e3,
            }
            for name, values in ttfb.items()
        },
        "added_ms": {
            "median": statistics.median(added) * 1e3,
            "p99": percentile(added, 99) * 1e3,
        },
        "relay_cpu_ms_per_request": cpu_per_request * 1e3,
        "stream_mb": args.stream_mb,
        "stream_rounds": args.stream_rounds,
        "throughput_MBps": {n: statistics.median(v) for n, v in throughput.items()},
        "events_per_s": {n: statistics.median(v) for n, v in event_rate.items()},
        "relay_cpu_s_per_100MB": cpu_stream / streamed * 1e8,
        "paced": {"events": PACED, "rate": PACED_RATE},
        "paced_events_per_s": {n: statistics.median(v) for n, v in paced_rate.items()},
        "paced_delay_ms": {
            name: {
                "median": statistics.median(values) * 1e3,
                "p99": percentile(values, 99) * 1e3,
            }
            for name, values in paced_delays.items()
        },
    }


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def render(runs: list[dict[str, Any]]) -> str:
    def row(label: str, cell: Any) -> str:
        return f"| {label} |" + "".join(f" {cell(run)} |" for run in runs)

    def pair(d: dict[str, float], fmt: str) -> str:
        change = (d["relay"] / d["direct"] - 1) * 100
        return f"{d['relay']:{fmt}} vs {d['direct']:{fmt}} ({change:+.0f} %)"

    first = runs[0]
    lines = [
        "| | " + " | ".join(f"mcp {r['mcp']} ({r['http_client']})" for r in runs) + " |",
        "|---|" + "---|" * len(runs),
        row("added to first byte, median", lambda r: f"{r['added_ms']['median']:.2f} ms"),
        row("added to first byte, p99", lambda r: f"{r['added_ms']['p99']:.2f} ms"),
        row("first byte, relay vs none, median",
            lambda r: f"{r['ttfb_ms']['relay']['median']:.2f} vs "
            f"{r['ttfb_ms']['direct']['median']:.2f} ms"),
        row("relay CPU per request", lambda r: f"{r['relay_cpu_ms_per_request']:.2f} ms"),
        row(f"SSE at {PACED_RATE:,.0f} events/s, delivered events/s",
            lambda r: pair(r["paced_events_per_s"], ",.0f")),
        row("SSE at that rate, delay per event, median / p99",
            lambda r: f"{r['paced_delay_ms']['relay']['median']:.2f} / "
            f"{r['paced_delay_ms']['relay']['p99']:.2f} ms vs "
            f"{r['paced_delay_ms']['direct']['median']:.2f} / "
            f"{r['paced_delay_ms']['direct']['p99']:.2f} ms"),
        row(f"SSE as fast as possible, one write per event ({EVENTS:,} events), events/s",
            lambda r: pair(r["events_per_s"], ",.0f")),
        row(f"bulk stream as fast as possible ({first['stream_mb']} MB), MB/s",
            lambda r: pair(r["throughput_MBps"], ".0f")),
        row("relay CPU per 100 MB streamed (its capacity on one core)",
            lambda r: f"{r['relay_cpu_s_per_100MB']:.2f} s "
            f"(~{100 / r['relay_cpu_s_per_100MB']:.0f} MB/s)"),
    ]  # fmt: skip
    intro = (
        f"Measured {first['date']} with `tools/nox -s bench_relay` "
        f"(`tools/bench_relay.py`): Python {first['python']}, {first['cpus']} CPUs, "
        f"{first['rounds']} interleaved rounds of a {first['request_bytes'] / 1024:.0f} KB "
        "request, the CLI, the SDK's process and the stand-in upstream each a "
        'process of its own on loopback. "vs" compares relay with no relay in '
        "the same run."
    )
    return "\n".join([intro, "", *lines]) + "\n"


def publish() -> None:
    runs = [
        json.loads(path.read_text("utf-8"))
        for path in sorted(CACHE.glob("relay-*.json"))
    ]
    if not runs:
        raise SystemExit(f"no {CACHE}/relay-*.json to publish")
    table = render(runs)
    print(table)
    write_block(DOC, "relay-bench", table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--role", choices=["stand-in", "relay"], help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--stream-mb", type=int, default=64)
    parser.add_argument("--stream-rounds", type=int, default=6)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--publish", action="store_true",
                        help="rewrite docs/relay.md's table from .cache/bench/relay-*.json")  # fmt: skip
    args = parser.parse_args()
    if args.role == "stand-in":
        return serve_stand_in(args.stream_mb * 1024 * 1024)
    if args.role == "relay":
        return serve_relay(args.upstream)
    figures = measure(args)
    print(render([figures]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", "utf-8")
    if args.publish:
        publish()


if __name__ == "__main__":
    main()
