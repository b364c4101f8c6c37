"""Strict mode's rules and caps, through the public API.

Each rule: a schema that breaks it is refused by ``tool(..., strict=True)``
with one ValueError naming the tool and the JSON Pointer of the violation,
and a near-identical schema that keeps it is accepted and served (normalized)
on ``tools/list``. Each cap: just under passes, just over is refused, per
server by ``create_sdk_mcp_server`` and across servers by ``query()`` and
``ClaudeSDKClient`` before the CLI starts.
"""

import sys
from typing import Any

import pytest

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    create_sdk_mcp_server,
    query,
    tool,
)
from tests.lib.cli_peer import serve

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:
    from typing_extensions import NotRequired, TypedDict

strict_patch = pytest.mark.requires_patch("strict-schema-checks")

# A CLI that cannot start: a query that gets past the strict checks fails
# with CLINotFoundError instead of launching anything.
NO_CLI = "/nonexistent/claude-for-strict-tests"


async def _noop(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


def strict_tool(schema: Any, name: str = "t", **kwargs: Any) -> Any:
    return tool(name, "A strict tool", schema, strict=True, **kwargs)(_noop)


def closed(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        **extra,
    }


def _string(**extra: Any) -> dict[str, Any]:
    return {"type": "string", **extra}


# (id, schema that breaks the rule, JSON Pointer reported, near-identical
#  schema that keeps it)
XY = {"x": {"type": "string"}, "y": {"type": "string"}}
RULE_PAIRS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "recursive",
        closed(
            {"node": {"$ref": "#/$defs/Node"}},
            **{"$defs": {"Node": closed({"child": {"$ref": "#/$defs/Node"}})}},
        ),
        "#/$defs/Node/properties/child/$ref",
        closed(
            {"node": {"$ref": "#/$defs/Node"}},
            **{"$defs": {"Node": closed({"child": _string()})}},
        ),
    ),
    # An external $ref is refused for every tool: tests/robustness/test_schema_checks.py
    *[
        (
            keyword,
            closed({"n": {"type": "integer", keyword: 2}}),
            f"#/properties/n/{keyword}",
            closed({"n": {"type": "integer"}}),
        )
        for keyword in (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        )
    ],
    *[
        (
            keyword,
            closed({"s": _string(**{keyword: 2})}),
            f"#/properties/s/{keyword}",
            closed({"s": _string(format="date")}),
        )
        for keyword in ("minLength", "maxLength")
    ],
    (
        "additionalProperties-true",
        closed({"a": _string()}, additionalProperties=True),
        "#/additionalProperties",
        closed({"a": _string()}),
    ),
    (
        "additionalProperties-schema",
        closed({"m": closed({}, additionalProperties=_string())}),
        "#/properties/m/additionalProperties",
        closed({"m": closed({})}),
    ),
    (
        "free-form-object",
        closed({"m": {"type": "object"}}),
        "#/properties/m",
        closed({"m": closed({})}),
    ),
    (
        "unevaluatedProperties-true",
        closed({"a": _string()}, unevaluatedProperties=True),
        "#/unevaluatedProperties",
        closed({"a": _string()}),
    ),
    *[
        (
            f"described-{keyword}",
            # x and y declared: a name only the keyword names would be
            # declared by the closing with no type, which is refused (issue 42)
            closed({"a": {"type": "object", "properties": XY, keyword: value}}),
            f"#/properties/a/{keyword}",
            closed({"a": closed(XY)}),
        )
        for keyword, value in (
            ("not", {"required": ["x"]}),
            ("if", {"required": ["x"]}),
            ("minProperties", 1),
            ("maxProperties", 2),
            ("propertyNames", {"maxLength": 3}),
            ("dependentRequired", {"x": ["y"]}),
            ("patternProperties", {"^x": _string()}),
        )
    ],
    *[
        (
            f"described-{name}",
            closed({"a": schema}),
            f"#/properties/a/{keyword}",
            closed({"a": _string()}),
        )
        for name, keyword, schema in (
            ("format-int32", "format", _string(format="int32")),
            # Typed beside it: otherwise refused (the "-alone" pairs below).
            (
                "enum-array",
                "enum",
                {"type": ["array", "string"], "items": _string(), "enum": [["a"], "b"]},
            ),
            (
                "const-array",
                "const",
                {"type": "array", "items": {"type": "integer"}, "const": [1, 2]},
            ),
            ("examples", "examples", _string(examples=["x"])),
            (
                "unevaluatedItems",
                "unevaluatedItems",
                {"type": "array", "items": _string(), "unevaluatedItems": False},
            ),
        )
    ],  # fmt: skip
    # Nothing else types the schema: in words it would admit any value.
    *[
        (
            f"{keyword}-{name}-alone",
            closed({"a": {keyword: bad}}),
            f"#/properties/a/{keyword}",
            closed({"a": {keyword: good}}),
        )
        for name, keyword, bad, good in (
            ("object", "enum", [{"a": 1}, "b"], ["a", "b"]),
            ("array", "const", [1, 2], 1),
        )
    ],
    (
        "minItems-2",
        closed({"l": {"type": "array", "items": _string(), "minItems": 2}}),
        "#/properties/l/minItems",
        closed({"l": {"type": "array", "items": _string(), "minItems": 1}}),
    ),
    *[
        (
            keyword,
            closed({"l": {"type": "array", "items": _string(), keyword: value}}),
            f"#/properties/l/{keyword}",
            closed({"l": {"type": "array", "items": _string(), "minItems": 0}}),
        )
        for keyword, value in (
            ("maxItems", 2),
            ("uniqueItems", True),
            ("contains", _string()),
            ("minContains", 1),
            ("maxContains", 1),
        )
    ],
    *[
        (
            f"pattern-{name}",
            closed({"s": _string(pattern=bad)}),
            "#/properties/s/pattern",
            closed({"s": _string(pattern=good)}),
        )
        for name, bad, good in (
            ("backreference", r"^(\d)\1$", r"^(\d)(\d)$"),
            # (?<d>...) is ECMA-262 only; for strict tools the SDK validates
            # with it translated to Python's (?P<d>...) (test_strict_transform).
            ("lookahead", r"^(?=[a-z])\w+$", r"^[a-z]\w*$"),
            ("negative-lookahead", r"^(?!tmp)\w+$", r"^tmp\w+$"),
            ("lookbehind", r"(?<=#)\w+", r"#\w+"),
            ("word-boundary", r"\bid\b", r"\Wid\W"),
            ("large-quantifier", r"^a{1,10000}$", r"^a{1,100}$"),
            ("named-group", r"^(?<y>\d{4})$", r"^(\d{4})$"),
        )
    ],
    (
        "nested-in-items-anyOf",
        closed(
            {
                "rows": {
                    "type": "array",
                    "items": {"anyOf": [_string(), _string(maxLength=9)]},
                }
            }
        ),
        "#/properties/rows/items/anyOf/1/maxLength",
        closed({"rows": {"type": "array", "items": {"anyOf": [_string(), _string()]}}}),
    ),
]


# Keywords the SDK serves in words and enforces on every call instead of
# refusing (tests/strict/test_strict_transform.py): these pairs' "bad" schema
# is accepted, so only the others are refused here.
DESCRIBED = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "pattern",
        "not",
        "if",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
        "patternProperties",
        "format",
        "enum",
        "const",
        "examples",
        "unevaluatedItems",
    }
)


def _described(pair: tuple[str, dict[str, Any], str, dict[str, Any]]) -> bool:
    return pair[2].rsplit("/", 1)[1] in DESCRIBED and not pair[0].endswith("-alone")


REFUSED_PAIRS = [pair for pair in RULE_PAIRS if not _described(pair)]
DESCRIBED_PAIRS = [pair for pair in RULE_PAIRS if _described(pair)]


@strict_patch
@pytest.mark.parametrize(
    ("bad", "path", "good"),
    [pair[1:] for pair in DESCRIBED_PAIRS],
    ids=[pair[0] for pair in DESCRIBED_PAIRS],
)
async def test_rule_the_sdk_can_check_is_served_in_words(
    bad: dict[str, Any], path: str, good: dict[str, Any]
) -> None:
    accepted = strict_tool(bad, name="lookup")
    [listed], _ = await serve(create_sdk_mcp_server("s", tools=[accepted]))
    assert listed["strict"] is True
    *where, keyword = path[2:].split("/")
    held: Any = bad
    served: Any = listed["inputSchema"]
    for key in where:
        index = int(key) if isinstance(held, list) else key
        held, served = held[index], served[index]
    assert keyword not in served
    assert f"{keyword}: " in served["description"]
    assert keyword in held  # the author's schema is not changed


@strict_patch
@pytest.mark.parametrize(
    ("bad", "path", "good"),
    [pair[1:] for pair in REFUSED_PAIRS],
    ids=[pair[0] for pair in REFUSED_PAIRS],
)
async def test_rule_is_refused_with_its_path_and_its_twin_is_served(
    bad: dict[str, Any], path: str, good: dict[str, Any]
) -> None:
    with pytest.raises(ValueError) as refused:
        strict_tool(bad, name="lookup")
    message = str(refused.value)
    assert message.startswith("Tool 'lookup' has strict=True")
    assert f"\n  - {path}: " in message

    accepted = strict_tool(good, name="lookup")
    [listed], _ = await serve(create_sdk_mcp_server("s", tools=[accepted]))
    assert listed["strict"] is True
    assert listed["inputSchema"] == good


@strict_patch
def test_every_violation_is_listed_in_one_error() -> None:
    schema = closed(
        {
            "age": {"type": "integer", "not": {"minimum": 0}},
            "kind": {"oneOf": [_string(maxLength=3), {"type": "object"}]},
            "meta": {"type": "object"},
            "map": closed({}, additionalProperties=_string()),
            "node": {"$ref": "#/$defs/Node"},
        },
        additionalProperties=True,
        **{"$defs": {"Node": closed({"next": {"$ref": "#/$defs/Node"}})}},
    )
    with pytest.raises(ValueError) as refused:
        strict_tool(schema, name="profile")
    message = str(refused.value)
    assert "Tool 'profile'" in message
    assert "(5 violations)" in message
    for path in (
        "#/properties/kind/oneOf/1",
        "#/properties/meta",
        "#/properties/map/additionalProperties",
        "#/$defs/Node/properties/next/$ref",
        "#/additionalProperties",
    ):
        assert f"  - {path}: " in message


class Address(TypedDict):
    city: str
    zip: NotRequired[str]


class Order(TypedDict):
    item: str
    ship_to: Address


@strict_patch
async def test_generated_schemas_of_a_strict_tool_come_out_closed() -> None:
    by_shorthand = strict_tool({"a": str, "b": list[int]}, name="shorthand")
    by_typeddict = strict_tool(Order, name="typeddict")
    tools, _ = await serve(
        create_sdk_mcp_server("s", tools=[by_shorthand, by_typeddict])
    )
    assert [t["inputSchema"] for t in tools] == [
        {
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {"type": "integer"}},
            },
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "item": {"type": "string"},
                "ship_to": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "zip": {"type": "string"},
                    },
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
            "required": ["item", "ship_to"],
            "additionalProperties": False,
        },
    ]


async def test_tools_without_strict_keep_every_keyword_as_today() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 9},
            "s": {"type": "string", "maxLength": 3, "pattern": r"\bx"},
            "m": {"type": "object"},
        },
    }
    plain = tool("plain", "no strict argument", schema)(_noop)
    by_shorthand = tool("shorthand", "no strict argument", {"m": dict})(_noop)
    tools, _ = await serve(create_sdk_mcp_server("s", tools=[plain, by_shorthand]))
    assert tools[0]["inputSchema"] == schema
    assert tools[1]["inputSchema"] == {
        "type": "object",
        "properties": {"m": {"type": "object"}},
        "required": ["m"],
    }
    assert "strict" not in tools[0]


@strict_patch
async def test_a_strict_tool_is_called_against_the_schema_it_lists() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    config = create_sdk_mcp_server("s", tools=[strict_tool(schema, name="find")])
    [listed], [fits, extra] = await serve(
        config, calls=[("find", {"q": "x"}), ("find", {"q": "x", "limit": 3})]
    )
    assert listed["inputSchema"] == {**schema, "additionalProperties": False}
    assert not fits.get("isError")
    assert extra["isError"] is True
    assert "Additional properties are not allowed" in extra["content"][0]["text"]


@strict_patch
def test_input_examples_of_a_strict_tool_must_fit_the_served_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    strict_tool(schema, input_examples=[{"q": "x"}])
    with pytest.raises(ValueError, match=r"input_examples\[1\]"):
        strict_tool(schema, input_examples=[{"q": "x"}, {"q": "x", "limit": 3}])


def _optional(n: int) -> dict[str, Any]:
    return closed({f"p{i}": _string() for i in range(n)})


def _unions(n: int) -> dict[str, Any]:
    properties = {f"u{i}": {"type": ["string", "null"]} for i in range(n)}
    return closed(properties, required=list(properties))


# (limit, maximum, tool schemas for a total of n)
CAPS = [
    ("strict tools", 20, lambda n: [closed({})] * n),
    ("optional parameters", 24, lambda n: [_optional(n - 4), _optional(4)]),
    ("union-typed parameters", 16, lambda n: [_unions(n - 1), _unions(1)]),
]


def _tools(schemas: list[dict[str, Any]], prefix: str = "t") -> list[Any]:
    return [strict_tool(s, name=f"{prefix}{i}") for i, s in enumerate(schemas)]


@strict_patch
@pytest.mark.parametrize(
    ("limit", "maximum", "schemas"), CAPS, ids=[c[0] for c in CAPS]
)
def test_cap_per_server(limit: str, maximum: int, schemas: Any) -> None:
    create_sdk_mcp_server("fits", tools=_tools(schemas(maximum)))
    with pytest.raises(ValueError) as refused:
        create_sdk_mcp_server("over", tools=_tools(schemas(maximum + 1)))
    message = str(refused.value)
    assert "SDK MCP server 'over'" in message
    assert f"{maximum + 1} {limit}, over strict mode's limit of {maximum}" in message
    assert "t0" in message and "t1" in message


@strict_patch
@pytest.mark.parametrize(
    ("limit", "maximum", "schemas"), CAPS, ids=[c[0] for c in CAPS]
)
async def test_cap_across_the_servers_of_one_query(
    limit: str, maximum: int, schemas: Any
) -> None:
    def options(total: int) -> ClaudeAgentOptions:
        first, *rest = schemas(total)
        return ClaudeAgentOptions(
            mcp_servers={
                "one": create_sdk_mcp_server("one", tools=_tools([first], "a")),
                "two": create_sdk_mcp_server("two", tools=_tools(rest, "b")),
                "external": {"type": "stdio", "command": "true"},
            },
            cli_path=NO_CLI,
        )

    expected = f"{maximum + 1} {limit}, over strict mode's limit of {maximum}"

    # Just under: the strict checks pass and the (missing) CLI is what fails.
    with pytest.raises(Exception) as started:
        async for _ in query(prompt="hi", options=options(maximum)):
            pass
    assert not isinstance(started.value, ValueError), started.value

    with pytest.raises(ValueError, match=expected) as refused:
        async for _ in query(prompt="hi", options=options(maximum + 1)):
            pass
    assert "mcp__one__a0" in str(refused.value)
    assert "mcp__two__b0" in str(refused.value)

    with pytest.raises(ValueError, match=expected):
        await ClaudeSDKClient(options(maximum + 1)).connect()
