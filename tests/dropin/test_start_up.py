"""Start-up of plain tools costs what upstream's does (issue 29, item 4).

A tool that uses none of the new arguments is defined and its server built
without the schema checks: strict mode's modules are not imported, and its
schema is not walked. What the checks notice about it (they cannot refuse
it) is logged at its server's first ``tools/list`` or ``tools/call``, once.
``tools/bench_startup.py`` measures the difference; these tests keep it from
coming back unnoticed.

The first test holds on pristine upstream too (it has no such modules and
walks nothing), so it is not marked; the others need the patch they name.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import call_tool, serve

# The modules of the schema checks and of strict mode.
STRICT_MODULES = ("schema_checks", "schema_graph", "transform")

# Defines plain tools of each kind (schemas with what the checks would
# report among them) and their server, in a fresh interpreter, and prints
# which strict modules were imported and which subschemas were read.
START_UP = r"""
import json, sys
from typing import TypedDict

read = []

class Watched(dict):
    # A subschema that records being read; upstream never reads one at start.
    def __getitem__(self, key):
        read.append(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        read.append(key)
        return super().get(key, default)

    def __contains__(self, key):
        read.append(key)
        return super().__contains__(key)

    def __iter__(self):
        read.append("iter")
        return super().__iter__()

    def keys(self):
        read.append("keys")
        return super().keys()

    def values(self):
        read.append("values")
        return super().values()

    def items(self):
        read.append("items")
        return super().items()

import claude_agent_sdk
from claude_agent_sdk import create_sdk_mcp_server, tool

def loaded():
    return sorted(
        name.rsplit(".", 1)[1] for name in sys.modules
        if name.rsplit(".", 1)[-1] in sys.argv[1:]
        and name.startswith("claude_agent_sdk.")
    )

after_import = loaded()

async def handler(args):
    return {"content": []}

Query = TypedDict("Query", {"text": str, "limit": int})
schemas = [
    {"text": str, "limit": int},
    Query,
    {"type": "object", "properties": {
        "q": Watched({"$ref": "https://example.invalid/q.json"}),
        "p": Watched({"type": "string", "pattern": "(?<n>a)"}),
        "n": Watched({"type": "integer", "minimum": 0}),
    }, "required": ["n"]},
    {"type": "object", "properties": {"a": Watched({"$ref": "#/$defs/A"})},
     "$defs": {"A": Watched({"type": "strng"})}},
]
tools = [tool(f"t{i}", "d", schema)(handler) for i, schema in enumerate(schemas)]
create_sdk_mcp_server("srv", tools=tools)
print(json.dumps({"import": after_import, "start-up": loaded(), "read": read}))
"""


def _fresh_interpreter(script: str) -> dict[str, Any]:
    """What ``script`` prints last, as JSON, run by a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", script, *STRICT_MODULES],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    seen: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return seen


def test_plain_tools_start_without_the_schema_checks() -> None:
    seen = _fresh_interpreter(START_UP)
    assert seen == {"import": [], "start-up": [], "read": []}, seen


# A server of clean JSON Schema tools (what most published tools are)
# answers its first tools/list, in a fresh interpreter; prints which strict
# modules were imported by then.
FIRST_LISTING = r"""
import asyncio, json, sys
from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve

async def handler(args):
    return {"content": []}

schema = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "terms"},
                   "n": {"type": "integer", "minimum": 1, "maximum": 50}},
    "required": ["q"],
}
server = create_sdk_mcp_server(
    "srv", tools=[tool(f"t{i}", "d", schema)(handler) for i in range(20)]
)
listed, _ = asyncio.run(serve(server, []))
assert len(listed) == 20
print(json.dumps(sorted(
    name.rsplit(".", 1)[1] for name in sys.modules
    if name.rsplit(".", 1)[-1] in sys.argv[1:]
    and name.startswith("claude_agent_sdk.")
)))
"""


@pytest.mark.requires_patch("strict-schema-checks")
def test_a_clean_schemas_first_listing_loads_none_of_the_checks() -> None:
    # The one-walk check (plain_schema) vouches for these schemas, so the
    # checks they could not fail at are never imported (issue 29, item 4:
    # loading them was most of a JSON Schema server's first tools/list).
    loaded: Any = _fresh_interpreter(FIRST_LISTING)  # a JSON list here
    assert loaded == []


class _Caught(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _sdk_records() -> Iterator[list[str]]:
    """The SDK's log records inside the block (none is required), with
    warnings as errors: a notice is never a warning."""
    caught = _Caught()
    logger = logging.getLogger("claude_agent_sdk")
    logger.addHandler(caught)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield caught.messages
    finally:
        logger.removeHandler(caught)


async def _ok(args: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


@pytest.mark.requires_patch("schema-checks")
async def test_a_plain_tool_is_checked_at_its_servers_first_use_once() -> None:
    from claude_agent_sdk._internal.definition.notices import forget_notices

    schema = {"type": "object", "properties": {"q": {"$ref": "https://x.invalid/q"}}}
    refers = "Tool 'q': input_schema refers outside itself"
    with _sdk_records() as records:
        listed_first = create_sdk_mcp_server("srv", tools=[tool("q", "d", schema)(_ok)])
        called_first = create_sdk_mcp_server("srv", tools=[tool("q", "d", schema)(_ok)])
        assert records == []  # start-up: nothing walked, nothing logged

        # (A call that reaches the reference is refused and logged by the
        # validator, not by these checks: this one does not reach it.)
        def checks() -> list[str]:
            return [m for m in records if m.startswith(refers)]

        tools, [result] = await serve(listed_first, [("q", {})])
        assert len(checks()) == 1
        assert tools[0]["inputSchema"] == schema and result["isError"] is False

        forget_notices()  # from here a second check would log again
        await serve(listed_first, [("q", {})])
        assert len(checks()) == 1  # checked once, at the first listing

        assert (await call_tool(called_first, "q", {}))["isError"] is False
        assert len(checks()) == 2


# A query's cross-server cap check, for servers without and with strict tools.
QUERY_CHECK = r"""
import json, sys
from claude_agent_sdk import create_sdk_mcp_server, tool
from claude_agent_sdk._internal.definition.hooks import check_strict_tool_limits

async def handler(args):
    return {"content": []}

def server(prefix, count, **kwargs):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tools = [tool(f"{prefix}{i}", "d", schema, **kwargs)(handler) for i in range(count)]
    return create_sdk_mcp_server(prefix, tools=tools)

check_strict_tool_limits({"plain": server("p", 30)})
loaded = sorted(m for m in sys.modules if m.rsplit(".", 1)[-1] in sys.argv[1:])
try:  # 11 + 11 strict tools: each server within the cap of 20, not both
    check_strict_tool_limits({"a": server("a", 11, strict=True), "b": server("b", 11, strict=True)})
    refused = ""
except ValueError as error:
    refused = str(error)
print(json.dumps({"loaded": loaded, "refused": refused}))
"""


@pytest.mark.requires_patch("strict-schema-checks")
def test_a_query_of_plain_tools_does_not_load_strict_mode() -> None:
    seen = _fresh_interpreter(QUERY_CHECK)
    assert seen["loaded"] == [], seen
    assert "strict tools" in seen["refused"] and "22" in seen["refused"], seen
