"""The relay trusts what Claude Code trusts (issue 40, item 2).

Claude Code trusts its bundled roots and the operating system's store
(``CLAUDE_CODE_CERT_STORE``, default ``bundled,system``), plus
``NODE_EXTRA_CA_CERTS``. A company root installed only in the system store
must therefore let the relay reach an https gateway on both mcp majors (mcp
1.x's httpx context trusted certifi only), and ``CLAUDE_CODE_CERT_STORE=
bundled`` must leave it out, as it does for Claude Code.

The system store is changed for one process only: a private mount namespace
(``unshare -m``) in which the system CA bundle is bind-mounted over by one
holding the test CA too. That needs root (or user namespaces); elsewhere the
test is skipped, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lib.tls import loopback_certificate

pytestmark = pytest.mark.requires_patch("tool-fields-relay")

_SYSTEM_BUNDLE = ssl.get_default_verify_paths().openssl_cafile

_PROBE = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from tests.lib.relay_upstream import Upstream
from tests.lib.tls import LoopbackCertificate
from pathlib import Path
from claude_agent_sdk._internal.relay.connections import http_client_module
from claude_agent_sdk._internal.relay.lifecycle import prepare_for_cli

certificate = LoopbackCertificate(Path(sys.argv[2]), Path(sys.argv[3]))
env = json.loads(sys.argv[4])

async def main():
    with Upstream(tls=certificate.server_context()) as upstream:
        relay = prepare_for_cli({}, {**env, "ANTHROPIC_BASE_URL": upstream.url})
        async with relay:
            async with http_client_module().AsyncClient(trust_env=False) as client:
                response = await client.post(relay.url + "/v1/messages", json={})
        print(json.dumps(response.status_code))

asyncio.run(main())
"""


def _unavailable() -> str | None:
    if sys.platform != "linux":
        return "a private mount namespace needs Linux"
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed"
    if not _SYSTEM_BUNDLE or not Path(_SYSTEM_BUNDLE).exists():
        return "this system has no OpenSSL CA bundle file to stand in for"
    done = subprocess.run(
        ["unshare", "-m", "true"], capture_output=True, timeout=30, check=False
    )
    if done.returncode != 0:
        return "unshare -m is not permitted here (needs root or user namespaces)"
    return None


@pytest.fixture(scope="module")
def mount_namespace() -> None:
    reason = _unavailable()
    if reason is not None:
        pytest.skip(reason)


def _status(
    tmp_path: Path,
    in_system_store: bool,
    env: dict[str, str],
    bundled: bool = False,
) -> int:
    """The status the relay's request to a gateway gets, whose certificate
    comes from a test CA that is in the system store or not. ``bundled``:
    the probe's ``certifi`` (the bundled roots) is a stand-in whose bundle
    is the system's without the test CA (mcp 2.x installs no certifi)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    certificate = loopback_certificate(tmp_path)
    bundle = tmp_path / "system-bundle.pem"
    system = Path(_SYSTEM_BUNDLE).read_bytes()
    bundle.write_bytes(
        system + b"\n" + certificate.cert.read_bytes() if in_system_store else system
    )
    real = os.path.realpath(_SYSTEM_BUNDLE)
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    command = (
        f'mount --bind "{bundle}" "{real}" && exec "{sys.executable}" "{script}" '
        f'"{Path.cwd()}" "{certificate.cert}" "{certificate.key}" \'{json.dumps(env)}\''
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "NODE_EXTRA_CA_CERTS",
            "CLAUDE_CODE_CERT_STORE",
        )
        and "proxy" not in k.lower()
    }
    if bundled:
        roots = tmp_path / "bundled-roots.pem"
        roots.write_bytes(Path(_SYSTEM_BUNDLE).read_bytes())
        stand_in = tmp_path / "stand-in-certifi"
        stand_in.mkdir()
        (stand_in / "certifi.py").write_text(
            f"def where():\n    return {str(roots)!r}\n"
        )
        clean["PYTHONPATH"] = str(stand_in)
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return int(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_ca_only_in_the_system_store_is_trusted(
    mount_namespace: None, tmp_path: Path
) -> None:
    assert _status(tmp_path, in_system_store=True, env={}) == 200
    # The control: without it in the store, the gateway's certificate fails.
    assert _status(tmp_path / "control", in_system_store=False, env={}) == 502


def test_claude_code_cert_store_narrows_the_set(
    mount_namespace: None, tmp_path: Path
) -> None:
    narrowed = {"CLAUDE_CODE_CERT_STORE": "bundled"}
    status = _status(tmp_path, in_system_store=True, env=narrowed, bundled=True)
    assert status == 502
    system = {"CLAUDE_CODE_CERT_STORE": " System "}
    status = _status(tmp_path / "system", True, env=system, bundled=True)
    assert status == 200


@pytest.mark.parametrize("variable", ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"])
def test_node_extra_ca_certs_and_ssl_cert_file_add_to_the_set(
    mount_namespace: None, tmp_path: Path, variable: str
) -> None:
    # ``_status`` writes the served certificate (its own CA) to
    # loopback.pem in the directory: the variable names that file.
    env = {variable: str(tmp_path / "loopback.pem")}
    assert _status(tmp_path, in_system_store=False, env=env) == 200
