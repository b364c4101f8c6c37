"""Python types in @tool schemas: a drop-in for plain tools, faithful when asked.

Every definition upstream 0.2.189 accepts is still accepted (the fork is a
drop-in): a tool without ``strict`` or ``input_examples`` is served exactly
the schema upstream serves, with no warning, and validated as upstream
validates it. A tool that opts in (``strict=True`` or ``input_examples``)
gets the JSON Schema form of its types; a type without one is served as
upstream serves it (a string) with a UserWarning naming tool, parameter and
type. A call with a JSON value reaches the handler.
"""

from __future__ import annotations

import datetime
import enum
import uuid
import warnings
from typing import Any, Literal, Optional

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve

FEATURE = pytest.mark.requires_patch("json-schema-from-types")
TYPED = pytest.mark.requires_patch("typed-schemas-for-opted-in-tools")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Opaque:
    pass


# What upstream 0.2.189 lists for each type, and a JSON value it accepts.
UPSTREAM = [
    (datetime.date, {"type": "string"}, "2026-12-01"),
    (datetime.datetime, {"type": "string"}, "2026-12-01T00:00:00Z"),
    (datetime.time, {"type": "string"}, "12:00:00"),
    (uuid.UUID, {"type": "string"}, str(uuid.UUID(int=1))),
    (dict[int, str], {"type": "object"}, {"1": "a"}),
    (dict[str, int], {"type": "object"}, {"a": "not an int"}),
    (Literal["a", "b"], {"type": "string"}, "c"),
    (Color, {"type": "string"}, "green"),
    (int | None, {"type": "integer"}, 1),
    (Optional[str], {"type": "string"}, "s"),  # noqa: UP045 (the typing form)
    (list[int], {"type": "array", "items": {"type": "integer"}}, [1]),
    (Opaque, {"type": "string"}, "tomorrow"),
]  # fmt: skip

# The first eight come with typed-schemas-for-opted-in-tools; dict[int, str]
# (a map whose keys are not str) with json-schema-from-types.
FAITHFUL = [
    pytest.param(datetime.date, {"type": "string", "format": "date"}, "2026-12-01", marks=TYPED),
    pytest.param(datetime.datetime, {"type": "string", "format": "date-time"}, "2026-12-01T00:00:00Z", marks=TYPED),
    pytest.param(datetime.time, {"type": "string", "format": "time"}, "12:00:00", marks=TYPED),
    pytest.param(uuid.UUID, {"type": "string", "format": "uuid"}, str(uuid.UUID(int=1)), marks=TYPED),
    pytest.param(dict[int, str], {"type": "object", "additionalProperties": {"type": "string"}}, {"1": "a"}, marks=FEATURE),
    pytest.param(dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, {"a": 1}, marks=TYPED),
    pytest.param(Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}, "a", marks=TYPED),
    pytest.param(Color, {"type": "string", "enum": ["red", "blue"]}, "red", marks=TYPED),
    pytest.param(int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None, marks=TYPED),
]  # fmt: skip


async def _served(
    py_type: Any, value: Any, **fields: Any
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The listed schema of ``v``, a call's result and what the handler got."""
    received: list[dict[str, Any]] = []

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @tool("t", "d", {"v": py_type}, **fields)
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            received.append(args)
            return {"content": [{"type": "text", "text": "ok"}]}

        config = create_sdk_mcp_server("srv", tools=[handler])
    tools, results = await serve(config, [("t", {"v": value})])
    return tools[0]["inputSchema"]["properties"]["v"], results[0], received


@pytest.mark.parametrize(("py_type", "expected", "value"), UPSTREAM)
async def test_a_plain_tool_is_served_exactly_as_upstream(
    py_type: Any, expected: dict[str, Any], value: Any
) -> None:
    served, result, received = await _served(py_type, value)

    assert served == expected
    assert not result.get("isError"), result
    assert received == [{"v": value}]


async def test_a_plain_tool_still_refuses_what_upstream_refuses() -> None:
    # int | None is listed as an integer by upstream, so None is refused.
    served, result, received = await _served(int | None, None)

    assert served == {"type": "integer"}
    assert result["isError"] is True
    assert received == []


@pytest.mark.parametrize(("py_type", "expected", "value"), FAITHFUL)
async def test_an_opted_in_tool_gets_its_types_faithfully(
    py_type: Any, expected: dict[str, Any], value: Any
) -> None:
    served, result, received = await _served(
        py_type, value, input_examples=[{"v": value}]
    )

    assert served == expected
    assert not result.get("isError"), result
    assert received == [{"v": value}]


@pytest.mark.parametrize(
    ("py_type", "expected", "value"),
    [case for case in FAITHFUL if not isinstance(case.values[2], dict)],  # no maps
)
async def test_a_strict_tool_gets_its_types_faithfully_too(
    py_type: Any, expected: dict[str, Any], value: Any
) -> None:
    served, result, received = await _served(py_type, value, strict=True)

    assert served == expected
    assert not result.get("isError"), result
    assert received == [{"v": value}]


@FEATURE
async def test_an_opted_in_type_without_a_json_form_warns_once_as_upstream() -> None:
    received: list[dict[str, Any]] = []

    with pytest.warns(UserWarning, match=r"Tool 'legacy'.*'when'.*Opaque"):

        @tool("legacy", "d", {"when": Opaque}, input_examples=[{"when": "now"}])
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            received.append(args)
            return {"content": [{"type": "text", "text": "ok"}]}

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, at definition
        config = create_sdk_mcp_server("srv", tools=[handler])
    tools, results = await serve(config, [("legacy", {"when": "tomorrow"})])
    assert tools[0]["inputSchema"]["properties"]["when"] == {"type": "string"}
    assert not results[0].get("isError"), results[0]
    assert received == [{"when": "tomorrow"}]
