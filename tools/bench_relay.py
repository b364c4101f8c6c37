"""Measure what ``tool_fields_relay=True`` costs: relay vs no relay, one run.

Run it with a Python that has this package installed (either mcp major)::

    python tools/bench_relay.py                 # defaults: 400 rounds, 64 MB stream
    python tools/bench_relay.py --json out.json

One loopback stand-in upstream (stdlib, threaded, HTTP/1.1 keep-alive) serves
both paths; a keep-alive ``http.client`` connection plays the CLI. Each round
sends the same request straight to the stand-in and through the relay, in
alternating order, so drift in the machine's speed falls on both alike.

- **Time to first byte** on a ~70 KB ``POST /v1/messages`` request shaped as
  Claude Code sends it (compact JSON, ~40 built-in tools and the SDK tool the
  relay adds ``strict``/``input_examples`` to): from sending the request to
  reading the first byte of the SSE body. Reported as median and p99 per
  path, and the relay's added time (median and p99 of the paired
  differences).
- **Streaming throughput**: the stand-in streams ``--stream-mb`` of SSE
  events as fast as it can; MB/s per path.

Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import platform
import socket
import statistics
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from claude_agent_sdk._internal._mcp_compat import MCP_MAJOR
from claude_agent_sdk._internal.tool_fields_relay import ToolFieldsRelay

SDK_TOOL = "mcp__legal__search"
FIELDS = {
    SDK_TOOL: {
        "strict": True,
        "input_examples": [{"jurisdiction": "se", "terms": ["payout"]}],
    }
}
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
            "input_schema": {
                "type": "object",
                "properties": {
                    "jurisdiction": {"type": "string", "enum": ["se", "no", "dk"]},
                    "terms": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["jurisdiction", "terms"],
                "additionalProperties": False,
            },
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


class StandIn:
    """Answers ``/v1/messages`` with one SSE event, ``/stream`` with many."""

    def __init__(self, stream_bytes: int) -> None:
        stream_events = max(1, stream_bytes // len(EVENT))

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                if self.path.startswith("/events"):
                    # One write per event, as the API streams them.
                    self._start(len(EVENT) * EVENTS)
                    for _ in range(EVENTS):
                        self.wfile.write(EVENT)
                elif self.path.startswith("/stream"):
                    block = EVENT * 64
                    blocks, rest = divmod(stream_events, 64)
                    total = len(block) * blocks + len(EVENT) * rest
                    self._start(total)
                    for _ in range(blocks):
                        self.wfile.write(block)
                    self.wfile.write(EVENT * rest)
                else:
                    self._start(len(FIRST))
                    self.wfile.write(FIRST)

            def _start(self, length: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(length))
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


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

    def stream(self, path: str = "/stream") -> tuple[float, int]:
        start = time.perf_counter()
        self.conn.request("POST", self.prefix + path, b"{}", self.headers)
        response = self.conn.getresponse()
        total = 0
        while chunk := response.read(1 << 16):
            total += len(chunk)
        return time.perf_counter() - start, total


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--stream-mb", type=int, default=64)
    parser.add_argument("--stream-rounds", type=int, default=6)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    stand_in = StandIn(args.stream_mb * 1024 * 1024)
    relay = ToolFieldsRelay(FIELDS, stand_in.url)
    asyncio.run(relay.start())
    try:
        body = request_body()
        clients = {"direct": Client(stand_in.url), "relay": Client(relay.url)}
        for _ in range(args.warmup):
            for client in clients.values():
                client.first_byte(body)
        ttfb: dict[str, list[float]] = {"direct": [], "relay": []}
        added: list[float] = []
        for i in range(args.rounds):
            order = ("direct", "relay") if i % 2 == 0 else ("relay", "direct")
            pair = {name: clients[name].first_byte(body) for name in order}
            for name, value in pair.items():
                ttfb[name].append(value)
            added.append(pair["relay"] - pair["direct"])
        throughput: dict[str, list[float]] = {"direct": [], "relay": []}
        event_rate: dict[str, list[float]] = {"direct": [], "relay": []}
        for i in range(args.stream_rounds):
            order = ("direct", "relay") if i % 2 == 0 else ("relay", "direct")
            for name in order:
                seconds, size = clients[name].stream()
                throughput[name].append(size / seconds / 1e6)
                seconds, size = clients[name].stream("/events")
                event_rate[name].append(EVENTS / seconds)
    finally:
        asyncio.run(relay.stop())
        stand_in.stop()

    import importlib.metadata as md

    figures = {
        "python": platform.python_version(),
        "mcp": md.version("mcp"),
        "http_client": "httpx2" if MCP_MAJOR >= 2 else "httpx",
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
        "stream_mb": args.stream_mb,
        "throughput_MBps": {
            name: statistics.median(values) for name, values in throughput.items()
        },
        "events_per_s": {
            name: statistics.median(values) for name, values in event_rate.items()
        },
    }
    t, a, s = figures["ttfb_ms"], figures["added_ms"], figures["throughput_MBps"]
    print(
        f"Python {figures['python']}, mcp {figures['mcp']} "
        f"({figures['http_client']}), request {len(body) / 1024:.1f} KB, "
        f"{args.rounds} rounds"
    )
    print("| | no relay | relay | added by the relay |")
    print("|---|---|---|---|")
    print(
        f"| first byte, median | {t['direct']['median']:.2f} ms | "
        f"{t['relay']['median']:.2f} ms | {a['median']:.2f} ms |"
    )
    print(
        f"| first byte, p99 | {t['direct']['p99']:.2f} ms | "
        f"{t['relay']['p99']:.2f} ms | {a['p99']:.2f} ms |"
    )
    print(
        f"| SSE throughput ({args.stream_mb} MB, median of {args.stream_rounds}) | "
        f"{s['direct']:.0f} MB/s | {s['relay']:.0f} MB/s | "
        f"{(s['relay'] / s['direct'] - 1) * 100:+.0f} % |"
    )
    e = figures["events_per_s"]
    print(
        f"| SSE events, one write each ({EVENTS}, median of {args.stream_rounds}) | "
        f"{e['direct']:,.0f}/s | {e['relay']:,.0f}/s | "
        f"{(e['relay'] / e['direct'] - 1) * 100:+.0f} % |"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
