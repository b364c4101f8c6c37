"""Python types in @tool schemas: served faithfully, and never refused.

Every definition upstream 0.2.189 accepts is still accepted (the fork is a
drop-in): types with a JSON Schema form get it, anything else is served as
upstream serves it (a string) with a UserWarning naming tool, parameter and
type. A call with a JSON value reaches the handler.
"""

from __future__ import annotations

import datetime
import enum
import uuid
import warnings
from typing import Any, Literal

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve

FEATURE = pytest.mark.requires_patch("json-schema-from-types")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Opaque:
    pass


CASES = [
    (datetime.date, {"type": "string", "format": "date"}, "2026-12-01"),
    (datetime.datetime, {"type": "string", "format": "date-time"}, "2026-12-01T00:00:00Z"),
    (datetime.time, {"type": "string", "format": "time"}, "12:00:00"),
    (uuid.UUID, {"type": "string", "format": "uuid"}, str(uuid.UUID(int=1))),
    (dict[int, str], {"type": "object", "additionalProperties": {"type": "string"}}, {"1": "a"}),
    (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, {"a": 1}),
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}, "a"),
    (Color, {"type": "string", "enum": ["red", "blue"]}, "red"),
    (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
]  # fmt: skip


@FEATURE
@pytest.mark.parametrize(("py_type", "expected", "value"), CASES)
async def test_type_is_served_faithfully_and_a_json_value_reaches_the_handler(
    py_type: Any, expected: dict[str, Any], value: Any
) -> None:
    received: list[dict[str, Any]] = []

    @tool("t", "d", {"v": py_type})
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        received.append(args)
        return {"content": [{"type": "text", "text": "ok"}]}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = create_sdk_mcp_server("srv", tools=[handler])
    tools, results = await serve(config, [("t", {"v": value})])

    assert tools[0]["inputSchema"]["properties"]["v"] == expected
    assert not results[0].get("isError"), results[0]
    assert received == [{"v": value}]


@FEATURE
async def test_a_type_without_a_json_schema_form_warns_and_is_served_as_upstream() -> (
    None
):
    received: list[dict[str, Any]] = []

    with pytest.warns(UserWarning, match=r"Tool 'legacy'.*'when'.*Opaque"):

        @tool("legacy", "d", {"when": Opaque})
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            received.append(args)
            return {"content": [{"type": "text", "text": "ok"}]}

        config = create_sdk_mcp_server("srv", tools=[handler])

    tools, results = await serve(config, [("legacy", {"when": "tomorrow"})])
    assert tools[0]["inputSchema"]["properties"]["when"] == {"type": "string"}
    assert received == [{"when": "tomorrow"}]
