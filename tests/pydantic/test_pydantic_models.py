"""Pydantic models as tool input schemas, through the CLI's side of MCP.

A ``BaseModel`` class passed as ``input_schema`` is listed with the model's
JSON Schema (made strict-compatible for a strict tool), every call is
validated by the model, the handler receives the instance when its parameter
is annotated with the model (else the arguments dict, as upstream passed
it), and a call the model rejects comes back as an error result that lists
each failing field.
Upstream 0.2.189 (and the fork before this patch) lists such a tool as
``{"type": "object", "properties": {}}`` and hands the handler the raw dict,
so every test marked ``requires_patch("pydantic-input-models")`` fails there.
The unmarked tests pin what must not change: dict and TypedDict schemas.
"""

import sys
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model

from claude_agent_sdk import (
    ClaudeAgentOptions,
    McpSdkServerConfig,
    SdkMcpTool,
    create_sdk_mcp_server,
    query,
    tool,
)
from tests.lib.cli_peer import (
    assert_json,
    call_tool,
    error_text,
    tools_by_name,
)
from tests.lib.pydantic_cases import DateRange, Jurisdiction, SearchArgs

try:
    from claude_agent_sdk._internal.strict.transform import find_strict_violations
except ImportError:  # a tree without the strict patch: these tests must fail
    find_strict_violations = None  # type: ignore[assignment]

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:
    from typing_extensions import NotRequired, TypedDict

FEATURE = pytest.mark.requires_patch("pydantic-input-models")

# The served schemas of the shared SearchArgs model (docs/pydantic.md shows
# the same two). Non-strict: the model's JSON Schema as pydantic writes it.
DATE_RANGE_SCHEMA: dict[str, Any] = {
    "description": "Decision dates, inclusive.",
    "properties": {
        "start": {
            "description": "First day",
            "format": "date",
            "title": "Start",
            "type": "string",
        },
        "end": {
            "anyOf": [{"format": "date", "type": "string"}, {"type": "null"}],
            "default": None,
            "description": "Last day; open-ended when left out",
            "title": "End",
        },
    },
    "required": ["start"],
    "title": "DateRange",
    "type": "object",
}
JURISDICTION_SCHEMA: dict[str, Any] = {
    "enum": ["se", "no", "dk"],
    "title": "Jurisdiction",
    "type": "string",
}


def _search_schema(*, strict: bool) -> dict[str, Any]:
    closed: dict[str, Any] = {"additionalProperties": False} if strict else {}
    return {
        "$defs": {
            "DateRange": {**DATE_RANGE_SCHEMA, **closed},
            "Jurisdiction": JURISDICTION_SCHEMA,
        },
        "description": "Search case law.",
        "properties": {
            "query": (
                {
                    "description": "Free-text query\n\n{minLength: 1}",
                    "title": "Query",
                    "type": "string",
                }
                if strict
                else {
                    "description": "Free-text query",
                    "minLength": 1,
                    "title": "Query",
                    "type": "string",
                }
            ),
            "jurisdiction": {
                "$ref": "#/$defs/Jurisdiction",
                "description": "Court system",
            },
            "court": {
                "default": "supreme",
                "enum": ["supreme", "appeal"],
                "title": "Court",
                "type": "string",
            },
            "limit": (
                {
                    "default": 10,
                    "description": "Most results to return\n\n{minimum: 1, maximum: 50}",
                    "title": "Limit",
                    "type": "integer",
                }
                if strict
                else {
                    "default": 10,
                    "description": "Most results to return",
                    "maximum": 50,
                    "minimum": 1,
                    "title": "Limit",
                    "type": "integer",
                }
            ),
            "decided": {
                "anyOf": [{"$ref": "#/$defs/DateRange"}, {"type": "null"}],
                "default": None,
                "description": "Only decisions in this range",
            },
        },
        "required": ["query", "jurisdiction"],
        "title": "SearchArgs",
        "type": "object",
        **closed,
    }


GOOD_CALL: dict[str, Any] = {
    "query": "payout",
    "jurisdiction": "se",
    "decided": {"start": "2024-01-01"},
}

received: list[Any] = []


async def _echo(args: Any) -> dict[str, Any]:
    received.append(args)
    return {"content": [{"type": "text", "text": repr(args)}]}


def _echo_as(model: type[BaseModel]) -> Callable[[Any], Any]:
    """``_echo`` with its parameter annotated with ``model``: it asks for the
    instance (a handler not so annotated gets the arguments dict)."""

    async def echo(args: Any) -> dict[str, Any]:
        return await _echo(args)

    echo.__annotations__["args"] = model
    return echo


def _search_tool(**fields: Any) -> SdkMcpTool[Any]:
    return tool("search", "Search case law", SearchArgs, **fields)(_echo_as(SearchArgs))


def _server(*tools: SdkMcpTool[Any]) -> McpSdkServerConfig:
    return create_sdk_mcp_server("srv", tools=list(tools))


# --- the served schema ---------------------------------------------------------


@FEATURE
@pytest.mark.parametrize("strict", [None, False], ids=["strict=None", "strict=False"])
async def test_nested_model_is_served_as_its_json_schema(strict: bool | None) -> None:
    entry = (await tools_by_name(_server(_search_tool(strict=strict))))["search"]

    assert_json(entry["inputSchema"], _search_schema(strict=False))
    assert_json(entry["inputSchema"], SearchArgs.model_json_schema())


@FEATURE
async def test_nested_model_of_a_strict_tool_is_served_strict_compatible() -> None:
    entry = (await tools_by_name(_server(_search_tool(strict=True))))["search"]
    schema = entry["inputSchema"]

    assert entry["strict"] is True
    assert_json(schema, _search_schema(strict=True))
    assert find_strict_violations(schema) == []


@FEATURE
@pytest.mark.parametrize("strict", [None, True], ids=["plain", "strict"])
async def test_defs_of_the_served_schema_resolve(strict: bool | None) -> None:
    schema = (await tools_by_name(_server(_search_tool(strict=strict))))["search"][
        "inputSchema"
    ]
    validator = jsonschema.Draft202012Validator(schema)

    validator.validate({**GOOD_CALL, "decided": {"start": "2024-01-01", "end": None}})
    errors = list(validator.iter_errors({**GOOD_CALL, "jurisdiction": "fi"}))
    assert [e.json_path for e in errors] == ["$.jurisdiction"]
    errors = list(validator.iter_errors({**GOOD_CALL, "decided": {"end": None}}))
    assert [e.json_path for e in errors] == ["$.decided"]


class Node(BaseModel):
    name: str
    children: list["Node"] = []


@FEATURE
async def test_a_self_referencing_model_is_served_with_an_object_root() -> None:
    node = tool("tree", "A tree", Node)(_echo_as(Node))
    schema = (await tools_by_name(_server(node)))["tree"]["inputSchema"]

    assert schema["type"] == "object"
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    jsonschema.Draft202012Validator(schema).validate(
        {"name": "a", "children": [{"name": "b", "children": []}]}
    )
    received.clear()
    result = await call_tool(
        _server(node), "tree", {"name": "a", "children": [{"name": "b"}]}
    )
    assert result["isError"] is False
    assert received == [Node(name="a", children=[Node(name="b")])]


# --- calls ------------------------------------------------------------------------


@FEATURE
@pytest.mark.parametrize("strict", [None, True], ids=["plain", "strict"])
async def test_handler_receives_the_model_instance(strict: bool | None) -> None:
    received.clear()
    result = await call_tool(_server(_search_tool(strict=strict)), "search", GOOD_CALL)

    assert result["isError"] is False, result
    [args] = received
    assert type(args) is SearchArgs
    assert args.jurisdiction is Jurisdiction.SE
    assert args.decided == DateRange(start=date(2024, 1, 1))
    assert args.limit == 10 and args.court == "supreme"


@FEATURE
async def test_a_call_the_model_rejects_lists_every_failing_field() -> None:
    received.clear()
    result = await call_tool(
        _server(_search_tool()),
        "search",
        {
            "query": "",
            "jurisdiction": "fi",
            "limit": 80,
            "decided": {"end": "tomorrow"},
        },
    )

    assert received == []
    assert error_text(result) == (
        "Input validation error: the arguments of tool 'search' do not match "
        "SearchArgs (5 errors):\n"
        '  - query: String should have at least 1 character (got "")\n'
        "  - jurisdiction: Input should be 'se', 'no' or 'dk' (got \"fi\")\n"
        "  - limit: Input should be less than or equal to 50 (got 80)\n"
        "  - decided.start: Field required\n"
        "  - decided.end: Input should be a valid date or datetime, input is too "
        'short (got "tomorrow")'
    )


@FEATURE
async def test_strict_moves_a_range_into_the_description_and_the_model_enforces_it() -> (
    None
):
    config = _server(_search_tool(strict=True))
    limit = (await tools_by_name(config))["search"]["inputSchema"]["properties"][
        "limit"
    ]
    received.clear()
    over = await call_tool(config, "search", {**GOOD_CALL, "limit": 51})
    under = await call_tool(config, "search", {**GOOD_CALL, "limit": 0})
    edge = await call_tool(config, "search", {**GOOD_CALL, "limit": 50})

    assert "maximum" not in limit and "minimum" not in limit
    assert limit["description"].endswith("{minimum: 1, maximum: 50}")
    assert error_text(over).endswith(
        "(1 error):\n  - limit: Input should be less than or equal to 50 (got 51)"
    )
    assert error_text(under).endswith(
        "(1 error):\n  - limit: Input should be greater than or equal to 1 (got 0)"
    )
    assert edge["isError"] is False
    assert [args.limit for args in received] == [50]


class Constrained(BaseModel):
    """Every constraint strict mode cannot compile and pydantic enforces."""

    model_config = ConfigDict(regex_engine="python-re")

    word: str = Field(pattern=r"^\bcase", min_length=2, max_length=20)
    plain_pattern: str = Field(pattern=r"^[a-z]+$")
    ratio: float = Field(gt=0, lt=1, multiple_of=0.25)
    ids: list[Annotated[int, Field(ge=1)]] = Field(min_length=2, max_length=3)
    one_or_more: list[str] = Field(min_length=1)
    tags: set[str] = set()
    maybe: Annotated[int, Field(le=9)] | None = None


@FEATURE
async def test_strict_describes_each_enforced_constraint_where_it_was() -> None:
    config = _server(
        tool("c", "Constrained", Constrained, strict=True)(_echo_as(Constrained))
    )
    schema = (await tools_by_name(config))["c"]["inputSchema"]
    props = schema["properties"]

    assert find_strict_violations(schema) == []
    assert_json(
        props["word"],
        {
            "description": '{minLength: 2, maxLength: 20, pattern: "^\\\\bcase"}',
            "title": "Word",
            "type": "string",
        },
    )
    # A pattern strict mode can compile stays; so does minItems 0 or 1.
    assert props["plain_pattern"]["pattern"] == "^[a-z]+$"
    assert props["one_or_more"]["minItems"] == 1
    assert (
        props["ratio"]["description"]
        == "{exclusiveMinimum: 0, exclusiveMaximum: 1, multipleOf: 0.25}"
    )
    assert props["ids"]["description"] == "{minItems: 2, maxItems: 3}"
    assert props["ids"]["items"] == {"type": "integer", "description": "{minimum: 1}"}
    assert props["tags"]["description"] == "{uniqueItems: true}"
    assert props["maybe"]["anyOf"][0] == {
        "type": "integer",
        "description": "{maximum: 9}",
    }

    good = {
        "word": "case x",
        "plain_pattern": "a",
        "ratio": 0.5,
        "ids": [1, 2],
        "one_or_more": ["a"],
    }
    assert (await call_tool(config, "c", good))["isError"] is False
    bad = {**good, "word": "a case", "ratio": 0.3, "ids": [0, 2], "maybe": 10}
    assert error_text(await call_tool(config, "c", bad)).splitlines()[1:] == [
        "  - word: String should match pattern '^\\bcase' (got \"a case\")",
        "  - ratio: Input should be a multiple of 0.25 (got 0.3)",
        "  - ids[0]: Input should be greater than or equal to 1 (got 0)",
        "  - maybe: Input should be less than or equal to 9 (got 10)",
    ]
    too_few = await call_tool(config, "c", {**good, "ids": [1]})
    assert error_text(too_few).splitlines()[1:] == [
        "  - ids: List should have at least 2 items after validation, not 1 (got [1])"
    ]


@FEATURE
async def test_without_strict_every_constraint_stays_in_the_schema() -> None:
    schema = (
        await tools_by_name(_server(tool("c", "Constrained", Constrained)(_echo)))
    )["c"]["inputSchema"]

    assert_json(schema, Constrained.model_json_schema())
    assert schema["properties"]["ratio"]["multipleOf"] == 0.25


class StrictConfig(BaseModel):
    model_config = ConfigDict(strict=True)

    when: date
    pair: tuple[int, int]
    jurisdiction: Jurisdiction


@FEATURE
async def test_arguments_are_validated_as_the_json_they_arrived_as() -> None:
    # With strict=True in the model's config, pydantic refuses a str for a
    # date and a list for a tuple in Python mode, but not in JSON mode.
    received.clear()
    result = await call_tool(
        _server(tool("s", "Strict config", StrictConfig)(_echo_as(StrictConfig))),
        "s",
        {"when": "2024-02-29", "pair": [1, 2], "jurisdiction": "dk"},
    )

    assert result["isError"] is False, result
    assert received == [
        StrictConfig(when=date(2024, 2, 29), pair=(1, 2), jurisdiction=Jurisdiction.DK)
    ]


class Aliased(BaseModel):
    from_: str = Field(alias="from")


@FEATURE
async def test_aliases_are_the_keys_served_and_accepted() -> None:
    config = _server(
        tool("a", "Aliased", Aliased, input_examples=[Aliased(**{"from": "x"})])(
            _echo_as(Aliased)
        )
    )
    entry = (await tools_by_name(config))["a"]
    received.clear()
    result = await call_tool(config, "a", {"from": "y"})

    assert list(entry["inputSchema"]["properties"]) == ["from"]
    assert entry["input_examples"] == [{"from": "x"}]
    assert result["isError"] is False
    assert received == [Aliased(**{"from": "y"})]


# --- refused definitions ------------------------------------------------------------


class OpenMap(BaseModel):
    labels: dict[str, str]


class Undescribed(BaseModel):
    n: int = Field(json_schema_extra={"maximum": 5})


class ExtraAllowed(BaseModel):
    model_config = ConfigDict(extra="allow")
    q: str


class Outer(BaseModel):
    inner: "Node"


@FEATURE
@pytest.mark.parametrize(
    ("model", "violation"),
    [
        pytest.param(
            OpenMap,
            "#/properties/labels/additionalProperties: additionalProperties must be "
            "false in strict mode (found a schema)",
            id="dict-field",
        ),
        pytest.param(
            Undescribed,
            "#/properties/n/maximum: numeric constraint 'maximum' is not supported "
            "in strict mode",
            id="json_schema_extra-not-enforced",
        ),
        pytest.param(
            ExtraAllowed,
            "#/additionalProperties: additionalProperties must be false in strict "
            "mode (found true)",
            id="extra-allow",
        ),
        pytest.param(
            Outer,
            "#/$defs/Node/properties/children/items/$ref: recursive schema: $ref "
            "'#/$defs/Node' leads back into a schema that contains it",
            id="recursive",
        ),
    ],
)
def test_strict_refuses_what_the_model_does_not_enforce(
    model: type[BaseModel], violation: str
) -> None:
    with pytest.raises(ValueError) as refused:
        tool("search", "Search", model, strict=True)(_echo)

    message = str(refused.value)
    assert message.startswith(
        "Tool 'search' has strict=True but its input schema breaks strict mode's "
        "rules (1 violation):\n  - "
    )
    assert violation in message
    # Without strict the same model is served as it is.
    create_sdk_mcp_server("srv", tools=[tool("search", "Search", model)(_echo)])


class WithCallable(BaseModel):
    hook: Callable[[int], int]


class Score(RootModel[int]):
    pass


@FEATURE
@pytest.mark.parametrize(
    ("model", "message"),
    [
        pytest.param(
            WithCallable,
            "Cannot build the input schema of tool 'search' from WithCallable "
            "(field 'hook': ",
            id="no-json-schema",
        ),
        pytest.param(
            Score,
            "Cannot build the input schema of tool 'search': Score is a RootModel",
            id="root-model",
        ),
    ],
)
@pytest.mark.parametrize("strict", [None, True], ids=["plain", "strict"])
def test_a_model_without_an_object_schema_is_a_type_error(
    model: type[BaseModel], message: str, strict: bool | None
) -> None:
    with pytest.raises(TypeError) as refused:
        create_sdk_mcp_server(
            "srv", tools=[tool("search", "Search", model, strict=strict)(_echo)]
        )
    assert str(refused.value).startswith(message)


# --- input_examples -------------------------------------------------------------------


@FEATURE
@pytest.mark.parametrize("strict", [None, True], ids=["plain", "strict"])
async def test_examples_may_be_instances_or_dicts(strict: bool | None) -> None:
    search = _search_tool(
        strict=strict,
        input_examples=[
            SearchArgs(
                query="payout",
                jurisdiction=Jurisdiction.NO,
                decided=DateRange(start=date(2024, 1, 1)),
            ),
            {"query": "bonus", "jurisdiction": "dk", "limit": 5},
        ],
    )
    entry = (await tools_by_name(_server(search)))["search"]

    # An instance is written as JSON with the fields that were set.
    assert_json(
        entry["input_examples"],
        [
            {
                "query": "payout",
                "jurisdiction": "no",
                "decided": {"start": "2024-01-01"},
            },
            {"query": "bonus", "jurisdiction": "dk", "limit": 5},
        ],
    )


@FEATURE
@pytest.mark.parametrize(
    ("example", "error"),
    [
        pytest.param(
            {"query": "x", "jurisdiction": "se", "limit": 51},
            "input_examples[1] does not match the model SearchArgs (1 error):\n"
            "  - limit: Input should be less than or equal to 50 (got 51)",
            id="dict-out-of-range",
        ),
        pytest.param(
            SearchArgs.model_construct(query="", jurisdiction=Jurisdiction.SE),
            "input_examples[1] does not match the model SearchArgs (1 error):\n"
            '  - query: String should have at least 1 character (got "")',
            id="unvalidated-instance",
        ),
        pytest.param(
            DateRange(start=date(2024, 1, 1)),
            "input_examples[1] must be a SearchArgs instance or a JSON object "
            "(dict), got DateRange",
            id="other-model",
        ),
        pytest.param(
            ["x"],
            "input_examples[1] must be a SearchArgs instance or a JSON object "
            "(dict), got list",
            id="list",
        ),
    ],
)
@pytest.mark.parametrize("strict", [None, True], ids=["plain", "strict"])
def test_examples_are_validated_by_the_model_when_the_tool_is_defined(
    example: Any, error: str, strict: bool | None
) -> None:
    good = {"query": "x", "jurisdiction": "se"}
    with pytest.raises(ValueError) as refused:
        _search_tool(strict=strict, input_examples=[good, example])
    assert str(refused.value) == f"Tool 'search': {error}"


@FEATURE
def test_an_example_with_a_key_the_strict_schema_closes_is_refused() -> None:
    # The model ignores unknown keys; the closed served schema does not, and
    # an example should show a call the model may make.
    _search_tool(strict=True, input_examples=[{"query": "x", "jurisdiction": "se"}])
    with pytest.raises(
        ValueError,
        match=r"input_examples\[0\] does not match the input schema: Additional properties",
    ):
        _search_tool(
            strict=True, input_examples=[{"query": "x", "jurisdiction": "se", "x": 1}]
        )


# --- caps -------------------------------------------------------------------------------


def _many_optional(count: int) -> type[BaseModel]:
    fields: dict[str, Any] = {f"o{i}": (int, 0) for i in range(count)}
    return create_model(f"Optional{count}", **fields)


@FEATURE
def test_strict_model_tools_count_towards_the_caps() -> None:
    # SearchArgs has 4 optional parameters (court, limit, decided, end).
    def tools(last: int) -> list[SdkMcpTool[Any]]:
        return [
            _search_tool(strict=True),
            tool("t0", "d", _many_optional(10), strict=True)(_echo),
            tool("t1", "d", _many_optional(last), strict=True)(_echo),
        ]

    create_sdk_mcp_server("srv", tools=tools(10))
    with pytest.raises(ValueError) as refused:
        create_sdk_mcp_server("srv", tools=tools(11))
    assert str(refused.value) == (
        "The strict tools of SDK MCP server 'srv' go over strict mode's per-request "
        "limits:\n  - 25 optional parameters, over strict mode's limit of 24 per "
        "request: search (4), t0 (10), t1 (11)\nKeeping the declared order, every "
        "other tool fits if these are made non-strict (strict=False): t1 "
        "(optional parameters)"
    )


@FEATURE
async def test_strict_model_tools_count_across_the_servers_of_one_query() -> None:
    a = create_sdk_mcp_server(
        "a",
        tools=[
            tool(f"t{n}", "d", _many_optional(n), strict=True)(_echo) for n in (10, 11)
        ],
    )
    b = create_sdk_mcp_server("b", tools=[_search_tool(strict=True)])
    options = ClaudeAgentOptions(
        mcp_servers={"a": a, "b": b}, cli_path="/nonexistent/claude-for-pydantic-tests"
    )
    with pytest.raises(ValueError) as refused:
        async for _ in query(prompt="hi", options=options):
            pass
    assert str(refused.value) == (
        "The strict tools of this query's SDK MCP servers go over strict mode's "
        "per-request limits:\n  - 25 optional parameters, over strict mode's limit "
        "of 24 per request: mcp__a__t10 (10), mcp__a__t11 (11), mcp__b__search (4)"
        "\nKeeping the declared order, every other tool fits if these are made "
        "non-strict (strict=False): mcp__b__search (optional parameters)"
    )


# --- what does not change -----------------------------------------------------------


class CaseTD(TypedDict):
    jurisdiction: Literal["se", "no"]
    terms: list[str]
    limit: NotRequired[int]


# Neither the pydantic patch nor the types patch changes a plain tool: this is
# upstream's listing and validation, byte for byte.
async def test_dict_and_typeddict_schemas_are_listed_and_called_as_before() -> None:
    received.clear()
    config = _server(
        tool("d", "dict", {"jurisdiction": str, "limit": int})(_echo),
        tool("td", "TypedDict", CaseTD)(_echo),
    )
    listed = await tools_by_name(config)
    ok = await call_tool(config, "td", {"jurisdiction": "se", "terms": ["a"]})
    bad = await call_tool(config, "d", {"jurisdiction": "se", "limit": "5"})

    assert_json(
        listed["d"]["inputSchema"],
        {
            "type": "object",
            "properties": {
                "jurisdiction": {"type": "string"},
                "limit": {"type": "integer"},
            },
            "required": ["jurisdiction", "limit"],
        },
    )
    assert_json(
        listed["td"]["inputSchema"],
        {
            "type": "object",
            "properties": {
                "jurisdiction": {"type": "string"},
                "terms": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer"},
            },
            "required": ["jurisdiction", "terms"],
        },
    )
    assert ok["isError"] is False
    assert received == [{"jurisdiction": "se", "terms": ["a"]}]
    assert type(received[0]) is dict
    assert error_text(bad) == "Input validation error: '5' is not of type 'integer'"


# Literal becomes enum with the typed-schemas patch, for a TypedDict tool that
# opts in.
@pytest.mark.requires_patch("typed-schemas-for-opted-in-tools")
async def test_an_opted_in_typeddict_keeps_its_literal_as_an_enum() -> None:
    received.clear()
    config = _server(
        tool(
            "td",
            "TypedDict",
            CaseTD,
            input_examples=[{"jurisdiction": "se", "terms": ["a"]}],
        )(_echo)
    )
    listed = await tools_by_name(config)
    ok = await call_tool(config, "td", {"jurisdiction": "no", "terms": []})
    bad = await call_tool(config, "td", {"jurisdiction": "dk", "terms": []})

    assert listed["td"]["inputSchema"]["properties"]["jurisdiction"] == {
        "type": "string",
        "enum": ["se", "no"],
    }
    assert ok["isError"] is False
    assert received == [{"jurisdiction": "no", "terms": []}]
    assert error_text(bad) == "Input validation error: 'dk' is not one of ['se', 'no']"


# --- examples under the keys the model validates ----------------------------------


class _Camel(BaseModel):
    model_config = ConfigDict(
        alias_generator=lambda name: name.title().replace("_", ""),
        populate_by_name=True,
    )

    case_id: int
    page_size: int = 20


class _Renamed(BaseModel):
    full_name: str = Field(serialization_alias="fullName")


@FEATURE
@pytest.mark.parametrize("strict", [None, True], ids=["plain", "strict"])
async def test_an_example_instance_is_served_under_the_keys_the_schema_names(
    strict: bool | None,
) -> None:
    camel = tool(
        "camel", "d", _Camel, strict=strict, input_examples=[_Camel(case_id=7)]
    )
    renamed = tool(
        "renamed",
        "d",
        _Renamed,
        strict=strict,
        input_examples=[_Renamed(full_name="A")],
    )
    listed = await tools_by_name(_server(camel(_echo), renamed(_echo)))

    # Set fields only (no default page_size), by the key the model validates.
    assert listed["camel"]["input_examples"] == [{"CaseId": 7}]
    assert listed["renamed"]["input_examples"] == [{"full_name": "A"}]
    for entry in listed.values():
        validator = jsonschema.Draft202012Validator(entry["inputSchema"])
        for example in entry["input_examples"]:
            validator.validate(example)
