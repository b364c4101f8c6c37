"""The case-law search tool the fork's tests and demo define again and again:
an enum parameter next to an array parameter, the shape upstream issue #1243
measured (17 of 18 turns with unparseable array arguments); and
``LegalServer``, the SDK MCP server that serves it to the real CLI (the e2e
tests and ``tools/demo.py``)."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from claude_agent_sdk import create_sdk_mcp_server, tool

CASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "jurisdiction": {"type": "string", "enum": ["se", "no", "dk"]},
        "terms": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["jurisdiction", "terms"],
    # Closed, as strict mode requires, so a strict tool serves it unchanged.
    "additionalProperties": False,
}
GOOD_EXAMPLE: dict[str, Any] = {"jurisdiction": "se", "terms": ["payout"]}
EXTRA_FIELDS: dict[str, Any] = {"title": "Case search", "x-acme-tier": 2}
STRICT_FIELDS: dict[str, Any] = {"strict": True, "input_examples": [GOOD_EXAMPLE]}
"""What the relay adds to the strict ``search`` tool's definition."""
FORK_FIELDS: dict[str, Any] = {**STRICT_FIELDS, "extra_fields": EXTRA_FIELDS}
"""Every field the fork's ``tool()`` takes beyond upstream's (which refuses them)."""

SERVER = "legal"
SEARCH = f"mcp__{SERVER}__search"  # the tools' names in the Messages API
LOOKUP = f"mcp__{SERVER}__lookup"
ARGUMENTS: dict[str, Any] = {"jurisdiction": "se", "terms": ["payout", "claims"]}
"""What the scripted model calls ``search`` with."""


def answer(args: dict[str, Any]) -> str:
    """What ``search`` answers."""
    terms = " + ".join(args["terms"])
    return f"2 cases for {terms} in {args['jurisdiction']}: NJA 2019 s. 123; NJA 2021 s. 45"


class LegalServer:
    """``search`` (``CASE_SCHEMA``; ``fields``, e.g. ``strict``, go to ``tool()``)
    and, with ``lookup``, a plain ``lookup``: an SDK MCP server in ``config``
    that records each search's arguments in ``calls`` and awaits ``on_search``
    (if given) before it answers."""

    def __init__(
        self,
        fields: dict[str, Any] | None = None,
        *,
        lookup: bool = False,
        on_search: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.calls: list[dict[str, Any]] = []

        async def search(args: dict[str, Any]) -> dict[str, Any]:
            self.calls.append(args)
            if on_search is not None:
                await on_search()
            return {"content": [{"type": "text", "text": answer(args)}]}

        async def find(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "NJA 2019 s. 123"}]}

        schema = copy.deepcopy(CASE_SCHEMA)
        tools = [
            tool("search", "Search case law", schema, **copy.deepcopy(fields or {}))(
                search
            )
        ]
        if lookup:
            tools.append(
                tool("lookup", "Look up a case by citation", {"citation": str})(find)
            )
        self.config = create_sdk_mcp_server(SERVER, tools=tools)
