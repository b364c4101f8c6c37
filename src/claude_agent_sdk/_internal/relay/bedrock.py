"""SigV4 signing of the Bedrock requests the relay changes (``bedrock`` extra).

Signs with the caller's own credentials through botocore, imported only when
Bedrock is used with SigV4; without credentials the request goes as sent,
with a WARNING. Nothing botocore logs while it signs for the relay reaches a
handler. docs/relay.md ("Bedrock credentials") has the details."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from .evidence import ToolFieldsRelayError

logger = logging.getLogger(__name__)

_SIGNED_BY_RELAY = frozenset(
    {b"authorization", b"x-amz-date", b"x-amz-security-token", b"x-amz-content-sha256"}
)
_ALGORITHM = b"AWS4-HMAC-SHA256 "


class _WhileSigning(logging.Filter):
    """Drops the records botocore makes on the thread signing for the relay,
    while it signs; every other record (the application's own botocore use)
    passes."""

    def __init__(self) -> None:
        super().__init__()
        self._signing = threading.local()
        self._filtered: set[str] = set()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self._signing, "on", False)

    @contextlib.contextmanager
    def signing(self) -> Iterator[None]:
        self.cover()
        self._signing.on = True
        try:
            yield
        finally:
            self._signing.on = False

    def cover(self) -> None:
        """On every botocore logger there is (a filter applies only to the
        records made on its own logger, not to those of its children)."""
        names = [
            name
            for name in list(logging.root.manager.loggerDict)
            if name == "botocore" or name.startswith("botocore.")
        ]
        if len(names) == len(self._filtered):
            return
        with self._lock:
            for name in names:
                if name not in self._filtered:
                    logging.getLogger(name).addFilter(self)
                    self._filtered.add(name)


_QUIET = _WhileSigning()


class BedrockSigner:
    """Signs requests again with the caller's AWS credentials (botocore)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        if importlib.util.find_spec("botocore") is None:
            raise ToolFieldsRelayError(
                "tool_fields_relay=True on Amazon Bedrock with AWS credentials "
                "needs botocore to sign the changed requests again: install "
                "claude-agent-sdk[bedrock] (or use AWS_BEARER_TOKEN_BEDROCK)"
            )
        self._env = dict(env)
        self._credentials: Any = None
        self._resolved = False
        self._lock = threading.Lock()

    def signed(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether ``headers`` carry a SigV4 signature."""
        return any(
            name.lower() == b"authorization" and value.startswith(_ALGORITHM)
            for name, value in headers
        )

    def _resolve(self) -> Any:
        with self._lock:
            if not self._resolved:
                self._credentials = resolve_credentials(self._env)
                self._resolved = True
                if self._credentials is None:
                    logger.warning(
                        "tool_fields_relay found no AWS credentials for Bedrock "
                        "in the environment Claude Code is given"
                    )
            return self._credentials

    async def sign(
        self,
        method: str,
        url: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
    ) -> list[tuple[bytes, bytes]] | None:
        """``headers`` signed again for ``method url`` with ``body``, or None
        without credentials. Runs botocore (which may refresh credentials
        over the network) on a worker thread."""
        scope = _scope(headers)
        if scope is None:
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None, self._sign_blocking, method, url, headers, body, scope
        )

    def _sign_blocking(
        self,
        method: str,
        url: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        scope: tuple[str, str],
    ) -> list[tuple[bytes, bytes]] | None:
        # Imported first, so that their loggers exist to be quietened.
        import botocore.auth
        import botocore.awsrequest
        import botocore.credentials
        import botocore.session  # noqa: F401

        with _QUIET.signing():
            return self._sign_quietly(method, url, headers, body, scope)

    def _sign_quietly(
        self,
        method: str,
        url: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        scope: tuple[str, str],
    ) -> list[tuple[bytes, bytes]] | None:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = self._resolve()
        if credentials is None:
            return None
        _QUIET.cover()  # and any botocore logger resolving them made
        region, service = scope
        kept = [(n, v) for n, v in headers if n.lower() not in _SIGNED_BY_RELAY]
        request = AWSRequest(
            method=method,
            url=url,
            data=body,
            headers={
                n.decode("latin-1"): v.decode("latin-1")
                for n, v in kept
                if n.lower() not in (b"host", b"content-length")
            },
        )
        request.headers["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
        SigV4Auth(credentials.get_frozen_credentials(), service, region).add_auth(
            request
        )
        added = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
            if name.lower().encode("latin-1") in _SIGNED_BY_RELAY
        ]
        return kept + added


def _scope(headers: list[tuple[bytes, bytes]]) -> tuple[str, str] | None:
    """(region, service) of Claude Code's own signature."""
    for name, value in headers:
        if name.lower() == b"authorization" and value.startswith(_ALGORITHM):
            for part in value[len(_ALGORITHM) :].split(b","):
                key, _, rest = part.strip().partition(b"=")
                if key == b"Credential":
                    fields = rest.decode("latin-1").split("/")
                    if len(fields) == 5:
                        return fields[2], fields[3]
    return None


def resolve_credentials(env: Mapping[str, str]) -> Any:
    """The caller's AWS credentials per ``env``, as botocore resolves them,
    or None."""
    from botocore.credentials import EnvProvider
    from botocore.session import Session

    if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        return EnvProvider(environ=dict(env)).load()
    session = Session()
    for setting, variable in (
        ("AWS_PROFILE", "profile"),
        ("AWS_CONFIG_FILE", "config_file"),
        ("AWS_SHARED_CREDENTIALS_FILE", "credentials_file"),
    ):
        if env.get(setting):
            session.set_config_variable(variable, env[setting])
    try:
        return session.get_credentials()
    except Exception as error:  # noqa: BLE001 - botocore's many resolver errors
        logger.warning(
            "tool_fields_relay could not resolve AWS credentials: %s",
            type(error).__name__,
        )
        return None
