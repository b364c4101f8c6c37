"""tools/call argument validation, as the CLI sees it.

The error text Claude reads for invalid arguments must stay what
``jsonschema.validate`` produces, a tool whose schema is itself invalid must
keep answering with an error result, and (patch 0004) a tool's schema is
checked against its metaschema once, not on every call.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import connected

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "jurisdiction": {"type": "string", "enum": ["se", "no"]},
        "terms": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer"},
    },
    "required": ["jurisdiction", "terms"],
}
BAD_ARGUMENTS: list[dict[str, Any]] = [
    {},
    {"jurisdiction": "uk", "terms": []},
    {"jurisdiction": "se", "terms": "payout claims"},
    {"jurisdiction": "se", "terms": ["a", 2]},
    {"jurisdiction": "se", "terms": [], "limit": "ten"},
]


async def _echo(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


def _expected_error(arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    try:
        jsonschema.validate(instance=arguments, schema=schema)
    except jsonschema.ValidationError as e:
        return f"Input validation error: {e.message}"
    raise AssertionError(f"{arguments} is valid")


async def test_invalid_arguments_get_jsonschemas_error_text() -> None:
    server = create_sdk_mcp_server("srv", tools=[tool("search", "S", SCHEMA)(_echo)])
    async with connected(srv=server) as peer:
        for arguments in BAD_ARGUMENTS:
            result = await peer.call_tool("srv", "search", arguments)
            assert result["isError"] is True
            assert result["content"] == [
                {"type": "text", "text": _expected_error(arguments, SCHEMA)}
            ]
        good = await peer.call_tool(
            "srv", "search", {"jurisdiction": "se", "terms": []}
        )
        assert good == {"content": [{"type": "text", "text": "ok"}], "isError": False}


async def test_a_tool_with_an_invalid_schema_answers_every_call_with_an_error() -> None:
    broken = {"type": "object", "properties": {"n": {"type": "no-such-type"}}}
    server = create_sdk_mcp_server("srv", tools=[tool("broken", "B", broken)(_echo)])
    async with connected(srv=server) as peer:
        texts = set()
        for _ in range(3):
            result = await peer.call_tool("srv", "broken", {"n": 1})
            assert result["isError"] is True
            texts.add(result["content"][0]["text"])
        assert len(texts) == 1
        assert "no-such-type" in texts.pop()


@pytest.mark.requires_patch("compiled-argument-validators")
async def test_the_schema_is_checked_once_per_tool_not_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[object] = []
    for cls in {
        jsonschema.Draft202012Validator,
        jsonschema.validators.validator_for(SCHEMA),
    }:
        original = cls.check_schema.__func__

        def counting(
            cls: type[Any], /, schema: Any, *a: Any, _o: Any = original, **k: Any
        ) -> Any:
            checked.append(schema)
            return _o(cls, schema, *a, **k)

        monkeypatch.setattr(cls, "check_schema", classmethod(counting))

    server = create_sdk_mcp_server("srv", tools=[tool("search", "S", SCHEMA)(_echo)])
    async with connected(srv=server) as peer:
        checked.clear()  # whatever defining the tool checked does not count
        for _ in range(20):
            await peer.call_tool("srv", "search", {"jurisdiction": "se", "terms": []})
        for arguments in BAD_ARGUMENTS:
            await peer.call_tool("srv", "search", arguments)
    assert len(checked) == 1, f"schema checked {len(checked)} times for 25 calls"
