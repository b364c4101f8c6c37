"""A local process without the relay's secret that only opens connections.

``Flood(port)`` runs ``python -m tests.lib.flood PORT`` beside a test: it
opens connections to the port in bursts (100 every 50 ms, as fast as
``connect()`` returns), sends nothing, keeps the newest 400 open (within a
process's descriptors), and reports, when stopped, how many it opened and
the local port of each, so a test can tell its connections from Claude
Code's. ``Flood(port, speak=True)`` sends one byte on each connection as it
opens it (120 every 50 ms, ~2,400 a second, and up to 900 held): each one
then has spoken, so the relay must make its transport and protocol. ``relay_closes(monkeypatch)`` records the peer port of every
connection the relay itself closes before it authenticated (for room, or
for silence).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

BURST = 100
PAUSE_S = 0.05
HELD = 400
READY = HELD
"""Connections opened before the flood says it is flooding."""


SPEAKING_BURST = 120
SPEAKING_HELD = 900


def _flood(port: int, speak: bool = False) -> None:
    import resource
    import selectors

    burst, limit = (SPEAKING_BURST, SPEAKING_HELD) if speak else (BURST, HELD)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < limit + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, limit + 64), hard))

    watch = selectors.DefaultSelector()
    watch.register(sys.stdin, selectors.EVENT_READ)
    held: dict[socket.socket, tuple[int, float]] = {}
    spans: list[tuple[int, float, float]] = []  # port, opened, closed
    said = False

    def open_one() -> None:
        sock = socket.socket()
        opened = time.monotonic()
        if speak:
            sock.settimeout(0.5)
            try:
                sock.connect(("127.0.0.1", port))
                sock.send(b"P")
            except OSError:
                sock.close()
                return
        sock.setblocking(False)
        if not speak:
            sock.connect_ex(("127.0.0.1", port))
        held[sock] = (sock.getsockname()[1], opened)
        watch.register(sock, selectors.EVENT_READ)

    while True:
        # Up to HELD, in bursts; then each one the relay closes is replaced
        # at once, so the relay sits at its bound for as long as the flood
        # runs, as fast as it closes connections (and no faster: the kernel's
        # accept queue, which no admission rule reaches, is not the target).
        for _ in range(min(burst, limit - len(held))):
            open_one()
        if not said and len(held) + len(spans) >= READY:
            said = True
            print("flooding", flush=True)  # the test may start now
        for key, _ in watch.select(PAUSE_S):
            if key.fileobj is sys.stdin:  # the test closed our stdin: stop
                # Still open as far as the flood knows: until the relay
                # notices the flood has gone.
                spans.extend((p, o, float("inf")) for p, o in held.values())
                print(json.dumps({"spans": spans}), flush=True)
                return
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            watch.unregister(sock)
            local, opened = held.pop(sock)
            spans.append((local, opened, time.monotonic()))
            sock.close()


class Flood:
    """The flood process, from ``start`` (or ``with``) until ``stop``."""

    def __init__(self, port: int, *, speak: bool = False) -> None:
        self.port = port
        self.speak = speak
        self.opened = 0
        self.ports: set[int] = set()
        self._spans: dict[int, list[tuple[float, float]]] = {}
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> Flood:
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.lib.flood",
                str(self.port),
                *(["speak"] if self.speak else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        return self

    def wait_until_flooding(self) -> None:
        """Until the flood has opened ``READY`` connections (however slowly
        a loaded machine starts it)."""
        assert self._process is not None and self._process.stdout is not None
        line = self._process.stdout.readline()
        assert line.strip() == "flooding", line

    def stop(self) -> None:
        if self._process is None:
            return
        out, _ = self._process.communicate(timeout=120)
        self._process = None
        report = json.loads(out.strip().splitlines()[-1])
        for port, opened, closed in report["spans"]:
            self._spans.setdefault(port, []).append((opened, closed))
        self.opened = len(report["spans"])
        self.ports = set(self._spans)

    def owned(self, port: int, at: float) -> bool:
        """Whether the flood had a connection from ``port`` open at ``at``
        (``time.monotonic()``, one clock for every process of the machine):
        over a long flood a port is the flood's at one time and may be
        someone else's at another."""
        return any(
            opened - 0.001 <= at <= closed + 0.001
            for opened, closed in self._spans.get(port, ())
        )

    def __enter__(self) -> Flood:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def relay_closes(monkeypatch: Any) -> list[tuple[int, float]]:
    """The peer port of each connection the relay closes before it
    authenticated (made room for, or silent too long), and when
    (``time.monotonic()``): a port is only someone's while it is open, and
    a long flood uses every port more than once."""
    from claude_agent_sdk._internal.relay.proxy import ProxyConnection
    from claude_agent_sdk._internal.relay.server import CliConnection, Waiting

    closed: list[tuple[int, float]] = []
    for kind in (CliConnection, ProxyConnection, Waiting):
        original = kind.abort

        def recording(self: Any, original: Any = original) -> None:
            peer = None
            if isinstance(self, Waiting):
                if self.sock.fileno() != -1:
                    try:
                        peer = self.sock.getpeername()
                    except OSError:
                        peer = None
            elif not self.authenticated and self.transport is not None:
                peer = self.transport.get_extra_info("peername")
            if peer:
                closed.append((int(peer[1]), time.monotonic()))
            original(self)

        monkeypatch.setattr(kind, "abort", recording)
    return closed


def open_descriptors() -> int:
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


class Host:
    """The host application beside the relay: opens and closes a file
    every millisecond, counting each ``open()`` that fails, and samples
    the process's open descriptors as it goes."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with Path(os.devnull).open("rb"):
                    self.peak = max(self.peak, open_descriptors())
            except OSError as error:
                self.failures.append(type(error).__name__)
            time.sleep(0.001)

    def __enter__(self) -> Host:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()


if __name__ == "__main__":
    _flood(int(sys.argv[1]), speak=sys.argv[2:] == ["speak"])
