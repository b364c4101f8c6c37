"""Where upstream's transport calls into the relay: one ``CliRelay`` per
subprocess transport. Light: the relay itself is imported only when
``tool_fields_relay`` is on."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Coroutine, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._task_compat import TaskHandle, spawn_detached

if TYPE_CHECKING:
    from anyio.abc import Process

    from ...types import ClaudeAgentOptions
    from .lifecycle import ToolFieldsRelay


class _Transport(Protocol):
    _relay: CliRelay


_T = TypeVar("_T", bound=_Transport)


class CliRelay:
    """The relay's part in one transport's life: prepared (every refusal)
    before the CLI starts, started and pointed at from its environment,
    watched while it runs, stopped with it."""

    def __init__(self, options: ClaudeAgentOptions) -> None:
        self._options = options
        self._relay: ToolFieldsRelay | None = None
        self._watch: TaskHandle | None = None

    def prepare(self) -> None:
        """Raise ``ToolFieldsRelayError`` for a setting the relay cannot work
        with; with the relay off, one notice for tools whose fields the CLI
        drops."""
        options = self._options
        env = {**os.environ, **options.env}
        if options.tool_fields_relay:
            from .lifecycle import prepare_for_cli

            self._relay = prepare_for_cli(
                options.mcp_servers,
                env,
                options.strict_mcp_servers,
                options.tool_fields_report,
            )
            return
        if options.strict_mcp_servers:
            from .lifecycle import check_strict_mcp_servers

            check_strict_mcp_servers(
                options.strict_mcp_servers, options.mcp_servers, False
            )
        from .evidence import relay_off_notice

        relay_off_notice(options.mcp_servers, options.tool_fields_report, env)

    async def start(self, process_env: MutableMapping[str, str]) -> None:
        """Start the relay and point ``process_env``'s ``ANTHROPIC_BASE_URL``
        (or, with none of the caller's own, ``HTTPS_PROXY``) at it."""
        if self._relay is not None:
            await self._relay.start()
            self._relay.point_cli(process_env)

    def watch(self, process: Process) -> None:
        """End the CLI within seconds when the relay cannot reach the API, so
        the transport raises why (not minutes of the CLI's retries of 502s)."""
        if self._relay is not None:
            self._watch = spawn_detached(self._relay.watch(process.terminate))

    def raise_failure(self, transport: Any) -> None:
        """Raise, as ``transport``'s exit error, why the relay ended the CLI
        (it could not reach the API), if it did."""
        failure = None if self._relay is None else self._relay.failure
        if failure is not None:
            transport._exit_error = failure
            raise failure

    async def stop(self) -> None:
        """Stop the relay, if one runs. Safe to call more than once."""
        relay, self._relay = self._relay, None
        watch, self._watch = self._watch, None
        if watch is not None and not watch.done():
            watch.cancel()
        if relay is not None:
            await relay.stop()

    @staticmethod
    def stopped_on_failure(
        connect: Callable[[_T], Coroutine[Any, Any, None]],
    ) -> Callable[[_T], Coroutine[Any, Any, None]]:
        """``connect``, after which a relay started for a CLI that did not
        start goes with it (a decorator on the transport's ``connect``)."""

        @functools.wraps(connect)
        async def connect_with_relay(transport: _T) -> None:
            try:
                await connect(transport)
            except BaseException:
                await transport._relay.stop()
                raise

        return connect_with_relay

    @staticmethod
    def stopped_after(
        close: Callable[[_T], Coroutine[Any, Any, None]],
    ) -> Callable[[_T], Coroutine[Any, Any, None]]:
        """``close``, then stop the relay if one runs (a decorator on the
        transport's ``close``)."""

        @functools.wraps(close)
        async def close_with_relay(transport: _T) -> None:
            try:
                await close(transport)
            finally:
                await transport._relay.stop()

        return close_with_relay
