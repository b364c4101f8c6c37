"""Property tests for the strict-mode schema check.

Generated schemas mix what strict mode accepts with everything it rejects,
nested through every keyword that holds subschemas. Two properties:

- the check never crashes, on such schemas or on arbitrary JSON: it returns
  a list of violations (and ``tool(strict=True)`` raises only ValueError,
  or TypeError for a dict read as the shorthand whose values are not types);
- whatever ``tool(strict=True)`` accepts is served (on ``tools/list``) inside
  strict mode's documented subset (Anthropic's "Structured outputs" page,
  "JSON Schema limitations"): only the keywords it lists, enums and consts
  of plain values, the ten formats, ``minItems`` 0 or 1, no ``allOf`` branch
  that is a ``$ref``, every object closed, no external or recursive
  ``$ref``, and patterns free of backreferences, lookaround, word
  boundaries and large counted repetitions -- judged by an oracle written
  here, independently of the SDK's checker (Python's own regex parser judges
  the patterns).
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve
from tests.lib.examples import examples

if sys.version_info >= (3, 11):
    from re import _parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_parse

strict_patch = pytest.mark.requires_patch("strict-schema-checks")
PROPERTY_SETTINGS = settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# The keywords the page lists as supported (plus the annotations
# description and title); anything else in a served schema is outside.
DOCUMENTED_KEYWORDS = {
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "default",
    "description",
    "title",
    "format",
    "minItems",
    "pattern",
    "additionalProperties",
}
DOCUMENTED_FORMATS = {
    "date-time", "time", "date", "duration", "email", "hostname", "uri",
    "ipv4", "ipv6", "uuid",
}  # fmt: skip

PATTERNS = [
    r"^[a-z]+$",
    r"^\d{3}-\d{4}$",
    r"(ab)+c?",
    r"[\b]x",
    r"\\b",
    r"^(\w)\1$",
    r"(?=a)b",
    r"(?!a)b",
    r"(?<=a)b",
    r"(?<!a)b",
    r"\bword\b",
    r"a\Bb",
    r"(?:x|y)*",
]

names = st.sampled_from(["a", "b", "c", "d/e", "f~g"])
json_scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3)
keyword_values: dict[str, st.SearchStrategy[Any]] = {
    "minimum": st.integers(-5, 5),
    "maximum": st.integers(-5, 5),
    "exclusiveMinimum": st.integers(-5, 5),
    "exclusiveMaximum": st.integers(-5, 5),
    "multipleOf": st.integers(1, 4),
    "minLength": st.integers(0, 4),
    "maxLength": st.integers(0, 4),
    "minItems": st.integers(0, 3),
    "maxItems": st.integers(0, 3),
    "uniqueItems": st.booleans(),
    "minContains": st.integers(0, 2),
    "maxContains": st.integers(0, 2),
    "pattern": st.sampled_from(PATTERNS)
    | st.text(alphabet="ab\\1(?=!<)[]", max_size=6),
    "format": st.sampled_from(["date", "email", "uuid"]),
    "description": st.text(max_size=4),
    "enum": st.lists(json_scalars, min_size=1, max_size=3),
}
REFS = ["#", "#/$defs/A", "#/$defs/B", "#/properties/a", "other.json#/A", "#/nope"]


LEAF_TYPES = ["string", "integer", "number", "boolean", "null"]
COMPOSITE_KINDS = [
    "object",
    "free-form object",
    "array",
    "tuple",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "$ref",
    "boolean",
]


KEYWORD_NAMES = st.lists(st.sampled_from(list(keyword_values)), max_size=2, unique=True)
REQUIRED = st.lists(names, max_size=3, unique=True)
ADDITIONAL = st.sampled_from(["none", "none", "false", "true", "schema"])
KINDS = st.sampled_from(COMPOSITE_KINDS)
TYPES = st.sampled_from(LEAF_TYPES)
REF = st.sampled_from(REFS)
PATTERN = st.sampled_from(PATTERNS)
ONE_IN_SIX = st.integers(0, 5)


def _subschemas(depth: int, child: st.SearchStrategy[Any] | None) -> Any:
    """Schemas nested up to ``depth`` levels through every subschema keyword.

    One composite over strategies built once, rather than ``st.recursive``
    over many ``fixed_dictionaries``: the same shapes, drawn several times
    faster, which keeps 200 examples per property within the suite's budget.
    """
    children = st.nothing() if child is None else child
    properties = st.dictionaries(names, children, max_size=3)
    some = st.lists(children, min_size=1, max_size=3)
    few = st.lists(children, max_size=2)

    @st.composite
    def draw_schema(draw: st.DrawFn) -> Any:
        kind = "leaf"
        if child is not None and draw(st.booleans()):
            kind = draw(KINDS)
        schema: dict[str, Any]
        if kind == "boolean":
            return draw(st.booleans())
        if kind == "$ref":
            return {"$ref": draw(REF)}
        if kind == "leaf":
            schema = {"type": draw(TYPES)}
        elif kind == "object":
            schema = {"type": "object", "properties": draw(properties)}
            if draw(st.booleans()):
                schema["required"] = draw(REQUIRED)
            extra = draw(ADDITIONAL)
            if extra != "none":
                schema["additionalProperties"] = {
                    "false": False,
                    "true": True,
                    "schema": draw(children),
                }[extra]
            if draw(ONE_IN_SIX) == 0:
                schema["patternProperties"] = {draw(PATTERN): draw(children)}
        elif kind == "free-form object":
            schema = {"type": "object"}
        elif kind == "array":
            schema = {"type": "array", "items": draw(children)}
        elif kind == "tuple":
            schema = {"type": "array", "prefixItems": draw(few)}
        elif kind == "if":
            schema = {
                "if": draw(children),
                "then": draw(children),
                "else": draw(children),
            }
        elif kind == "not":
            schema = {"not": draw(children)}
        else:
            schema = {kind: draw(some)}
        # Up to two further keywords, rejected ones as likely as accepted ones.
        if draw(st.booleans()):
            for keyword in draw(KEYWORD_NAMES):
                schema.setdefault(keyword, draw(keyword_values[keyword]))
        return schema

    return draw_schema()


subschemas_by_depth: list[st.SearchStrategy[Any]] = [_subschemas(0, None)]
for _depth in range(1, 4):
    subschemas_by_depth.append(_subschemas(_depth, subschemas_by_depth[-1]))

tool_schemas = st.builds(
    lambda properties, extra: {"type": "object", "properties": properties, **extra},
    st.dictionaries(names, subschemas_by_depth[3], min_size=1, max_size=3),
    st.fixed_dictionaries(
        {},
        optional={
            "required": st.lists(names, max_size=3, unique=True),
            "$defs": st.dictionaries(
                st.sampled_from(["A", "B"]), subschemas_by_depth[2], max_size=2
            ),
            "additionalProperties": st.sampled_from([False, True]),
        },
    ),
)
arbitrary_json = st.recursive(
    json_scalars | st.floats(allow_nan=False),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [*keyword_values, "properties", "items", "anyOf", "$ref", "x"]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


# --- the oracle ---------------------------------------------------------------


def _unsupported_regex(pattern: str) -> bool:
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return False  # not a Python regex; the property has nothing to say
    constants = sre_parse
    stack = [(parsed, 1)]
    while stack:
        subpattern, repeated = stack.pop()
        for op, arg in subpattern.data:
            name = str(op)
            if name in ("GROUPREF", "ASSERT", "ASSERT_NOT"):
                return True
            if name == "AT" and str(arg) in ("AT_BOUNDARY", "AT_NON_BOUNDARY"):
                return True
            count = repeated
            if name in ("MAX_REPEAT", "MIN_REPEAT"):
                repeat: Any = arg  # (low, high, subpattern)
                low, high = repeat[0], repeat[1]
                bound = low if high is constants.MAXREPEAT else high
                count = repeated * max(bound, 1)
                if bound > 1 and count > 100:
                    return True
            for item in arg if isinstance(arg, (list, tuple)) else [arg]:
                if isinstance(item, constants.SubPattern):
                    stack.append((item, count))
                elif isinstance(item, (list, tuple)):
                    stack.extend(
                        (x, count) for x in item if isinstance(x, constants.SubPattern)
                    )
    return False


def _at(document: Any, pointer: str) -> Any:
    current = document
    for raw in pointer[2:].split("/") if pointer != "#" else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        try:
            current = current[int(token) if isinstance(current, list) else token]
        except (KeyError, IndexError, ValueError, TypeError):
            return None
    return current


def _is_object(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if declared is None:
        return "properties" in schema
    return declared == "object" or (isinstance(declared, list) and "object" in declared)


def _strict_problems(document: Any) -> list[str]:
    """Everything outside strict mode's documented subset in ``document``."""
    problems: list[str] = []

    def visit(schema: Any, where: str, expanding: tuple[str, ...]) -> None:
        if not isinstance(schema, dict):
            return
        for keyword in schema.keys() - DOCUMENTED_KEYWORDS:
            problems.append(f"{where}: {keyword}")
        if (
            "additionalProperties" in schema
            and schema["additionalProperties"] is not False
        ):
            problems.append(f"{where}: open additionalProperties")
        if _is_object(schema) and schema.get("additionalProperties") is not False:
            problems.append(f"{where}: object not closed")
        if "minItems" in schema and schema["minItems"] not in (0, 1):
            problems.append(f"{where}: minItems")
        if "format" in schema and schema["format"] not in DOCUMENTED_FORMATS:
            problems.append(f"{where}: format")
        values = list(schema.get("enum", [])) + (
            [schema["const"]] if "const" in schema else []
        )
        if any(isinstance(value, dict | list) for value in values):
            problems.append(f"{where}: complex enum")
        if any(isinstance(b, dict) and "$ref" in b for b in schema.get("allOf", [])):
            problems.append(f"{where}: allOf with $ref")
        if isinstance(schema.get("items"), list):
            problems.append(f"{where}: items list")
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and _unsupported_regex(pattern):
            problems.append(f"{where}: pattern {pattern!r}")
        ref = schema.get("$ref")
        if ref is not None:
            if not ref.startswith("#"):
                problems.append(f"{where}: external $ref")
            elif ref in expanding:
                problems.append(f"{where}: recursive $ref")
                return
            elif _at(document, ref) is None:
                problems.append(f"{where}: unresolvable $ref")
            else:
                visit(_at(document, ref), ref, (*expanding, ref))
        for key, value in schema.items():
            if key in ("properties", "$defs", "definitions") and isinstance(
                value, dict
            ):
                for name, sub in value.items():
                    visit(sub, f"{where}/{key}/{name}", expanding)
            elif key in ("anyOf", "allOf") and isinstance(value, list):
                for sub in value:
                    visit(sub, f"{where}/{key}", expanding)
            elif key == "items":
                visit(value, f"{where}/{key}", expanding)

    visit(document, "#", ("#",))
    return problems


def _define(schema: Any) -> Any:
    return tool("generated", "A generated strict tool", schema, strict=True)(_noop)


async def _noop(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


# --- the properties -----------------------------------------------------------


@strict_patch
@PROPERTY_SETTINGS
@given(schema=tool_schemas | arbitrary_json)
def test_the_checker_never_crashes(schema: Any) -> None:
    from claude_agent_sdk._internal.strict.transform import (
        StrictViolation,
        find_strict_violations,
        make_strict,
    )

    violations = find_strict_violations(schema)
    assert all(isinstance(v, StrictViolation) for v in violations)
    _, violations = make_strict(schema)
    assert all(v.path.startswith("#") and v.rule for v in violations)
    if isinstance(schema, dict):
        try:
            _define(schema)
        except (TypeError, ValueError) as e:
            assert "'generated'" in str(e)


@strict_patch
@PROPERTY_SETTINGS
@given(schema=tool_schemas)
def test_every_accepted_schema_is_served_strict_compatible(
    schema: dict[str, Any],
) -> None:
    try:
        accepted = _define(schema)
    except ValueError as e:
        # strict mode's rules, or a schema every call would fail on
        # (schema_checks: metaschema, patterns Python's re cannot compile)
        assert str(e).startswith("Tool 'generated'")
        return
    [listed], _ = asyncio.run(serve(create_sdk_mcp_server("s", tools=[accepted])))
    assert _strict_problems(listed["inputSchema"]) == []


@strict_patch
def test_the_generator_also_yields_schemas_strict_mode_accepts() -> None:
    """Keeps the previous property from holding vacuously."""
    from claude_agent_sdk._internal.strict.transform import make_strict

    def accepted_with_a_closed_nested_object(schema: dict[str, Any]) -> bool:
        served, violations = make_strict(schema)
        nested = [
            p
            for p in served["properties"].values()
            if isinstance(p, dict) and p.get("additionalProperties") is False
        ]
        return not violations and bool(nested) and "additionalProperties" not in schema

    example = find(
        tool_schemas,
        accepted_with_a_closed_nested_object,
        settings=settings(max_examples=2000, database=None),
    )
    assert _strict_problems(make_strict(example)[0]) == []
