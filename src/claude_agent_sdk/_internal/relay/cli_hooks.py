"""Where upstream's transport and MCP bridge call into the relay: one
``CliRelay`` per subprocess transport, and the record of the tools SDK servers
mark ``_meta["anthropic/strict"]: true``. Light: the relay itself is imported
only when ``tool_fields_relay`` is on."""

from __future__ import annotations

import contextlib
import functools
import os
import weakref
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


_Response = TypeVar("_Response")

# SDK servers whose tools/list responses are watched for tools marked
# ``_meta["anthropic/strict"]: true`` (``strict_mcp_servers``), with the names
# of the tools seen so marked. Only servers a relay asked for are watched.
_meta_strict: weakref.WeakKeyDictionary[Any, frozenset[str]] = (
    weakref.WeakKeyDictionary()
)


def watch_meta_strict(server: Any) -> None:
    """Note, from now on, which of ``server``'s listed tools carry
    ``_meta["anthropic/strict"]: true`` (see :func:`meta_strict_tools`)."""
    # An object that cannot be weakly referenced is not watched.
    with contextlib.suppress(TypeError):
        _meta_strict.setdefault(server, frozenset())


def note_listed_tools(server: Any, message: Any, response: _Response) -> _Response:
    """``response`` to ``message``, having recorded the strict-marked tools of a
    ``tools/list`` response of a watched ``server`` (of any other, nothing)."""
    if message.get("method") == "tools/list":
        _note_listed_tools(server, response)
    return response


def _note_listed_tools(server: Any, response: Any) -> None:
    try:
        before = _meta_strict.get(server)
    except TypeError:
        return
    if before is None or not isinstance(response, dict):
        return
    result = response.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return
    marked = {
        listed["name"]
        for listed in tools
        if isinstance(listed, dict)
        and isinstance(listed.get("name"), str)
        and isinstance(listed.get("_meta"), dict)
        and listed["_meta"].get("anthropic/strict") is True
    }
    if not marked <= before:
        # A new frozenset, so a reader on another thread never sees it change.
        _meta_strict[server] = before | marked


def meta_strict_tools(server: Any) -> frozenset[str]:
    """The tools of a watched ``server`` its ``tools/list`` marked
    ``_meta["anthropic/strict"]: true`` so far."""
    try:
        return _meta_strict.get(server, frozenset())
    except TypeError:
        return frozenset()
