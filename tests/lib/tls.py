"""A throwaway certificate authority for loopback TLS in tests.

``cryptography`` comes with mcp (through ``pyjwt[crypto]``), so no test
dependency is added. The certificate names ``127.0.0.1`` and ``localhost``.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class _Served:
    """A certificate (``cert``, ``key``) a stand-in serves, and the CA
    (``trusted``) a client of it trusts."""

    cert: Path
    key: Path

    @property
    def trusted(self) -> Path:
        raise NotImplementedError

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.trusted))

    def _write(self, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> None:
        self.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self.key.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    """A certificate of ``subject`` for ``key``, issued by ``issuer``, valid
    from five minutes ago for a day."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


@dataclass
class LoopbackCertificate(_Served):
    cert: Path
    key: Path

    @property
    def trusted(self) -> Path:
        return self.cert  # its own CA


def loopback_certificate(directory: Path) -> LoopbackCertificate:
    """A self-signed certificate (its own CA) for the loopback names."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "relay test CA")])
    cert = (
        _builder(name, name, key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    paths = LoopbackCertificate(directory / "loopback.pem", directory / "loopback.key")
    paths._write(cert, key)
    return paths


@dataclass
class HostCertificate(_Served):
    """A test CA (``ca``, to trust) and a certificate it issued for ``host``."""

    ca: Path
    cert: Path
    key: Path

    @property
    def trusted(self) -> Path:
        return self.ca


def host_certificate(directory: Path, host: str) -> HostCertificate:
    """A throwaway CA and a server certificate for ``host`` signed by it, as
    a TLS-intercepting stand-in for a public host needs (the client is told
    to trust ``ca``, e.g. through ``NODE_EXTRA_CA_CERTS``)."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, "first-party test CA")]
    )
    ca = (
        _builder(ca_name, ca_name, ca_key)
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
        # Key identifiers, which strict X.509 verification (Python 3.13's
        # default) requires.
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    cert = (
        _builder(subject, ca_name, key)
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = HostCertificate(
        directory / "first-party-ca.pem",
        directory / f"{host}.pem",
        directory / f"{host}.key",
    )
    paths.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths._write(cert, key)
    return paths
