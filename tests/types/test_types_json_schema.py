# ruff: noqa: UP007, UP045  (Optional/Union spellings are test inputs)
"""Contract tests for patch "json-schema-from-types".

They play the CLI against an in-process SDK MCP server: synthetic JSON-RPC
(initialize, notifications/initialized, tools/list, tools/call) handed to
``Query._handle_sdk_mcp_request``, the entry point the CLI's control
messages reach. Each Python parameter type must list as its exact JSON
Schema 2020-12 form, that form must be valid against the 2020-12
metaschema, and the SDK's own argument validation must accept one value of
the type and refuse one that is not.

Tests marked ``requires_patch("json-schema-from-types")`` fail on a tree
without the patch (upstream 0.2.189 lists every one of these types as
``{"type": "string"}`` or drops their constraints); the unmarked ones pin
behaviour the patch must keep and pass everywhere.

No ``from __future__ import annotations`` here: with it, Python (3.10 to
3.13) computes a TypedDict's ``__required_keys__`` from unevaluated strings
and misses ``Required``/``NotRequired``, a limitation outside this patch.
"""

import datetime
import enum
import itertools
import json
import sys
from typing import Annotated, Any, Literal, NewType, Optional, Union
from unittest.mock import AsyncMock, Mock

import jsonschema
import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from claude_agent_sdk._internal.query import Query

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:
    from typing_extensions import NotRequired, Required, TypedDict

PATCH = pytest.mark.requires_patch("json-schema-from-types")


class CliPlayer:
    """Speaks raw JSON-RPC to one SDK MCP server, the way the CLI does."""

    def __init__(self, server_config: Any) -> None:
        transport = AsyncMock()
        transport.is_ready = Mock(return_value=True)
        self.query = Query(
            transport=transport,
            is_streaming_mode=True,
            sdk_mcp_servers={"under_test": server_config["instance"]},
        )
        self.ids = itertools.count(1)

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self.ids)
        reply = await self.query._handle_sdk_mcp_request(
            "under_test",
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
        )
        assert reply is not None and reply.get("id") == request_id, reply
        assert "error" not in reply, reply
        return reply["result"]

    async def __aenter__(self) -> "CliPlayer":
        await self.rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "claude-code", "version": "2.1.332"},
            },
        )
        await self.query._handle_sdk_mcp_request(
            "under_test", {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.query.close()

    async def listed(self) -> dict[str, dict[str, Any]]:
        result = await self.rpc("tools/list", {})
        return {entry["name"]: entry for entry in result["tools"]}

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.rpc("tools/call", {"name": name, "arguments": arguments})


def one_parameter_tool(param_type: Any, seen: list[Any]) -> Any:
    @tool("probe", "Takes a single value", {"value": param_type})
    async def probe(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args["value"])
        return {"content": [{"type": "text", "text": json.dumps(args["value"])}]}

    return probe


def wrapped(value_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"value": value_schema},
        "required": ["value"],
    }


# -- the types ---------------------------------------------------------------


class Region(enum.Enum):
    NORDIC = "se"
    BRITISH = "uk"


class Level(enum.IntEnum):
    ONE = 1
    TWO = 2


class Mixed(enum.Enum):
    OFF = False
    ONE = 1
    NAME = "x"


class Point(TypedDict):
    x: float
    y: float


class SearchArgs(TypedDict, total=False):
    point: Required[Point]
    label: str | None  # not required: "| None" means "may be left out"
    note: Required[Optional[str]]  # required: None travels as null


Ticket = NewType("Ticket", int)

PAIR = {
    "type": "array",
    "prefixItems": [{"type": "integer"}, {"type": "string"}],
    "items": False,
    "minItems": 2,
    "maxItems": 2,
}

# id -> (type, exact schema of the parameter, admitted value, refused value)
NEW_FORMS: dict[str, tuple[Any, dict[str, Any], Any, Any]] = {
    "literal-str": (
        Literal["se", "uk"],
        {"type": "string", "enum": ["se", "uk"]},
        "uk",
        "fi",
    ),
    "literal-int-refuses-bool": (
        Literal[1, 2],
        {"type": "integer", "enum": [1, 2]},
        1,
        True,
    ),
    "literal-bool-refuses-int": (
        Literal[True],
        {"type": "boolean", "enum": [True]},
        True,
        1,
    ),
    "literal-int-and-bool": (Literal[0, False], {"enum": [0, False]}, False, 1),
    "literal-float": (Literal[0.5, 2], {"type": "number", "enum": [0.5, 2]}, 2, 1),
    "literal-with-none": (Literal["a", None], {"enum": ["a", None]}, None, "b"),
    "enum-str": (Region, {"type": "string", "enum": ["se", "uk"]}, "se", "NORDIC"),
    "enum-int": (Level, {"type": "integer", "enum": [1, 2]}, 2, 3),
    "enum-mixed": (Mixed, {"enum": [False, 1, "x"]}, False, 0),
    "tuple-fixed": (tuple[int, str], PAIR, [1, "a"], ["a", 1]),
    "tuple-fixed-too-long": (tuple[int, str], PAIR, [7, ""], [7, "", None]),
    "tuple-fixed-too-short": (tuple[int, str], PAIR, [7, ""], [7]),
    "tuple-variadic": (
        tuple[str, ...],
        {"type": "array", "items": {"type": "string"}},
        [],
        [1],
    ),
    "set": (
        set[int],
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        [1, 2],
        [2, 2],
    ),
    "frozenset": (
        frozenset[str],
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        ["a"],
        ["a", "a"],
    ),
    "dict-of-float": (
        dict[str, float],
        {"type": "object", "additionalProperties": {"type": "number"}},
        {"k": 1.5},
        {"k": "1.5"},
    ),
    "list-of-tuples": (
        list[tuple[int, str]],
        {"type": "array", "items": PAIR},
        [[1, "a"]],
        [[1, 2]],
    ),
    "dict-of-lists-of-enums": (
        dict[str, list[Region]],
        {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {"type": "string", "enum": ["se", "uk"]},
            },
        },
        {"a": ["se"]},
        {"a": ["no"]},
    ),
    "list-of-any": (list[Any], {"type": "array"}, [None, 1, "x"], {"not": "a list"}),
    "optional": (
        Optional[int],
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        None,
        1.5,
    ),
    "pep604-optional": (
        str | None,
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        None,
        0,
    ),
    "union-with-none": (
        Union[int, str, None],
        {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        None,
        [],
    ),
    "list-of-optional": (
        list[Optional[bool]],
        {"type": "array", "items": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}},
        [True, None],
        [0],
    ),
    "optional-literal": (
        Optional[Literal["asc", "desc"]],
        {"anyOf": [{"type": "string", "enum": ["asc", "desc"]}, {"type": "null"}]},
        "asc",
        "up",
    ),
    "annotated-literal": (
        Annotated[Literal["se", "uk"], "Jurisdiction code"],
        {"type": "string", "enum": ["se", "uk"], "description": "Jurisdiction code"},
        "se",
        "SE",
    ),
    "annotated-tuple": (
        Annotated[tuple[int, str], "Id and name"],
        {**PAIR, "description": "Id and name"},
        [1, "a"],
        [1],
    ),
    "typeddict-optional-semantics": (
        SearchArgs,
        {
            "type": "object",
            "properties": {
                "point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x", "y"],
                },
                "label": {"type": "string"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
            "required": ["note", "point"],
        },
        {"point": {"x": 0, "y": 1}, "note": None},
        {"point": {"x": 0, "y": 1}, "note": None, "label": None},
    ),
    "empty-tuple": (tuple[()], {"type": "array", "items": False}, [], [0]),
}

# Forms upstream already produced; the patch must keep them exactly.
KEPT_FORMS: dict[str, tuple[Any, dict[str, Any], Any, Any]] = {
    "str": (str, {"type": "string"}, "x", 1),
    "int": (int, {"type": "integer"}, 1, "1"),
    "float": (float, {"type": "number"}, 1, "1"),
    "bool": (bool, {"type": "boolean"}, False, "false"),
    "list-of-str": (
        list[str],
        {"type": "array", "items": {"type": "string"}},
        ["a"],
        [1],
    ),
    "bare-list": (list, {"type": "array"}, [], {}),
    "bare-dict": (dict, {"type": "object"}, {}, []),
    "dict-of-any": (dict[str, Any], {"type": "object"}, {"a": None}, "a"),
    "union": (
        int | str,
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "a",
        None,
    ),
    "annotated": (
        Annotated[int, "How many"],
        {"type": "integer", "description": "How many"},
        1,
        "1",
    ),
    "point": (
        Point,
        {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        },
        {"x": 1, "y": 2},
        {"x": 1},
    ),
}


async def check_form(
    param_type: Any, schema: dict[str, Any], good: Any, bad: Any
) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    seen: list[Any] = []
    config = create_sdk_mcp_server(
        "types", tools=[one_parameter_tool(param_type, seen)]
    )
    async with CliPlayer(config) as cli:
        listed = await cli.listed()
        admitted = await cli.call("probe", {"value": good})
        refused = await cli.call("probe", {"value": bad})

    assert listed["probe"]["inputSchema"] == wrapped(schema)
    assert not admitted.get("isError"), admitted
    assert seen == [good]
    assert refused.get("isError") is True, refused
    assert refused["content"][0]["text"].startswith("Input validation error")


@PATCH
@pytest.mark.parametrize("case", list(NEW_FORMS), ids=list(NEW_FORMS))
async def test_type_lists_as_its_2020_12_form_and_is_enforced(case: str) -> None:
    await check_form(*NEW_FORMS[case])


@pytest.mark.parametrize("case", list(KEPT_FORMS), ids=list(KEPT_FORMS))
async def test_forms_upstream_already_had_are_kept(case: str) -> None:
    await check_form(*KEPT_FORMS[case])


@PATCH
async def test_enum_next_to_array_is_listed_with_its_enum() -> None:
    """The production shape behind the fork: a Literal choice beside a list."""

    @tool(
        "search",
        "Search case law",
        {"jurisdiction": Literal["se", "uk"], "terms": list[str]},
    )
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": args["jurisdiction"]}]}

    async with CliPlayer(create_sdk_mcp_server("law", tools=[search])) as cli:
        schema = (await cli.listed())["search"]["inputSchema"]
        outside = await cli.call("search", {"jurisdiction": "dk", "terms": []})
        inside = await cli.call("search", {"jurisdiction": "uk", "terms": ["x"]})

    assert schema == {
        "type": "object",
        "properties": {
            "jurisdiction": {"type": "string", "enum": ["se", "uk"]},
            "terms": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["jurisdiction", "terms"],
    }
    assert outside["isError"] is True
    assert inside["content"] == [{"type": "text", "text": "uk"}]


class Loop(TypedDict):
    name: str
    next: NotRequired["Loop"]


class Visit(TypedDict):
    on: datetime.date


def typeddict_with_unresolvable_reference() -> type:
    class Hidden(TypedDict):
        n: int

    class Outer(TypedDict):
        hidden: list["Hidden"]  # names a class local to this function

    return Outer


@PATCH
@pytest.mark.parametrize(
    ("schema", "needles"),
    [
        ({"at": datetime.datetime}, ["'at'", "datetime.datetime"]),
        ({"when": list[tuple[str, datetime.time]]}, ["'when'", "datetime.time"]),
        ({"index": dict[int, str]}, ["'index'", "dict[int, str]", "keys"]),
        ({"blob": bytes}, ["'blob'", "bytes"]),
        ({"size": "int"}, ["'size'", "string"]),
        ({"mode": Literal[b"r"]}, ["'mode'", "b'r'"]),
        ({"perm": enum.Flag("Perm", "READ WRITE")}, ["'perm'", "Flag"]),
        ({"ratio": Literal[float("inf")]}, ["'ratio'", "inf"]),
        (Visit, ["'on'", "Visit", "datetime.date"]),
        (Loop, ["'next'", "Loop", "itself"]),
        ({"outer": list[Visit]}, ["'outer'", "'on'", "datetime.date"]),
        (typeddict_with_unresolvable_reference(), ["Outer", "'Hidden'", "resolved"]),
    ],
    ids=[
        "datetime",
        "nested-time",
        "int-keys",
        "bytes",
        "string-for-type",
        "bytes-literal",
        "flag",
        "infinite-literal",
        "typeddict-field",
        "recursive",
        "nested-typeddict",
        "unresolvable-reference",
    ],
)
def test_type_without_json_schema_form_is_a_type_error_naming_it(
    schema: Any, needles: list[str]
) -> None:
    @tool("unfit", "Parameter JSON Schema cannot describe", schema)
    async def unfit(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    with pytest.raises(TypeError) as raised:
        create_sdk_mcp_server("types", tools=[unfit])
    message = str(raised.value)
    assert "'unfit'" in message
    for needle in needles:
        assert needle in message, (needle, message)


async def test_not_required_optional_key_keeps_todays_meaning() -> None:
    """NotRequired[X | None] lists as X, and the key is simply optional."""

    class Paging(TypedDict):
        page: NotRequired[int | None]
        size: NotRequired[Annotated[Optional[int], "Page size"]]

    config = create_sdk_mcp_server("types", tools=[one_parameter_tool(Paging, [])])
    async with CliPlayer(config) as cli:
        schema = (await cli.listed())["probe"]["inputSchema"]["properties"]["value"]
    assert schema == {
        "type": "object",
        "properties": {
            "page": {"type": "integer"},
            "size": {"type": "integer", "description": "Page size"},
        },
    }


@PATCH
async def test_tuple_of_tuples_is_listed_with_prefix_items_not_draft_07_items() -> None:
    seen: list[Any] = []
    config = create_sdk_mcp_server(
        "types", tools=[one_parameter_tool(tuple[tuple[int, int], str], seen)]
    )
    async with CliPlayer(config) as cli:
        schema = (await cli.listed())["probe"]["inputSchema"]["properties"]["value"]
    text = json.dumps(schema)
    assert '"items": [' not in text
    assert schema["prefixItems"][0]["prefixItems"] == [{"type": "integer"}] * 2


async def test_author_json_schema_is_forwarded_verbatim_and_checked_as_2020_12() -> (
    None
):
    """No $schema is added or changed; prefixItems is enforced when $schema is absent."""
    authored = {
        "type": "object",
        "$defs": {"iso2": {"type": "string", "enum": ["se", "uk"]}},
        "properties": {
            "pair": {
                "type": "array",
                "prefixItems": [{"$ref": "#/$defs/iso2"}, {"type": "integer"}],
                "items": False,
            },
        },
        "required": ["pair"],
    }
    named = {"$schema": "https://json-schema.org/draft/2020-12/schema", **authored}

    def authored_tool(name: str, schema: dict[str, Any]) -> Any:
        @tool(name, "Authored schema", schema)
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "ok"}]}

        return handler

    config = create_sdk_mcp_server(
        "types",
        tools=[
            authored_tool("bare", json.loads(json.dumps(authored))),
            authored_tool("named", json.loads(json.dumps(named))),
        ],
    )
    async with CliPlayer(config) as cli:
        listed = await cli.listed()
        verdicts = {
            (name, json.dumps(pair)): bool(
                (await cli.call(name, {"pair": pair})).get("isError")
            )
            for name in ("bare", "named")
            for pair in (["se", 1], [1, "se"], ["se", 1, 2], ["fi", 1])
        }
    assert listed["bare"]["inputSchema"] == authored
    assert listed["named"]["inputSchema"] == named
    for name in ("bare", "named"):
        assert verdicts[(name, '["se", 1]')] is False
        assert verdicts[(name, '[1, "se"]')] is True
        assert verdicts[(name, '["se", 1, 2]')] is True
        assert verdicts[(name, '["fi", 1]')] is True


async def test_author_draft_07_schema_is_checked_in_draft_07() -> None:
    """A schema that names its dialect is enforced in that dialect."""
    draft_07 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {
                "type": "array",
                "items": [{"type": "string"}, {"type": "integer"}],
                "additionalItems": False,
            }
        },
        "required": ["pair"],
    }

    @tool("old", "Draft-07 schema", draft_07)
    async def old(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}]}

    async with CliPlayer(create_sdk_mcp_server("types", tools=[old])) as cli:
        listed = (await cli.listed())["old"]["inputSchema"]
        good = await cli.call("old", {"pair": ["a", 1]})
        swapped = await cli.call("old", {"pair": [1, "a"]})
        longer = await cli.call("old", {"pair": ["a", 1, 2]})
    assert listed == draft_07
    assert not good.get("isError")
    assert swapped["isError"] is True
    assert longer["isError"] is True


@PATCH
def test_every_generated_schema_is_valid_2020_12() -> None:
    from claude_agent_sdk import _python_type_to_json_schema as convert

    for param_type, schema, _, _ in [*NEW_FORMS.values(), *KEPT_FORMS.values()]:
        generated = convert(param_type)
        assert generated == schema, param_type
        jsonschema.Draft202012Validator.check_schema(generated)
        assert "$schema" not in json.dumps(generated)


class Route(TypedDict):
    kind: Literal["walk", "ride"]
    stops: list[
        "Point"
    ]  # a string inside a builtin generic: 3.10 leaves it unevaluated


@PATCH
async def test_forward_reference_inside_a_builtin_generic_resolves_on_every_python() -> (
    None
):
    config = create_sdk_mcp_server("types", tools=[one_parameter_tool(Route, [])])
    async with CliPlayer(config) as cli:
        schema = (await cli.listed())["probe"]["inputSchema"]["properties"]["value"]
    assert schema == {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["walk", "ride"]},
            "stops": {"type": "array", "items": KEPT_FORMS["point"][1]},
        },
        "required": ["kind", "stops"],
    }


# -- strict tools (with patch 0002's strict checks underneath) ----------------


class Claim(TypedDict):
    kind: Literal["payout", "refund"]
    amount: float
    memo: NotRequired[str | None]


@PATCH
async def test_strict_tool_from_types_is_served_strict_compatible() -> None:
    seen: list[Any] = []

    @tool(
        "file_claim",
        "File a claim",
        {
            "region": Region,
            "claims": list[Claim],
            "ref": tuple[str],
            "note": str | None,
        },
        strict=True,
    )
    async def file_claim(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {"content": [{"type": "text", "text": "filed"}]}

    async with CliPlayer(create_sdk_mcp_server("claims", tools=[file_claim])) as cli:
        entry = (await cli.listed())["file_claim"]
        good = {
            "region": "uk",
            "claims": [{"kind": "refund", "amount": 3}],
            "ref": ["A-1"],
            "note": None,
        }
        filed = await cli.call("file_claim", good)
        open_claim = await cli.call(
            "file_claim",
            {**good, "claims": [{"kind": "refund", "amount": 3, "extra": 1}]},
        )
        long_ref = await cli.call("file_claim", {**good, "ref": ["A-1", "B-2"]})

    schema = entry["inputSchema"]
    assert entry.get("strict") is True
    assert schema == {
        "type": "object",
        "properties": {
            "region": {"type": "string", "enum": ["se", "uk"]},
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": ["payout", "refund"]},
                        "amount": {"type": "number"},
                        "memo": {"type": "string"},
                    },
                    "required": ["amount", "kind"],
                    "additionalProperties": False,
                },
            },
            "ref": {
                "type": "array",
                "prefixItems": [{"type": "string"}],
                "items": False,
                "minItems": 1,
            },
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["region", "claims", "ref", "note"],
        "additionalProperties": False,
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    text = json.dumps(schema)
    for keyword in (
        "maxItems",
        "uniqueItems",
        "minLength",
        "maximum",
        '"additionalProperties": {',
    ):
        assert keyword not in text
    assert not filed.get("isError") and seen == [good]
    assert open_claim["isError"] is True
    assert long_ref["isError"] is True


@PATCH
@pytest.mark.parametrize(
    ("param_type", "needle"),
    [
        (set[str], "unique items"),
        (frozenset[Region], "unique items"),
        (tuple[float, float], "exactly 2 items"),
        (tuple[int, int, int], "exactly 3 items"),
        (list[tuple[str, int]], "exactly 2 items"),
        (Optional[set[int]], "unique items"),
    ],
    ids=["set", "frozenset-of-enum", "pair", "triple", "list-of-pairs", "optional-set"],
)
def test_strict_tool_refuses_types_strict_mode_cannot_express_naming_the_parameter(
    param_type: Any, needle: str
) -> None:
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    with pytest.raises(ValueError) as raised:
        strict_tool = tool("exacting", "Strict", {"shape": param_type}, strict=True)(
            handler
        )
        create_sdk_mcp_server("types", tools=[strict_tool])
    message = str(raised.value)
    for part in ("'exacting'", "'shape'", needle, "strict mode cannot express"):
        assert part in message, (part, message)
    # Not strict: the same type is served in full.
    create_sdk_mcp_server(
        "types", tools=[tool("lenient", "Lenient", {"shape": param_type})(handler)]
    )


@PATCH
def test_strict_typeddict_field_refusal_names_the_field() -> None:
    class Basket(TypedDict):
        items: set[str]

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    with pytest.raises(ValueError, match=r"field 'items' of Basket \(set\[str\]\)"):
        create_sdk_mcp_server(
            "types", tools=[tool("basket", "Strict", Basket, strict=True)(handler)]
        )
