"""Loopback servers shared by the relay's tests: a plain and an HTTPS stand-in upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate, loopback_certificate


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def certificate(tmp_path: Path) -> LoopbackCertificate:
    return loopback_certificate(tmp_path)


@pytest.fixture
def https_upstream(certificate: LoopbackCertificate) -> Iterator[Upstream]:
    server = Upstream(tls=certificate.server_context()).start()
    try:
        yield server
    finally:
        server.stop()
