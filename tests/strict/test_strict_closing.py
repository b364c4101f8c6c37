"""Closing a strict tool's objects only narrows inputs to declared names.

For a ``strict=True`` tool, an input valid against the author's schema that
uses only property names declared for each object it contains (in
``properties`` or in any subschema applied to the same instance: ``allOf``
branches, a ``$ref`` beside ``properties``, ``if``/``then``/``else``,
``dependentSchemas``; for an ``anyOf``/``oneOf`` branch, the names of the
branch it is matched against and of its parent, never a sibling's) must be
valid against the served schema, or the tool must be refused when it is
defined. The served
schema may admit more (``not``, conditionals and ``oneOf``'s exclusivity are
served in words): what it admits beyond the author's schema, the enforced
schema refuses, since closing never lets through an input the author's
schema refuses.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve
from tests.lib.examples import examples

try:
    from claude_agent_sdk._internal.strict.transform import make_strict, strict_schemas
except ImportError:  # a tree without the patch: these tests must fail
    make_strict = strict_schemas = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("strict-schema-checks")


def _valid(schema: Any, instance: Any) -> bool:
    valid: bool = jsonschema.Draft202012Validator(schema).is_valid(instance)
    return valid


DISCRIMINATED: dict[str, Any] = {
    "type": "object",
    "properties": {"kind": {"type": "string"}},
    "required": ["kind"],
    "oneOf": [
        {"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}},
        {"properties": {"kind": {"const": "b"}, "y": {"type": "string"}}},
    ],
}
REF_BESIDE_PROPERTIES: dict[str, Any] = {
    "type": "object",
    "$ref": "#/$defs/Base",
    "properties": {"extra": {"type": "string"}},
    "$defs": {
        "Base": {"type": "object", "properties": {"id": {"type": "integer"}}},
    },
}
IF_THEN: dict[str, Any] = {
    "type": "object",
    "properties": {"kind": {"enum": ["a", "b"]}},
    "if": {"properties": {"kind": {"const": "a"}}},
    "then": {"properties": {"x": {"type": "integer"}}, "required": ["x"]},
    "else": {"properties": {"y": {"type": "string"}}},
}
DEPENDENT: dict[str, Any] = {
    "type": "object",
    "properties": {"card": {"type": "string"}},
    "dependentSchemas": {"card": {"properties": {"cvv": {"type": "string"}}}},
}
ALL_OF: dict[str, Any] = {
    "allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"b": {"type": "string"}}},
    ]
}
# (schema, inputs valid against it that use only declared names)
CASES: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "discriminated-oneOf": (
        DISCRIMINATED,
        [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}],
    ),
    "discriminated-anyOf": (
        {**DISCRIMINATED, "oneOf": None, "anyOf": DISCRIMINATED["oneOf"]},
        [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}],
    ),
    "allOf": (ALL_OF, [{"a": "1", "b": "2"}]),
}
# A name only a $ref beside properties, a conditional or dependentSchemas
# declares would be declared by the closing as {} (any value, untyped):
# refused, at that declaration (issue 42).
UNTYPED_DECLARATIONS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "ref-beside-properties": (
        REF_BESIDE_PROPERTIES,
        ["#/$defs/Base/properties/extra", "#/properties/id"],
    ),
    "if-then-else": (IF_THEN, ["#/properties/x", "#/properties/y"]),
    "dependentSchemas": (DEPENDENT, ["#/properties/cvv"]),
}


@pytest.mark.parametrize("case", list(UNTYPED_DECLARATIONS))
def test_a_name_declared_only_where_nothing_types_it_is_refused(case: str) -> None:
    schema, pointers = UNTYPED_DECLARATIONS[case]
    _, violations = make_strict(schema)
    assert sorted(v.path for v in violations) == pointers
    assert all("accepts any JSON value" in v.rule for v in violations)
    assert all("declare it in this object's properties" in v.rule for v in violations)


@pytest.mark.parametrize("case", list(CASES))
def test_union_and_ref_objects_keep_every_declared_name(case: str) -> None:
    schema, inputs = CASES[case]
    schema = {k: v for k, v in schema.items() if v is not None}
    served, violations = make_strict(schema)
    assert violations == []
    for instance in inputs:
        assert _valid(schema, instance), instance
        assert _valid(served, instance), (instance, served)
    # ...and closing still refuses names declared nowhere.
    assert not _valid(served, {**inputs[0], "undeclared": 1})


@pytest.mark.requires_patch("schema-checks")
async def test_a_discriminated_union_tool_answers_its_calls() -> None:
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}]}

    union = tool("pick", "d", DISCRIMINATED, strict=True)(handler)
    [listed], [a, b, extra] = await serve(
        create_sdk_mcp_server("s", tools=[union]),
        calls=[
            ("pick", {"kind": "a", "x": 1}),
            ("pick", {"kind": "b", "y": "s"}),
            ("pick", {"kind": "a", "x": 1, "z": 0}),
        ],
    )
    assert listed["inputSchema"]["additionalProperties"] is False
    assert not a.get("isError") and not b.get("isError")
    assert extra["isError"] is True


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "unevaluatedProperties": True,
            },
            "#/unevaluatedProperties",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "unevaluatedProperties": {"type": "string"},
            },
            "#/unevaluatedProperties",
        ),
    ],
)
def test_open_unevaluated_properties_are_refused(
    schema: dict[str, Any], pointer: str
) -> None:
    _, violations = make_strict(schema)
    assert [v.path for v in violations] == [pointer]


def test_closed_unevaluated_properties_are_served_closed() -> None:
    schema = {
        "type": "object",
        "allOf": [{"properties": {"a": {"type": "string"}}}],
        "unevaluatedProperties": False,
    }
    forms = strict_schemas(schema)
    assert forms.violations == []
    assert "unevaluatedProperties" not in forms.served
    assert forms.served["additionalProperties"] is False
    # the allOf is merged into the object: a is declared once, typed
    assert forms.served["properties"] == {"a": {"type": "string"}}
    assert "allOf" not in forms.served
    assert forms.enforced["unevaluatedProperties"] is False
    assert _valid(forms.served, {"a": "x"}) and not _valid(forms.served, {"b": 1})


def test_unevaluated_items_are_served_in_words_and_enforced() -> None:
    schema = {
        "type": "object",
        "properties": {
            "l": {"type": "array", "prefixItems": [{}], "unevaluatedItems": False}
        },
    }
    forms = strict_schemas(schema)
    assert forms.violations == []
    served = forms.served["properties"]["l"]
    assert "unevaluatedItems" not in served
    assert "unevaluatedItems: false" in served["description"]
    assert _valid(forms.served, {"l": [1, 2]})
    assert not _valid(forms.enforced, {"l": [1, 2]})


def test_a_negation_is_served_in_words_and_enforced_as_written() -> None:
    # A property that is only a negation (any value but ...) has no type and
    # is refused (issue 42); on a typed object, the negation is words to the
    # model and enforced at call time.
    negated = {"type": "object", "properties": {"x": {"type": "integer"}}}
    untyped = {"type": "object", "properties": {"a": {"not": negated}}}
    assert [v.path for v in strict_schemas(untyped).violations] == ["#/properties/a"]
    schema = {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                # x declared: one only the negation named would be declared
                # by the closing with no type, which is refused (issue 42)
                "properties": {"y": {"type": "integer"}, "x": {"type": "integer"}},
                "not": {**negated, "required": ["x"]},
            }
        },
    }
    forms = strict_schemas(schema)
    assert forms.violations == []
    served = forms.served["properties"]["a"]
    assert "not" not in served and served["description"].startswith("{not: ")
    assert _valid(forms.served, {"a": {"x": 1}})
    assert not _valid(forms.enforced, {"a": {"x": 1}})
    assert _valid(forms.enforced, {"a": {"y": 1}})


# --- the property -------------------------------------------------------------

NAMES = ["kind", "x", "y"]
LEAVES = [
    {"type": "string"},
    {"type": "integer"},
    {"const": "a"},
    {"enum": ["a", "b"]},
]


def _object(draw: st.DrawFn, depth: int, typed: bool) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True))
    schema: dict[str, Any] = {
        "properties": {name: _value(draw, depth) for name in names}
    }
    if typed or draw(st.booleans()):
        schema["type"] = "object"
    if len(names) > 0 and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(names), unique=True))
    if draw(st.integers(0, 4)) == 0:
        schema["additionalProperties"] = False
    return schema


def _value(draw: st.DrawFn, depth: int) -> Any:
    if depth <= 0 or draw(st.integers(0, 3)):
        return draw(st.sampled_from(LEAVES))
    return _combined(draw, depth - 1)


def _combined(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    schema = _object(draw, depth, typed=True)
    for keyword in draw(
        st.lists(
            st.sampled_from(
                ["oneOf", "anyOf", "allOf", "$ref", "if", "dependentSchemas", "not"]
            ),
            max_size=2,
            unique=True,
        )
    ):
        if keyword in ("oneOf", "anyOf", "allOf"):
            schema[keyword] = [
                _object(draw, depth, typed=False)
                for _ in range(draw(st.integers(1, 2)))
            ]
        elif keyword == "$ref":
            schema["$ref"] = "#/$defs/" + draw(st.sampled_from(["A", "B"]))
        elif keyword == "if":
            schema["if"] = _object(draw, depth, typed=False)
            schema["then"] = _object(draw, depth, typed=False)
            if draw(st.booleans()):
                schema["else"] = _object(draw, depth, typed=False)
        elif keyword == "dependentSchemas":
            schema["dependentSchemas"] = {
                draw(st.sampled_from(NAMES)): _object(draw, depth, typed=False)
            }
        else:
            schema["not"] = _object(draw, depth, typed=False)
    return schema


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema = _combined(draw, 1)
    schema["$defs"] = {
        "A": _object(draw, 0, typed=draw(st.booleans())),
        "B": _object(draw, 0, typed=True),
    }
    return schema


instances = st.recursive(
    st.sampled_from(["a", "b", 1]),
    lambda children: st.dictionaries(
        st.sampled_from([*NAMES, "z"]), children, max_size=3
    ),
    max_leaves=4,
).filter(lambda value: isinstance(value, dict))


def _uses_only_declared_names(document: Any, schema: Any, instance: Any) -> bool:
    """The oracle: every object's keys are declared by some schema applied to it.

    Written independently of the SDK: local ``#/$defs/...`` references only.
    """
    if not isinstance(instance, dict):
        return True
    applied: list[dict[str, Any]] = []
    pending = [schema]
    while pending:
        current = pending.pop()
        if not isinstance(current, dict) or any(current is s for s in applied):
            continue
        applied.append(current)
        for keyword in ("oneOf", "anyOf", "allOf"):
            pending.extend(current.get(keyword, []))
        for keyword in ("if", "then", "else", "not"):
            if keyword in current:
                pending.append(current[keyword])
        pending.extend(current.get("dependentSchemas", {}).values())
        if "$ref" in current:
            pending.append(document["$defs"][current["$ref"].rsplit("/", 1)[1]])
    declared = {name for s in applied for name in s.get("properties", {})}
    if not set(instance) <= declared:
        return False
    return all(
        _uses_only_declared_names(document, s["properties"][key], value)
        for key, value in instance.items()
        for s in applied
        if key in s.get("properties", {})
    )


# Derandomized: the same 400 examples on every run, so a run is red only for
# a change, never for the draw. The class the random draw found (about one
# run in fifty) is pinned in test_strict_known_gaps.py as an expected failure.
@settings(
    max_examples=examples(400),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(schema=schemas(), inputs=st.lists(instances, min_size=1, max_size=8))
def test_declared_name_inputs_valid_as_written_are_valid_as_served(
    schema: dict[str, Any], inputs: list[dict[str, Any]]
) -> None:
    forms = strict_schemas(schema)
    if forms.violations:
        return  # refused at definition: allowed by the property
    served, enforced = forms.served, forms.enforced
    for instance in inputs:
        written = _valid(schema, instance)
        declared = _uses_only_declared_names(schema, schema, instance)
        if written and declared:
            assert _valid(served, instance), (instance, served)
            assert _valid(enforced, instance), (instance, enforced)
        # Closing only narrows what is enforced.
        if _valid(enforced, instance):
            assert written, (instance, enforced)


def test_the_property_is_not_vacuous() -> None:
    """Most generated union/ref schemas are served, not refused."""
    from hypothesis import find

    def served_union(schema: dict[str, Any]) -> bool:
        _, violations = make_strict(schema)
        return not violations and any(k in schema for k in ("oneOf", "anyOf", "$ref"))

    find(schemas(), served_union, settings=settings(max_examples=2000, database=None))


def test_a_union_branch_is_served_closed_over_its_own_and_its_parents_names() -> None:
    """Issue 42, item 3: below the root, an object holding a union whose own
    names are all required is served as the union of complete closed
    objects, so an input mixing names that only different branches declare
    is not served (the served contract); the enforced form, closed over
    every name declared for the object, still accepts it as the author's
    schema does."""
    schema = {"type": "object", "properties": {"t": DISCRIMINATED}, "required": ["t"]}
    forms = strict_schemas(schema)
    assert forms.violations == []
    served, enforced = forms.served, forms.enforced
    branches = served["properties"]["t"]["anyOf"]
    assert [set(b["properties"]) for b in branches] == [{"kind", "x"}, {"kind", "y"}]
    assert all(b["additionalProperties"] is False for b in branches)
    assert all(b["required"] == ["kind"] for b in branches)
    mixed = {"t": {"kind": "a", "y": "s"}}  # y: declared by the other branch only
    assert _valid(schema, mixed)
    assert not _valid(served, mixed)
    assert _valid(enforced, mixed)


def test_a_root_union_is_merged_and_its_branches_enforced_at_call_time() -> None:
    """At the root (one closed object), the union moves to the properties:
    the mixed input is served, and the enforced form answers it as the
    author's schema does."""
    forms = strict_schemas(DISCRIMINATED)
    assert forms.violations == []
    served = forms.served
    assert "anyOf" not in served and "oneOf" not in served
    assert served["properties"]["kind"] == {
        "allOf": [{"type": "string"}, {"enum": ["a", "b"]}]
    }
    assert served["required"] == ["kind"]
    assert served["description"].startswith("{anyOf: ")
    for instance in ({"kind": "a", "x": 1}, {"kind": "b", "y": "s"}):
        assert _valid(served, instance)
    assert not _valid(served, {"kind": "c"})
    assert not _valid(forms.enforced, {"kind": "a", "x": "1"})
