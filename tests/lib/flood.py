"""A local process without the relay's secret that only opens connections.

``Flood(port)`` runs ``python -m tests.lib.flood PORT`` beside a test: it
opens connections to the port in bursts (100 every 50 ms, as fast as
``connect()`` returns), sends nothing, keeps the newest 400 open (within a
process's descriptors), and reports, when stopped, how many it opened and
the local port of each, so a test can tell its connections from Claude
Code's. ``relay_closes(monkeypatch)`` records the peer port of every
connection the relay itself closes before it authenticated (for room, or
for silence).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from typing import Any

BURST = 100
PAUSE_S = 0.05
HELD = 400
READY = HELD
"""Connections opened before the flood says it is flooding."""


def _flood(port: int) -> None:
    import selectors

    watch = selectors.DefaultSelector()
    watch.register(sys.stdin, selectors.EVENT_READ)
    held: set[socket.socket] = set()
    ports: list[int] = []

    def open_one() -> None:
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        ports.append(sock.getsockname()[1])
        held.add(sock)
        watch.register(sock, selectors.EVENT_READ)

    while True:
        # Up to HELD, in bursts; then each one the relay closes is replaced
        # at once, so the relay sits at its bound for as long as the flood
        # runs, as fast as it closes connections (and no faster: the kernel's
        # accept queue, which no admission rule reaches, is not the target).
        for _ in range(min(BURST, HELD - len(held))):
            open_one()
        if len(ports) >= READY and not getattr(_flood, "said", False):
            _flood.said = True  # type: ignore[attr-defined]
            print("flooding", flush=True)  # the test may start now
        for key, _ in watch.select(PAUSE_S):
            if key.fileobj is sys.stdin:  # the test closed our stdin: stop
                print(json.dumps({"opened": len(ports), "ports": ports}), flush=True)
                return
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            watch.unregister(sock)
            held.discard(sock)
            sock.close()


class Flood:
    """The flood process, from ``start`` (or ``with``) until ``stop``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.opened = 0
        self.ports: set[int] = set()
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> Flood:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.lib.flood", str(self.port)],
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
        self.opened = int(report["opened"])
        self.ports = set(report["ports"])

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


if __name__ == "__main__":
    _flood(int(sys.argv[1]))
