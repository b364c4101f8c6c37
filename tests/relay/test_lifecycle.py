"""The relay's lifecycle and start-time errors, through the transport and the
public entry points (patch ``tool-fields-relay``).

No thread, port or socket survives a cancelled or failed ``connect()``
(asyncio's own ``task.cancel()`` and ``asyncio.wait_for``, anyio cancel
scopes, trio); every start-time refusal is a ``ToolFieldsRelayError`` naming
the setting, from ``query()`` and ``ClaudeSDKClient.connect()`` alike; a CA
file that cannot be loaded is a warning, as it is to Claude Code, never a
missing CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLINotFoundError,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport
from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate
from tests.relay.cases import SCHEMA, STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay import lifecycle as tool_fields_relay
    from claude_agent_sdk._internal.relay.connections import http_client_module
    from claude_agent_sdk._internal.relay.lifecycle import (
        ToolFieldsRelay,
        ToolFieldsRelayError,
    )
except ImportError:  # a tree without the relay patch: these tests must fail
    tool_fields_relay = None  # type: ignore[assignment]
    http_client_module = None  # type: ignore[assignment]
    ToolFieldsRelay = None  # type: ignore[assignment, misc]
    ToolFieldsRelayError = None  # type: ignore[assignment, misc]

pytestmark = [
    pytest.mark.requires_patch("tool-fields-relay"),
    pytest.mark.usefixtures("clean_network_environment"),
]


def relay_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name.startswith("claude-agent-sdk-tool")
    ]


def open_fds() -> set[str]:
    return {entry.name for entry in Path("/proc/self/fd").iterdir()}


def leaked_fds(before: set[str], within: float = 10.0) -> set[str]:
    deadline = time.monotonic() + within
    while (extra := open_fds() - before) and time.monotonic() < deadline:
        time.sleep(0.02)
    return extra


def listening_ports() -> set[int]:
    """Loopback ports this process listens on (/proc/net/tcp, by socket inode).

    Only this process's sockets count: other programs on the machine open and
    close ports of their own while the test runs.
    """
    own = set()
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            target = str(fd.readlink())
            if target.startswith("socket:["):
                own.add(target[len("socket:[") : -1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state, inode = fields[1], fields[3], fields[9]
        if state == "0A" and local.startswith("0100007F:") and inode in own:
            ports.add(int(local.split(":")[1], 16))
    return ports


@pytest.fixture
def fake_cli(tmp_path: Path) -> Path:
    """A stand-in "CLI": prints its ANTHROPIC_BASE_URL, then waits for stdin."""
    script = tmp_path / "claude"
    script.write_text(
        '#!/bin/sh\necho "{\\"base\\": \\"$ANTHROPIC_BASE_URL\\"}"\ncat > /dev/null\n'
    )
    script.chmod(0o755)
    return script


def _options(cli: Path | str, **env: str) -> ClaudeAgentOptions:
    @tool("search", "s", SCHEMA, strict=True)
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    return ClaudeAgentOptions(
        cli_path=str(cli),
        mcp_servers={"docs": create_sdk_mcp_server("docs", tools=[search])},
        env={"CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1", **env},
        tool_fields_relay=True,
    )


@pytest.fixture
def slow_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The relay's start takes 0.4 s (on the relay's own thread, while
    ``start()`` waits for it), so that a cancel lands while it is under way."""
    real = getattr(tool_fields_relay, "outbound_pool")  # noqa: B009 - not re-exported

    def slow(*args: Any) -> Any:
        time.sleep(0.4)
        return real(*args)

    monkeypatch.setattr(tool_fields_relay, "outbound_pool", slow)


def _assert_nothing_left(fds: set[str], ports: set[int]) -> None:
    assert relay_threads() == []
    assert listening_ports() - ports == set()
    assert leaked_fds(fds) == set()


# -- cancellation and failure -----------------------------------------------------


async def _cancel_with_task_cancel(
    connect: Callable[[], Awaitable[None]], delay: float
) -> None:
    task = asyncio.ensure_future(connect())
    await asyncio.sleep(delay)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def _cancel_with_wait_for(
    connect: Callable[[], Awaitable[None]], delay: float
) -> None:
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(connect(), delay)


async def _cancel_with_anyio(
    connect: Callable[[], Awaitable[None]], delay: float
) -> None:
    with anyio.move_on_after(delay) as scope:
        await connect()
    assert scope.cancelled_caught or delay >= 0.4


CANCELS = {
    "task.cancel": _cancel_with_task_cancel,
    "asyncio.wait_for": _cancel_with_wait_for,
    "anyio.move_on_after": _cancel_with_anyio,
}


@pytest.mark.usefixtures("slow_start")
@pytest.mark.parametrize("delay", [0.0, 0.15])
@pytest.mark.parametrize("how", list(CANCELS))
async def test_a_cancelled_connect_leaves_no_thread_port_or_socket(
    upstream: Upstream, fake_cli: Path, how: str, delay: float
) -> None:
    fds, ports = open_fds(), listening_ports()
    transport = SubprocessCLITransport(
        prompt="x", options=_options(fake_cli, ANTHROPIC_BASE_URL=upstream.url)
    )
    await CANCELS[how](transport.connect, delay)
    # Nothing to wait for and nothing left, before any close().
    assert relay_threads() == []
    await transport.close()
    _assert_nothing_left(fds, ports)


def test_a_cancelled_connect_under_trio_leaves_nothing(
    upstream: Upstream, fake_cli: Path, slow_start: None
) -> None:
    import trio

    fds, ports = open_fds(), listening_ports()

    async def main() -> None:
        transport = SubprocessCLITransport(
            prompt="x", options=_options(fake_cli, ANTHROPIC_BASE_URL=upstream.url)
        )
        with trio.move_on_after(0.15) as scope:
            await transport.connect()
        assert scope.cancelled_caught
        assert relay_threads() == []
        await transport.close()

    trio.run(main)
    _assert_nothing_left(fds, ports)


async def test_a_relay_cancelled_while_starting_stops_itself(
    upstream: Upstream, slow_start: None
) -> None:
    fds, ports = open_fds(), listening_ports()
    relay = ToolFieldsRelay({}, upstream.url)
    task = asyncio.ensure_future(relay.start())
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _assert_nothing_left(fds, ports)


async def test_a_relay_that_fails_to_start_leaves_nothing(
    upstream: Upstream, fake_cli: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("no pool")

    monkeypatch.setattr(tool_fields_relay, "outbound_pool", broken)
    fds, ports = open_fds(), listening_ports()
    transport = SubprocessCLITransport(
        prompt="x", options=_options(fake_cli, ANTHROPIC_BASE_URL=upstream.url)
    )
    with pytest.raises(Exception, match="tool_fields_relay failed to start") as raised:
        await transport.connect()
    assert not isinstance(raised.value, CLINotFoundError)
    _assert_nothing_left(fds, ports)


# -- start-time refusals ------------------------------------------------------------


REFUSALS = [
    ({"ANTHROPIC_BASE_URL": "https://user:pw@gw.example"}, "ANTHROPIC_BASE_URL"),
    ({"ANTHROPIC_BASE_URL": "ftp://gw.example"}, "ANTHROPIC_BASE_URL"),
    ({"HTTPS_PROXY": "ftp://proxy.example:21"}, "HTTPS_PROXY"),
    ({"https_proxy": "socks4://proxy.example:1080"}, "https_proxy"),
    # Claude Code uses an http ALL_PROXY (a SOCKS one it ignores): measured,
    # docs/relay.md "Claude Code's network path".
    ({"ALL_PROXY": "http://proxy.example:port"}, "ALL_PROXY"),
    (
        {"CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_USE_FOUNDRY": "1"},
        "CLAUDE_CODE_USE_VERTEX",
    ),
]
if importlib.util.find_spec("socksio") is None:
    REFUSALS.append(({"HTTPS_PROXY": "socks5://proxy.example:1080"}, "HTTPS_PROXY"))


async def _through_transport(options: ClaudeAgentOptions) -> None:
    await SubprocessCLITransport(prompt="x", options=options).connect()


async def _through_query(options: ClaudeAgentOptions) -> None:
    async for _ in query(prompt="x", options=options):
        pass


async def _through_client(options: ClaudeAgentOptions) -> None:
    client = ClaudeSDKClient(options)
    try:
        await client.connect()
    finally:
        await client.disconnect()


ENTRY_POINTS = {
    "transport": _through_transport,
    "query": _through_query,
    "ClaudeSDKClient": _through_client,
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize(("env", "setting"), REFUSALS)
async def test_every_start_time_refusal_is_a_tool_fields_relay_error(
    fake_cli: Path, env: dict[str, str], setting: str, entry: str
) -> None:
    fds, ports = open_fds(), listening_ports()
    with pytest.raises(ToolFieldsRelayError, match=setting) as raised:
        await ENTRY_POINTS[entry](_options(fake_cli, **env))
    assert "pw" not in str(raised.value)  # credentials are never echoed
    _assert_nothing_left(fds, ports)


async def test_a_refusal_read_from_the_environment_too(
    fake_cli: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "ftp://proxy.example:21")
    with pytest.raises(ToolFieldsRelayError, match="HTTPS_PROXY"):
        await _through_query(_options(fake_cli))


# -- CA files -----------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"])
@pytest.mark.parametrize("problem", ["missing", "not PEM", "unreadable"])
async def test_a_ca_file_that_cannot_be_loaded_is_a_warning_not_a_missing_cli(
    upstream: Upstream,
    fake_cli: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    variable: str,
    problem: str,
) -> None:
    path = tmp_path / "ca.pem"
    if problem == "not PEM":
        path.write_text("not a certificate\n")
    elif problem == "unreadable":
        path.mkdir()  # a directory: open() fails with IsADirectoryError
    caplog.set_level(logging.WARNING)
    transport = SubprocessCLITransport(
        prompt="x",
        options=_options(
            fake_cli, ANTHROPIC_BASE_URL=upstream.url, **{variable: str(path)}
        ),
    )
    await transport.connect()
    try:
        first = await transport.read_messages().__anext__()
        async with http_client_module().AsyncClient(trust_env=False) as c:
            response = await c.post(
                first["base"] + "/v1/messages", json=messages_body(STRICT)
            )
        assert response.status_code == 200
    finally:
        await transport.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(variable in w and str(path) in w for w in warnings), warnings


async def test_extra_certs_still_load_when_ssl_cert_file_is_missing(
    https_upstream: Upstream,
    certificate: LoopbackCertificate,
    fake_cli: Path,
    tmp_path: Path,
) -> None:
    transport = SubprocessCLITransport(
        prompt="x",
        options=_options(
            fake_cli,
            ANTHROPIC_BASE_URL=https_upstream.url,
            SSL_CERT_FILE=str(tmp_path / "missing.pem"),
            NODE_EXTRA_CA_CERTS=str(certificate.cert),
        ),
    )
    await transport.connect()
    try:
        first = await transport.read_messages().__anext__()
        async with http_client_module().AsyncClient(trust_env=False) as c:
            response = await c.post(
                first["base"] + "/v1/messages", json=messages_body(STRICT)
            )
    finally:
        await transport.close()
    assert response.status_code == 200
    assert https_upstream.seen[0].json()["tools"][0]["strict"] is True
