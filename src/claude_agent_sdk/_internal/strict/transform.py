"""Strict mode's schema rules, and the transform that serves a strict tool.

``RULES`` (docs/strict-mode.md's table), ``strict_schemas`` (the served
form, the enforced form and the violations of one schema) and the
per-request caps. Loaded only with the first strict tool or the relay.
How it is built: docs/internals.md.
"""

from __future__ import annotations

import enum
import json
import math
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from ..definition.plain_schema import known_keyword, nearest_keyword
from .schema_graph import (
    LOCAL_POINTER,
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_POSITIONS,
    PLAIN_DIALECTS,
    Reference,
    SchemaGraph,
    follow,
    json_copy,
    pointer,
    python_patterns,
    shape_problems,
    subschemas,
)

# --- the documented subset ------------------------------------------------------

DOCUMENTATION = (
    "https://platform.claude.com/docs/en/build-with-claude/structured-outputs"
)
"""Anthropic's page that documents strict mode's JSON Schema subset
("JSON Schema limitations") and its caps ("Schema complexity limits")."""

SUPPORTED_TYPES = frozenset(
    {"object", "array", "string", "integer", "number", "boolean", "null"}
)
"""Documented: "All basic types: object, array, string, integer, number,
boolean, null"."""

SUPPORTED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri",
     "ipv4", "ipv6", "uuid"}
)  # fmt: skip
"""Documented: "String formats: date-time, time, date, duration, email,
hostname, uri, ipv4, ipv6, uuid"."""

STRICT_TOOL_LIMIT = 20
"""Documented: "Strict tools per request: 20"."""

OPTIONAL_PARAMETER_LIMIT = 24
"""Documented: "Optional parameters: 24", across all strict schemas of one
request; "each parameter not listed in required counts"."""

UNION_PARAMETER_LIMIT = 16
"""Documented: "Parameters with union types: 16": parameters that use
``anyOf`` or type arrays, across all strict schemas of one request."""

QUANTIFIER_LIMIT = 100
"""The project's reading of "Complex {n,m} quantifiers with large ranges"
(documented as unsupported, without a number): a counted repetition whose
bound, multiplied through the counted repetitions around it, exceeds this.
Such a pattern is served in words and still checked on every call."""

Path = tuple[str | int, ...]


# --- strict mode's rules, as one table --------------------------------------------


class Served(enum.Enum):
    """How the SDK serves a keyword (or a schema shape) of a strict tool."""

    KEPT = "as written"
    DESCRIBED = "described"
    """Moved into the description of the schema that held it. When the rule
    narrows (it refuses inputs), the validator still enforces it."""
    NORMALIZED = "normalized"
    """Rewritten into the subset; admits what the author's schema admitted
    among inputs that use declared names."""
    NOT_SERVED = "not served"
    REFUSED = "refused"
    """The tool is refused when it is defined (``ValueError``)."""


DOCUMENTED = "documented"
JUDGEMENT = "the project's judgement"


def _always(value: Any) -> bool:
    return True


def _primitive(value: Any) -> bool:
    return value is None or isinstance(value, str | bool | int | float)


def _is_zero_or_one(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value in (0, 1)
    )


@dataclass(frozen=True)
class Rule:
    """One of strict mode's rules: what a keyword is served as, and why.

    A rule with ``keywords`` applies to a schema holding one of them whose
    value ``applies`` accepts (the first such rule of the keyword decides);
    one without is applied by the code named in its ``name`` and lends its
    message. ``message`` (a ``str.format`` template with ``keyword``,
    ``value`` and the code's fields) is what a violation of the rule says:
    always for a refused rule, for a described one when it cannot move
    (``describe=False``), and for any rule but a kept one when a schema is
    judged as it stands (``find_strict_violations``). ``source`` is whether
    the documentation states the rule (``DOCUMENTED``, ``why`` quotes it)
    or it is the project's judgement (``why`` gives the reason). ``label``,
    ``note`` and ``enforced_by`` are the rest of the row of
    docs/strict-mode.md's table (no ``label``: not shown).
    """

    keywords: tuple[str, ...]
    served_as: Served
    message: str = ""
    applies: Callable[[Any], bool] = _always
    kinds: frozenset[type] | None = None
    """When set, the rule applies to exactly the values of these types
    (``applies`` is not called)."""
    source: str = DOCUMENTED
    why: str = ""
    narrows: bool = True
    """For a described rule: whether the keyword refuses inputs, so that
    moving it is sound only where a validator enforces it (JSON Schema
    tools, not pydantic models). One that constrains nothing moves always."""
    pydantic_enforces: bool = False
    """Whether a pydantic model enforces the keyword it derives from a field
    constraint (``Field(ge=1)`` -> ``minimum``), so that a model's tool may
    serve it in words (``pydantic_models``)."""
    name: str = ""
    label: str = ""
    note: str = ""
    enforced_by: str = ""


_BY_VALIDATOR = "the SDK's validator (your schema), every call and example"
_NOT_LISTED = (
    "not in the page's list of supported features; {what}, so the schema "
    "served without it admits more, and the SDK's validator keeps it"
)
_NUMERIC = (
    "numeric constraint '{keyword}' is not supported in strict mode; check the "
    "range in the tool's handler"
)
_STRING = (
    "string length constraint '{keyword}' is not supported in strict mode; "
    "check the length in the tool's handler"
)
_ARRAY = (
    "array constraint '{keyword}' is not supported in strict mode (only "
    "minItems 0 or 1 is); check it in the tool's handler"
)
_NARROWING = (
    "'{keyword}' is not in strict mode's documented subset; check it in the "
    "tool's handler"
)
_REGEX = (
    "pattern uses {construct} ({example!r}), which {whose}; check the pattern "
    "in the tool's handler"
)
_RECURSION = "— (strict mode cannot compile recursion)"
_OBJECTS = '"required and additionalProperties (must be set to false for objects)"'
_REFS = '"$ref, $def, and definitions (external $ref not supported)"'


def _valid_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in SUPPORTED_TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, str) and t in SUPPORTED_TYPES for t in value)
        and len(set(value)) == len(value)
    )


def _pattern_outside(value: Any) -> bool:
    return isinstance(value, str) and bool(regex_findings(value))


def _not_false(value: Any) -> bool:
    return value is not False


RULES: tuple[Rule, ...] = (
    # -- kept: the documented subset --
    Rule(
        ("type",),
        Served.KEPT,
        applies=_valid_type,
        why='"Supported features: All basic types: object, array, string, '
        'integer, number, boolean, null"; a list of them is a union '
        "(counted by the caps)",
        label="`type`: one of the seven basic types, or a list of them",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("properties",),
        Served.KEPT,
        kinds=frozenset({dict}),
        why=_OBJECTS,
        label="`properties`",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("required",),
        Served.KEPT,
        applies=lambda value: (
            isinstance(value, list) and all(isinstance(name, str) for name in value)
        ),
        why=_OBJECTS,
        label="`required`",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("items",),
        Served.KEPT,
        kinds=frozenset({dict, bool}),
        source=JUDGEMENT,
        why="the page's arrays (and its examples) describe their items with "
        "one `items` schema; no other array keyword is listed",
        label="`items` (one schema)",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("enum",),
        Served.KEPT,
        applies=lambda value: isinstance(value, list) and all(map(_primitive, value)),
        why='"enum (strings, numbers, bools, or nulls only - no complex types)"',
        label="`enum` of strings, numbers, booleans and null",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("const",),
        Served.KEPT,
        applies=_primitive,
        why='"const"',
        label="`const` of a string, number, boolean or null",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("anyOf", "allOf"),
        Served.KEPT,
        applies=lambda value: isinstance(value, list) and bool(value),
        why='"anyOf and allOf (with limitations - allOf with $ref not '
        'supported)"; `anyOf` counts as a union',
        label="`anyOf`, `allOf`",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("$ref",),
        Served.KEPT,
        kinds=frozenset({str}),
        why=_REFS,
        label="`$ref` within the schema",
        note=", as a JSON Pointer into the served schema",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("$defs", "definitions"),
        Served.KEPT,
        kinds=frozenset({dict}),
        why=_REFS,
        label="`$defs`, `definitions`",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("default",),
        Served.KEPT,
        why='"default property for all supported types"',
        label="`default`",
        enforced_by="— (an annotation)",
    ),
    Rule(
        ("format",),
        Served.KEPT,
        applies=lambda value: isinstance(value, str) and value in SUPPORTED_FORMATS,
        why='"String formats: date-time, time, date, duration, email, '
        'hostname, uri, ipv4, ipv6, uuid"',
        label="`format`: one of those ten",
        enforced_by="the grammar (the validator, as upstream's, treats "
        "`format` as an annotation)",
    ),
    Rule(
        ("minItems",),
        Served.KEPT,
        applies=_is_zero_or_one,
        why='"Array minItems (only values 0 and 1 supported)"',
        label="`minItems` 0 or 1",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("pattern",),
        Served.KEPT,
        applies=lambda value: isinstance(value, str) and not regex_findings(value),
        why='"Pattern support (regex)": full and partial matching, `*`, `+`, '
        "`?`, simple `{n,m}`, character classes `[]`, `.`, `\\d`, `\\w`, "
        "`\\s`, groups `(...)`; taken as also meaning alternation `|`, "
        "non-capturing groups `(?:...)`, `\\D`, `\\W`, `\\S` and escaped "
        "characters (the project's judgement: plain regular-language syntax)",
        label="`pattern` that uses only what the page supports",
        enforced_by="the grammar, and the validator (Python's `re`)",
    ),
    Rule(
        ("additionalProperties",),
        Served.KEPT,
        applies=lambda value: value is False,
        why='"additionalProperties (must be set to false for objects)"',
        label="`additionalProperties: false`",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("description", "title"),
        Served.KEPT,
        kinds=frozenset({str}),
        source=JUDGEMENT,
        why="annotations that constrain nothing; the page's SDKs keep them "
        "(the Anthropic Python SDK's `transform_schema` keeps both) and write "
        "what they move into the description",
        label="`description`, `title`",
        enforced_by="— (annotations)",
    ),
    # -- normalized --
    Rule(
        (),
        Served.NORMALIZED,
        "object is not closed: strict mode requires additionalProperties: "
        "false on every object",
        why='"additionalProperties (must be set to false for objects)"; the '
        'SDKs\' transform "Add additionalProperties: false to all objects"',
        name="not closed",
        label="an object without `additionalProperties`",
        note=": closed with `additionalProperties: false` over every property "
        "name declared for it: its own `properties` and those of its "
        "`anyOf`/`oneOf`/`allOf` branches, a `$ref` beside `properties`, "
        "`if`/`then`/`else` and `dependentSchemas`. An `anyOf`/`oneOf` "
        "branch is served closed over its own names and those of the object "
        "it is a branch of, never its siblings' (an input mixing names only "
        "different branches declare is not served; the enforced form keeps "
        "them); an object holding a union or an `allOf` is served as in the "
        'next row. Schemas generated from a dict (`{"a": str}`) or a '
        "TypedDict are closed too",
        enforced_by="the grammar, and the validator (an undeclared key is an error)",
    ),
    Rule(
        (),
        Served.NORMALIZED,
        source=JUDGEMENT,
        why="the page requires every object closed (so an object holding a "
        "union must declare every name its branches declare) and counts each "
        "name not in `required` as an optional parameter, union-typed if it "
        "uses `anyOf`; declaring the branches' names on the object as well "
        "(as `{}`, any value) would count each twice and put untyped "
        "properties into the grammar. Distributed, the grammar keeps the "
        "union and nothing is added; merged, each name is counted once, and "
        "what the grammar no longer says of the branches is written in "
        "words and checked on every call",
        name="union holder",
        label="an object holding `anyOf`/`oneOf` or `allOf` branches that are "
        "objects of named properties (the root of many MCP tools: "
        '`{"type": "object", "properties": {...}, "oneOf": [{...}, {...}]}`)',
        note=": an `allOf` is merged into the object (each name declared once, "
        "as the conjunction of its declarations: the same inputs) where the "
        "closing would declare a name as `{}`. A union "
        "below the root whose object has no optional name of its own is "
        "*distributed*: the object becomes the `anyOf` of its branches, each "
        "a complete closed object with the object's names (no name added). "
        "Otherwise (always at the root, which must be one closed object) the "
        "union is *merged* into the object's properties: each name declared "
        "once, admitting what any branch declaring it admits (one `const` "
        "per branch becomes an `enum`), required where the object or every "
        "branch requires it, and the branches (their names, `const`s and "
        '`required`) written in words: `{anyOf: [{"properties": {"kind": '
        '{"const": "a"}, "a0": {}}, "required": ["kind"]}, ...]}`. A '
        "union "
        "a `$ref` points into, or with branches that are not such objects, "
        "is closed as in the row above, declaring its branches' names as "
        "`{}`: refused (the `{}` row below)",
        enforced_by=_BY_VALIDATOR,
    ),
    Rule(
        (),
        Served.NORMALIZED,
        source=JUDGEMENT,
        why="a tool without arguments: closed, it takes `{}` as its author meant",
        name="no arguments",
        label='the root `{"type": "object"}` with no properties',
        note=': `{"type": "object", "properties": {}, "additionalProperties": false}`',
        enforced_by="the validator (only `{}`)",
    ),
    Rule(
        ("oneOf",),
        Served.NORMALIZED,
        "oneOf is not in strict mode's documented subset (the SDK serves it "
        "as anyOf and checks its exclusivity on every call)",
        applies=lambda value: isinstance(value, list) and bool(value),
        source=JUDGEMENT,
        why="`oneOf` is not in the page's list, `anyOf` is; `anyOf` admits "
        "every input `oneOf` admits (it drops only the exclusivity, which the "
        "validator keeps), as the Anthropic Python SDK's `transform_schema` "
        "rewrites it",
        label="`oneOf`",
        note=": served as `anyOf` (inside an `allOf` when the schema has an "
        "`anyOf` too)",
        enforced_by="the validator (`oneOf`, exclusivity included)",
    ),
    Rule(
        (),
        Served.NORMALIZED,
        "allOf with $ref is not supported in strict mode",
        why='"allOf with $ref not supported"',
        name="allOf $ref",
        label="an `allOf` branch that is a `$ref`",
        note=": the referenced schema written out in its place (its served "
        "form: the same inputs)",
        enforced_by="the grammar, and the validator",
    ),
    Rule(
        ("unevaluatedProperties",),
        Served.NORMALIZED,
        "unevaluatedProperties is not in strict mode's documented subset (the "
        "SDK closes the object with additionalProperties: false instead)",
        applies=lambda value: value is False,
        source=JUDGEMENT,
        why="not in the page's list; closed with `additionalProperties: false` "
        "over every name declared for the object, which admits at least what "
        "`unevaluatedProperties: false` admits among them",
        label="`unevaluatedProperties: false`",
        note=": the object closed with `additionalProperties: false` instead",
        enforced_by="the validator (`unevaluatedProperties`)",
    ),
    Rule(
        ("prefixItems", "items"),
        Served.NORMALIZED,
        "{keyword} (a tuple) is not in strict mode's documented subset; check "
        "the positions in the tool's handler",
        applies=lambda value: isinstance(value, list),
        source=JUDGEMENT,
        why="the page lists no tuple keyword; every element matches the "
        "schema of its position, so `items: {anyOf: [those schemas]}` admits "
        "every tuple the author's admits (a pydantic model's tuple field is "
        "checked by the model)",
        pydantic_enforces=True,
        label="`prefixItems` (and draft 7's `items: [...]` with `additionalItems`)",
        note=": `items` becomes the `anyOf` of the position schemas (and of "
        "`items`, unless `false`); the positions are written in words",
        enforced_by=_BY_VALIDATOR,
    ),
    Rule(
        (
            "$schema",
            "$id",
            "$anchor",
            "$comment",
            "$dynamicAnchor",
            "$recursiveAnchor",
            "$vocabulary",
        ),
        Served.NOT_SERVED,
        "'{keyword}' is not in strict mode's documented subset (the SDK does "
        "not serve it)",
        source=JUDGEMENT,
        why="they name the document, its dialect and its parts, or comment "
        "on it; they constrain no input (references are written as JSON "
        "Pointers instead)",
        label="`$schema`, `$id`, `$anchor`, `$comment`",
        enforced_by="the validator reads your schema in its own dialect",
    ),  # fmt: skip
    Rule(
        ("uniqueItems",),
        Served.NOT_SERVED,
        "'uniqueItems' is not in strict mode's subset",
        applies=lambda value: value is False,
        source=JUDGEMENT,
        why="`false` says nothing",
        label="`uniqueItems: false`",
    ),
    Rule(
        (),
        Served.NOT_SERVED,
        source=JUDGEMENT,
        why="it cannot apply to any input",
        name="unreached",
        label="a `$defs` / `definitions` entry no served `$ref` reaches",
        enforced_by="— (or the validator, where a moved keyword refers to it)",
    ),
    # -- described: outside the subset, in words --
    *(
        Rule(
            (keyword,),
            Served.DESCRIBED,
            _NUMERIC,
            why='"Not supported: Numerical constraints (such as minimum, '
            'maximum, multipleOf)"',
            pydantic_enforces=True,
            label=f"`{keyword}`",
            note=": `{minimum: 1, maximum: 50}` in the description",
            enforced_by=_BY_VALIDATOR,
        )
        for keyword in (
            "minimum",
            "exclusiveMinimum",
            "maximum",
            "exclusiveMaximum",
            "multipleOf",
        )
    ),
    *(
        Rule(
            (keyword,),
            Served.DESCRIBED,
            _STRING,
            why='"Not supported: String constraints (minLength, maxLength)"',
            pydantic_enforces=True,
            label=f"`{keyword}`",
            note=": `{minLength: 2, maxLength: 40}`",
            enforced_by=_BY_VALIDATOR,
        )
        for keyword in ("minLength", "maxLength")
    ),
    Rule(
        ("pattern",),
        Served.DESCRIBED,
        _REGEX,
        applies=_pattern_outside,
        why='"Pattern support (regex) ... NOT supported: Backreferences to '
        "groups, Lookahead/lookbehind assertions, Word boundaries: \\b, \\B, "
        'Complex {n,m} quantifiers with large ranges" (large: a bound over '
        f"{QUANTIFIER_LIMIT}, multiplied through nested counts, the project's "
        "reading); constructs the page does not list (named groups "
        "`(?<name>...)`, `\\p{...}`, `\\c`, inline flags, other escapes) are "
        "the project's judgement: not known to compile",
        pydantic_enforces=True,
        label="`pattern` with any other construct",
        note=': `{pattern: "..."}`',
        enforced_by="the SDK's validator (Python's `re`, ECMA-262 named groups "
        "translated)",
    ),
    Rule(
        ("minItems",),
        Served.DESCRIBED,
        "minItems must be 0 or 1 in strict mode (found {value!r}); check longer "
        "minimums in the tool's handler",
        applies=lambda value: not _is_zero_or_one(value),
        why='"Array minItems (only values 0 and 1 supported)"',
        pydantic_enforces=True,
        label="`minItems` other than 0 or 1",
        note=": `{minItems: 2, maxItems: 3}`",
        enforced_by=_BY_VALIDATOR,
    ),
    *(
        Rule(
            (keyword,),
            Served.DESCRIBED,
            _ARRAY,
            why='"Not supported: Array constraints beyond minItems of 0 or 1"',
            pydantic_enforces=keyword in ("maxItems", "uniqueItems"),
            label=f"`{keyword}`" + (": true" if keyword == "uniqueItems" else ""),
            note=": `{maxItems: 3}`"
            if keyword in ("maxItems", "uniqueItems")
            else ": `{contains: ...}`",
            enforced_by=_BY_VALIDATOR,
        )
        for keyword in (
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
        )
    ),
    Rule(
        ("enum", "const"),
        Served.DESCRIBED,
        "{keyword} with an object or array value is not supported in strict "
        "mode; check it in the tool's handler",
        applies=lambda value: not _primitive(value),  # `enum: "x"`: malformed
        why='"Not supported: Complex types within enums" (`const` is an enum '
        "of one: the project's reading)",
        name="complex enum",
        label="`enum` or `const` with an object or array value, beside a `type`, "
        "`anyOf` or `$ref` that types its schema",
        note=": `{enum: [...]}`",
        enforced_by=_BY_VALIDATOR,
    ),
    *(
        Rule(
            (keyword,),
            Served.DESCRIBED,
            _NARROWING,
            source=JUDGEMENT,
            why=_NOT_LISTED.format(what=what),
            pydantic_enforces=keyword in ("minProperties", "maxProperties"),
            label=label,
            note=f": `{{{keyword}: ...}}`{note}",
            enforced_by=_BY_VALIDATOR,
        )
        for keyword, label, what, note in (
            ("not", "`not`", "it only refuses inputs", ""),
            ("if", "`if`, `then`, `else`", "together they only refuse inputs", ""),
            ("then", "", "", ""),
            ("else", "", "", ""),
            (
                "dependentSchemas",
                "`dependentSchemas`, `dependentRequired`, draft 7 `dependencies`",
                "each only refuses inputs",
                "",
            ),
            ("dependentRequired", "", "", ""),
            ("dependencies", "", "", ""),
            (
                "propertyNames",
                "`propertyNames`, `minProperties`, `maxProperties`",
                "each only refuses inputs",
                "",
            ),
            ("minProperties", "", "", ""),
            ("maxProperties", "", "", ""),
            (
                "patternProperties",
                "`patternProperties`",
                "it only constrains the values of the names it matches",
                " (a name it matches that `properties` does not declare is not "
                "served: the object is closed)",
            ),
            (
                "unevaluatedItems",
                "`unevaluatedItems`, `additionalItems` (without a tuple)",
                "it only refuses inputs",
                "",
            ),
            ("additionalItems", "", "", ""),
        )
    ),
    Rule(
        ("format",),
        Served.DESCRIBED,
        "format {value!r} is not one of strict mode's formats (the SDK serves "
        "it in words)",
        narrows=False,
        why='"String formats: date-time, time, date, duration, email, '
        'hostname, uri, ipv4, ipv6, uuid"; the SDKs "Filter string formats to '
        'supported list only"',
        label="`format` other than those ten (`int32`, `json`, ...)",
        note=': `{format: "int32"}`',
        enforced_by="— (the validator, as upstream's, treats `format` as an "
        "annotation: nothing is lost)",
    ),
    # -- refused: no sound served form --
    Rule(
        ("additionalProperties",),
        Served.REFUSED,
        "additionalProperties must be false in strict mode (found {found}); "
        "strict mode has no open objects or free-form maps",
        applies=_not_false,
        why='"Not supported: additionalProperties set to anything other than '
        'false"; closing it would refuse inputs you allowed',
        label="`additionalProperties` other than `false` (`true`, a schema)",
        enforced_by="—",
    ),
    Rule(
        ("unevaluatedProperties",),
        Served.REFUSED,
        "unevaluatedProperties leaves the object open (found {found}); strict "
        "mode has no open objects or free-form maps",
        applies=_not_false,
        why='"Not supported: additionalProperties set to anything other than '
        "false\" (an open `unevaluatedProperties` is the same, the project's "
        "reading)",
        label="`unevaluatedProperties` other than `false`",
        enforced_by="—",
    ),
    Rule(
        (),
        Served.REFUSED,
        "object declares no properties: strict mode requires "
        "additionalProperties: false, which would only accept {{}}; "
        "declare the object's properties",
        source=JUDGEMENT,
        why="the page requires `additionalProperties: false` on every object "
        "and has no free-form map; closed, it could only be `{}`, which would "
        "refuse every value you allowed",
        name="no properties",
        label='an object deeper than the root that declares no properties (`{"type": '
        '"object"}`, a `dict` / `dict[str, X]` parameter)',
        enforced_by="—",
    ),
    Rule(
        (),
        Served.REFUSED,
        "the root of a strict tool's input schema must be an object "
        '("type": "object", found {found}); the Messages API takes a '
        "tool's input as a JSON object of named arguments",
        source=JUDGEMENT,
        why="the Messages API's `input_schema` describes a JSON object of "
        "named arguments",
        name="root",
        label='a root that is not an object (`{"type": "array", ...}`, '
        '`"type": ["object", "null"]`)',
        enforced_by="—",
    ),
    Rule(
        (),
        Served.REFUSED,
        "recursive schema: $ref {ref!r} leads back into a schema that contains "
        "it; strict mode cannot compile recursive schemas",
        why='"Not supported: Recursive schemas"',
        name="recursive $ref",
        label="recursion: a served `$ref` that leads back into a schema "
        'containing it (`"#"`, a `$defs` entry referring to itself, directly '
        "or through others, an embedded `$id` or an `$anchor`)",
        enforced_by=_RECURSION,
    ),
    Rule(
        ("$dynamicRef", "$recursiveRef"),
        Served.REFUSED,
        "recursive schema: {keyword} exists for recursion, which strict "
        "mode cannot compile",
        why='"Not supported: Recursive schemas"',
        label="`$dynamicRef`, `$recursiveRef`",
        enforced_by=_RECURSION,
    ),
    Rule(
        (),
        Served.REFUSED,
        "external $ref {ref!r}: strict mode only resolves references within "
        "the schema ('#/$defs/...')",
        why='"Not supported: External $ref"',
        name="external $ref",
        label="a `$ref` outside the schema",
        enforced_by="—",
    ),
    Rule((), Served.REFUSED, "$ref must be a string", name="$ref not a string"),
    Rule(
        (),
        Served.REFUSED,
        "$ref {ref!r} does not point into this schema",
        name="$ref to nowhere",
    ),
    Rule(
        (),
        Served.REFUSED,
        "its references reach more than {limit} schema positions; strict mode "
        "cannot compile it",
        name="too complex",
    ),
    Rule(
        (),
        Served.REFUSED,
        "input schema nests deeper than {limit} levels (or contains itself); "
        "flatten it or move shared parts into $defs",
        name="too deep",
    ),
    Rule(
        (),
        Served.REFUSED,
        "{value!r} is not a JSON number; strict schemas must be plain JSON (it "
        "would be sent as null)",
        name="not finite",
    ),
    Rule((), Served.REFUSED, "input schema is not JSON: {error}", name="not JSON"),
    Rule(
        (),
        Served.REFUSED,
        "expected a schema (a JSON object or boolean), found {found}",
        name="not a schema",
    ),
    Rule(
        (
            "type",
            "properties",
            "required",
            "items",
            "enum",
            "anyOf",
            "allOf",
            "$ref",
            "$defs",
            "definitions",
            "oneOf",
            "prefixItems",
            "pattern",
            "description",
            "title",
        ),
        Served.REFUSED,
        "{keyword} has a value JSON Schema does not allow here ({found})",
        name="malformed",
    ),  # fmt: skip
    Rule(
        (),
        Served.REFUSED,
        "{what} accepts any JSON value (it has no type, enum, const, anyOf or "
        "$ref); strict mode compiles only typed schemas: give it a type (a "
        "list of types for several)",
        source=JUDGEMENT,
        why="the page's supported features are typed schemas, and any value "
        "includes free-form objects and arrays, which strict mode cannot "
        "compile (objects must have `additionalProperties: false`); the "
        "Anthropic Python SDK's `transform_schema` refuses such a schema too. "
        "`find_strict_violations` reports it, a bare `{}` in a closed "
        "object's `properties` included",
        name="untyped",
        label="a property or `items` schema with no `type`, `enum`, `const`, "
        '`anyOf`/`oneOf`/`allOf` or `$ref` (`{}`, `{"description": "..."}`, '
        "`true`)",
        enforced_by="—",
    ),
    Rule(
        (),
        Served.REFUSED,
        "{what} accepts any JSON value: {why}; strict mode compiles only typed "
        "schemas: {fix}",
        source=JUDGEMENT,
        why="a closed object must declare each name its `required` lists or "
        "its union or `allOf` branches declare; a declaration nothing types "
        "(`{}`) admits any JSON value, which strict mode cannot compile (the "
        "untyped row below)",
        name="declared",
        label="a name the object must declare when closed that nothing types: "
        "one `required`, `dependentRequired` (or draft 7 `dependencies`) lists "
        "and `properties` does not declare, or one a union or `allOf` branch "
        "declares that could not be merged (the row above)",
        enforced_by="—",
    ),
    Rule(
        (),
        Served.REFUSED,
        "{keyword} with an object or array value is not supported in strict "
        "mode, and nothing else types this schema (no type, anyOf or $ref "
        "beside it): served in words, it would accept any JSON value; list "
        "only strings, numbers, booleans or null, or give the schema a type "
        "(with its properties or items) so that the grammar keeps the type "
        "and the SDK checks the {keyword} on every call",
        why='"enum (strings, numbers, bools, or nulls only - no complex types)", '
        '"Not supported: Complex types within enums"; moved into words, the '
        "`enum` would leave a schema with no type, which admits any JSON value "
        "(the row above: strict mode cannot compile it, and the grammar would "
        "let any value through)",
        name="untyped enum",
        label="`enum` or `const` with an object or array value and nothing else "
        'typing its schema (`{"enum": [{"k": 1}, "b"]}`, `{"const": [1, 2]}`)',
        enforced_by="—",
    ),
    Rule(
        (),
        Served.REFUSED,
        "'{keyword}' is not a JSON Schema keyword{hint}: a strict schema may "
        "hold only JSON Schema 2020-12 keywords and x- extensions, so that a "
        "misspelled keyword is not served as if it were meant",
        source=JUDGEMENT,
        why="a key no JSON Schema 2020-12 vocabulary defines (nor the earlier "
        "drafts' `definitions`, `dependencies`, `additionalItems`, "
        "`$recursiveRef`, `$recursiveAnchor`) is most often a misspelled one "
        "(`itmes`, `requried`): served in words, the constraint the author "
        "meant would reach neither the grammar nor the validator. The error "
        "names the nearest keyword (\"did you mean 'items'?\"). Other "
        "vocabularies' words (OpenAPI's `nullable`, `discriminator`, "
        "`example`) are refused too: write them as JSON Schema, or as an "
        "`x-` extension",
        name="unknown keyword",
        label="a key that is not a JSON Schema keyword (`itmes`, `requried`, "
        "`nullable`), unless it starts with `x-`",
        enforced_by="—",
    ),
    # -- everything else --
    Rule(
        (),
        Served.DESCRIBED,
        "'{keyword}' is not in strict mode's documented subset (the SDK "
        "serves it in words)",
        narrows=False,
        source=JUDGEMENT,
        why="not in the page's list; annotations JSON Schema defines "
        "(`examples`, `deprecated`, `readOnly`, `writeOnly`, "
        "`contentMediaType`, `contentEncoding`, `contentSchema`) and the "
        "extensions the SDK documents (any key starting with `x-`, as "
        "OpenAPI's vendor extensions) constrain nothing, and the page's SDKs "
        "write what they do not keep into the description",
        name="everything else",
        label="any other JSON Schema keyword, and `x-` extensions",
        note=': `{examples: ["a"]}`',
        enforced_by="— (they constrain nothing)",
    ),
)
"""Strict mode's rules, in the order docs/strict-mode.md lists them: the
documented subset kept as written, what is normalized into it, what is moved
into words (and enforced by the SDK), what is refused, with each rule's
message and source."""

# Per keyword, its rules in order, each as (kinds, applies or None, rule).
_KEYWORD_RULES: dict[
    str, tuple[tuple[frozenset[type] | None, Callable[[Any], bool] | None, Rule], ...]
] = {}
for _rule_ in RULES:
    for _keyword_ in _rule_.keywords:
        _KEYWORD_RULES[_keyword_] = (
            *_KEYWORD_RULES.get(_keyword_, ()),
            (
                _rule_.kinds,
                None if _rule_.applies is _always else _rule_.applies,
                _rule_,
            ),
        )
del _rule_, _keyword_
_NAMED_RULES = {rule.name: rule for rule in RULES if rule.name}
_OTHER = _NAMED_RULES["everything else"]
_UNKNOWN = _NAMED_RULES["unknown keyword"]
_UNTYPED = _NAMED_RULES["untyped"]
_MALFORMED = _NAMED_RULES["malformed"]
_COMPLEX_ENUM = _NAMED_RULES["complex enum"]
_UNTYPED_ENUM = _NAMED_RULES["untyped enum"]


def rule_for(keyword: str, value: Any) -> Rule:
    """The rule that decides how ``keyword`` with ``value`` is served."""
    for kinds, applies, rule in _KEYWORD_RULES.get(keyword, ()):
        if kinds is not None:
            if type(value) in kinds:
                return rule
        elif applies is None or applies(value):
            return rule
    return _OTHER if known_keyword(keyword) else _UNKNOWN


_TYPING_KEYS = frozenset({"type", "enum", "const", "$ref"})


def _untyped(value: Any, depth: int = 0) -> bool:
    """Whether a schema admits any JSON value by saying nothing of its type:
    ``true``, or an object without ``type``, ``enum``, ``const`` or ``$ref``
    whose ``anyOf``/``oneOf`` branches are not all typed and whose ``allOf``
    has no typed branch."""
    if type(value) is not dict:
        return value is True
    if not _TYPING_KEYS.isdisjoint(value):
        return False
    if depth > _SHALLOW:
        return False  # the depth checks report it
    for key in ("anyOf", "oneOf"):
        branches = value.get(key)
        if (
            type(branches) is list
            and branches
            and not any(_untyped(branch, depth + 1) for branch in branches)
        ):
            return False
    branches = value.get("allOf")
    return not (
        type(branches) is list
        and any(not _untyped(branch, depth + 1) for branch in branches)
    )


def _enum_rule(schema: dict[str, Any]) -> Rule:
    """The rule for an ``enum`` or ``const`` with an object or array value in
    ``schema``: served in words when something else types the schema, refused
    when it is the only typing keyword (in words, the schema would admit any
    JSON value)."""
    rest = {
        key: value
        for key, value in schema.items()
        if not (
            (key == "enum" or key == "const") and rule_for(key, value) is _COMPLEX_ENUM
        )
    }
    return _UNTYPED_ENUM if _untyped(rest) else _COMPLEX_ENUM


def did_you_mean(keyword: Any) -> str:
    """`` (did you mean 'items'?)`` for a key near a known keyword, else ``""``."""
    nearest = nearest_keyword(keyword)
    return "" if nearest is None else f" (did you mean {nearest!r}?)"


def rule_message(name: str, **fields: Any) -> str:
    """The message of the rule called ``name``, with ``fields`` filled in."""
    return _NAMED_RULES[name].message.format(**fields)


DESCRIBED_KEYWORDS = tuple(
    dict.fromkeys(
        keyword
        for rule in RULES
        if rule.served_as is Served.DESCRIBED
        for keyword in rule.keywords
    )
)
"""Keywords moved into a description (for some values), in the order they
are written there; keywords no rule names follow in the schema's order."""

_WORDS_ORDER = {keyword: i for i, keyword in enumerate(DESCRIBED_KEYWORDS)}

PYDANTIC_DESCRIBED_KEYWORDS = frozenset(
    keyword
    for rule in RULES
    if rule.served_as is Served.DESCRIBED and rule.pydantic_enforces
    for keyword in rule.keywords
)
"""Those of ``DESCRIBED_KEYWORDS`` a pydantic model enforces when it derives
them from a field's constraints."""


# --- patterns ----------------------------------------------------------------------

_CLASS_ESCAPES = frozenset("dwsDWS")
_CONTROL_ESCAPES = frozenset("tnrfv0")
_DOCUMENTED = "strict mode's regular expressions do not support"
_UNLISTED = "strict mode's documentation does not list"


def regex_findings(pattern: str) -> list[tuple[str, str, str]]:
    """What an ECMA-262 ``pattern`` uses outside strict mode's regex support.

    Each kind once, with its first occurrence and whose word it is: the
    documented unsupported constructs (backreferences, lookahead and
    lookbehind, word boundaries, large ``{n,m}``) and the constructs the page
    does not list (named groups, ``\\p{...}``, control and other escapes,
    inline flags). Alternation, non-capturing groups, ``\\D``/``\\W``/``\\S``
    and escaped characters count as supported (``RULES``' pattern row).
    """
    found: dict[str, tuple[str, str]] = {}

    def note(construct: str, example: str, whose: str = _UNLISTED) -> None:
        found.setdefault(construct, (example, whose))

    # The largest repetition count inside each open group, and of the last atom.
    counts = [1]
    last = 1
    in_class = False
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == "\\":
            escape = pattern[i + 1 : i + 2]
            if escape and escape in "123456789":
                note("a backreference", pattern[i : i + 2], _DOCUMENTED)
            elif escape == "k" and not in_class:
                note("a backreference", pattern[i : i + 3], _DOCUMENTED)
            elif escape in ("b", "B"):
                if in_class:
                    note("a backspace class escape", "[\\b]")
                else:
                    note("a word boundary", pattern[i : i + 2], _DOCUMENTED)
            elif escape in ("p", "P"):
                note("a Unicode property escape", pattern[i : i + 3])
            elif escape == "c":
                note("a control escape", pattern[i : i + 3])
            elif escape in ("x", "u"):
                pass
            elif escape.isalnum() and not (
                escape in _CLASS_ESCAPES or escape in _CONTROL_ESCAPES
            ):
                note("an escape the page does not list", pattern[i : i + 2])
            i += 2
            if not in_class:
                last = 1
            continue
        if in_class:
            in_class = char != "]"
            i += 1
            continue
        if char == "[":
            in_class = True
            last = 1
        elif char == "(":
            if pattern.startswith("(?", i):
                head = pattern[i : i + 4]
                if head.startswith(("(?=", "(?!")):
                    note("a lookahead", head[:3], _DOCUMENTED)
                elif head.startswith(("(?<=", "(?<!")):
                    note("a lookbehind", head, _DOCUMENTED)
                elif head.startswith("(?<"):
                    note("a named group", head[:3])
                elif head.startswith("(?P="):
                    note("a backreference", head, _DOCUMENTED)
                elif not head.startswith("(?:"):
                    note("a group syntax the page does not list", head[:3])
            counts.append(1)
        elif char == ")":
            last = counts.pop() if len(counts) > 1 else 1
            counts[-1] = max(counts[-1], last)
        elif char == "{":
            close = pattern.find("}", i)
            body = pattern[i + 1 : close] if close != -1 else ""
            low, comma, high = body.partition(",")
            if low.isdigit() and (not high or high.isdigit()):
                bound = int(high or low)
                total = last * bound
                if total > QUANTIFIER_LIMIT:
                    note(
                        "a large {n,m} quantifier", pattern[i : close + 1], _DOCUMENTED
                    )
                counts[-1] = max(counts[-1], total)
                i = close + 1
                continue
            last = 1  # a literal "{"
        elif char not in "*+?|^$":
            last = 1
        i += 1
    return [
        (construct, example, whose) for construct, (example, whose) in found.items()
    ]


# --- what the pass returns ---------------------------------------------------------


@dataclass(frozen=True)
class StrictViolation:
    """One place where a schema breaks a strict-mode rule."""

    path: str
    """JSON Pointer (``#/properties/count/maximum``) to the offending keyword,
    in the author's schema."""

    rule: str
    """The rule it breaks, and what to do instead."""

    def __str__(self) -> str:
        return f"{self.path}: {self.rule}"


@dataclass(frozen=True)
class StrictLimitExceeded:
    """A per-request cap that the strict tools of one request go over."""

    limit: str
    """What is counted: strict tools, optional or union-typed parameters."""

    maximum: int
    count: int
    tools: tuple[tuple[str, int], ...]
    """Each tool that adds to the count, with how much it adds."""

    def __str__(self) -> str:
        involved = ", ".join(
            name if self.limit == "strict tools" else f"{name} ({n})"
            for name, n in self.tools
        )
        return (
            f"{self.count} {self.limit}, over strict mode's limit of "
            f"{self.maximum} per request: {involved}"
        )


class StrictSchemas:
    """The two forms of a strict tool's input schema, and what breaks the rules."""

    __slots__ = ("served", "violations", "_enforce", "_enforced")

    def __init__(
        self,
        served: Any,
        enforce: Callable[[], Any],
        violations: list[StrictViolation],
    ) -> None:
        self.served = served
        """What is listed, and compiled into the grammar: closed, inside the
        documented subset, with what is outside written in descriptions."""
        self.violations = violations
        """Every rule with no served form; the tool is refused if any."""
        self._enforce: Callable[[], Any] | None = enforce
        self._enforced: Any = None

    @property
    def enforced(self) -> Any:
        """What every call is validated against: the author's schema with the
        same closing and the same pruned ``$defs``, every constraint kept, and
        ECMA-262 patterns written for Python's ``re`` (made when it is first
        asked for: the relay never needs it)."""
        if self._enforce is not None:
            self._enforced, self._enforce = self._enforce(), None
        return self._enforced


def as_json(schema: Any) -> tuple[Any, list[StrictViolation]]:
    """Copy ``schema`` through JSON, as the wire will see it.

    Everything a walk could trip over becomes a reported problem: nesting
    deeper than ``MAX_SCHEMA_DEPTH`` (or a container that contains itself),
    NaN and infinities (which would go on the wire as ``null``), and values
    JSON cannot carry.
    """
    document = json_copy(schema)
    if document is not None or schema is None:
        return document, []
    problems = shape_problems(schema)
    if problems:
        return None, [
            StrictViolation("#", rule_message("too deep", limit=MAX_SCHEMA_DEPTH))
            if problem.kind == "too deep"
            else StrictViolation(
                pointer(problem.path), rule_message("not finite", value=problem.value)
            )
            for problem in problems
        ]
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        return None, [StrictViolation("#", rule_message("not JSON", error=e))]
    return None, [StrictViolation("#", rule_message("not JSON", error="unknown"))]


def root_violations(document: Any) -> list[StrictViolation]:
    """A root that is not an object: the API's tools take an object."""
    if isinstance(document, dict):
        declared = document.get("type", "object")
        if declared == "object" or declared == ["object"]:
            return []
        found = json.dumps(declared)
    else:
        found = json.dumps(document)
    return [StrictViolation("#", rule_message("root", found=found))]


# --- the one function --------------------------------------------------------------


def strict_schemas(
    schema: Any, *, describe: bool = True, graph: SchemaGraph | None = None
) -> StrictSchemas:
    """The served and enforced forms of a strict tool's ``schema``.

    ``describe`` is for schemas whose calls are validated against
    ``enforced`` (JSON Schema dicts and Python types): what strict mode
    cannot express but a validator checks is served in words. A pydantic
    model's schema is validated by the model, which describes what it
    enforces itself (``pydantic_models``); here only what constrains nothing
    moves for it, and any other keyword outside the subset is a violation.

    ``graph`` is the schema's graph when the caller built it already (for
    the checks every tool gets); a schema that needs none is served without
    it, any other gets it built here, once.
    """
    builder = _Builder(describe=describe)
    served = builder.copy(schema)
    if served is not None:
        closed = builder.closed
        violations = builder.violations
        if closed.get("type", "object") not in ("object", ["object"]):
            violations = root_violations(closed) + violations
        return StrictSchemas(
            served, partial(python_patterns, closed, plain=True), violations
        )
    if graph is None:
        document = json_copy(schema, limit=None)
        if document is None:
            _, problems = as_json(schema)
            return StrictSchemas(schema, lambda: schema, problems)
        graph = SchemaGraph.build(document, whole=False)
    return transform(graph.document, graph, describe=describe)


def transform(document: Any, graph: SchemaGraph, *, describe: bool) -> StrictSchemas:
    """``strict_schemas`` of a plain-JSON ``document`` whose graph is ``graph``.

    The served form is built from ``document`` and ``graph`` (the names each
    object is closed over come from the graph: ``_group_names``); the
    enforced form, when asked for, is ``document`` itself, pruned of the
    ``$defs`` entries no reference reaches and closed (``_close_objects``).
    """
    problems = root_violations(document)
    if graph.too_deep:
        return StrictSchemas(
            document,
            lambda: document,
            [StrictViolation("#", rule_message("too deep", limit=MAX_SCHEMA_DEPTH))],
        )
    if graph.too_complex:
        problems.append(
            StrictViolation(
                "#", rule_message("too complex", limit=MAX_SCHEMA_POSITIONS)
            )
        )
        return StrictSchemas(document, lambda: document, problems)
    reached = graph.reached_only()
    names: list[dict[Path, set[str]]] = []

    def names_for(path: Path) -> Collection[str]:
        if not names:  # only an object the author left open needs them
            names.append(_group_names_of(reached))
        return names[0].get(path, _NO_NAMES)

    builder = _Builder(describe=describe, names_for=names_for, graph=reached)
    served = builder.build(document)

    def enforce() -> Any:
        _close_objects(document, _drop_unreached_definitions(document, graph))
        return python_patterns(document, plain=True)

    return StrictSchemas(served, enforce, problems + builder.violations)


def make_strict(
    schema: Any, *, describe: bool = True
) -> tuple[Any, list[StrictViolation]]:
    """The schema to serve for a strict tool, and every rule it breaks
    (``strict_schemas`` without the enforced form)."""
    forms = strict_schemas(schema, describe=describe)
    return forms.served, forms.violations


def find_strict_violations(schema: Any) -> list[StrictViolation]:
    """Every place where ``schema``, as it stands, leaves strict mode's
    documented subset: any keyword not kept as written (``RULES``), an object
    that is not closed, a recursive, external or broken reference."""
    document, problems = as_json(schema)
    if problems:
        return problems
    graph = SchemaGraph.build(document)
    builder = _Builder(describe=True, as_is=True, graph=graph)
    builder.build(document)
    if graph.too_complex:
        builder.violations.insert(
            0,
            StrictViolation(
                "#", rule_message("too complex", limit=MAX_SCHEMA_POSITIONS)
            ),
        )
    return builder.violations


def unexpressible(keyword: str, value: Any) -> bool:
    """Whether strict mode has ``keyword`` with ``value`` served in words
    (a ``Served.DESCRIBED`` rule)."""
    return rule_for(keyword, value).served_as is Served.DESCRIBED


def describe_constraints(
    schema: dict[str, Any], keywords: Collection[str] | None = None
) -> dict[str, Any]:
    """Move what strict mode cannot compile from ``schema`` into its description.

    Each of ``DESCRIBED_KEYWORDS`` (only those in ``keywords``, if given)
    that a rule serves in words with its value is removed from ``schema``
    and written after a blank line at the end of its ``description`` as
    ``{minimum: 1, maximum: 50}``, the form the Anthropic Python SDK's
    ``transform_schema`` uses. Returns what was moved.
    """
    moved = {
        key: schema[key]
        for key in DESCRIBED_KEYWORDS
        if key in schema
        and (keywords is None or key in keywords)
        and unexpressible(key, schema[key])
    }
    for key in moved:
        del schema[key]
    if moved:
        _write_words(schema, list(moved.items()))
    return moved


def _write_words(schema: dict[str, Any], words: list[tuple[str, Any]]) -> None:
    text = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in words) + "}"
    description = schema.get("description")
    schema["description"] = (
        f"{description}\n\n{text}"
        if isinstance(description, str) and description
        else text
    )


# --- closing, without a graph ---------------------------------------------------

# Subschemas applied to the same instance as the schema holding them.
_IN_PLACE_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_IN_PLACE_MAPS = frozenset({"dependentSchemas", "dependencies"})
_IN_PLACE = {"then": False, "else": False, "if": True, "not": True}
_DEFINITIONS = frozenset({"$defs", "definitions"})
# Subschemas applied to a part of the instance (a new instance position).
_INSTANCE_SINGLES = frozenset(
    {"additionalProperties", "items", "additionalItems", "unevaluatedItems",
     "contains", "propertyNames", "contentSchema"}
)  # fmt: skip
_INSTANCE_MAPS = frozenset({"properties", "patternProperties"})
# What only the graph's closing handles: references and what they name,
# conditionals and negation (closing there depends on the context), and
# unevaluatedProperties (closed by the builder over the group's names).
_NEEDS_GRAPH = frozenset(
    {"$ref", "$defs", "definitions", "$id", "$anchor", "$dynamicRef",
     "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor", "not", "if",
     "then", "else", "dependentSchemas", "dependencies",
     "unevaluatedProperties"}
)  # fmt: skip
_SHALLOW = MAX_SCHEMA_DEPTH // 2


class _NeedsGraphError(Exception):
    """Raised by the copying build where the schema needs the graph."""


_UNIONS = frozenset({"anyOf", "oneOf"})
_ALL_OF = frozenset({"allOf"})


class _Branch(NamedTuple):
    """The served group of a union (``anyOf``/``oneOf``) branch in the
    copying build: the branch, the names its parent declares
    (``inherited``), and the group the enforced copy is closed over
    (``outer``: the instance position's, siblings' names included)."""

    schema: Any
    inherited: frozenset[str]
    outer: Any


def _outer(group: Any) -> Any:
    """The group the enforced copy of a member of ``group`` is closed over."""
    return group.outer if type(group) is _Branch else group


def _group_names(group: Any) -> set[str]:
    """Names declared for the instance of ``group`` by it and its
    ``allOf``/``anyOf``/``oneOf`` branches (without references); for a
    union branch's served group (``_Branch``), with the names its parent
    declares, never those only a sibling branch declares."""
    if type(group) is _Branch:
        return _declared_under(group.schema, _IN_PLACE_LISTS) | group.inherited
    return _declared_under(group, _IN_PLACE_LISTS)


def _declared_under(schema: Any, keywords: frozenset[str]) -> set[str]:
    """Names declared for the instance of ``schema`` by it and (recursively)
    the branches of its ``keywords``."""
    names: set[str] = set()
    stack = [schema]
    while stack:
        value = stack.pop()
        if type(value) is not dict:
            continue
        properties = value.get("properties")
        if type(properties) is dict:
            names.update(properties)
        required = value.get("required")
        if type(required) is list:
            names.update(name for name in required if type(name) is str)
        if "dependentRequired" in value:
            names.update(
                _declared_names({"dependentRequired": value["dependentRequired"]})
            )
        for keyword in keywords:
            branches = value.get(keyword)
            if type(branches) is list:
                stack.extend(branches)
    return names


def _branch_group(group: Any, branch: Any) -> _Branch:
    """The served group of ``branch``, a union branch of a member of
    ``group``: it inherits the names its parent declares (through ``allOf``,
    and what the parent inherits), not those of the parent's other union
    branches."""
    if type(group) is _Branch:
        inherited = group.inherited | _declared_under(group.schema, _ALL_OF)
        return _Branch(branch, inherited, group.outer)
    return _Branch(branch, frozenset(_declared_under(group, _ALL_OF)), group)


def _close_node(schema: dict[str, Any], group: Any, depth: int) -> dict[str, Any]:
    """A plain-JSON copy of ``schema``, closed as ``_close_objects`` closes,
    ``schema`` being a member of the group rooted at ``group``. Raises
    ``_NeedsGraphError`` at what only the graph handles or JSON cannot carry."""
    if depth > _SHALLOW:
        raise _NeedsGraphError
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if type(key) is not str or key in _NEEDS_GRAPH:
            raise _NeedsGraphError
        out[key] = _closed_value(key, value, group, depth + 1)
    _close_copy(out, group, depth)
    return out


def _close_copy(out: dict[str, Any], group: Any, depth: int) -> set[str] | None:
    """Close ``out`` over the names of ``group``; the names, if computed."""
    if "additionalProperties" not in out and _is_object_schema(out):
        names = _group_names(group)
        if names or "properties" in out or not depth:
            properties = out.get("properties", {})
            if type(properties) is dict:
                for name in sorted(names - properties.keys()):
                    properties[name] = {}
                out["properties"] = properties
                out["additionalProperties"] = False
        return names
    return None


def _closed_value(key: str, value: Any, group: Any, depth: int) -> Any:
    """``_close_node``'s copy of one keyword's value."""
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        if key == "$schema" and depth > 1:
            raise _NeedsGraphError
        return value
    if key in _IN_PLACE_LISTS and kind is list:
        return [
            _close_node(branch, group, depth + 1)
            if type(branch) is dict
            else _plain(branch, depth + 1)
            for branch in value
        ]
    if key in _INSTANCE_MAPS and kind is dict:
        return {
            _name(name): _close_node(sub, sub, depth + 1)
            if type(sub) is dict
            else _plain(sub, depth + 1)
            for name, sub in value.items()
        }
    if kind is dict and key in _INSTANCE_SINGLES:
        return _close_node(value, value, depth)
    if kind is list and (key == "prefixItems" or key == "items"):
        return [
            _close_node(sub, sub, depth + 1)
            if type(sub) is dict
            else _plain(sub, depth + 1)
            for sub in value
        ]
    return _plain(value, depth)


def _name(name: Any) -> str:
    if type(name) is not str:
        raise _NeedsGraphError
    return name


def _plain(value: Any, depth: int) -> Any:
    """A copy of JSON data; raises ``_NeedsGraphError`` at anything else."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _NeedsGraphError
    if depth > _SHALLOW:
        raise _NeedsGraphError
    if kind is list:
        return [_plain(item, depth + 1) for item in value]
    if kind is dict:
        return {_name(k): _plain(item, depth + 1) for k, item in value.items()}
    raise _NeedsGraphError


# --- closing over the graph -------------------------------------------------------


def _drop_unreached_definitions(document: Any, graph: SchemaGraph) -> SchemaGraph:
    """Remove each ``$defs``/``definitions`` entry no reference reaches, and
    return ``graph`` without them.

    Nothing in them can apply to an input, so they are neither checked nor
    served. A schema whose references could not all be followed (too many
    positions, ``$dynamicRef``) is left whole.
    """
    if not isinstance(document, dict) or graph.too_complex:
        return graph
    if any(reference.keyword != "$ref" for reference in graph.references):
        return graph
    reached = graph.reached
    kept = {
        path[: i + 2]
        for path in reached
        for i, key in enumerate(path)
        if key in _DEFINITIONS
    }
    for path in reached:
        holder = graph.nodes.get(path)
        if not isinstance(holder, dict):
            continue
        for keyword in _DEFINITIONS:
            definitions = holder.get(keyword)
            if not isinstance(definitions, dict):
                continue
            for name in [n for n in definitions if (*path, keyword, n) not in kept]:
                del definitions[name]
            if not definitions:
                del holder[keyword]
    return graph.reached_only()


class _Node(NamedTuple):
    """A value in a schema position, with where it is."""

    path: Path
    value: Any
    closable: bool
    """Whether the SDK may close an object here (see ``_close_objects``)."""


def _walk(value: Any, path: Path = ()) -> Iterator[_Node]:
    """Every schema position under ``value``, parents first, in document order.

    Iterative, so nesting depth is bounded by the input, not the call stack.
    """
    stack = [(path, value)]
    while stack:
        path, value = stack.pop()
        yield _Node(path, value, True)
        if isinstance(value, dict):
            children = [
                (child_path, child) for child_path, _, child in subschemas(value, path)
            ]
            stack.extend(reversed(children))


class _SchemaIndex:
    """The schema positions of a document, its references and its groups.

    A *group* is every schema applied to one instance: a schema at an
    instance position (the root, a property, ``items``, ...) and everything
    reached from it through ``allOf``/``anyOf``/``oneOf``, ``$ref``,
    ``if``/``then``/``else``, ``dependentSchemas`` and ``not``. The property
    names declared anywhere in a group (or in groups that share a schema with
    it) are the names an object closed there must keep.
    """

    def __init__(self, document: Any, graph: SchemaGraph):
        self.document = document
        self.graph = graph
        nodes = graph.nodes
        self.paths: list[Path] = list(nodes)
        self._group_names: dict[Path, set[str]] = {}
        self._closable: dict[Path, bool] = {}
        self._build_groups()
        self.nodes = [
            _Node(path, nodes[path], self._closable.get(path, False))
            for path in self.paths
        ]

    def names_for(self, path: Path) -> set[str]:
        """Property names declared for every instance the schema at ``path`` meets."""
        return self._group_names.get(path, set())

    def _in_place(
        self, path: Path, schema: dict[str, Any]
    ) -> Iterator[tuple[Path, bool]]:
        for key, value in schema.items():
            if key in _IN_PLACE_LISTS and isinstance(value, list):
                for i in range(len(value)):
                    yield (*path, key, i), False
            elif key in _IN_PLACE:
                yield (*path, key), _IN_PLACE[key]
            elif key in _IN_PLACE_MAPS and isinstance(value, dict):
                for name, subschema in value.items():
                    if not isinstance(subschema, list):
                        yield (*path, key, name), False
        for target in sorted(self.graph.targets.get(path, ()), key=pointer):
            yield target, False

    def _build_groups(self) -> None:
        nodes = self.graph.nodes
        roots: list[tuple[Path, bool]] = []  # (root, inside a negation)
        members: list[list[tuple[Path, bool]]] = []
        known: set[tuple[Path, bool]] = set()
        membership: dict[Path, list[int]] = {}
        pending: list[tuple[Path, bool]] = [((), False)]
        while pending:
            root, context = pending.pop()
            if (root, context) in known:
                continue
            known.add((root, context))
            group = len(roots)
            roots.append((root, context))
            members.append([])
            seen: set[tuple[Path, bool]] = set()
            queue: list[tuple[Path, bool]] = [(root, False)]
            while queue:
                path, negated = queue.pop()
                if (path, negated) in seen:
                    continue
                seen.add((path, negated))
                members[group].append((path, negated))
                membership.setdefault(path, []).append(group)
                value = nodes.get(path)
                if not isinstance(value, dict):
                    continue
                for child, child_negated in self._in_place(path, value):
                    queue.append((child, negated or child_negated))
                for child, keyword, _ in subschemas(value, path):
                    if keyword in _DEFINITIONS:
                        pending.append((child, False))
                    elif not (
                        keyword in _IN_PLACE_LISTS
                        or keyword in _IN_PLACE
                        or keyword in _IN_PLACE_MAPS
                    ):
                        pending.append((child, context or negated))
        # Groups that share a schema are closed with the names of both.
        parent = list(range(len(roots)))

        def find(group: int) -> int:
            while parent[group] != group:
                parent[group] = parent[parent[group]]
                group = parent[group]
            return group

        for groups in membership.values():
            for other in groups[1:]:
                parent[find(other)] = find(groups[0])
        names: dict[int, set[str]] = {}
        for group, group_members in enumerate(members):
            declared = names.setdefault(find(group), set())
            for path, _ in group_members:
                value = nodes.get(path)
                if isinstance(value, dict):
                    declared.update(_declared_names(value))

        def anchored(group: int) -> bool:
            root, context = roots[group]
            value = nodes.get(root)
            return (
                not context
                and isinstance(value, dict)
                and _is_object_schema(value)
                and value.get("additionalProperties", False) is False
            )

        for group, group_members in enumerate(members):
            context = roots[group][1]
            ok = not context
            for path, negated in group_members:
                self._group_names[path] = names[find(group)]
                closable = ok and (not negated or anchored(group))
                self._closable[path] = self._closable.get(path, True) and closable


def _group_names_of(graph: SchemaGraph) -> dict[Path, set[str]]:
    """For each position, the names a served object there is closed over.

    Positions joined by in-place subschemas other than a union's branches
    (``allOf``, ``if``/``then``/``else``, ``not``, ``dependentSchemas``) and
    by references form one group (one union-find over the graph, joined
    where they share a schema). A group's names are those its members
    declare and those declared in the groups of its ``anyOf``/``oneOf``
    branches (recursively), plus, for a union branch's group, the names its
    parent group declares and inherits: never the names only a sibling
    branch declares. (The enforced form is closed over siblings' names too:
    ``_SchemaIndex``.)
    """
    parent: dict[Path, Path] = {}

    def find(path: Path) -> Path:
        root = path
        while root in parent:
            root = parent[root]
        while path != root:
            parent[path], path = root, parent[path]
        return root

    def join(a: Path, b: Path) -> None:
        if b in nodes:
            a, b = find(a), find(b)
            if a != b:
                parent[b] = a

    nodes = graph.nodes
    targets = graph.targets
    declared: list[tuple[Path, list[str]]] = []
    unions: list[tuple[Path, Path]] = []
    for path, value in nodes.items():
        if type(value) is not dict:
            continue
        for target in targets.get(path, ()):
            join(path, target)
        if not _NAMING.isdisjoint(value):
            declared.append((path, list(_declared_names(value))))
        for key, sub in value.items():
            if key in _IN_PLACE_LISTS:
                if type(sub) is list:
                    union = key in _UNIONS
                    for i in range(len(sub)):
                        if not union:
                            join(path, (*path, key, i))
                        elif (*path, key, i) in nodes:
                            unions.append((path, (*path, key, i)))
            elif key in _IN_PLACE:
                join(path, (*path, key))
            elif key in _IN_PLACE_MAPS and type(sub) is dict:
                for name, dependency in sub.items():
                    if type(dependency) is not list:
                        join(path, (*path, key, name))
    own: dict[Path, set[str]] = {}
    for path, found in declared:
        own.setdefault(find(path), set()).update(found)
    edges = {
        (holder, branch)
        for holder, branch in ((find(h), find(b)) for h, b in unions)
        if holder != branch
    }
    down = {root: set(names) for root, names in own.items()}
    up: dict[Path, set[str]] = {}
    changed = bool(edges)
    while changed:  # the sets only grow: a fixed point, cycles included
        changed = False
        for holder, branch in edges:
            below = down.get(branch)
            if below:
                above = down.setdefault(holder, set())
                if not below <= above:
                    above |= below
                    changed = True
            inherited = own.get(holder, set()) | up.get(holder, set())
            if inherited:
                mine = up.setdefault(branch, set())
                if not inherited <= mine:
                    mine |= inherited
                    changed = True
    names = {
        root: down.get(root, set()) | up.get(root, set())
        for root in down.keys() | up.keys()
    }
    return {path: names[root] for path in nodes if (root := find(path)) in names}


# The keywords ``_declared_names`` reads.
_NAMING = frozenset({"properties", "required", "dependentRequired", "dependencies"})


def _declared_names(schema: dict[str, Any]) -> Iterator[str]:
    """Property names ``schema`` declares for its instance.

    Its ``properties``, and the names ``required``, ``dependentRequired``
    (and draft 7's list-valued ``dependencies``) speak of: a name that is
    required but not in ``properties`` must be declared once the object is
    closed, or no input could satisfy the closed object.
    """
    properties = schema.get("properties")
    if isinstance(properties, dict):
        yield from properties
    required = schema.get("required")
    if isinstance(required, list):
        yield from (name for name in required if isinstance(name, str))
    for keyword in ("dependentRequired", "dependencies"):
        dependencies = schema.get(keyword)
        if not isinstance(dependencies, dict):
            continue
        for name, names in dependencies.items():
            if isinstance(names, list):
                yield name
                yield from (other for other in names if isinstance(other, str))


def _is_object_schema(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if isinstance(declared, list):
        return "object" in declared
    if declared is None:
        return "properties" in schema
    return bool(declared == "object")


def _close_objects(document: Any, graph: SchemaGraph) -> _SchemaIndex:
    """Close each object with ``additionalProperties: false``, keeping its names.

    An object is closed over every property name declared for the instances
    it meets (``_SchemaIndex``): a name it does not declare itself is added
    as ``{}``, which accepts what the object accepted before. So for an input
    that uses only declared names, every closed object answers as the open
    one did, and the closed schema accepts exactly what the author's schema
    accepts among those inputs; inputs with other names are refused. Objects
    evaluated negated (under ``not``, or as an ``if`` condition) are closed
    only when the object they apply to is closed too, by the SDK or by the
    author: otherwise closing them would let more through. (The served form
    has no negation; there ``_Builder`` closes what is left open.)
    """
    index = _SchemaIndex(document, graph)
    if graph.too_complex:
        return index
    for node in index.nodes:
        schema = node.value
        if not (
            node.closable
            and isinstance(schema, dict)
            and _is_object_schema(schema)
            and "additionalProperties" not in schema
            and "unevaluatedProperties" not in schema
        ):
            continue
        properties = schema.get("properties", {})
        names = index.names_for(node.path)
        # The root object with no declared names is a tool without
        # arguments: closed, it accepts {} as the author meant. Anywhere
        # else such an object is a free-form map, which is refused.
        if not isinstance(properties, dict) or not (
            "properties" in schema or names or node.path == ()
        ):
            continue
        for name in sorted(names - properties.keys()):
            properties[name] = {}
        schema["properties"] = properties
        schema["additionalProperties"] = False
    return index


# --- serving: the rules, node by node ----------------------------------------------

_LEGACY = ("draft-03", "draft-04", "draft-06", "draft-07")
_KEPT, _DESCRIBED = Served.KEPT, Served.DESCRIBED
_NORMALIZED, _REFUSED = Served.NORMALIZED, Served.REFUSED


def _detached(value: Any) -> Any:
    """``value`` (plain JSON), not shared with the document the enforced form
    is later closed in."""
    if type(value) is dict or type(value) is list:
        return json.loads(json.dumps(value))
    return value


def _tuple_rest(schema: dict[str, Any]) -> str | None:
    """The keyword for the elements after a tuple's positions, if a tuple."""
    if "prefixItems" in schema:
        return "items"
    if type(schema.get("items")) is list:
        return "additionalItems"
    return None


# Kept keywords whose values hold subschemas (or, for $ref, name one).
_CONTAINERS = frozenset(
    {"properties", "items", "anyOf", "allOf", "$defs", "definitions", "$ref"}
)
# Where a served $ref may point: places the served schema keeps as written.
_KEPT_MAPS = frozenset({"properties", "$defs", "definitions"})
_KEPT_LISTS = frozenset({"anyOf", "allOf"})


_NO_NAMES: frozenset[str] = frozenset()


def _no_names(path: Path) -> Collection[str]:
    return _NO_NAMES


def _found(value: Any) -> str:
    if value is True:
        return "true"
    if isinstance(value, dict):
        return "a schema"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _at(document: Any, path: Path) -> Any:
    for key in path:
        document = document[key]
    return document


def _unserved_place(target: Path) -> str | None:
    """The keyword on ``target``'s way that the served schema rewrites, if any."""
    i = 0
    while i < len(target):
        keyword = target[i]
        if keyword in _KEPT_MAPS or keyword in _KEPT_LISTS:
            i += 2
        elif keyword == "items" and not (
            i + 1 < len(target) and isinstance(target[i + 1], int)
        ):
            i += 1
        else:
            return str(keyword)
    return None


# --- an object holding a union: served without declarations for the caps -----

# The keys a served union (or allOf) branch may have to be merged into the
# object that holds it: a closed object of named properties.
_FLAT_BRANCH = frozenset(
    {"type", "properties", "required", "additionalProperties", "description",
     "title"}
)  # fmt: skip


def _flat_branch(branch: Any) -> bool:
    """Whether ``branch`` (served) is a closed object of named properties."""
    return (
        type(branch) is dict
        and branch.keys() <= _FLAT_BRANCH
        and branch.get("type", "object") == "object"
        and branch.get("additionalProperties") is False
        and type(branch.get("properties")) is dict
        and type(branch.get("required", [])) is list
    )


def _key(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


def _alternatives(schemas: list[Any]) -> Any:
    """One schema admitting what any of ``schemas`` admits: the one schema,
    an ``enum`` of their ``const``/``enum`` values, or their ``anyOf``."""
    unique = list({_key(schema): schema for schema in schemas}.values())
    if len(unique) == 1:
        return unique[0]
    values: list[Any] = []
    types: set[Any] = set()
    for schema in unique:
        if type(schema) is not dict or not schema.keys() <= {"type", "const", "enum"}:
            break
        types.add(_key(schema.get("type")))
        if "const" in schema and "enum" not in schema:
            values.append(schema["const"])
        elif "enum" in schema and "const" not in schema:
            values.extend(schema["enum"])
        else:
            break
    else:
        if len(types) == 1:
            merged: dict[str, Any] = {}
            if "type" in unique[0]:
                merged["type"] = unique[0]["type"]
            merged["enum"] = list({_key(v): v for v in values}.values())
            return merged
    return {"anyOf": unique}


def _both(first: Any, second: Any) -> Any:
    """A schema admitting what both admit (``{}`` admits anything)."""
    if first == {} or _key(first) == _key(second):
        return second
    if second == {}:
        return first
    return {"allOf": [first, second]}


def _branch_words(branch: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """What the grammar no longer says of a union branch merged into its
    object: the names it declares beside the object's ``own`` (with the
    value a ``const``/``enum`` fixes), the names it requires, and its own
    annotations."""
    words: dict[str, Any] = {}
    for key in ("title", "description"):
        if key in branch:
            words[key] = branch[key]
    words["properties"] = {
        name: {k: v for k, v in sub.items() if k in ("const", "enum")}
        if type(sub) is dict
        else sub
        for name, sub in branch["properties"].items()
        if not (name in own and sub == {})
    }
    if branch.get("required"):
        words["required"] = branch["required"]
    return words


def _merge_all_of(schema: dict[str, Any]) -> bool:
    """Merge an ``allOf`` of closed objects into the object holding it (each
    property the conjunction of its declarations), where the closing
    declared a name as ``{}``: the same inputs, and each name declared once.
    Whether it was merged."""
    branches = schema.get("allOf")
    if (
        type(branches) is not list
        or not branches
        or not all(_flat_branch(b) for b in branches)
        or type(schema.get("properties", {})) is not dict
        or type(schema.get("required", [])) is not list
        or not any(  # only where the closing declared a name as {}
            sub == {}
            for b in [schema, *branches]
            for sub in b.get("properties", {}).values()
        )
    ):
        return False
    if schema.get("additionalProperties") is not False:
        # An untyped holder of objects (``{"allOf": [{...}, {...}]}``): it
        # becomes the one closed object they make.
        if not schema.keys() <= {"allOf", "description", "title", "default"}:
            return False
        schema["type"] = "object"
        schema["additionalProperties"] = False
    properties: dict[str, Any] = dict(schema.get("properties", {}))
    required: list[Any] = list(schema.get("required", []))
    words: list[tuple[str, Any]] = []
    for branch in branches:
        for name, sub in branch["properties"].items():
            properties[name] = _both(properties.get(name, {}), sub)
        required.extend(n for n in branch.get("required", []) if n not in required)
        for key in ("title", "description"):
            if key in branch:
                words.append((key, branch[key]))
    del schema["allOf"]
    schema["properties"] = properties
    if required:
        schema["required"] = required
    if words:
        _write_words(schema, words)
    return True


def _merge_union(schema: dict[str, Any], root: bool) -> bool:
    """Serve a closed object holding an ``anyOf`` of closed objects without
    declaring any name twice or as ``{}`` (issue 42): below the root, with
    no optional name of its own, the object becomes the ``anyOf`` of its
    branches, each completed with the object's names (the grammar keeps the
    union, no name is added); otherwise (the root, which must be one closed
    object) the union moves to the properties: each name is declared once,
    admitting what any branch declaring it admits, required where the
    object or every branch requires it, and the branches are written in
    words (the SDK enforces them on every call). Whether it was merged."""
    branches = schema.get("anyOf")
    if type(branches) is list and any(
        type(b) is dict and b.keys() == {"anyOf"} for b in branches
    ):
        # A branch served as a union of its own (a distributed one): its
        # branches are this union's.
        spliced: list[Any] = []
        for branch in branches:
            if type(branch) is dict and branch.keys() == {"anyOf"}:
                inner = branch["anyOf"]
                spliced.extend(inner if type(inner) is list else [branch])
            else:
                spliced.append(branch)
        schema["anyOf"] = branches = spliced
    if (
        type(branches) is not list
        or not branches
        or "allOf" in schema
        or not all(_flat_branch(b) for b in branches)
        or schema.get("type", "object") != "object"
        or type(schema.get("properties")) is not dict
        or type(schema.get("required", [])) is not list
    ):
        return False
    # The object's own names: not those the closing declared for its branches.
    own: dict[str, Any] = {
        name: sub
        for name, sub in schema["properties"].items()
        if sub != {} or not any(name in b["properties"] for b in branches)
    }
    required: list[Any] = list(schema.get("required", []))
    if not root and all(name in required for name in own):
        completed = []
        for branch in branches:
            properties = {
                name: _both(sub, branch["properties"].get(name, {}))
                for name, sub in own.items()
            }
            for name, sub in branch["properties"].items():
                properties.setdefault(name, sub)
            whole: dict[str, Any] = {"type": "object", "properties": properties}
            needed = required + [
                n for n in branch.get("required", []) if n not in required
            ]
            if needed:
                whole["required"] = needed
            whole["additionalProperties"] = False
            for key in ("title", "description"):
                if key in branch:
                    whole[key] = branch[key]
            completed.append(whole)
        for key in ("type", "properties", "required", "additionalProperties"):
            schema.pop(key, None)
        schema["anyOf"] = completed
        return True
    names: dict[str, None] = dict.fromkeys(own)
    for branch in branches:
        names.update(dict.fromkeys(branch["properties"]))
    properties = {}
    for name in names:
        declaring = [b["properties"][name] for b in branches if name in b["properties"]]
        alternatives = (
            {} if any(sub == {} for sub in declaring) else _alternatives(declaring)
        )
        properties[name] = _both(own.get(name, {}), alternatives)
    common = [
        name
        for name in branches[0].get("required", [])
        if all(name in b.get("required", []) for b in branches[1:])
    ]
    required.extend(n for n in common if n not in required)
    del schema["anyOf"]
    schema["properties"] = properties
    if required:
        schema["required"] = required
    _write_words(schema, [("anyOf", [_branch_words(b, own) for b in branches])])
    return True


def _merge_unions(served: Any) -> None:
    """Merge, in the served schema, each closed object's ``allOf`` of closed
    objects and ``anyOf`` of closed objects (``_merge_all_of``,
    ``_merge_union``), innermost first; a union a served ``$ref`` points
    into is left as it is."""
    if type(served) is not dict:
        return
    order: list[tuple[str, dict[str, Any]]] = []
    refs: list[str] = []
    stack: list[tuple[str, Any]] = [("#", served)]
    while stack:
        where, value = stack.pop()
        if type(value) is dict:
            order.append((where, value))
            ref = value.get("$ref")
            if type(ref) is str:
                refs.append(ref)
            for key in ("properties", "$defs", "definitions"):
                sub = value.get(key)
                if type(sub) is dict:
                    stack.extend(
                        (f"{where}/{key}/{_escape(n)}", s) for n, s in sub.items()
                    )
            for key in ("items", "anyOf", "allOf"):
                sub = value.get(key)
                if type(sub) is dict:
                    stack.append((f"{where}/{key}", sub))
                elif type(sub) is list:
                    stack.extend((f"{where}/{key}/{i}", s) for i, s in enumerate(sub))
    for where, value in reversed(order):
        if not any(key in value for key in ("allOf", "anyOf")):
            continue
        if any(
            ref.startswith(f"{where}/allOf/") or ref.startswith(f"{where}/anyOf/")
            for ref in refs
        ):
            continue
        _merge_all_of(value)
        if value.get("additionalProperties") is False:
            _merge_union(value, where == "#")


def _serve_unions(served: Any, found: list[StrictViolation]) -> list[StrictViolation]:
    """Merge the unions of ``served`` (``_merge_unions``), then report each
    name the closing still declares as ``{}`` (any value), unless ``found``
    reports its place already (a ``{}`` the author wrote)."""
    _merge_unions(served)
    _drop_unreferenced_entries(served)
    reported = {v.path.replace("/oneOf/", "/anyOf/") for v in found}
    problems: list[StrictViolation] = []
    rule = _NAMED_RULES["declared"]
    stack: list[tuple[str, Any]] = [("#", served)]
    while stack:
        where, value = stack.pop()
        if type(value) is not dict:
            continue
        properties = value.get("properties")
        if type(properties) is dict:
            required = value.get("required")
            for name, sub in properties.items():
                at = f"{where}/properties/{_escape(name)}"
                if sub == {} and at not in reported:
                    if type(required) is list and name in required:
                        why = "it is required but not declared in properties"
                        fix = "declare it in properties with a type"
                    else:
                        why = (
                            "closing the object declares it, and nothing types "
                            "it here (a name only dependentRequired lists, or "
                            "only a $ref beside properties, if/then/else, not, "
                            "dependentSchemas, or a union or allOf branch the "
                            "SDK cannot merge into the object declares)"
                        )
                        fix = "declare it in this object's properties with a type"
                    problems.append(
                        StrictViolation(
                            at,
                            rule.message.format(
                                what=f"property {name!r}", why=why, fix=fix
                            ),
                        )
                    )
            stack.extend(
                (f"{where}/properties/{_escape(n)}", sub)
                for n, sub in reversed(properties.items())
            )
        for key in ("items", "$defs", "definitions", "anyOf", "allOf"):
            sub = value.get(key)
            if type(sub) is dict and key in _DEFINITIONS:
                stack.extend((f"{where}/{key}/{_escape(n)}", s) for n, s in sub.items())
            elif type(sub) is dict:
                stack.append((f"{where}/{key}", sub))
            elif type(sub) is list:
                stack.extend((f"{where}/{key}/{i}", s) for i, s in enumerate(sub))
    return problems


def _drop_unreferenced_entries(served: Any) -> None:
    """Remove the served ``$defs``/``definitions`` entries no served ``$ref``
    reaches (one an ``allOf`` wrote out in place, or one only a merged
    union's branch referred to): they apply to no input, and the caps would
    count their properties."""
    if type(served) is not dict:
        return
    entries: dict[str, tuple[dict[str, Any], str]] = {}
    refs: dict[str, list[str]] = {}  # the refs under each entry ("" outside)
    stack: list[tuple[str, str, Any]] = [("#", "", served)]
    while stack:
        where, entry, value = stack.pop()
        if type(value) is dict:
            ref = value.get("$ref")
            if type(ref) is str:
                refs.setdefault(entry, []).append(ref)
            for key, sub in value.items():
                at = f"{where}/{_escape(key)}"
                if key in _DEFINITIONS and type(sub) is dict:
                    for name, definition in sub.items():
                        inner = f"{at}/{_escape(name)}"
                        entries[inner] = (sub, name)
                        stack.append((inner, inner, definition))
                elif type(sub) is dict or type(sub) is list:
                    stack.append((at, entry, sub))
        elif type(value) is list:
            stack.extend((f"{where}/{i}", entry, sub) for i, sub in enumerate(value))
    if not entries or any(
        not ref.startswith("#/") or "%" in ref
        for found in refs.values()
        for ref in found
    ):
        return  # none, or a reference not written as the SDK writes them
    reached: set[str] = set()
    pending = list(refs.get("", []))
    while pending:
        ref = pending.pop()
        for at in entries:
            if at not in reached and (ref == at or ref.startswith(at + "/")):
                reached.add(at)
                pending.extend(refs.get(at, []))
            elif at not in reached and at.startswith(ref + "/"):
                reached.add(at)  # inside a referenced schema
                pending.extend(refs.get(at, []))
    for at, (container, name) in entries.items():
        if at not in reached and not any(
            at.startswith(other + "/") for other in entries if other not in reached
        ):
            container.pop(name, None)
    stack2: list[Any] = [served]
    while stack2:
        value = stack2.pop()
        if type(value) is dict:
            for key in [k for k in _DEFINITIONS if value.get(k) == {}]:
                del value[key]
            stack2.extend(value.values())
        elif type(value) is list:
            stack2.extend(value)


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


class _Builder:
    """Applies ``RULES`` to a closed document, node by node, into the served
    form and the violations (``as_is``: judges the document as it stands).

    Without ``graph`` the document has no references (``copy``'s);
    with it, each served ``$ref`` is checked (external, to nowhere,
    recursive), written as a JSON Pointer, and the ``$defs`` entries the
    served ``$ref``s reach are built; an ``allOf`` branch that is a
    ``$ref`` is written out. ``names_for`` gives the names an object the
    closing left open (one under ``not`` elsewhere) is closed over.
    """

    __slots__ = (
        "describe", "as_is", "names_for", "graph", "violations", "closed",
        "_legacy", "_reported", "_refs", "_built", "_building", "_served_refs",
        "_definitions", "_moved", "_declared",
    )  # fmt: skip

    def __init__(
        self,
        *,
        describe: bool,
        as_is: bool = False,
        names_for: Callable[[Path], Collection[str]] = _no_names,
        graph: SchemaGraph | None = None,
    ) -> None:
        self.describe = describe
        self.as_is = as_is
        self.names_for = names_for
        self.graph = graph
        self.violations: list[StrictViolation] = []
        self.closed: Any = None
        """``copy``'s closed copy of the node it built last."""
        self._legacy = False
        self._reported: set[tuple[str, str]] = set()
        # What a document with references needs (``node`` tracks it).
        self._refs: dict[Path, Reference] = {}
        self._built: dict[Path, Any] = {}
        self._building: set[Path] = set()
        self._served_refs: list[tuple[Path, Path]] = []
        self._definitions: list[tuple[Path, str]] = []
        self._moved: dict[Path, str] = {}
        self._declared = False
        """Whether the closing declared a name as ``{}`` or an ``allOf``
        wrote a ``$ref`` out: ``_serve_unions`` has work only then."""
        if graph is not None:
            self._refs = {r.path: r for r in graph.references if r.keyword == "$ref"}

    # -- the document --

    def build(self, document: Any) -> Any:
        if isinstance(document, dict):
            dialect = document.get("$schema")
            self._legacy = isinstance(dialect, str) and any(
                draft in dialect for draft in _LEGACY
            )
        served = self.node(document, ())
        if self.graph is not None:
            self._build_definitions()
            self._check_recursion()
        if self._declared and not self.as_is:
            self.violations += _serve_unions(served, self.violations)
        return served

    def _build_definitions(self) -> None:
        """Place, in the served schema, the ``$defs`` entries that served
        ``$ref``s reach (each entry built once, where the author wrote it)."""
        graph = self.graph
        assert graph is not None
        done = 0
        while done < len(self._served_refs):
            _, target = self._served_refs[done]
            done += 1
            if self.as_is:
                continue
            moved = self._moved.get(target)
            root = self._built.get(())
            if moved is not None and isinstance(root, dict):
                container = root.setdefault("$defs", {})
                if moved not in container:
                    container[moved] = self.node(graph.nodes[target], target)
                continue
            for i in range(2, len(target) + 1):
                if target[i - 2] not in _DEFINITIONS:
                    continue
                entry = target[:i]
                served = self._built.get(entry[:-2])
                if not isinstance(served, dict):
                    break
                container = served.setdefault(entry[-2], {})
                if entry[-1] not in container:
                    container[entry[-1]] = self.node(_at(graph.document, entry), entry)
        # Entries in the order the author wrote them; none left empty.
        for holder, keyword in self._definitions:
            served = self._built.get(holder)
            written = _at(graph.document, (*holder, keyword))
            if not isinstance(served, dict) or not isinstance(written, dict):
                continue
            entries = served.get(keyword, {})
            if entries:
                ordered = {k: entries[k] for k in written if k in entries}
                served[keyword] = {**ordered, **entries}
            else:
                served.pop(keyword, None)

    def _check_recursion(self) -> None:
        """Report each served ``$ref`` that closes a cycle: the served schema
        would be recursive."""
        refs = self._served_refs
        inside: dict[int, list[int]] = {
            i: [
                j
                for j, (holder, _) in enumerate(refs)
                if holder[: len(target)] == target
            ]
            for i, (_, target) in enumerate(refs)
        }
        state: dict[int, int] = {}
        for start in range(len(refs)):
            if start in state:
                continue
            state[start] = 1
            stack = [(start, iter(inside[start]))]
            while stack:
                current, successors = stack[-1]
                for following in successors:
                    if state.get(following) == 1:
                        holder, _ = refs[current]
                        written = self.graph.nodes.get(holder)  # type: ignore[union-attr]
                        ref = written.get("$ref") if isinstance(written, dict) else None
                        self.violation(
                            (*holder, "$ref"),
                            _NAMED_RULES["recursive $ref"],
                            "$ref",
                            ref=ref,
                        )
                    elif following not in state:
                        state[following] = 1
                        stack.append((following, iter(inside[following])))
                        break
                else:
                    stack.pop()
                    state[current] = 2

    # -- a document without a graph, copied and closed as it is served --

    def copy(self, schema: Any) -> Any:
        """The served form of an author's ``schema`` that needs no graph,
        built in the one recursion that also copies it as plain JSON and
        closes it as ``_close_objects`` would (the copy is left in
        ``closed``). None where ``_close_node`` raises ``_NeedsGraphError`` (and
        a tuple: its served form takes the graph path)."""
        if type(schema) is not dict:
            return None
        dialect = schema.get("$schema")
        if dialect is not None and (
            type(dialect) is not str or dialect not in PLAIN_DIALECTS
        ):
            return None
        try:
            served = self._copy(schema, (), schema, 0)
        except (_NeedsGraphError, RecursionError):
            return None
        if self._declared:
            self.violations += _serve_unions(served, self.violations)
        return served

    def _copy_child(self, value: Any, path: Path, group: Any, depth: int) -> Any:
        if type(value) is dict:
            return self._copy(value, path, group, depth)
        self.closed = _plain(value, depth)
        return self.node(self.closed, path)

    def _copy(self, schema: dict[str, Any], path: Path, group: Any, depth: int) -> Any:
        if depth > _SHALLOW:
            raise _NeedsGraphError
        inner = depth + 1
        served: dict[str, Any] = {}
        closed: dict[str, Any] = {}
        words: list[tuple[str, Any]] | None = None
        extra_all_of: list[Any] | None = None
        child = self._copy_child
        for key, value in schema.items():
            if type(key) is not str or key in _NEEDS_GRAPH:
                raise _NeedsGraphError
            kind = type(value)
            rule = rule_for(key, value)
            if rule is _COMPLEX_ENUM:
                rule = _enum_rule(schema)
            served_as = rule.served_as
            if kind is dict and served_as is _KEPT and key == "properties":
                properties: dict[str, Any] = {}
                copies: dict[str, Any] = {}
                untyped: dict[str, Any] | None = None
                for name, sub in value.items():
                    if type(sub) is not dict or _TYPING_KEYS.isdisjoint(sub):
                        if untyped is None:
                            untyped = {}
                        untyped[name] = sub
                    properties[_name(name)] = child(
                        sub, (*path, key, name), sub, inner + 1
                    )
                    copies[name] = self.closed
                served[key], closed[key] = properties, copies
                if untyped:  # after the children, as the graph's build reports
                    self._check_typed(schema, untyped, path)
                continue
            if kind is dict and served_as is _KEPT and key == "items":
                if _TYPING_KEYS.isdisjoint(value) and _untyped(value):
                    self.violation((*path, key), _UNTYPED, "", what="items")
                served[key] = child(value, (*path, key), value, inner)
                closed[key] = self.closed
                continue
            if kind is list and (
                (served_as is _KEPT and key == "anyOf")
                or (served_as is _KEPT and key == "allOf")
                or (served_as is _NORMALIZED and key == "oneOf")
            ):
                branches: list[Any] = []
                copies_: list[Any] = []
                union = key != "allOf"
                for i, branch in enumerate(value):
                    scope = _branch_group(group, branch) if union else group
                    branches.append(child(branch, (*path, key, i), scope, inner + 1))
                    copies_.append(self.closed)
                closed[key] = copies_
                if key != "oneOf":
                    served[key] = branches
                elif "anyOf" in schema:
                    extra_all_of = [{"anyOf": branches}]
                else:
                    served["anyOf"] = branches
                continue
            if kind is list and (key == "prefixItems" or key == "items"):
                raise _NeedsGraphError  # a tuple: served on the graph path
            if value is True and key == "items":
                self.violation((*path, key), _UNTYPED, "", what="items")
            copy = _closed_value(key, value, _outer(group), inner)
            closed[key] = copy
            if served_as is _KEPT:
                served[key] = copy
                continue
            if served_as is Served.NOT_SERVED:
                continue
            # Served, said or reported as the author wrote it (as the graph's
            # build does): closing is the SDK's.
            written = copy if copy is value else _plain(value, inner)
            if served_as is _DESCRIBED and (self.describe or not rule.narrows):
                if words is None:
                    words = [(key, written)]
                else:
                    words.append((key, written))
            else:  # refused, or described where nothing enforces it
                self.violation((*path, key), rule, key, written)
                served[key] = written
        if extra_all_of:
            served.setdefault("allOf", []).extend(extra_all_of)
        if "additionalProperties" not in closed and _is_object_schema(closed):
            names = _close_copy(closed, _outer(group), depth)
            # Served, a union branch is closed over its own names and its
            # parent's, not its siblings' (``_group_names``).
            if names is None or type(group) is _Branch:
                names = _group_names(group)
            if names or "properties" in closed or not depth:
                properties = served.get("properties", {})
                if type(properties) is dict:
                    for name in sorted(names - properties.keys()):
                        properties[name] = {}
                        self._declared = True
                    served["properties"] = properties
                    served["additionalProperties"] = False
            else:
                self.violation(path, _NAMED_RULES["no properties"], "")
        if words:
            words.sort(key=lambda word: _WORDS_ORDER.get(word[0], len(_WORDS_ORDER)))
            _write_words(served, words)
        self.closed = closed
        return served

    # -- one node --

    def violation(
        self, at: Path, rule: Rule, keyword: str, value: Any = None, **fields: Any
    ) -> None:
        where = pointer(at)
        fields.setdefault("found", _found(value))
        if rule is _UNKNOWN:
            fields.setdefault("hint", did_you_mean(keyword))
        if rule.served_as is Served.DESCRIBED and keyword == "pattern":
            findings = regex_findings(value) if isinstance(value, str) else []
            messages = [
                rule.message.format(construct=construct, example=example, whose=whose)
                for construct, example, whose in findings
            ]
        else:
            messages = [rule.message.format(keyword=keyword, value=value, **fields)]
        for message in messages:
            if (where, message) not in self._reported:
                self._reported.add((where, message))
                self.violations.append(StrictViolation(where, message))

    def node(self, schema: Any, path: Path) -> Any:
        if type(schema) is not dict:
            if not isinstance(schema, bool):
                self.violation(
                    path, _NAMED_RULES["not a schema"], "", found=type(schema).__name__
                )
            return schema
        track = self.graph is not None  # a document with references
        if track:
            built = self._built.get(path)
            if built is not None:
                return built
            self._building.add(path)
        as_is = self.as_is
        out: dict[str, Any] = {}
        words: list[tuple[str, Any]] | None = None
        extra_all_of: list[Any] | None = None
        legacy_ref = self._legacy and "$ref" in schema
        for key, value in schema.items():
            if legacy_ref and key not in ("$ref", "description", "title"):
                continue  # draft 7 and before ignore what is beside a $ref
            if (
                (key == "items" or key == "additionalItems")
                and not as_is
                and key == _tuple_rest(schema)
            ):
                continue  # served with the tuple
            rule = rule_for(key, value)
            if rule is _COMPLEX_ENUM:
                rule = _enum_rule(schema)
            served_as = rule.served_as
            if served_as is _KEPT:
                if key not in _CONTAINERS:
                    out[key] = value
                elif key == "properties":
                    node = self.node
                    out[key] = {
                        name: node(sub, (*path, key, name))
                        for name, sub in value.items()
                    }
                    self._check_typed(schema, value, path)
                else:
                    out[key] = self._kept(key, value, path)
            elif as_is:
                self.violation((*path, key), rule, key, value)
                out[key] = value
                for child_path, _, child in subschemas({key: value}, path):
                    self.node(child, child_path)
            elif served_as is _DESCRIBED:
                if rule.narrows and not self.describe:
                    self.violation((*path, key), rule, key, value)
                    out[key] = _detached(value)
                elif words is None:
                    words = [(key, value)]
                else:
                    words.append((key, value))
            elif served_as is _NORMALIZED:
                if key == "oneOf":
                    branches = [
                        self.node(branch, (*path, key, i))
                        for i, branch in enumerate(value)
                    ]
                    if "anyOf" in schema:
                        extra_all_of = [{"anyOf": branches}]
                    else:
                        out["anyOf"] = branches
                elif key == "prefixItems" or key == "items":
                    if words is None:
                        words = []
                    self._tuple(schema, key, value, path, out, words)
                # unevaluatedProperties: false is closed below
            elif served_as is _REFUSED:
                self.violation((*path, key), rule, key, value)
                out[key] = _detached(value)
            # not served: left out
        if extra_all_of:
            out.setdefault("allOf", []).extend(extra_all_of)
        if (
            "additionalProperties" not in out
            and _is_object_schema(schema)
            and not legacy_ref
        ):
            self._close(schema, path, out)
        if words:
            words.sort(key=lambda word: _WORDS_ORDER.get(word[0], len(_WORDS_ORDER)))
            _write_words(out, words)
        if track:
            self._building.discard(path)
            self._built[path] = out
        return out

    def _close(self, schema: dict[str, Any], path: Path, out: dict[str, Any]) -> None:
        evaluated = schema.get("unevaluatedProperties", False)
        if evaluated is not False:
            return  # refused already: an open object
        names = self.names_for(path)
        if not ("properties" in schema or names or path == ()):
            self.violation(path, _NAMED_RULES["no properties"], "")
            return
        if self.as_is:
            self.violation(path, _NAMED_RULES["not closed"], "")
            return
        properties = out.get("properties", {})
        if not isinstance(properties, dict):
            return
        for name in sorted(names - properties.keys()):
            properties[name] = {}
            self._declared = True
        out["properties"] = properties
        out["additionalProperties"] = False

    def _check_typed(
        self, schema: dict[str, Any], properties: dict[str, Any], path: Path
    ) -> None:
        """Report each property schema that admits any value (``_untyped``),
        a bare ``{}`` in a closed object included."""
        for name, sub in properties.items():
            if type(sub) is dict and not _TYPING_KEYS.isdisjoint(sub):
                continue  # most
            if _untyped(sub):
                where = f"property {name!r}"
                self.violation((*path, "properties", name), _UNTYPED, "", what=where)

    def _kept(self, key: str, value: Any, path: Path) -> Any:
        if key == "items":
            if _untyped(value):
                self.violation((*path, key), _UNTYPED, "", what="items")
            return self.node(value, (*path, key))
        if key == "anyOf":
            return [self.node(sub, (*path, key, i)) for i, sub in enumerate(value)]
        if key == "allOf":
            return [self._all_of(sub, (*path, key, i)) for i, sub in enumerate(value)]
        if key in _DEFINITIONS:
            if self.as_is:
                return {
                    name: self.node(sub, (*path, key, name))
                    for name, sub in value.items()
                }
            self._definitions.append((path, key))
            return {}  # filled with the entries served references reach
        if key == "$ref":
            return self._ref(value, path)
        return value

    def _ref(self, ref: str, path: Path) -> str:
        reference = self._refs.get(path)
        if reference is None:
            return ref
        problem = reference.problem
        if problem is not None:
            name = {
                "not a string": "$ref not a string",
                "external": "external $ref",
            }.get(problem, "$ref to nowhere")
            self.violation((*path, "$ref"), _NAMED_RULES[name], "$ref", ref=ref)
            return ref
        target = reference.target
        if target is None:  # a boolean schema: served where the pointer reads
            if not LOCAL_POINTER.match(ref):
                return ref
            target, _ = follow(self.graph.document, ref)  # type: ignore[union-attr]
            if target is None:
                return ref
        self._served_refs.append((path, target))
        if self.as_is or _unserved_place(target) is None:
            return pointer(target)
        # A place the served schema rewrites (a oneOf branch, a position of a
        # tuple, a keyword in words): served as a $defs entry of its own.
        name = self._moved.setdefault(target, "/".join(map(str, target)))
        return pointer(("$defs", name))

    def _all_of(self, branch: Any, path: Path) -> Any:
        """An ``allOf`` branch; one that is a ``$ref`` is written out."""
        reference = self._refs.get(path)
        if (
            not self.as_is
            and isinstance(branch, dict)
            and reference is not None
            and reference.problem is None
            and reference.target is None
            and self.graph is not None
        ):
            # A reference to a boolean schema: written out as that boolean.
            _, resolved = follow(self.graph.document, reference.ref)
            if isinstance(resolved, bool):
                rest = {key: value for key, value in branch.items() if key != "$ref"}
                if resolved and _untyped(rest):
                    self.violation(path, _UNTYPED, "", what="the schema")
                if not rest:
                    return resolved
                beside = self.node(rest, path)
                if isinstance(beside, dict):
                    beside.setdefault("allOf", []).append(resolved)
                return beside
        if (
            self.as_is
            or not isinstance(branch, dict)
            or reference is None
            or reference.problem is not None
            or reference.target is None
        ):
            if self.as_is and isinstance(branch, dict) and "$ref" in branch:
                self.violation((*path, "$ref"), _NAMED_RULES["allOf $ref"], "$ref")
            return self.node(branch, path)
        target = reference.target
        if target in self._building:
            self.violation(
                (*path, "$ref"),
                _NAMED_RULES["recursive $ref"],
                "$ref",
                ref=branch.get("$ref"),
            )
            return {}
        served_target = self.node(self.graph.nodes[target], target)  # type: ignore[union-attr]
        self._served_refs.append((path, target))
        self._declared = True  # its $defs entry may be left unreferenced
        written_out = json.loads(json.dumps(served_target))
        rest = {key: value for key, value in branch.items() if key != "$ref"}
        if not rest:
            return written_out
        beside = self.node(rest, path)
        if isinstance(beside, dict):
            beside.setdefault("allOf", []).append(written_out)
        return beside

    def _tuple(
        self,
        schema: dict[str, Any],
        key: str,
        value: list[Any],
        path: Path,
        out: dict[str, Any],
        words: list[tuple[str, Any]],
    ) -> None:
        """``prefixItems`` (or draft 7's ``items: [...]``): ``items`` becomes
        the ``anyOf`` of the position schemas and the rest's."""
        rule = rule_for("prefixItems", value)
        rest_key = _tuple_rest(schema)
        if not (self.describe or rule.pydantic_enforces):
            self.violation((*path, key), rule, key, value)
            out[key] = _detached(value)
            return
        words.append((key, value))
        rest = schema.get(rest_key, True) if rest_key else True
        most = schema.get("maxItems")
        if type(most) is int and 0 <= most <= len(value):
            rest = False  # no element after the positions
        if rest is True or rest == {}:
            return  # the elements after the positions are free: so is every one
        branches = [self.node(sub, (*path, key, i)) for i, sub in enumerate(value)]
        if rest is False:
            if rest_key is not None and schema.get(rest_key) is False:
                words.append((rest_key, False))
        else:
            branches.append(self.node(rest, (*path, str(rest_key))))
        unique: dict[str, Any] = {}
        for branch in branches:
            unique.setdefault(json.dumps(branch, sort_keys=True), branch)
        served = list(unique.values())
        if served:
            out["items"] = served[0] if len(served) == 1 else {"anyOf": served}


# --- the caps ------------------------------------------------------------------


def find_limit_violations(
    strict_tools: Iterable[tuple[str, Any]],
) -> list[StrictLimitExceeded]:
    """Check strict mode's per-request caps for ``(tool name, schema)`` pairs.

    Pass the schemas as served (from ``make_strict``). Every property not
    listed in its object's ``required``, at any depth, counts as one optional
    parameter, and every schema with ``anyOf``/``oneOf`` or a ``type`` array
    of two or more types as one union-typed parameter. Definitions count once,
    where they are defined, however often they are referenced.
    """
    tools = list(strict_tools)
    optional: list[tuple[str, int]] = []
    unions: list[tuple[str, int]] = []
    for name, schema in tools:
        n_optional, n_unions = _count_parameters(schema)
        if n_optional:
            optional.append((name, n_optional))
        if n_unions:
            unions.append((name, n_unions))
    exceeded = []
    for limit, maximum, contributions in (
        ("strict tools", STRICT_TOOL_LIMIT, [(name, 1) for name, _ in tools]),
        ("optional parameters", OPTIONAL_PARAMETER_LIMIT, optional),
        ("union-typed parameters", UNION_PARAMETER_LIMIT, unions),
    ):
        count = sum(n for _, n in contributions)
        if count > maximum:
            exceeded.append(
                StrictLimitExceeded(limit, maximum, count, tuple(contributions))
            )
    return exceeded


_CAPS = (
    ("strict tools", STRICT_TOOL_LIMIT),
    ("optional parameters", OPTIONAL_PARAMETER_LIMIT),
    ("union-typed parameters", UNION_PARAMETER_LIMIT),
)


def select_within_limits(
    fixed: Iterable[tuple[int, int]],
    candidates: Iterable[tuple[str, tuple[int, int]]],
) -> tuple[list[str], list[tuple[str, str]]]:
    """Which ``candidates`` stay strict under all three caps at once.

    ``fixed`` are the ``(optional, union-typed)`` parameter counts
    (``count_parameters``) of tools strict whatever is chosen; ``candidates``
    are ``(name, counts)`` in the order they are preferred. Each candidate,
    in that order, is kept if it fits with ``fixed`` and those kept before
    it, and is skipped otherwise, the rest still considered: a tool too wide
    for the caps never makes the ones after it non-strict, no tool left out
    would fit beside those kept, and the same tools give the same answer.
    Returns the names kept, and each skipped one with the first cap (in
    ``strict tools``, ``optional parameters``, ``union-typed parameters``
    order) it would have gone over.
    """
    totals = [0, 0, 0]
    for optional, unions in fixed:
        totals[0] += 1
        totals[1] += optional
        totals[2] += unions
    kept: list[str] = []
    skipped: list[tuple[str, str]] = []
    for name, (optional, unions) in candidates:
        adds = (1, optional, unions)
        over = next(
            (
                cap
                for (cap, maximum), total, add in zip(_CAPS, totals, adds, strict=True)
                if add and total + add > maximum
            ),
            None,
        )
        if over is None:
            kept.append(name)
            for i, add in enumerate(adds):
                totals[i] += add
        else:
            skipped.append((name, over))
    return kept, skipped


def count_parameters(schema: Any) -> tuple[int, int]:
    """The optional and union-typed parameters one served schema adds to a
    request, as ``find_limit_violations`` counts them."""
    return _count_parameters(schema)


def smallest_change(strict_tools: Iterable[tuple[str, Any]]) -> str:
    """What would bring ``(tool name, served schema)`` pairs under the caps,
    keeping the declared order (``select_within_limits``): the tools to make
    non-strict, each with the cap it goes over."""
    tools = [(name, count_parameters(schema)) for name, schema in strict_tools]
    _, skipped = select_within_limits((), tools)
    return ", ".join(f"{name} ({cap})" for name, cap in skipped)


# Strict tools of each server built by create_sdk_mcp_server, keyed by the
# server instance that ends up in McpSdkServerConfig, so that the caps can be
# checked across every server handed to one query without changing the config
# type users build and pass around.
_strict_tools_by_server: weakref.WeakKeyDictionary[
    object, tuple[tuple[str, Any], ...]
] = weakref.WeakKeyDictionary()


def remember_strict_tools(
    server: object, strict_tools: Iterable[tuple[str, Any]]
) -> None:
    """Record the ``(tool name, served schema)`` pairs of a server's strict tools."""
    _strict_tools_by_server[server] = tuple(strict_tools)


def check_request_limits(mcp_servers: object) -> None:
    """Refuse a query whose SDK servers together go over a per-request cap.

    ``mcp_servers`` is ``ClaudeAgentOptions.mcp_servers``. Tools are named as
    the model sees them (``mcp__<server>__<tool>``). Every strict tool of
    every SDK server counts, whether or not a permission setting later hides
    it, so the check can err on the side of refusing. Servers not built by
    ``create_sdk_mcp_server`` declare no strict tools the SDK knows about.
    """
    if not isinstance(mcp_servers, Mapping):
        return
    tools: list[tuple[str, Any]] = []
    for server_name, config in mcp_servers.items():
        if not (isinstance(config, Mapping) and config.get("type") == "sdk"):
            continue
        try:
            strict_tools = _strict_tools_by_server.get(config.get("instance"), ())
        except TypeError:  # an instance that cannot be weakly referenced
            continue
        tools.extend(
            (f"mcp__{server_name}__{tool_name}", schema)
            for tool_name, schema in strict_tools
        )
    exceeded = find_limit_violations(tools)
    if exceeded:
        raise ValueError(format_limits("this query's SDK MCP servers", exceeded, tools))


def format_violations(tool_name: str, violations: list[StrictViolation]) -> str:
    """The message of the error that refuses a strict tool's schema."""
    count = len(violations)
    return (
        f"Tool '{tool_name}' has strict=True but its input schema breaks strict "
        f"mode's rules ({count} violation{'s' if count != 1 else ''}):\n"
        + "\n".join(f"  - {violation}" for violation in violations)
    )


def format_limits(
    servers: str,
    exceeded: list[StrictLimitExceeded],
    strict_tools: Iterable[tuple[str, Any]] = (),
) -> str:
    """The message of the error that refuses servers whose tools go over a
    cap, with the smallest change that fits when ``strict_tools`` (the
    ``(name, served schema)`` pairs counted) are given."""
    change = smallest_change(strict_tools)
    return (
        f"The strict tools of {servers} go over strict mode's per-request "
        "limits:\n"
        + "\n".join(f"  - {limit}" for limit in exceeded)
        + (
            "\nKeeping the declared order, every other tool fits if these are "
            f"made non-strict (strict=False): {change}"
            if change
            else ""
        )
    )


# --- counting for the caps --------------------------------------------------------


def _count_parameters(schema: Any) -> tuple[int, int]:
    """Optional and union-typed parameters of one served schema."""
    document, problems = as_json(schema)
    if problems:
        return 0, 0
    optional = unions = 0
    for node in _walk(document):
        value = node.value
        if not isinstance(value, dict):
            continue
        properties = value.get("properties")
        if isinstance(properties, dict):
            required = value.get("required")
            required_names = {
                name
                for name in (required if isinstance(required, list) else [])
                if isinstance(name, str)
            }
            optional += sum(1 for name in properties if name not in required_names)
        declared = value.get("type")
        if (
            isinstance(value.get("anyOf"), list)
            or isinstance(value.get("oneOf"), list)
            or (isinstance(declared, list) and len(declared) > 1)
        ):
            unions += 1
    return optional, unions


_ENFORCED_ATTRIBUTE = "_strict_enforced_input_schema"


def remember_enforced(tool_def: Any, forms: StrictSchemas) -> None:
    """Keep, on ``tool_def``, the forms its calls are validated against."""
    object.__setattr__(tool_def, _ENFORCED_ATTRIBUTE, (forms.served, forms))


def enforced_input_schema(tool_def: Any, served: dict[str, Any]) -> dict[str, Any]:
    """The schema ``tool_def``'s calls are validated against, ``served`` being
    the one it is listed with: for a strict tool, the author's schema with
    every constraint (``strict_schemas``); for any other tool ``served``."""
    remembered = getattr(tool_def, _ENFORCED_ATTRIBUTE, None)
    if (
        isinstance(remembered, tuple)
        and len(remembered) == 2
        and (remembered[0] is served or remembered[0] == served)
    ):
        enforced: dict[str, Any] = remembered[1].enforced
        return enforced
    return served


def strict_argument_error(validator: Any, arguments: Any) -> str | None:
    """What is wrong with a strict tool's ``arguments``, naming field and rule.

    The message jsonschema gives for its best match, then where
    (``page``, ``filters.tags[2]``) and which keyword with which value:
    ``0 is less than the minimum of 1 (at page: minimum 1)``.
    """
    import jsonschema

    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    where = ""
    for part in error.absolute_path:
        where += (
            f"[{part}]"
            if isinstance(part, int)
            else (f".{part}" if where else str(part))
        )
    rule = str(error.validator)
    if not isinstance(error.validator_value, dict | list) or rule == "required":
        rule += f" {json.dumps(error.validator_value)}"
    return f"{error.message} (at {where or 'the arguments'}: {rule})"


def check_server_limits(
    server_name: str, server: object, tools: Iterable[Any], schemas: Mapping[str, Any]
) -> None:
    """Hold one server's strict tools to the per-request caps, and remember them.

    ``check_request_limits`` applies the caps again across every server
    handed to one query.
    """
    strict_tools = [(t.name, schemas[t.name]) for t in tools if t.strict is True]
    exceeded = find_limit_violations(strict_tools)
    if exceeded:
        raise ValueError(
            format_limits(f"SDK MCP server '{server_name}'", exceeded, strict_tools)
        )
    remember_strict_tools(server, strict_tools)
