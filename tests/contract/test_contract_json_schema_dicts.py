"""A JSON Schema dict is served as the schema it is, even without ``properties``.

Upstream reads a dict as JSON Schema only when it has both ``type`` and
``properties``; otherwise as ``{name: type}`` shorthand, so ``{"type":
"object"}`` (a tool without arguments) became a tool requiring a string
parameter named ``type``.
"""

from __future__ import annotations

from typing import Any

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import assert_json, connected

FEATURE = pytest.mark.requires_patch("json-schema-dicts")


async def _echo(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": repr(sorted(args))}]}


SCHEMAS: dict[str, dict[str, Any]] = {
    "no-arguments": {"type": "object"},
    "top-level-anyOf": {
        "type": "object",
        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
    },
    "ref-and-defs": {
        "$ref": "#/$defs/Args",
        "$defs": {"Args": {"type": "object", "properties": {"id": {}}}},
    },
    "closed-no-properties": {"type": "object", "additionalProperties": False},
}


@FEATURE
@pytest.mark.parametrize("name", list(SCHEMAS))
async def test_schema_dict_without_properties_is_listed_and_called_as_written(
    name: str,
) -> None:
    schema = SCHEMAS[name]
    arguments = {} if name in ("no-arguments", "closed-no-properties") else {"id": 1}
    config = create_sdk_mcp_server("srv", tools=[tool("t", "d", schema)(_echo)])
    async with connected(srv=config) as cli:
        listed = (await cli.listed("srv"))["t"]
        result = await cli.call_tool("srv", "t", arguments)

    assert_json(listed["inputSchema"], {"type": "object", **schema})
    assert result["isError"] is False, result
    assert result["content"][0]["text"] == repr(sorted(arguments))


@FEATURE
async def test_a_top_level_anyof_is_enforced() -> None:
    config = create_sdk_mcp_server(
        "srv", tools=[tool("t", "d", SCHEMAS["top-level-anyOf"])(_echo)]
    )
    async with connected(srv=config) as cli:
        refused = await cli.call_tool("srv", "t", {})
        accepted = await cli.call_tool("srv", "t", {"name": "x"})

    assert refused["isError"] is True
    assert accepted["isError"] is False, accepted


async def test_shorthand_with_a_parameter_named_type_is_still_shorthand() -> None:
    config = create_sdk_mcp_server("srv", tools=[tool("t", "d", {"type": str})(_echo)])
    async with connected(srv=config) as cli:
        listed = (await cli.listed("srv"))["t"]
        result = await cli.call_tool("srv", "t", {"type": "x"})

    assert_json(
        listed["inputSchema"],
        {
            "type": "object",
            "properties": {"type": {"type": "string"}},
            "required": ["type"],
        },
    )
    assert result["isError"] is False
