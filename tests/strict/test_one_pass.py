"""A tool's schema goes through one pass: its graph built once, then the
checks, then strict mode's transform, each on the previous stage's product.

The shortcuts that make start-up cheap answer exactly as the full machinery:
a graph walked without ``referencing`` equals the full walk, and a schema
the one-walk metaschema check calls valid (or clean) passes jsonschema's
metaschema check (and every check of ``find_schema_problems``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool

try:
    from claude_agent_sdk._internal import schema_checks, schema_graph
    from claude_agent_sdk._internal.schema_checks import (
        _metaschema_problems,
        _plainly_valid,
        find_schema_problems,
    )
    from claude_agent_sdk._internal.schema_graph import SchemaGraph
except ImportError:  # a tree without the patch: these tests must fail
    schema_checks = schema_graph = None  # type: ignore[assignment]

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
        sorted((r.path, r.keyword) for r in graph.recursive_references()),
        graph.too_complex,
    )


def test_the_walk_without_referencing_equals_the_full_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schemas = [json.loads(json.dumps(s)) for s in (*_corpus(), *LOCAL)]
    fast = [_summary(SchemaGraph.build(s)) for s in schemas]
    monkeypatch.setattr(SchemaGraph, "_walk_without_references", lambda self: False)
    full = [_summary(SchemaGraph.build(s)) for s in schemas]
    assert fast == full


def test_the_corpus_never_needs_referencing() -> None:
    shortcut = [
        SchemaGraph(json.loads(json.dumps(s)))._walk_without_references()
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
    monkeypatch.setattr(schema_checks, "_plainly_valid", lambda s, clean=False: False)
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

    def counting(cls: type[SchemaGraph], document: Any) -> SchemaGraph:
        built.append(document)
        return build(cls, document)  # type: ignore[no-any-return]

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
