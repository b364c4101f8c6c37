"""Measure what ``tool_fields_relay=True`` costs: relay vs no relay, one run.

    tools/nox -s bench_relay                    # both mcp majors, rewrites docs/relay.md
    python -m tools.bench_relay --rounds 100    # one run in this environment

Proxy mode, TLS both ways, as Claude Code uses the relay when the caller has
no ``ANTHROPIC_BASE_URL``: the client ``CONNECT``s ``api.anthropic.com:443``
through the relay with its credentials and speaks TLS with it (the session
CA's certificate), and the relay speaks TLS with the upstream. Without the
relay the client speaks TLS with the upstream directly. Three kinds of
process, as in use: this one plays Claude Code (keep-alive ``http.client``
connections, TCP_NODELAY as Node sets it), one relay process per declared
tool count hosts a relay as the SDK does (``ToolFieldsRelay`` on its own
thread, the main thread idle), and one is the stand-in upstream the relay's
tests use (``tests/lib/relay_upstream.py``: stdlib, threaded, HTTP/1.1
keep-alive over TLS, recording nothing). Each round sends the same request
straight to the stand-in and through the relay, in alternating order, so
drift in the machine's speed falls on both alike.

- **Requests** (``POST /v1/messages?beta=true``) shaped as Claude Code sends
  them (``request_body``: its key order, ``messages`` first and ``tools``
  after ``system``, 21 built-in tools, the SDK tools after them, a
  conversation that names the SDK tools too), of 70 KB, 500 KB and 2 MB,
  carrying 1, 20 and 200 SDK tools, each declaring ``input_examples`` and
  the first 20 ``strict`` (strict mode's per-request cap): every SDK tool is
  rewritten. Per cell: the relay's CPU time per request (its process's user
  + system time over the cell's rounds), and the time to the response's
  first byte, relay and none, and the relay's added time (median and p90 of
  the paired differences).
- **Where the relay's time goes**, per cell: TLS both ways by itself
  (``tls_alone``: OpenSSL decrypting and encrypting the body, in this
  process), the rewrite by itself (``rewrite_alone``), and the same hop
  without TLS, as a control measured in the same run: a base-URL relay
  over plain HTTP to a plain-HTTP stand-in, against that stand-in directly
  (its CPU per request and added first byte, interleaved the same way).
- **Streaming** (200 SDK tools declared): SSE events at a set rate
  (delivered rate and delay per event), as fast as possible (events/s), and
  raw bulk (MB/s), per path, and the relay's CPU per 100 MB streamed.

Timings are reported, never asserted. ``--json`` keeps the figures;
``--publish`` rewrites the tables in docs/relay.md and its summary sentence
on the relay's cost from every ``.cache/bench/relay-*.json`` (``--render-only``
does only that).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import http.client
import json
import os
import socket
import ssl
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, cast

from tests.lib.cases import CASE_SCHEMA, GOOD_EXAMPLE
from tests.lib.relay_upstream import Upstream
from tests.lib.tls import loopback_certificate
from tools.bench_harness import (
    CACHE,
    DOCS,
    Helper,
    answer_cpu,
    environment,
    interleave,
    percentile,
    publish_block,
    save_json,
    span,
    table,
)

DOC = DOCS / "relay.md"

SIZES_KB = (70, 500, 2048)
TOOL_COUNTS = (1, 20, 200)
STRICT_CAP = 20
"""SDK tools declared ``strict`` at most (strict mode's per-request cap: the
SDK refuses more at start); every SDK tool declares ``input_examples``."""
BUILTINS = 21
"""Claude Code 2.1.332's built-in tools in a query's first request."""

# The tests' case-law search tool: its closed schema and an example.
SDK_SCHEMA = CASE_SCHEMA
EXAMPLE = GOOD_EXAMPLE
BUILTIN_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The command to run"},
        "timeout": {"type": "number", "description": "Optional timeout in ms"},
    },
    "required": ["command"],
    "additionalProperties": False,
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
PACED, PACED_RATE = 2000, 2000.0
PATHS = ("direct", "relay")  # to the stand-in upstream: straight, through the relay
FIRST = b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n'


def sdk_names(count: int) -> list[str]:
    return [f"mcp__docs__tool_{i}" for i in range(count)]


def declared_fields(count: int) -> dict[str, dict[str, Any]]:
    """What ``count`` SDK tools declare: examples each, ``strict`` the first 20."""
    return {
        name: {"strict": True, "input_examples": [EXAMPLE]}
        if i < STRICT_CAP
        else {"input_examples": [EXAMPLE]}
        for i, name in enumerate(sdk_names(count))
    }


def request_body(size: int, tools: int) -> bytes:
    """A compact JSON body of about ``size`` bytes in Claude Code's key order
    (measured with 2.1.332: model, messages, system, tools, metadata,
    max_tokens, thinking, context_management, output_config, stream).

    Built-in tools take what they take in Claude Code's first request
    (~61 KB for 21), less where the SDK tools leave no room in 70 KB; the
    conversation fills the rest, and names the SDK tools (text, tool_use,
    tool_result), as a long session does.
    """
    names = sdk_names(tools)
    sdk = [
        {"name": name, "description": "Search case law", "input_schema": SDK_SCHEMA}
        for name in names
    ]
    sdk_bytes = len(json.dumps(sdk, separators=(",", ":")))
    builtin_bytes = max(4000, min(61000, int(0.85 * size) - sdk_bytes))
    per_tool = max(40, builtin_bytes // BUILTINS - 330)
    builtins = [
        {
            "name": f"Builtin{i}",
            "description": ("A built-in tool of Claude Code. " * (per_tool // 31 + 1))[
                :per_tool
            ],
            "input_schema": BUILTIN_SCHEMA,
        }
        for i in range(BUILTINS)
    ]
    # The first message names the turn (``_turns`` numbers them).
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Turn 00000."}]
    body: dict[str, Any] = {
        "model": "claude-opus-4-5",
        "messages": messages,
        "system": [
            {
                "type": "text",
                "text": "x-anthropic-billing-header: cc_version=2.1.332.bf4; "
                "cc_entrypoint=sdk-py; cch=0a9f3;",
            },
            {
                "type": "text",
                "text": "You are a Claude agent.",
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "tools": builtins + sdk,
        "metadata": {"user_id": '{"device_id":"bench","session_id":"bench"}'},
        "max_tokens": 128000,
        "thinking": {"type": "adaptive"},
        "context_management": {
            "edits": [{"type": "clear_thinking_20251015", "keep": "all"}]
        },
        "output_config": {"effort": "medium"},
        "stream": True,
    }
    length = len(json.dumps(body, separators=(",", ":")))
    turn = 0
    while length < size:
        name = names[turn % len(names)]
        exchange = [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f'Use {name}, and mind the "tools": key. '
                        + "Lorem ipsum dolor sit amet. " * 30,
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{turn}",
                        "name": name,
                        "input": EXAMPLE,
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{turn}",
                        "content": "2 cases: NJA 2019 s. 123. " * 20,
                    }
                ],
            },
        ]
        added = len(json.dumps(exchange, separators=(",", ":")))
        if length + added > size:
            messages.append(
                {"role": "user", "content": "y" * max(1, size - length - 32)}
            )
            break
        messages.extend(exchange)
        length += added + 1
        turn += 1
    return json.dumps(body, separators=(",", ":")).encode()


# --------------------------------------------------------------------------
# The helper processes
# --------------------------------------------------------------------------


def serve_stand_in(directory: str, stream_bytes: int, plain: bool = False) -> None:
    """The stand-in upstream (``tests.lib.relay_upstream``) over TLS (plain
    HTTP with ``plain``): ``/v1/messages`` answers one SSE event, ``/events``
    many small writes, ``/big`` ``stream_bytes`` in large writes, ``/paced``
    events at a set rate; nothing is recorded."""
    certificate = loopback_certificate(Path(directory))
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
        tls=None if plain else certificate.server_context(),
    ).start()
    print(upstream.url, flush=True)
    sys.stdin.read()  # until the bench closes our stdin


def serve_relay(upstream: str, ca: str, tools: int) -> None:
    """Host a relay as the SDK does, for ``tools`` declared SDK tools: in
    proxy mode for an ``https`` upstream (print its proxy URL and CA
    bundle), in base-URL mode for an ``http`` one (print its URL); then
    answer each ``cpu`` line on stdin with this process's CPU seconds so
    far."""
    from claude_agent_sdk._internal.relay.lifecycle import ToolFieldsRelay

    if upstream.startswith("http://"):
        relay = ToolFieldsRelay(declared_fields(tools), upstream)
        asyncio.run(relay.start())
        print(relay.url, flush=True)
    else:
        relay = ToolFieldsRelay(
            declared_fields(tools),
            upstream,
            verify=ssl.create_default_context(cafile=ca),
            first_party=True,
        )
        asyncio.run(relay.start())
        print(relay.proxy_url, relay.ca_bundle, flush=True)
    answer_cpu()
    asyncio.run(relay.stop())


def helper(*args: str) -> Helper:
    """One of this bench's helper processes, ``--role`` as ``args`` say."""
    return Helper("tools.bench_relay", *args)


# --------------------------------------------------------------------------
# The client (Claude Code's part)
# --------------------------------------------------------------------------


class Client:
    """A keep-alive TLS connection to the upstream, direct or through the
    relay as Claude Code's HTTPS proxy, as Claude Code keeps one."""

    def __init__(self, upstream: str, ca: str, proxy: str | None = None) -> None:
        target = urllib.parse.urlsplit(upstream)
        self.prefix = ""
        if target.scheme == "http":  # plain HTTP: the stand-in, or a base-URL relay
            self.prefix = target.path.rstrip("/")
            self.conn = http.client.HTTPConnection(target.hostname or "", target.port)
        elif proxy is None:
            context = ssl.create_default_context(cafile=ca)
            self.conn = http.client.HTTPSConnection(
                target.hostname or "", target.port, context=context
            )
        else:  # CONNECT api.anthropic.com:443 through the relay, its CA trusted
            parts = urllib.parse.urlsplit(proxy)
            credentials = f"{parts.username}:{parts.password}".encode()
            context = ssl.create_default_context(cafile=ca)
            self.conn = http.client.HTTPSConnection(
                parts.hostname or "", parts.port, context=context
            )
            self.conn.set_tunnel(
                "api.anthropic.com",
                443,
                headers={
                    "Proxy-Authorization": "Basic "
                    + base64.b64encode(credentials).decode()
                },
            )
        self.conn.connect()
        # As Claude Code (Node) does; without it Nagle's algorithm and
        # delayed ACKs add ~40 ms to a request sent as headers and body.
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
        self.conn.request("POST", path, b"{}", self.headers)
        response = self.conn.getresponse()
        total = 0
        while chunk := response.read(1 << 16):
            total += len(chunk)
        return time.perf_counter() - start, total

    def paced(self) -> tuple[float, list[float]]:
        """Events/s delivered, and each event's delay from write to read."""
        self.conn.request("POST", "/paced", b"{}", self.headers)
        response = self.conn.getresponse()
        delays: list[float] = []
        start = time.monotonic()
        while line := response.readline():
            if line.startswith(b"data: "):
                delays.append(time.monotonic() - float(line[6:]))
        response.read()  # ends the response, so the connection is reused
        return len(delays) / (time.monotonic() - start), delays


def _rounds(args: argparse.Namespace, size_kb: int) -> int:
    # The same bytes per cell, roughly, at least 30 rounds.
    return max(30, int(args.rounds) * 70 // size_kb)


def _turns(body: bytes, count: int) -> list[bytes]:
    """``count`` bodies like ``body`` whose conversations differ (as a
    session's turns do) and whose tools are the same: what the relay
    remembers between requests is the tools array, never the body."""
    at = body.index(b"Turn 00000.") + 5
    return [body[:at] + b"%05d" % i + body[at + 5 :] for i in range(count)]


def tls_alone(size_kb: int, context_dir: str, rounds: int = 9) -> float:
    """What TLS both ways costs by itself, in this process, median of
    ``rounds``: a body of ``size_kb`` decrypted (Claude Code's leg) and
    encrypted again (the upstream's), through memory BIOs and the same
    OpenSSL as the relay's, in 256 KiB writes as the relay writes."""
    server = loopback_certificate(Path(context_dir)).server_context()
    client = ssl.create_default_context(cafile=str(Path(context_dir) / "loopback.pem"))
    bios = [ssl.MemoryBIO() for _ in range(4)]
    near = client.wrap_bio(bios[0], bios[1], server_hostname="127.0.0.1")
    far = server.wrap_bio(bios[2], bios[3], server_side=True)
    for _ in range(10):  # the handshake
        for end in (near, far):
            with contextlib.suppress(ssl.SSLWantReadError):
                end.do_handshake()
        bios[2].write(bios[1].read())
        bios[0].write(bios[3].read())
    body = bytes(size_kb * 1024)
    into = memoryview(bytearray(len(body)))
    times = []
    for _ in range(rounds):
        for start in range(0, len(body), 262144):  # the client's, not timed
            near.write(body[start : start + 262144])
        sealed = bios[1].read()
        began = time.thread_time()
        bios[2].write(sealed)  # Claude Code's leg, decrypted
        got = 0
        while got < len(body):
            # With a buffer, read() returns the count (typeshed says bytes).
            got += cast(int, far.read(len(body) - got, into[got:]))
        for start in range(0, len(body), 262144):  # the upstream's, encrypted
            far.write(into[start : start + 262144])
        bios[3].read()
        times.append(time.thread_time() - began)
    return statistics.median(times) * 1e3


def sockets_alone(size_kb: int, rounds: int = 9) -> float:
    """What the kernel's loopback TCP costs the relay by itself, in this
    process's thread, median of ``rounds``: a body of ``size_kb`` received
    on one connection (from a thread playing Claude Code) and sent on
    another (to a thread reading it), in 256 KiB reads and one send, with
    no Python between them. With ``tls_alone`` it is what any relay that
    ends TLS spends on a request before any work of its own."""
    body = bytes(size_kb * 1024)
    with socket.create_server(("127.0.0.1", 0)) as server:
        ends = []
        for _ in range(2):
            near = socket.create_connection(server.getsockname())
            far, _ = server.accept()
            for sock in (near, far):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            ends.append((near, far))
    (client, inbound), (outbound, upstream) = ends

    def send() -> None:
        for _ in range(rounds + 1):
            client.sendall(body)

    def sink() -> None:
        into = memoryview(bytearray(1 << 20))
        for _ in range(rounds + 1):
            got = 0
            while got < len(body):
                got += upstream.recv_into(into[: min(len(into), len(body) - got)])

    helpers = [threading.Thread(target=send), threading.Thread(target=sink)]
    for helper in helpers:
        helper.start()
    into = memoryview(bytearray(len(body)))
    times = []
    try:
        for _ in range(rounds + 1):
            began = time.thread_time()
            got = 0
            while got < len(body):
                got += inbound.recv_into(into[got : min(len(body), got + 262144)])
            outbound.sendall(into)
            times.append(time.thread_time() - began)
    finally:
        for helper in helpers:
            helper.join()
        for sock in (client, inbound, outbound, upstream):
            sock.close()
    return statistics.median(times[1:]) * 1e3


def rewrite_alone(size_kb: int, tools: int, rounds: int = 9) -> dict[str, float]:
    """The rewrite's own CPU time (this process's thread), median of
    ``rounds``: on a request whose tools array the relay has not seen
    (the first of a session, or after tool search added a tool; the
    declared values encoded when the relay started, as it does), and on
    the turns after it (the same tools, another conversation)."""
    from claude_agent_sdk._internal.relay.rewrite import RewriteMemo, rewrite_body

    bodies = _turns(request_body(size_kb * 1024, tools), rounds + 1)
    fields = declared_fields(tools)
    first, later = [], []
    for body in bodies[:rounds]:
        memo = RewriteMemo()
        memo.prepare(fields)  # as the relay's, when it starts
        started = time.thread_time()
        rewrite_body(body, fields, memo=memo)
        first.append(time.thread_time() - started)
    memo = RewriteMemo()
    rewrite_body(bodies[-1], fields, memo=memo)
    for body in bodies[:rounds]:
        started = time.thread_time()
        rewrite_body(body, fields, memo=memo)
        later.append(time.thread_time() - started)
    return {
        "first_ms": statistics.median(first) * 1e3,
        "later_ms": statistics.median(later) * 1e3,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import importlib.metadata as md

    load_start = os.getloadavg()[0]
    directory = tempfile.mkdtemp(prefix="bench-relay-")
    stand_in = helper(
        "--role", "stand-in", "--dir", directory, "--stream-mb", str(args.stream_mb)
    )
    ca = str(Path(directory) / "loopback.pem")
    tls_dir = tempfile.mkdtemp(prefix="bench-relay-tls-")
    plain_in = helper(  # a directory of its own: it writes a certificate too
        "--role", "stand-in", "--dir", tempfile.mkdtemp(prefix="bench-relay-plain-"),
        "--stream-mb", "1", "--plain",
    )  # fmt: skip
    relays: dict[int, Helper] = {}
    plain_relays: dict[int, Helper] = {}
    cells: list[dict[str, Any]] = []
    try:
        direct = Client(stand_in.line, ca)
        plain_direct = Client(plain_in.line, ca)
        for tools in TOOL_COUNTS:
            relays[tools] = helper(
                "--role", "relay", "--upstream", stand_in.line, "--ca", ca,
                "--tools", str(tools),
            )  # fmt: skip
            plain_relays[tools] = helper(
                "--role", "relay", "--upstream", plain_in.line, "--ca", ca,
                "--tools", str(tools),
            )  # fmt: skip
        for tools, relay in relays.items():
            proxy, bundle = relay.line.split(" ", 1)
            through = Client(stand_in.line, bundle, proxy)
            clients = {"direct": direct, "relay": through}
            plain: dict[str, Client] = {"direct": plain_direct}
            for size_kb in SIZES_KB:
                rounds = _rounds(args, size_kb)
                bodies = _turns(request_body(size_kb * 1024, tools), rounds)
                ttfb, added, cpu = _paired(args, clients, relay, bodies)
                if "relay" not in plain:
                    # Connected when it is used, as Claude Code does: the
                    # relay closes a connection silent for 2 s that has not
                    # authenticated (its admission rule).
                    plain["relay"] = Client(plain_relays[tools].line, ca)
                _, plain_added, plain_cpu = _paired(
                    args, plain, plain_relays[tools], bodies
                )
                cells.append(
                    {
                        "size_kb": size_kb,
                        "request_bytes": len(bodies[0]),
                        "rewrite_ms": rewrite_alone(size_kb, tools),
                        "tls_ms": tls_alone(size_kb, tls_dir),
                        "sockets_ms": sockets_alone(size_kb),
                        "tools": tools,
                        "rounds": rounds,
                        "relay_cpu_ms": cpu * 1e3,
                        "ttfb_ms": {
                            name: statistics.median(values) * 1e3
                            for name, values in ttfb.items()
                        },
                        "added_ms": {
                            "median": statistics.median(added) * 1e3,
                            "p90": percentile(added, 90) * 1e3,
                        },
                        "plain_relay_cpu_ms": plain_cpu * 1e3,
                        "plain_added_ms": {
                            "median": statistics.median(plain_added) * 1e3,
                            "p90": percentile(plain_added, 90) * 1e3,
                        },
                    }
                )
                print(_cell_line(cells[-1]), flush=True)
            plain["relay"].conn.close()
            if tools != TOOL_COUNTS[-1]:
                through.conn.close()
        streaming = _streaming(args, clients, relays[TOOL_COUNTS[-1]])
    finally:
        for process in [*relays.values(), *plain_relays.values()]:
            process.stop()
        stand_in.stop()
        plain_in.stop()
    machine = environment()
    return {
        "python": machine["python"],
        "cpus": machine["cpus"],
        "mcp": md.version("mcp"),
        "http_client": "httpx2" if md.version("mcp").startswith("2") else "httpx",
        "date": machine["date"],
        "load_start": load_start,
        "load": machine["load"],
        "rounds_70kb": args.rounds,
        "cells": cells,
        **streaming,
    }


def _paired(
    args: argparse.Namespace,
    clients: dict[str, Client],
    relay: Helper,
    bodies: list[bytes],
) -> tuple[dict[str, list[float]], list[float], float]:
    """Each body straight and through ``relay``, in alternating order: the
    first-byte times per path, the paired differences relay - direct, and
    the relay's CPU seconds per request."""
    for body in bodies[: args.warmup]:
        for client in clients.values():
            client.first_byte(body)
    cpu_before = relay.cpu()
    ttfb = interleave(
        len(bodies), PATHS, lambda name, i: clients[name].first_byte(bodies[i])
    )
    added = [r - d for r, d in zip(ttfb["relay"], ttfb["direct"], strict=True)]
    return ttfb, added, (relay.cpu() - cpu_before) / len(bodies)


def _cell_line(cell: dict[str, Any]) -> str:
    return (
        f"{cell['size_kb']:>5} KB {cell['tools']:>3} tools: relay CPU "
        f"{cell['relay_cpu_ms']:.2f} ms/request, first byte "
        f"{cell['ttfb_ms']['relay']:.2f} vs {cell['ttfb_ms']['direct']:.2f} ms, "
        f"added {cell['added_ms']['median']:.2f} ms (p90 {cell['added_ms']['p90']:.2f}); "
        f"TLS alone {cell['tls_ms']:.2f} ms, sockets alone "
        f"{cell['sockets_ms']:.2f} ms; plain HTTP: relay CPU "
        f"{cell['plain_relay_cpu_ms']:.2f} ms, added "
        f"{cell['plain_added_ms']['median']:.2f} ms"
    )


def _streaming(
    args: argparse.Namespace, clients: dict[str, Client], relay: Helper
) -> dict[str, Any]:
    streamed: list[tuple[float, int]] = []  # the relay's CPU seconds and bytes

    def streams(name: str, _: int) -> tuple[float, float, float, list[float]]:
        cpu_before = relay.cpu()
        seconds, size = clients[name].stream("/big")
        if name == "relay":
            streamed.append((relay.cpu() - cpu_before, size))
        throughput = size / seconds / 1e6
        seconds, _ = clients[name].stream("/events")
        return (throughput, EVENTS / seconds, *clients[name].paced())

    runs = interleave(args.stream_rounds, PATHS, streams)
    throughput = {name: [run[0] for run in v] for name, v in runs.items()}
    event_rate = {name: [run[1] for run in v] for name, v in runs.items()}
    paced_rate = {name: [run[2] for run in v] for name, v in runs.items()}
    paced_delays = {name: [d for run in v for d in run[3]] for name, v in runs.items()}
    cpu_stream = sum(cpu for cpu, _ in streamed)
    total = sum(size for _, size in streamed)
    return {
        "stream_mb": args.stream_mb,
        "stream_rounds": args.stream_rounds,
        "throughput_MBps": {n: statistics.median(v) for n, v in throughput.items()},
        "events_per_s": {n: statistics.median(v) for n, v in event_rate.items()},
        "relay_cpu_s_per_100MB": cpu_stream / total * 1e8,
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


def _cell(run: dict[str, Any], size_kb: int, tools: int) -> dict[str, Any]:
    return next(
        c for c in run["cells"] if c["size_kb"] == size_kb and c["tools"] == tools
    )


def _cells(run: dict[str, Any]) -> list[tuple[int, int, dict[str, Any]]]:
    """``(body KB, SDK tools, cell)`` in the tables' order."""
    return [(kb, n, _cell(run, kb, n)) for kb in SIZES_KB for n in TOOL_COUNTS]


def _versus(ms: dict[str, float]) -> str:
    relay, direct = ms["relay"], ms["direct"]
    return f"{relay:.2f} vs {direct:.2f} ms ({relay / direct:.2f}×)"


def _load(run: dict[str, Any]) -> str:
    end = f"{run['load']:.1f} at the end"
    if "load_start" not in run:
        return f"{end} of the mcp {run['mcp']} run"
    return f"{run['load_start']:.1f} at the start and {end} of the mcp {run['mcp']} run"


def _size(size_kb: int) -> str:
    return f"{size_kb // 1024} MB" if size_kb >= 1024 else f"{size_kb} KB"


def render(runs: list[dict[str, Any]]) -> str:
    first = runs[0]
    out = [
        f"Measured {first['date']} with `tools/nox -s bench_relay` "
        f"(`tools/bench_relay.py`): Python {first['python']}, {first['cpus']} "
        "CPUs shared with other work (1-minute load average "
        + ", ".join(_load(run) for run in runs)
        + "), proxy mode with TLS both ways against "
        "TLS straight to the stand-in upstream, in one run per mcp major; "
        "Claude Code, the SDK's process and the stand-in upstream each a "
        "process of its own on loopback. Requests in Claude Code's key order; "
        "each SDK tool gets `input_examples`, the first 20 `strict`. "
        "Interleaved rounds per cell: "
        f"{first['rounds_70kb']} at 70 KB, fewer for larger bodies (the same "
        "bytes, at least 30). Added = the median (p90) of the paired "
        'differences relay − none; "vs" compares relay with no relay.',
        "",
    ]
    for run in runs:
        out += [
            f"mcp {run['mcp']} ({run['http_client']}):",
            "",
            *table(
                ["body", "SDK tools", "relay CPU per request (of it TLS both ways)",
                 "first byte, relay vs none (median)",
                 "added to first byte, median (p90)",
                 "rewrite alone: first request / later turns"],
                "lrrrrr",
                (
                    [_size(size_kb), str(tools),
                     f"{cell['relay_cpu_ms']:.2f} ms ({cell['tls_ms']:.2f})",
                     _versus(cell["ttfb_ms"]),
                     f"{cell['added_ms']['median']:.2f} ({cell['added_ms']['p90']:.2f}) ms",
                     f"{cell['rewrite_ms']['first_ms']:.2f} / "
                     f"{cell['rewrite_ms']['later_ms']:.3f} ms"]
                    for size_kb, tools, cell in _cells(run)
                ),
            ),
        ]  # fmt: skip
        out += ["", *_breakdown(run)]

    def row(label: str, cell: Any) -> str:
        return f"| {label} |" + "".join(f" {cell(run)} |" for run in runs)

    def pair(d: dict[str, float], fmt: str) -> str:
        change = (d["relay"] / d["direct"] - 1) * 100
        return f"{d['relay']:{fmt}} vs {d['direct']:{fmt}} ({change:+.0f} %)"

    out += [
        "Streaming through the same relay (200 SDK tools declared):",
        "",
        "| | " + " | ".join(f"mcp {r['mcp']} ({r['http_client']})" for r in runs) + " |",
        "|---|" + "---|" * len(runs),
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
    return "\n".join(out) + "\n"


def _breakdown(run: dict[str, Any]) -> list[str]:
    """Where the relay's CPU per request goes, and the same hop over plain
    HTTP (a base-URL relay, no TLS either leg) as a control of the same run."""
    if not all("plain_relay_cpu_ms" in cell for cell in run["cells"]):
        return []  # figures of an earlier bench, without the control
    out = [
        f"Where it goes (mcp {run['mcp']}): per request, the relay's CPU in "
        "proxy mode; TLS both ways by itself (OpenSSL decrypting the body "
        "from Claude Code and encrypting it to the upstream, measured "
        "alone); the kernel's loopback sockets by themselves (the body "
        "received on one connection and sent on another, no Python between); "
        "the rewrite by itself on a later turn; and the same relay "
        "over plain HTTP both ways (base-URL mode to a plain-HTTP stand-in, "
        "against that stand-in directly, interleaved alike): its CPU and "
        "what it adds to the first byte.",
        "",
        *table(
            ["body", "SDK tools", "relay CPU, proxy mode", "TLS both ways alone",
             "sockets alone", "rewrite alone, later turn", "relay CPU, plain HTTP",
             "added to first byte, plain HTTP, median (p90)"],
            "lrrrrrrr",
            (
                [_size(size_kb), str(tools), f"{cell['relay_cpu_ms']:.2f} ms",
                 f"{cell['tls_ms']:.2f} ms", _ms(cell.get("sockets_ms")),
                 f"{cell['rewrite_ms']['later_ms']:.3f} ms",
                 f"{cell['plain_relay_cpu_ms']:.2f} ms",
                 f"{cell['plain_added_ms']['median']:.2f} "
                 f"({cell['plain_added_ms']['p90']:.2f}) ms"]
                for size_kb, tools, cell in _cells(run)
            ),
        ),
    ]  # fmt: skip
    return [*out, ""]


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} ms"


def _verdict(met: int, total: int) -> str:
    if met == total:
        return "✅ met"
    if met == 0:
        return "❌ not met"
    return f"❌ met in {met} of {total} cells"


def _floor(cell: dict[str, Any]) -> float | None:
    """TLS both ways and the sockets alone: what any relay that ends TLS
    spends on the request, before any work of its own."""
    if "sockets_ms" not in cell:
        return None
    return float(cell["tls_ms"] + cell["sockets_ms"])


BIG_CPU_BOUND_MS = 5.0
"""The bound on the relay's CPU per 2 MB request with the most tools."""


def _targets(
    runs: list[dict[str, Any]],
) -> list[tuple[str, str, list[list[float]], float]]:
    """This version's targets, judged alike by the targets table and the
    summary sentence: each one's row label, its words in the sentence, its
    figures (per run, one per cell) and its bound."""

    def per_run(size_kb: int, tools: tuple[int, ...], key: str) -> list[list[float]]:
        def figure(cell: dict[str, Any]) -> float:
            return float(cell["added_ms"]["median"] if key == "added" else cell[key])

        return [[figure(_cell(run, size_kb, n)) for n in tools] for run in runs]

    most = TOOL_COUNTS[-1]
    cpu = BIG_CPU_BOUND_MS
    return [
        (
            "relay CPU ≤ 1 ms per request at 70 KB",
            "≤ 1 ms of CPU at 70 KB",
            per_run(70, TOOL_COUNTS, "relay_cpu_ms"),
            1.0,
        ),
        (
            f"relay CPU ≤ {cpu:g} ms per request at 2 MB, {most} tools",
            f"≤ {cpu:g} ms at 2 MB with {most} tools",
            per_run(2048, (most,), "relay_cpu_ms"),
            cpu,
        ),
        (
            "first byte added ≤ 2 ms at 70 KB (median)",
            "≤ 2 ms added to the first byte at 70 KB",
            per_run(70, TOOL_COUNTS, "added"),
            2.0,
        ),
        (
            "first byte added ≤ 10 ms at 2 MB (median)",
            "≤ 10 ms at 2 MB",
            per_run(2048, TOOL_COUNTS, "added"),
            10.0,
        ),
    ]


def _met(figures: list[list[float]], bound: float) -> tuple[int, int]:
    """How many of the cells meet ``bound``, and how many cells there are."""
    return sum(x <= bound for v in figures for x in v), sum(map(len, figures))


def targets(runs: list[dict[str, Any]]) -> str:
    """This version's targets against the runs, row by row (generated, as
    the tables above it)."""
    rows: list[tuple[str, list[str], int, int]] = []
    for row, _, figures, bound in _targets(runs):
        listed = row.startswith("first byte")  # one figure per cell, not a range
        rows.append(
            (
                row,
                [
                    ", ".join(f"{x:.2f}" for x in v) + " ms"
                    if listed
                    else span(v) + " ms"
                    for v in figures
                ],
                *_met(figures, bound),
            )
        )
        if row.startswith(f"relay CPU ≤ {BIG_CPU_BOUND_MS:g}"):
            big = [_cell(run, 2048, TOOL_COUNTS[-1]) for run in runs]
            floors = [_floor(c) for c in big]
            if all(f is not None for f in floors):
                rows.append(
                    (
                        "of which the floor at 2 MB: TLS both ways and the sockets "
                        "alone, no Python (any relay that ends TLS pays it)",
                        [
                            f"{f:.2f} ms ({c['tls_ms']:.2f} + {c['sockets_ms']:.2f})"
                            for f, c in zip(floors, big, strict=True)
                        ],
                        0,
                        0,
                    )
                )
    later = [[c["rewrite_ms"]["later_ms"] for c in run["cells"]] for run in runs]
    rows.append(
        (
            "cost follows the tools: a later turn's rewrite, any body size",
            [span(v, 3) + " ms" for v in later],
            1,
            1,
        )
    )
    out = [
        "Against this version's targets (first-byte figures are medians of "
        "paired differences, one per cell; the floor is the last table's "
        "TLS and sockets columns):",
        "",
        "| target | " + " | ".join(f"mcp {r['mcp']}" for r in runs) + " | |",
        "|---|" + "---|" * len(runs) + "---|",
    ]
    for label, cols, met, total in rows:
        verdict = "" if label.startswith("of which") else _verdict(met, total)
        if label.startswith("cost follows"):
            verdict = "✅"
        out.append(f"| {label} | " + " | ".join(cols) + f" | {verdict} |")
    return "\n".join(out) + "\n"


def summary_line(runs: list[dict[str, Any]]) -> str:
    """docs/relay.md's summary sentence on the relay's cost, from the same runs."""
    loads = [run.get("load_start", run["load"]) for run in runs] + [
        run["load"] for run in runs
    ]

    def over(size_kb: int, key: str) -> list[float]:
        return [
            float(_cell(run, size_kb, tools)[key])
            for run in runs
            for tools in TOOL_COUNTS
        ]

    def added(size_kb: int) -> list[float]:
        return [
            _cell(run, size_kb, tools)["added_ms"]["median"]
            for run in runs
            for tools in TOOL_COUNTS
        ]

    big = [_cell(run, 2048, TOOL_COUNTS[-1]) for run in runs]
    floors = [f for f in map(_floor, big) if f is not None]
    first = [
        _cell(run, size_kb, TOOL_COUNTS[-1])["rewrite_ms"]["first_ms"]
        for run in runs
        for size_kb in SIZES_KB
    ]
    paced = [run["paced_events_per_s"]["relay"] for run in runs]
    later = [c["rewrite_ms"]["later_ms"] for run in runs for c in run["cells"]]
    cpu70, cpu2 = over(70, "relay_cpu_ms"), [c["relay_cpu_ms"] for c in big]
    counts = {
        words: _met(figures, bound) for _, words, figures, bound in _targets(runs)
    }
    kept = [name for name, (met, total) in counts.items() if met == total]
    partly = [
        f"{name} in {met} of {total} cells"
        for name, (met, total) in counts.items()
        if 0 < met < total
    ]
    missed = [name for name, (met, _) in counts.items() if met == 0]
    if not partly and not missed:
        verdict = "This version's targets are met"
    else:
        parts = []
        if kept:
            parts.append(", ".join(kept) + (" are met" if len(kept) > 1 else " is met"))
        if partly:
            parts.append("met " + ", ".join(partly))
        if missed:
            parts.append(
                ", ".join(missed) + (" are not" if len(missed) > 1 else " is not")
            )
        verdict = "Of this version's targets, " + "; ".join(parts)
    own = [float(c["relay_cpu_ms"]) - f for c in big if (f := _floor(c)) is not None]
    floor = ""
    if floors:
        floor = (
            f"; at 2 MB TLS both ways and the kernel's sockets alone take "
            f"{span(floors)} ms before any Python"
        )
        if min(floors) > BIG_CPU_BOUND_MS:
            floor += (
                f", so {BIG_CPU_BOUND_MS:g} ms is out of reach for a relay that "
                "ends TLS on this machine"
            )
        else:
            floor += f", the relay's own work {span(own)} ms on top"
    return (
        "The relay in proxy mode (TLS both ways), against no relay in one run "
        f"on a shared {runs[0]['cpus']}-core machine at load "
        f"{min(loads):.1f}–{max(loads):.1f}: {span(cpu70)} ms of relay CPU "
        f"per 70 KB request and {span(over(2048, 'relay_cpu_ms'))} ms per "
        f"2 MB one ({span(cpu2)} ms with 200 tools), of which TLS both ways "
        f"by itself is {span(over(70, 'tls_ms'))} ms and "
        f"{span(over(2048, 'tls_ms'))} ms; the rewrite "
        f"{span(later, 3)} ms on a later turn whatever the body's size (the "
        f"conversation is never decoded) and {span(first)} ms on a query's "
        f"first request with 200 tools; at the median {span(added(70))} ms "
        f"added to the first byte at 70 KB and {span(added(2048))} ms at "
        f"2 MB; SSE sent at {PACED_RATE:,.0f} events/s delivered at "
        f"{'–'.join(dict.fromkeys(f'{x:,.0f}' for x in (min(paced), max(paced))))} "
        "events/s. "
        f"{verdict}{floor}."
    )


def publish() -> None:
    runs = [
        json.loads(path.read_text("utf-8"))
        for path in sorted(CACHE.glob("relay-*.json"))
    ]
    runs = [run for run in runs if "cells" in run]  # figures of this bench's shape
    if not runs:
        raise SystemExit(f"no {CACHE}/relay-*.json to publish")
    publish_block(DOC, "relay-bench", render(runs) + "\n" + targets(runs))
    publish_block(DOC, "relay-performance", summary_line(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--role", choices=["stand-in", "relay"], help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--ca", help=argparse.SUPPRESS)
    parser.add_argument("--tools", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=200,
                        help="interleaved rounds at 70 KB (fewer for larger bodies)")  # fmt: skip
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--stream-mb", type=int, default=64)
    parser.add_argument("--stream-rounds", type=int, default=4)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--publish", action="store_true",
                        help="rewrite docs/relay.md's table from .cache/bench/relay-*.json")  # fmt: skip
    parser.add_argument("--render-only", action="store_true",
                        help="only --publish what .cache/bench/relay-*.json holds")  # fmt: skip
    args = parser.parse_args()
    if args.render_only:
        return publish()
    if args.role == "stand-in":
        return serve_stand_in(args.dir, args.stream_mb * 1024 * 1024, args.plain)
    if args.role == "relay":
        return serve_relay(args.upstream, args.ca, args.tools)
    figures = measure(args)
    print(render([figures]))
    if args.json:
        save_json(Path(args.json), figures)
    if args.publish:
        publish()


if __name__ == "__main__":
    main()
