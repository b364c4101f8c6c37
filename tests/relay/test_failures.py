"""Failures that name their cause, once, fast (issue 40, item 3).

Each way the relay can fail to reach the API (its certificate not
trusted, its name not resolving, the proxy refusing with 407 or 403,
nothing listening) gives one WARNING naming the destination, the proxy
used and the cause, with the fix; the CLI's 502 says the same; repeats
are counted, not logged again; and once the API has stayed unreachable
for ``network.FATAL_AFTER_S`` the relay's ``failure`` is a
``ToolFieldsRelayError`` with the same text, which the SDK raises to the
caller (``tests/e2e/test_e2e_network_path.py`` runs that with the real CLI;
``test_the_transport_raises_the_relays_failure`` here with a stand-in).
Loopback only: a TLS stand-in with a CA nobody trusts, proxy recorders
answering 407 and 403, a closed port, a name under ``.invalid``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, query, tool
from tests.lib.network_path import Recorder
from tests.lib.relay_upstream import Upstream
from tests.relay.cases import STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay import network
    from claude_agent_sdk._internal.relay.lifecycle import (
        ToolFieldsRelayError,
        prepare_for_cli,
    )
except ImportError:  # a tree without the change: these tests must fail
    network = None  # type: ignore[assignment]
    ToolFieldsRelayError = ValueError  # type: ignore[assignment, misc]
    prepare_for_cli = None  # type: ignore[assignment]

pytestmark = [
    pytest.mark.requires_patch("tool-fields-relay"),
    pytest.mark.usefixtures("clean_network_environment"),
]

NETWORK_LOGGER = "claude_agent_sdk._internal.relay.network"


@pytest.fixture
def fast_fatal(monkeypatch: pytest.MonkeyPatch) -> float:
    assert network is not None
    monkeypatch.setattr(network, "FATAL_AFTER_S", 0.3)
    return 0.3


@pytest.fixture
def refusing_proxy(request: pytest.FixtureRequest) -> Iterator[Recorder]:
    recorder = Recorder(status=request.param).start()
    yield recorder
    recorder.stop()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _fail_three_times(
    env: dict[str, str], client: Any, caplog: pytest.LogCaptureFixture, wait: float
) -> tuple[list[str], list[str], Any]:
    caplog.set_level(logging.INFO, NETWORK_LOGGER)
    relay = prepare_for_cli({}, env)
    async with relay:
        answers = []
        for _ in range(3):
            url = relay.url if not relay.first_party else None
            assert url is not None, "these cases run the base-URL relay"
            response = await client.post(
                url + "/v1/messages", json=messages_body(STRICT)
            )
            assert response.status_code == 502
            answers.append(response.json()["error"]["message"])
        await asyncio.sleep(wait)
        failure = relay.failure
        counts = dict(relay.failures.counts)
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == NETWORK_LOGGER and r.levelno == logging.WARNING
    ]
    return warnings, answers, (failure, counts)


def _check(
    warnings: list[str], answers: list[str], outcome: Any, *expected: str
) -> None:
    failure, counts = outcome
    assert len(warnings) == 1, warnings  # once
    warning = warnings[0]
    for part in expected:
        assert part in warning, (part, warning)
    text = warning.removeprefix("tool_fields_relay: ")
    assert all(text in answer for answer in answers)  # the CLI reads the same
    assert list(counts.values()) == [3]  # counted, not logged again
    assert isinstance(failure, ToolFieldsRelayError)
    assert str(failure) == text


async def test_an_untrusted_certificate_names_the_host_and_the_fix(
    https_upstream: Upstream,
    client: Any,
    caplog: pytest.LogCaptureFixture,
    fast_fatal: float,
) -> None:
    env = {"ANTHROPIC_BASE_URL": https_upstream.url}
    _check(
        *await _fail_three_times(env, client, caplog, fast_fatal),
        "certificate verify failed",
        "for 127.0.0.1 via a direct connection",
        "NODE_EXTRA_CA_CERTS",
    )


async def test_an_untrusted_certificate_through_a_proxy_names_the_proxy(
    https_upstream: Upstream,
    upstream: Upstream,
    client: Any,
    caplog: pytest.LogCaptureFixture,
    fast_fatal: float,
) -> None:
    # ``upstream`` tunnels the CONNECT: the certificate seen is the TLS
    # stand-in's, as a TLS-inspecting proxy's would be.
    env = {"ANTHROPIC_BASE_URL": https_upstream.url, "HTTPS_PROXY": upstream.url}
    _check(
        *await _fail_three_times(env, client, caplog, fast_fatal),
        "certificate verify failed for 127.0.0.1 via " + upstream.url,
        "the proxy's CA is not trusted",
        "SSL_CERT_FILE or NODE_EXTRA_CA_CERTS",
    )


@pytest.mark.parametrize(
    ("refusing_proxy", "expected"),
    [
        (b"407 Proxy Authentication Required", ("407", "credentials into HTTPS_PROXY")),
        (b"403 Forbidden", ("403", "does not allow this destination")),
    ],
    indirect=["refusing_proxy"],
    ids=["407", "403"],
)
async def test_a_proxy_refusal_names_its_status_and_the_fix(
    refusing_proxy: Recorder,
    expected: tuple[str, str],
    client: Any,
    caplog: pytest.LogCaptureFixture,
    fast_fatal: float,
) -> None:
    proxy = f"http://127.0.0.1:{refusing_proxy.port}"
    env = {
        "ANTHROPIC_BASE_URL": "https://gateway.example.invalid",
        "HTTPS_PROXY": proxy,
    }
    _check(
        *await _fail_three_times(env, client, caplog, fast_fatal),
        f"for gateway.example.invalid via {proxy}",
        *expected,
    )
    assert refusing_proxy.targets() == ["gateway.example.invalid"] * 3


async def test_a_refused_connection_names_the_address(
    client: Any, caplog: pytest.LogCaptureFixture, fast_fatal: float
) -> None:
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_closed_port()}"}
    _check(
        *await _fail_three_times(env, client, caplog, fast_fatal),
        "connection refused for 127.0.0.1 via a direct connection",
        "nothing listens there",
    )


async def test_a_refused_proxy_names_the_proxy_setting(
    client: Any, caplog: pytest.LogCaptureFixture, fast_fatal: float
) -> None:
    proxy = f"http://127.0.0.1:{_closed_port()}"
    env = {"ANTHROPIC_BASE_URL": "https://gateway.example.invalid", "http_proxy": proxy}
    _check(
        *await _fail_three_times(env, client, caplog, fast_fatal),
        f"connection refused for gateway.example.invalid via {proxy}",
        "check http_proxy",
    )


async def test_a_name_that_does_not_resolve_is_named(
    client: Any, caplog: pytest.LogCaptureFixture, fast_fatal: float
) -> None:
    env = {"ANTHROPIC_BASE_URL": "https://relay-test.invalid"}
    _check(
        *await _fail_three_times(env, client, caplog, fast_fatal),
        "name lookup failed for relay-test.invalid via a direct connection",
        "does not resolve",
    )


async def test_a_failure_that_passes_is_not_fatal(
    upstream: Upstream, client: Any, fast_fatal: float
) -> None:
    """A request that gets through in between clears the failure."""
    relay = prepare_for_cli({}, {"ANTHROPIC_BASE_URL": upstream.url})
    async with relay:
        error = ConnectionRefusedError(111, "Connection refused")
        relay.failures.failed(error, "127.0.0.1", None, None, api=True)
        response = await client.post(
            relay.url + "/v1/messages", json=messages_body(STRICT)
        )
        assert response.status_code == 200
        await asyncio.sleep(fast_fatal * 2)
        assert relay.failure is None


async def test_the_transport_raises_the_relays_failure(
    tmp_path: Path, fast_fatal: float
) -> None:
    """Through ``query()``: a stand-in CLI that asks the relay (its
    ``ANTHROPIC_BASE_URL``) for a Messages request every 0.2 s and waits,
    as Claude Code retrying its 502s; the caller gets the relay's
    ``ToolFieldsRelayError``, not the CLI's exit, within seconds."""
    script = tmp_path / "claude"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, time, urllib.error, urllib.request\n"
        "url = os.environ['ANTHROPIC_BASE_URL'] + '/v1/messages'\n"
        "opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
        "while True:\n"
        "    try:\n"
        "        opener.open(urllib.request.Request(url, data=b'{}'), timeout=10)\n"
        "    except (urllib.error.URLError, OSError):\n"
        "        pass\n"
        "    time.sleep(0.2)\n"
    )
    script.chmod(0o755)

    @tool("search", "s", {"q": str}, strict=True)
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    options = ClaudeAgentOptions(
        cli_path=str(script),
        mcp_servers={"docs": create_sdk_mcp_server("docs", tools=[search])},
        env={
            "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_closed_port()}",
            "NO_PROXY": "127.0.0.1",
        },
        tool_fields_relay=True,
    )
    started = time.monotonic()
    with pytest.raises(ToolFieldsRelayError, match="connection refused for 127.0.0.1"):
        async for _ in query(prompt="hi", options=options):
            pass
    assert time.monotonic() - started < 15
