"""The tools SDK servers mark ``_meta["anthropic/strict"]: true`` on
``tools/list``, noted as the listings pass upstream's MCP bridge
(``definition.hooks.answered``), for the relay's ``strict_mcp_servers``."""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, TypeVar

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
