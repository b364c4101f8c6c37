"""The tool-fields relay's per-session certificate authority (proxy mode).

A CA whose key never leaves memory signs the API host's certificate; Claude
Code trusts it through ``NODE_EXTRA_CA_CERTS``, a 0600 file removed when the
relay stops (docs/relay.md, "Limits", has how it is constrained)."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import logging
import os
import ssl
import tempfile
import weakref
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

FIRST_PARTY_HOST = "api.anthropic.com"


class SessionCA:
    """A CA for one relay, and the server context for ``FIRST_PARTY_HOST``."""

    def __init__(self, host: str = FIRST_PARTY_HOST) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        now = datetime.datetime.now(datetime.timezone.utc)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name(
            [
                x509.NameAttribute(
                    NameOID.COMMON_NAME, "claude-agent-sdk relay session CA"
                )
            ]
        )
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            # Only ever for the one host, even if the key were to leak: a
            # leaf naming an IP address in its SAN is outside the permitted
            # DNS subtree only to verifiers that say so, so every IPv4 and
            # IPv6 address is excluded outright.
            .add_extension(
                x509.NameConstraints(
                    permitted_subtrees=[x509.DNSName(host)],
                    excluded_subtrees=[
                        x509.IPAddress(ipaddress.ip_network("0.0.0.0/0")),
                        x509.IPAddress(ipaddress.ip_network("::/0")),
                    ],
                ),
                critical=True,
            )
            # Key identifiers: required by strict X.509 verification (the
            # default of Python 3.13's ssl and of other strict clients).
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        leaf_key = ec.generate_private_key(ec.SECP256R1())
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(ca_name)
            .public_key(leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(
                x509.BasicConstraints(ca=False, path_length=None), critical=True
            )
            .add_extension(
                x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False
            )
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        del ca_key  # signed the one leaf; never stored
        self.ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
        chain = leaf.public_bytes(serialization.Encoding.PEM) + leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        self.server_context = _server_context(chain)
        self.bundle: Path | None = None
        self._remover: weakref.finalize[Any, Any] | None = None

    def write_bundle(self, user_extra: str | None) -> Path:
        """The file for Claude Code's ``NODE_EXTRA_CA_CERTS``: this CA, then
        the caller's own extra certificates (a file that cannot be read is
        left out with a warning, as Node does)."""
        content = self.ca_pem
        if user_extra:
            try:
                content += b"\n" + Path(user_extra).read_bytes()
            except OSError as error:
                logger.warning(
                    "tool_fields_relay is ignoring extra certs from NODE_EXTRA_CA_CERTS "
                    "(%s), load failed: %s",
                    user_extra,
                    error.strerror or type(error).__name__,
                )
        remove_stale_bundles()
        fd, name = tempfile.mkstemp(
            prefix=f"{_BUNDLE_PREFIX}{os.getpid()}-", suffix=".pem"
        )
        try:
            os.write(fd, content)  # mkstemp's file is 0600
        finally:
            os.close(fd)
        self.bundle = Path(name)
        # Removed at stop; failing that, when this object goes or at exit.
        self._remover = weakref.finalize(self, _unlink, self.bundle)
        return self.bundle

    def remove(self) -> None:
        self.bundle = None
        if self._remover is not None:
            self._remover()


_BUNDLE_PREFIX = "claude-agent-sdk-relay-"


def remove_stale_bundles(folder: str | None = None) -> list[Path]:
    """Remove the CA bundles of relays whose process is gone (a SIGKILL, or a
    SIGTERM without handler, runs no cleanup): each name carries its
    process id. Only the caller's own files, and only those of dead
    processes, are removed; the paths removed are returned."""
    removed: list[Path] = []
    if os.name != "posix":  # os.kill(pid, 0) would end the process there
        return removed
    root = Path(folder or tempfile.gettempdir())
    try:
        candidates = list(root.glob(f"{_BUNDLE_PREFIX}*-*.pem"))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for path in candidates:
        pid_text = path.name[len(_BUNDLE_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            if uid is not None and path.stat().st_uid != uid:
                continue
            path.unlink()
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's, or cannot tell: kept
    return True


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _server_context(chain: bytes) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    # HTTP/1.1 only: the relay speaks h11 on the terminated connection.
    context.set_alpn_protocols(["http/1.1"])
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        fd = memfd_create("claude-agent-sdk-relay-leaf", os.MFD_CLOEXEC)
        try:
            os.write(fd, chain)
            context.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return context
    fd, name = tempfile.mkstemp(prefix="claude-agent-sdk-relay-", suffix=".key")
    try:
        try:
            os.write(fd, chain)  # mkstemp's file is 0600
        finally:
            os.close(fd)
        context.load_cert_chain(name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(name).unlink()
    return context
