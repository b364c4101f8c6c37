"""Fixtures of the relay's tests: the stand-in upstream over plain HTTP and
HTTPS (``tests/lib/relay_upstream.py``), a relay in front of the plain one,
and an HTTP client of the installed mcp's flavour."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate, loopback_certificate
from tests.relay.cases import FIELDS

try:
    from claude_agent_sdk._internal.relay.connections import http_client_module
    from claude_agent_sdk._internal.relay.lifecycle import ToolFieldsRelay
except ImportError:  # a tree without the relay patch: its tests must fail
    http_client_module = None  # type: ignore[assignment]
    ToolFieldsRelay = None  # type: ignore[assignment, misc]


# What decides the relay's network path and trust: cleared by the tests that
# set their own (``clean_network_environment``).
NETWORK_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "ANTHROPIC_BASE_URL",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
)


@pytest.fixture
def clean_network_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NETWORK_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS credentials reachable from this process (nor IMDS)."""
    from tests.lib.platform_api import AWS_CREDENTIALS

    for name in [*AWS_CREDENTIALS, "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    for name in (
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def certificate(tmp_path: Path) -> LoopbackCertificate:
    return loopback_certificate(tmp_path)


@pytest.fixture
def https_upstream(certificate: LoopbackCertificate) -> Iterator[Upstream]:
    with Upstream(tls=certificate.server_context()) as server:
        yield server


@pytest.fixture
async def relay(upstream: Upstream) -> AsyncIterator[ToolFieldsRelay]:
    async with ToolFieldsRelay(FIELDS, upstream.url) as running:
        yield running


@pytest.fixture
async def client() -> AsyncIterator[Any]:
    async with http_client_module().AsyncClient(trust_env=False, timeout=30) as c:
        yield c
