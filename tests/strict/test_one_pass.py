"""A tool's schema goes through one pass: its graph built once, then the
checks, then strict mode's transform, each on the previous stage's product.

The shortcuts that make start-up cheap answer exactly as the full machinery:
a graph walked without ``referencing`` equals the full walk, a schema the
one-walk metaschema check calls valid (or clean) passes jsonschema's
metaschema check (and every check of ``find_schema_problems``), strict
mode's copying build (a schema without references, one recursion) serves,
enforces and refuses exactly as the graph's build, and the graph's closing
names are the definition-time index's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.examples import examples
from tests.strict.test_strict_closing import schemas as closing_schemas
from tests.strict.test_strict_properties import tool_schemas

try:
    from claude_agent_sdk._internal.definition import schema_checks
    from claude_agent_sdk._internal.definition.plain_schema import (
        plainly_valid as _plainly_valid,
    )
    from claude_agent_sdk._internal.definition.schema_checks import (
        _metaschema_problems,
        find_schema_problems,
    )
    from claude_agent_sdk._internal.strict import schema_graph
    from claude_agent_sdk._internal.strict import transform as strict_schema
    from claude_agent_sdk._internal.strict.schema_graph import SchemaGraph
except ImportError:  # a tree without the patch: these tests must fail
    schema_checks = schema_graph = strict_schema = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("strict-schema-checks")

CORPUS = Path(__file__).parents[1] / "data" / "mcp_corpus.json"


def _corpus() -> list[dict[str, Any]]:
    data = json.loads(CORPUS.read_text("utf-8"))
    return [entry["inputSchema"] for s in data["servers"] for entry in s["tools"]]


async def _noop(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


LOCAL = [
    {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
     "$defs": {"A": {"type": "string"}}},
    {"properties": {"n": {"$ref": "#"}}},  # recursive through the root
    {"properties": {"a": {"$ref": "#/$defs/a~1b"}}, "$defs": {"a/b": {}}},
    {"properties": {"a": {"$ref": "#/$defs/missing"}}},
    {"properties": {"a": {"$ref": "#/anyOf/1"}}, "anyOf": [{}, {"type": "null"}]},
    {"properties": {"a": {"$ref": "#/anyOf/01"}}, "anyOf": [{}, {}]},
    {"properties": {"a": {"$ref": "#/$defs/t"}}, "$defs": {"t": True}},
    {"properties": {"a": {"$ref": "#/properties/b/type"}}, "properties_": 1},
    {"$schema": "http://json-schema.org/draft-07/schema#",
     "properties": {"a": {"$ref": "#/definitions/A"}}, "definitions": {"A": {}}},
    # Outside the shortcut: the full walk runs.
    {"properties": {"a": {"$ref": "other.json#/A"}}},
    {"$id": "https://example.com/s", "properties": {"a": {"$ref": "#/$defs/A"}},
     "$defs": {"A": {}}},
    {"properties": {"a": {"$ref": "#/$defs/%41"}}, "$defs": {"A": {}}},
    {"$schema": "http://json-schema.org/draft-04/schema#", "properties": {}},
    {"properties": {"a": {"$ref": 3}}},
]  # fmt: skip


def _summary(graph: Any) -> Any:
    return (
        sorted(map(repr, graph.nodes)),
        sorted(
            (r.path, r.keyword, repr(r.ref), r.target, r.problem)
            for r in graph.references
        ),
        {path: sorted(targets) for path, targets in graph.targets.items()},
        sorted(map(repr, graph.reached)),
        graph.too_complex,
        graph.too_deep,
    )


DEEP = [
    {"properties": {"a": {"enum": [[[[1]]]]}}},
    {"properties": {"a": {"properties": {"b": {"items": {}}}}}},
]


@pytest.mark.parametrize("whole", [True, False])
def test_the_walk_without_referencing_equals_the_full_walk(
    monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    schemas = [json.loads(json.dumps(s)) for s in (*_corpus(), *LOCAL, *DEEP)]
    fast = [_summary(SchemaGraph.build(s, whole=whole)) for s in schemas]
    monkeypatch.setattr(
        SchemaGraph, "_walk_without_references", lambda self, whole: False
    )
    # The full walk always takes the whole document; whole=False is what the
    # root reaches of it.
    full = [
        _summary(graph if whole else graph.reached_only())
        for graph in (SchemaGraph.build(s) for s in schemas)
    ]
    assert fast == full


def test_the_walk_finds_nesting_as_shape_problems_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(schema_graph, "MAX_SCHEMA_DEPTH", 4)
    for schema in (*DEEP, *LOCAL[:3]):
        expected = any(
            p.kind == "too deep" for p in schema_graph.shape_problems(schema, 4)
        )
        assert SchemaGraph.build(json.loads(json.dumps(schema))).too_deep == expected


def test_the_corpus_never_needs_referencing() -> None:
    shortcut = [
        SchemaGraph(json.loads(json.dumps(s)))._walk_without_references(True)
        for s in _corpus()
    ]
    assert all(shortcut)


INVALID = [
    {"type": "strin"},
    {"type": []},
    {"type": ["string", "string"]},
    {"required": "a"},
    {"required": ["a", "a"]},
    {"minLength": -1},
    {"minLength": 1.5},
    {"maxItems": True},
    {"items": [{"type": "string"}]},
    {"allOf": []},
    {"anyOf": {}},
    {"multipleOf": 0},
    {"minimum": "1"},
    {"properties": {"a": 3}},
    {"properties": []},
    {"enum": 3},
    {"pattern": 3},
    {"uniqueItems": "yes"},
    {"not": []},
    {"description": 1},
    {"dependentRequired": {"a": "b"}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "strin"},
    {"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": 3},
]


@pytest.mark.parametrize("schema", INVALID, ids=lambda s: json.dumps(s)[:40])
def test_the_one_walk_check_never_passes_an_invalid_schema(schema: Any) -> None:
    assert not _plainly_valid(schema)
    assert _metaschema_problems(schema)  # the full check reports it


def test_every_schema_the_one_walk_check_passes_is_valid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schemas = [*_corpus(), *LOCAL, {"type": ["string", "null"], "x-extra": [1]}]
    plain = [s for s in schemas if _plainly_valid(s)]
    assert len(plain) > len(schemas) // 2
    monkeypatch.setattr(schema_checks, "plainly_valid", lambda s, clean=False: False)
    assert all(_metaschema_problems(s) == [] for s in plain)


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"enum": [1, math.nan]}}},
        {"properties": {"a": {"default": math.inf}}},
        {"properties": {"a": {"minimum": math.nan}}},
        {"properties": {"a": {"pattern": "("}}},
        {"properties": {"a": {"$ref": "#/$defs/none"}}},
    ],
    ids=["nan-in-enum", "inf-default", "nan-bound", "bad-pattern", "ref-nowhere"],
)
def test_the_one_walk_check_leaves_every_problem_to_the_full_checks(
    schema: Any,
) -> None:
    assert not _plainly_valid(schema, clean=True)
    assert find_schema_problems(schema)


def test_a_strict_tool_builds_its_schema_graph_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[Any] = []
    build = SchemaGraph.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[SchemaGraph], /, document: Any, **kw: Any) -> SchemaGraph:
        built.append(document)
        return build(cls, document, **kw)  # type: ignore[no-any-return]

    monkeypatch.setattr(SchemaGraph, "build", classmethod(counting))
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A", "pattern": "^(?<x>a)$"},
            "n": {"type": "integer", "maximum": 5},
        },
        "$defs": {"A": {"type": "string"}, "unused": {"type": "number"}},
        "required": ["a", "n"],
    }
    defined = tool("t", "d", schema, strict=True)(_noop)
    create_sdk_mcp_server("s", tools=[defined])
    assert len(built) == 1


def test_plain_json_schema_tools_start_without_the_metaschema_validator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("metaschema validator built at start-up")

    monkeypatch.setattr(schema_checks, "_META_VALIDATORS", {})
    monkeypatch.setattr(jsonschema.exceptions, "best_match", refuse)
    tools = [
        tool(
            f"t{i}",
            "d",
            {
                "type": "object",
                "properties": {f"a{i}": {"type": "integer", "minimum": 0}},
                "required": [f"a{i}"],
            },
        )(_noop)
        for i in range(20)
    ]
    create_sdk_mcp_server("s", tools=tools)


def test_a_plain_tool_of_python_types_starts_without_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typing import TypedDict

    class Point(TypedDict):
        x: int
        y: float

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("checked at start-up")

    monkeypatch.setattr(schema_checks, "check_input_schema", refuse)
    tools = [
        tool("short", "d", {"a": int, "b": str})(_noop),
        tool("typed", "d", Point)(_noop),
    ]
    create_sdk_mcp_server("s", tools=tools)


# --- strict mode's two builds -------------------------------------------------

HANDWRITTEN: list[dict[str, Any]] = [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
    {"type": "object", "properties": {"k": {"oneOf": [{"type": "string"},
     {"type": "object", "properties": {"a": {"type": "string"}}}]}},
     "anyOf": [{"required": ["k"]}, {"properties": {"z": {"const": 1}}}]},
    {"type": "object", "properties": {"m": {"type": "object"}}},
    {"type": "object", "properties": {"p": {"type": "string",
     "pattern": "^(?<y>\\d{4})$", "format": "int32"}}, "required": ["q"]},
    {"type": "object", "properties": {"e": {"enum": [{"a": 1}, "b"]},
     "c": {"type": "array", "contains": {"type": "string"}, "minItems": 2}},
     "propertyNames": {"pattern": "^[a-z]+$"}, "minProperties": 1,
     "dependentRequired": {"e": ["f"]}, "patternProperties": {"^x": {}}},
    {"type": "object", "properties": {"o": {"type": "object",
     "additionalProperties": {"type": "string"}}}, "x-note": [1, {"a": 2}]},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
     "properties": {"a": {"type": ["string", "null"], "examples": ["x"]}}},
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "properties": {"u": {"uniqueItems": False,
     "items": {"type": "object", "properties": {"v": {"maxLength": 3}}}}}},
]  # fmt: skip


def _forms(result: Any) -> Any:
    served, enforced, violations = result
    return json.dumps([served, enforced, [str(v) for v in violations]])


def _by_copy(schema: Any, describe: bool) -> Any:
    builder = strict_schema._Builder(describe=describe)
    served = builder.copy(schema)
    if served is None:
        return None
    closed = builder.closed
    violations = builder.violations
    if closed.get("type", "object") not in ("object", ["object"]):
        violations = strict_schema.root_violations(closed) + violations
    return served, schema_graph.python_patterns(closed, plain=True), violations


def _by_graph(schema: Any, describe: bool, whole: bool) -> Any:
    document = schema_graph.json_copy(schema, limit=None)
    graph = SchemaGraph.build(document, whole=whole)
    forms = strict_schema.transform(document, graph, describe=describe)
    return forms.served, forms.enforced, forms.violations


def _compare(schema: Any) -> bool:
    """Whether the copying build took ``schema``; asserts it answers as the
    graph's build (of a graph built for strict mode alone or for the checks)."""
    took = False
    for describe in (True, False):
        copied = _by_copy(schema, describe)
        if copied is None:
            continue
        took = True
        for whole in (False, True):
            assert _forms(copied) == _forms(_by_graph(schema, describe, whole)), (
                schema,
                describe,
                whole,
            )
    return took


def test_the_copying_build_answers_as_the_graph_build() -> None:
    schemas = [*_corpus(), *HANDWRITTEN]
    taken = [schema for schema in schemas if _compare(schema)]
    assert len(taken) > len(schemas) * 3 // 4  # most schemas take it


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(schema=tool_schemas)
def test_the_copying_build_answers_as_the_graph_build_on_generated_schemas(
    schema: dict[str, Any],
) -> None:
    _compare(schema)


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(schema=closing_schemas() | tool_schemas)
def test_the_graph_closing_names_are_the_index_names(schema: dict[str, Any]) -> None:
    """The served closing (``_group_names_of``) closes over the enforced
    closing's names (``_SchemaIndex``) less a union branch's siblings' names:
    the same names where no ``anyOf``/``oneOf`` applies, a subset anywhere."""
    document = schema_graph.json_copy(schema, limit=None)
    if document is None:
        return
    graph = SchemaGraph.build(document).reached_only()
    names = strict_schema._group_names_of(graph)
    index = strict_schema._SchemaIndex(document, graph)
    unions = "anyOf" in json.dumps(document) or "oneOf" in json.dumps(document)
    for path in graph.nodes:
        served = set(names.get(path, ()))
        if unions:
            assert served <= index.names_for(path), path
        else:
            assert served == index.names_for(path), path
