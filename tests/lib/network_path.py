"""Which way Claude Code itself sends each destination, per proxy setting.

``measure(cli, settings)`` runs the real CLI once (``-p``, no SDK, no relay)
with ``settings`` applied and reports, for each destination of
``DESTINATIONS``, the route it took: the name of the proxy variable whose
stand-in received its ``CONNECT`` (or, for a SOCKS URL, its greeting), or
``"direct"`` when the CLI connected to the host itself.

Everything stays on loopback: each proxy variable points at a recorder of
its own on 127.0.0.1 that answers 403 and closes; the CLI runs in a private
mount namespace (``unshare -m``) whose ``/etc/hosts`` maps each destination
to a loopback address of its own (127.0.0.2, 127.0.0.3), where another
recorder counts direct connections, and whose ``/etc/resolv.conf`` names
no reachable server, so no name is ever looked up outside. Needs root (or
an unprivileged user namespace); ``available()`` says why not.

``TABLE`` is what was measured with Claude Code 2.1.332 (docs/relay.md,
"Claude Code's network path"); ``tests/e2e/test_e2e_network_path.py``
measures it again, and ``tests/relay/test_network_path.py`` checks that the
relay chooses the same route for every cell.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

API = "api.anthropic.com"
MCP = "mcp.example.test"
DESTINATIONS = {API: "127.0.0.2", MCP: "127.0.0.3"}
"""Each destination and the loopback address its name has for the CLI:
the Messages API (first party: no ``ANTHROPIC_BASE_URL``) and an https MCP
server, the kind of host a tunnel through the relay reaches."""

MESSAGES = "api.anthropic.com /v1/messages"
SIDE = "api.anthropic.com, other paths"
COLUMNS = (MESSAGES, SIDE, MCP)
"""What is measured: where the Messages requests went, where Claude Code's
other requests to the API host went (its start-up settings requests), and
where the MCP server's connection went."""

PROXY_VARIABLES = (
    "https_proxy",
    "HTTPS_PROXY",
    "http_proxy",
    "HTTP_PROXY",
    "all_proxy",
    "ALL_PROXY",
)


@dataclass(frozen=True)
class Row:
    """One setting: environment values, ``"{proxy}"`` standing for the
    recorder of that variable (``"{socks}"``: the same, as ``socks5h://``)."""

    label: str
    env: Mapping[str, str]
    routes: Mapping[str, str]  # destination -> route, as measured


def _row(label: str, messages: str, side: str, mcp: str, **env: str) -> Row:
    return Row(label, env, {MESSAGES: messages, SIDE: side, MCP: mcp})


P = "{proxy}"
S = "{socks}"
A = API
M = MCP
# fmt: off
TABLE: tuple[Row, ...] = (
    _row('nothing set', 'direct', 'direct', 'direct'),
    _row('HTTPS_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', HTTPS_PROXY=P),
    _row('https_proxy', 'https_proxy', 'https_proxy', 'https_proxy', https_proxy=P),
    _row('HTTP_PROXY only', 'HTTP_PROXY', 'HTTP_PROXY', 'HTTP_PROXY', HTTP_PROXY=P),
    _row('http_proxy only', 'http_proxy', 'http_proxy', 'http_proxy', http_proxy=P),
    _row('HTTPS_PROXY and HTTP_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', HTTPS_PROXY=P, HTTP_PROXY=P),
    _row('https_proxy and HTTPS_PROXY', 'https_proxy', 'https_proxy', 'https_proxy', https_proxy=P, HTTPS_PROXY=P),
    _row('HTTPS_PROXY empty, HTTP_PROXY', 'HTTP_PROXY', 'HTTP_PROXY', 'HTTP_PROXY', HTTPS_PROXY='', HTTP_PROXY=P),
    _row('ALL_PROXY (http)', 'ALL_PROXY', 'direct', 'ALL_PROXY', ALL_PROXY=P),
    _row('all_proxy (http)', 'all_proxy', 'direct', 'all_proxy', all_proxy=P),
    _row('ALL_PROXY (socks5h)', 'direct', 'direct', 'direct', ALL_PROXY=S),
    _row('ALL_PROXY and HTTPS_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', ALL_PROXY=P, HTTPS_PROXY=P),
    _row('ALL_PROXY and HTTP_PROXY', 'HTTP_PROXY', 'HTTP_PROXY', 'HTTP_PROXY', ALL_PROXY=P, HTTP_PROXY=P),
    _row('ALL_PROXY, NO_PROXY=api.anthropic.com', 'direct', 'direct', 'ALL_PROXY', ALL_PROXY=P, NO_PROXY=A),
    _row('NO_PROXY=api.anthropic.com', 'direct', 'direct', 'HTTPS_PROXY', HTTPS_PROXY=P, NO_PROXY=A),
    _row('NO_PROXY=mcp.example.test', 'HTTPS_PROXY', 'HTTPS_PROXY', 'direct', HTTPS_PROXY=P, NO_PROXY=M),
    _row('HTTP_PROXY, NO_PROXY=api.anthropic.com', 'direct', 'direct', 'HTTP_PROXY', HTTP_PROXY=P, NO_PROXY=A),
    _row('NO_PROXY=*', 'direct', 'direct', 'direct', HTTPS_PROXY=P, NO_PROXY='*'),
    _row('NO_PROXY=anthropic.com', 'direct', 'HTTPS_PROXY', 'HTTPS_PROXY', HTTPS_PROXY=P, NO_PROXY='anthropic.com'),
    _row('NO_PROXY=.anthropic.com', 'direct', 'direct', 'HTTPS_PROXY', HTTPS_PROXY=P, NO_PROXY='.anthropic.com'),
    _row('NO_PROXY=*.example.test', 'HTTPS_PROXY', 'HTTPS_PROXY', 'direct', HTTPS_PROXY=P, NO_PROXY='*.example.test'),
    _row('NO_PROXY=api.anthropic.com:443', 'direct', 'direct', 'HTTPS_PROXY', HTTPS_PROXY=P, NO_PROXY='api.anthropic.com:443'),
    _row('NO_PROXY=api.anthropic.com:8443', 'HTTPS_PROXY', 'HTTPS_PROXY', 'HTTPS_PROXY', HTTPS_PROXY=P, NO_PROXY='api.anthropic.com:8443'),
    _row('NO_PROXY=api..., no_proxy=mcp...', 'HTTPS_PROXY', 'direct', 'direct', HTTPS_PROXY=P, NO_PROXY=A, no_proxy=M),
    _row('NO_PROXY with spaces', 'direct', 'direct', 'direct', HTTPS_PROXY=P, NO_PROXY='localhost api.anthropic.com, MCP.EXAMPLE.TEST'),
    # fmt: on
)


# --------------------------------------------------------------------------
# Recorders
# --------------------------------------------------------------------------


@dataclass
class Recorder:
    """A TCP listener that records the first bytes of each connection and
    ends it (a 403 to an HTTP request)."""

    host: str = "127.0.0.1"
    port: int = 0
    status: bytes = b"403 Forbidden"
    """What an HTTP request (a proxy's ``CONNECT``) is answered with."""
    seen: list[bytes] = field(default_factory=list)
    accepted: int = 0
    """Connections accepted: counted before their first bytes arrive (a
    tunnel's first bytes may never come)."""
    _sock: socket.socket | None = None
    _thread: threading.Thread | None = None

    def start(self) -> Recorder:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(64)
        sock.settimeout(0.2)
        self._sock = sock
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        assert self._sock is not None
        while self._sock.fileno() != -1:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.accepted += 1
            with conn:
                conn.settimeout(2.0)
                data = b""
                with contextlib.suppress(OSError):
                    data = conn.recv(4096)
                self.seen.append(data)
                with contextlib.suppress(OSError):
                    if data[:1].isalpha():
                        conn.sendall(
                            b"HTTP/1.1 " + self.status + b"\r\nContent-Length: 0\r\n"
                            b"Connection: close\r\n\r\n"
                        )

    def targets(self) -> list[str]:
        """The host of each ``CONNECT`` (or SOCKS5 request) received."""
        found = []
        for data in self.seen:
            if data.startswith(b"CONNECT "):
                found.append(data.split(b" ", 2)[1].decode().rpartition(":")[0])
            elif data[:1] == b"\x05":
                found.append("<socks>")
        return found

    def stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._thread is not None:
            self._thread.join(timeout=2)


# --------------------------------------------------------------------------
# One run of the CLI
# --------------------------------------------------------------------------


def available() -> str | None:
    """None when ``measure`` can run here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare(1) to give the CLI a private /etc/hosts"
    try:
        subprocess.run(
            ["unshare", "-m", "true"], check=True, capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return "unshare -m is not permitted here (needs root or user namespaces)"
    return None


_WRAPPER = """#!/bin/sh
mount --bind "$NP_HOSTS" /etc/hosts && mount --bind "$NP_RESOLV" /etc/resolv.conf \
  || exit 97
exec "$NP_CLI" "$@"
"""


@contextlib.contextmanager
def private_names(directory: Path, cli: str) -> Iterator[list[str]]:
    """The command prefix that runs ``cli`` with the destinations' names on
    loopback and no outside resolver."""
    hosts = directory / "hosts"
    hosts.write_text(
        "127.0.0.1 localhost\n"
        + "".join(f"{address} {name}\n" for name, address in DESTINATIONS.items())
    )
    resolv = directory / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    wrapper = directory / "run-cli.sh"
    wrapper.write_text(_WRAPPER)
    wrapper.chmod(0o755)
    yield ["unshare", "-m", "--propagation", "private", str(wrapper)]


def measure(
    cli: str, settings: Mapping[str, str], wait_s: float = 15.0
) -> dict[str, str]:
    """Run the CLI with ``settings`` (see ``Row.env``); each destination's route.

    The API answers wherever the CLI sends it (Claude Code holds back its
    MCP connections until its first-party start-up requests are answered):
    each ``{proxy}`` is an intercepting stand-in that serves
    ``api.anthropic.com`` itself, trusted through ``NODE_EXTRA_CA_CERTS``,
    and refuses every other ``CONNECT`` (403); the API's direct address
    serves it too. The MCP server's direct address only counts
    connections."""
    from tests.lib.fake_api import FakeMessagesAPI, _make_handler
    from tests.lib.loopback import Loopback
    from tests.lib.relay_upstream import Upstream
    from tests.lib.tls import host_certificate

    directory = Path(tempfile.mkdtemp(prefix="network-path-"))
    certificate = host_certificate(directory, API)
    proxies: dict[str, Upstream] = {}
    socks: dict[str, Recorder] = {}
    servers: list[object] = []
    direct_api = FakeMessagesAPI()
    direct_api_server = Loopback(
        _make_handler(direct_api),
        "direct-api",
        DESTINATIONS[API],
        443,
        tls=certificate.server_context(),
    )
    direct_mcp = Recorder(host=DESTINATIONS[MCP], port=443).start()
    env_values: dict[str, str] = {}
    for name, value in settings.items():
        if value == "{proxy}":
            proxy = proxies[name] = Upstream(
                intercept=API, certificate=certificate, offline=True
            ).start()
            env_values[name] = proxy.url
        elif value == "{socks}":
            recorder = socks[name] = Recorder().start()
            env_values[name] = f"socks5h://127.0.0.1:{recorder.port}"
        else:
            env_values[name] = value
    process = None

    def api_paths(where: FakeMessagesAPI) -> list[str]:
        return [r.path.split("?", 1)[0] for r in where.requests]

    def route(column: str) -> str:
        routes = []
        if column == MCP:
            target = f"{MCP}:443"
            routes = [
                variable
                for variable, proxy in proxies.items()
                if any(seen.path == target for seen in proxy.connects)
            ]
            if direct_mcp.seen:
                routes.append("direct")
        else:
            wanted = (lambda path: path.startswith("/v1/messages")) if (
                column == MESSAGES
            ) else (lambda path: not path.startswith("/v1/messages"))
            for variable, proxy in proxies.items():
                if any(wanted(path) for path in api_paths(proxy.api)):
                    routes.append(variable)
            if any(wanted(path) for path in api_paths(direct_api)):
                routes.append("direct")
        routes += [variable for variable, recorder in socks.items() if recorder.seen]
        return "+".join(sorted(routes))

    try:
        home = directory / "home"
        (home / ".claude").mkdir(parents=True)
        env = {
            key: value
            for key, value in os.environ.items()
            if key.lower() not in PROXY_VARIABLES + ("no_proxy",)
            and not key.startswith(("ANTHROPIC_", "CLAUDE", "NODE_EXTRA"))
        }
        env.update(
            HOME=str(home),
            CLAUDE_CONFIG_DIR=str(home / ".claude"),
            ANTHROPIC_API_KEY="sk-ant-network-path-dummy",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            NODE_EXTRA_CA_CERTS=str(certificate.ca),
            NP_HOSTS=str(directory / "hosts"),
            NP_RESOLV=str(directory / "resolv.conf"),
            NP_CLI=cli,
        )
        env.update(env_values)
        mcp_config = (
            '{"mcpServers": {"remote": {"type": "http", '
            f'"url": "https://{MCP}/mcp"}}}}}}'
        )
        with private_names(directory, cli) as prefix:
            process = subprocess.Popen(
                [
                    *prefix,
                    "-p",
                    "Say hi.",
                    "--mcp-config",
                    mcp_config,
                    "--strict-mcp-config",
                ],
                env=env,
                cwd=directory,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline and process.poll() is None:
                if all(route(column) for column in (MESSAGES, MCP)):
                    time.sleep(0.5)  # a second route for one would show too
                    break
                time.sleep(0.1)
            if process.poll() == 97:
                raise RuntimeError("the private /etc/hosts could not be mounted")
        return {column: route(column) or "none" for column in COLUMNS}
    finally:
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            process.wait(timeout=10)
        for proxy in proxies.values():
            proxy.stop()
        for recorder in [*socks.values(), direct_mcp]:
            recorder.stop()
        direct_api_server.stop()
        del servers
        shutil.rmtree(directory, ignore_errors=True)
