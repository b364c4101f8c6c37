"""Round-trip properties: what a tool declares is what tools/list serves.

For arbitrary JSON in ``extra_fields`` and ``input_examples`` and arbitrary
valid tool names, the served entry is JSON-equal to the declaration (types
included: 1, 1.0 and True stay apart), on whichever mcp major is installed.
Values JSON cannot carry are refused when the tool is defined.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import CliPeer, json_equal
from tests.lib.examples import examples

FEATURE = pytest.mark.requires_patch("serve-extra-tool-fields")
SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Fields the SDK builds, and standard MCP Tool fields (which are checked
# against mcp's model rather than passed through blindly), are not arbitrary.
RESERVED = {"name", "description", "inputSchema", "annotations", "_meta"}
RESERVED |= {"strict", "input_examples", "title", "outputSchema", "icons"}
RESERVED |= {"execution", "inputExamples"}

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
tool_names = st.from_regex(r"\A[A-Za-z0-9_-]{1,64}\Z", fullmatch=True)
field_names = st.text(min_size=1, max_size=16).filter(lambda k: k not in RESERVED)
OPEN_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
# Strict mode wants closed objects and typed schemas: a strict tool's examples
# carry any JSON, as text, under one declared property.
CLOSED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"v": {"type": "string"}},
    "required": ["v"],
    "additionalProperties": False,
}


async def handler(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(args)}]}


async def listed_entry(definition: Any) -> dict[str, Any]:
    peer = CliPeer({"srv": create_sdk_mcp_server("srv", tools=[definition])})
    try:
        await peer.initialize("srv")
        (entry,) = await peer.list_tools("srv")
        return entry
    finally:
        await peer.aclose()


@FEATURE
@SETTINGS
@given(
    name=tool_names,
    strict=st.none() | st.booleans(),
    examples=st.none() | st.lists(json_objects, max_size=3),
    extra=st.dictionaries(field_names, json_values, max_size=4),
)
async def test_declared_fields_are_served_json_equal(
    name: str,
    strict: bool | None,
    examples: list[dict[str, Any]] | None,
    extra: dict[str, Any],
) -> None:
    schema = OPEN_SCHEMA
    if strict and examples is not None:
        schema = CLOSED_SCHEMA
        examples = [{"v": json.dumps(example)} for example in examples]
    elif strict:
        schema = CLOSED_SCHEMA
    definition = tool(
        name,
        "round trip",
        schema,
        strict=strict,
        input_examples=examples,
        extra_fields=extra,
    )(handler)
    # What leaves the SDK is text on a pipe; compare after a JSON round trip.
    entry = json.loads(json.dumps(await listed_entry(definition)))
    expected: dict[str, Any] = {
        "name": name,
        "description": "round trip",
        "inputSchema": schema,
        **(
            {}
            if strict is None
            else {"strict": strict, "_meta": {"anthropic/strict": strict}}
        ),
        **({} if examples is None else {"input_examples": examples}),
        **extra,
    }
    assert json_equal(entry, expected), (entry, expected)


class Opaque:
    pass


NOT_JSON: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    {1: "int key"},
    {("tuple", "key"): 1},
    {"a", "set"},
    frozenset({1}),
    ("a", "tuple"),
    Opaque(),
    b"bytes",
    1 + 2j,
]


@FEATURE
@pytest.mark.parametrize("bad", NOT_JSON, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("where", ["extra_fields", "input_examples"])
def test_values_json_cannot_carry_are_refused_at_definition(
    bad: Any, where: str
) -> None:
    nested = {"outer": [{"inner": bad}]}
    kwargs: dict[str, Any] = (
        {"extra_fields": {"x-bad": nested}}
        if where == "extra_fields"
        else {"input_examples": [nested]}
    )
    with pytest.raises((TypeError, ValueError)) as caught:
        tool("carrier", "refuses non-JSON", OPEN_SCHEMA, **kwargs)(handler)
    message = str(caught.value)
    assert "'carrier'" in message
    assert where in message


@FEATURE
@SETTINGS
@given(bad=st.sampled_from(NOT_JSON), path=st.lists(st.text(max_size=5), max_size=3))
def test_non_json_is_refused_at_any_depth(bad: Any, path: list[str]) -> None:
    value: Any = bad
    for key in reversed(path):
        value = {key: [value]}
    with pytest.raises((TypeError, ValueError), match="'deep'"):
        tool("deep", "d", OPEN_SCHEMA, extra_fields={"x-v": value})(handler)
