"""Strict mode's schema rules, checked when a strict tool is defined.

A tool marked ``strict=True`` asks the Claude API to constrain generation to
the tool's input schema with a grammar compiled from that schema. Grammar
compilation cannot express every JSON Schema keyword, so the API answers a
request whose strict schema uses one of them with a 400, and the Claude Code
CLI's own conversion quietly sends such a tool as non-strict after a warning
on stderr. Either way the author finds out late and far from the tool. The
SDK sees every schema when the tool is defined, so it checks there:

- ``transform`` is the strict stage of one pass per schema: it takes the
  schema's plain-JSON copy and its graph (``schema_graph.SchemaGraph``,
  built once by the caller; ``schema_checks.served_input_schema`` runs the
  checks every tool gets on the same graph first) and never calls back into
  an earlier stage. It drops the ``$defs`` entries no reference reaches
  (pruning the graph with them), closes each object with
  ``additionalProperties: false`` over every property name declared for it
  (branches of ``anyOf``/``oneOf``/``allOf``, ``$ref`` and conditionals
  included, so closing only narrows inputs to declared names), moves into
  the description what strict mode cannot compile but the SDK's validator
  enforces on every call (``Served.DESCRIBED``: numeric and length bounds,
  ``minItems`` above 1, ``maxItems``, ``uniqueItems``, unsupported regex
  constructs), and lists every rule the served schema still breaks; those
  are refused. What is moved into words is never dropped: the validator
  checks calls against the author's constraints (``StrictSchemas.enforced``).
  Under ``not``, an ``if`` condition or a ``oneOf`` branch a bound is not
  moved (a subschema that accepts more there makes the schema accept less)
  and is refused instead. ``strict_schemas`` is the same for a caller
  holding only the schema (the relay, the report), ``make_strict`` its
  served form and violations.
- ``find_strict_violations`` is the check on its own: every place a schema
  breaks a rule, as a JSON Pointer to the offending keyword and the rule.
- ``RULES`` is strict mode's rules as one table: for each keyword (or schema
  shape), whether it is kept, moved into the description (and enforced by
  the SDK), normalized or refused, with its message and whether a pydantic
  model enforces it. The checks, ``describe_constraints`` and the pydantic
  path read it, and docs/strict-mode.md's table is generated from it.
- ``find_limit_violations`` applies the per-request caps to all strict tools
  that can reach one request, and ``check_request_limits`` does so for the
  SDK servers handed to one query.

References (``$ref``, embedded ``$id`` resources, ``$anchor``) are resolved
as jsonschema resolves them and never over the network
(``schema_graph.SchemaGraph``: local JSON Pointers directly, anything else
with the ``referencing`` library), so a recursive schema is found however
it is spelled. None of this raises on any value: a malformed,
non-finite or too deeply nested schema is reported, not crashed on.
"""

from __future__ import annotations

import enum
import json
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .schema_graph import (
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_POSITIONS,
    Reference,
    SchemaGraph,
    pointer,
    python_patterns,
    shape_problems,
    subschemas,
)
from .schema_graph import python_pattern as python_pattern  # its old home

STRICT_TOOL_LIMIT = 20
"""Most strict tools one request may carry."""

OPTIONAL_PARAMETER_LIMIT = 24
"""Most optional parameters across all strict schemas of one request."""

UNION_PARAMETER_LIMIT = 16
"""Most union-typed parameters (``anyOf``/``oneOf`` or a ``type`` array)."""

Path = tuple[str | int, ...]


# --- strict mode's rules, as one table -----------------------------------------


class Served(enum.Enum):
    """How the SDK serves a keyword (or a schema shape) of a strict tool."""

    KEPT = "as written"
    DESCRIBED = "described"
    """Moved into the description of the schema that held it, and still
    enforced by the validator on every call."""
    NORMALIZED = "normalized"
    """Served as a corrected copy that accepts what the author's accepted."""
    NOT_SERVED = "not served"
    REFUSED = "refused"
    """The tool is refused when it is defined (``ValueError``)."""


Finding = tuple[Path, dict[str, Any]]
"""Where, under the keyword, a rule is broken, and the message's fields."""


def _always(value: Any) -> Iterator[Finding]:
    yield (), {}


def _false(value: Any) -> Iterator[Finding]:
    if value is False:
        yield (), {}


def _not_false(value: Any) -> Iterator[Finding]:
    if value is not False:
        yield (), {"found": "true" if value is True else "a schema"}


def _not_zero_or_one(value: Any) -> Iterator[Finding]:
    if not _is_zero_or_one(value):
        yield (), {}


def _regex_constructs(value: Any) -> Iterator[Finding]:
    if isinstance(value, str):
        for construct, example in _unsupported_regex_constructs(value):
            yield (), {"construct": construct, "example": example}


def _not_a_string(value: Any) -> Iterator[Finding]:
    if not isinstance(value, str):
        yield (), {}


def _names_with_regex_constructs(value: Any) -> Iterator[Finding]:
    if isinstance(value, dict):
        for name in value:
            for _, fields in _regex_constructs(name):
                yield (name,), fields


@dataclass(frozen=True)
class Rule:
    """One of strict mode's rules: what a keyword is served as, and why.

    A rule with a ``check`` is applied to every schema holding ``keyword``
    (``check`` yields each place its value breaks the rule); one without is
    applied by the code named in its ``name`` and only lends its message.
    ``message`` is a ``str.format`` template with ``keyword``, ``value`` and
    the check's fields. ``label``, ``note`` and ``enforced_by`` are the row
    of docs/strict-mode.md's table (empty ``label``: shown with the row
    before, or not at all).
    """

    keyword: str
    served_as: Served
    check: Callable[[Any], Iterable[Finding]] | None
    message: str
    pydantic_enforces: bool = False
    """Whether a pydantic model enforces the keyword it derives from a field
    constraint (``Field(ge=1)`` -> ``minimum``), so that a model's tool may
    serve it in words (``pydantic_models``)."""
    name: str = ""
    label: str = ""
    note: str = ""
    enforced_by: str = ""

    def findings(self, value: Any, at: Path) -> Iterator[StrictViolation]:
        assert self.check is not None
        for where, fields in self.check(value):
            yield StrictViolation(
                pointer((*at, self.keyword, *where)),
                self.message.format(keyword=self.keyword, value=value, **fields),
            )


_NUMERIC = (
    "numeric constraint '{keyword}' is not supported in strict mode; check the "
    "range in the tool's handler"
)
_ARRAY = (
    "array constraint '{keyword}' is not supported in strict mode (only "
    "minItems 0 or 1 is); check it in the tool's handler"
)
_STRING = (
    "string length constraint '{keyword}' is not supported in strict mode; "
    "check the length in the tool's handler"
)
_REGEX = (
    "pattern uses {construct} ({example!r}), which strict mode's regular "
    "expressions do not support"
)
_BY_VALIDATOR = "the SDK's validator"
_RECURSION = (
    "— (strict mode cannot compile recursion; references are resolved as "
    "jsonschema resolves them)"
)


def _bound(keyword: str, message: str, note: str, enforced_by: str) -> Rule:
    """A bound strict mode cannot compile: served in words, enforced by the SDK."""
    return Rule(
        keyword,
        Served.DESCRIBED,
        _always,
        message,
        pydantic_enforces=True,
        label=f"`{keyword}`",
        note=note,
        enforced_by=enforced_by,
    )


_NUMERIC_NOTE = ": `{minimum: 1, maximum: 50}` in the description"
_NUMERIC_BY = "the SDK's validator (your schema), every call and example"
_STRING_NOTE = ": `{minLength: 2, maxLength: 40}`"


_ITEMS_NOTE = ": `{minItems: 2, maxItems: 3}` (`minItems` 0 or 1 is served as written)"

RULES: tuple[Rule, ...] = (
    *(
        _bound(keyword, _NUMERIC, _NUMERIC_NOTE, _NUMERIC_BY)
        for keyword in (
            "minimum",
            "exclusiveMinimum",
            "maximum",
            "exclusiveMaximum",
            "multipleOf",
        )
    ),
    *(
        _bound(keyword, _STRING, _STRING_NOTE, _BY_VALIDATOR)
        for keyword in ("minLength", "maxLength")
    ),
    Rule(
        "pattern",
        Served.DESCRIBED,
        _regex_constructs,
        _REGEX,
        pydantic_enforces=True,
        label="`pattern` with a backreference (`\\1`, `\\k<name>`, `(?P=name)`), "
        "lookahead (`(?=`, `(?!`), lookbehind (`(?<=`, `(?<!`) or a word "
        "boundary (`\\b`, `\\B`)",
        note=': `{pattern: "..."}` (any other pattern is served as written, '
        "`[\\b]` included)",
        enforced_by="the SDK's validator (Python's `re`)",
    ),
    Rule(
        "pattern",
        Served.DESCRIBED,
        _not_a_string,
        "pattern must be a string",
        pydantic_enforces=True,
    ),
    Rule(
        "minItems",
        Served.DESCRIBED,
        _not_zero_or_one,
        "minItems must be 0 or 1 in strict mode (found {value!r}); check longer "
        "minimums in the tool's handler",
        pydantic_enforces=True,
        label="`minItems` other than 0 or 1",
        note=_ITEMS_NOTE,
        enforced_by=_BY_VALIDATOR,
    ),
    Rule(
        "maxItems",
        Served.DESCRIBED,
        _always,
        _ARRAY,
        pydantic_enforces=True,
        label="`maxItems`",
        note=_ITEMS_NOTE,
        enforced_by=_BY_VALIDATOR,
    ),
    Rule(
        "uniqueItems",
        Served.DESCRIBED,
        _always,
        _ARRAY,
        pydantic_enforces=True,
        label="`uniqueItems: true`",
        note=": `{uniqueItems: true}` (`false`, which says nothing, is dropped)",
        enforced_by=_BY_VALIDATOR,
    ),
    Rule(
        "pattern",
        Served.KEPT,
        None,
        "",
        name="named group",
        label="`pattern` with an ECMA-262 named group `(?<name>...)`",
        note=" (strict mode allows it)",
        enforced_by="the SDK's validator, with the group written `(?P<name>...)` "
        "for Python's `re` (and `\\k<name>` as `(?P=name)`)",
    ),
    Rule(
        "",
        Served.REFUSED,
        None,
        " (it is not moved into the description here: under not, in an if "
        "condition or in a oneOf branch, a schema that accepts more makes the "
        "schema around it accept less)",
        name="not described",
        label="any of the above **under `not`, in an `if` condition or in a "
        "`oneOf` branch**",
        enforced_by="— (a subschema that accepts more makes the schema around "
        "it accept less: `not: {minimum: 5}` without its bound would refuse "
        "every number)",
    ),
    *(
        Rule(
            keyword,
            Served.REFUSED,
            _always,
            _ARRAY,
            label=f"`{keyword}`",
            enforced_by="— (check it in the handler)",
        )
        for keyword in ("contains", "minContains", "maxContains")
    ),
    Rule(
        "additionalProperties",
        Served.NORMALIZED,
        None,
        "",
        name="closed",
        label="an object that declares properties but no `additionalProperties`",
        note=": closed with `additionalProperties: false` over every property "
        "name declared for it: its own `properties` and those of its "
        "`anyOf`/`oneOf`/`allOf` branches, a `$ref` beside `properties`, "
        "`if`/`then`/`else` and `dependentSchemas` (a name it lacks is added "
        'as `{}`). Schemas generated from a dict (`{"a": str}`) or a '
        "TypedDict are closed too",
        enforced_by="the validator (an undeclared key is an error)",
    ),
    Rule(
        "required",
        Served.NORMALIZED,
        None,
        "",
        name="declared",
        label="a name in `required`, `dependentRequired` (or draft 7 "
        "`dependencies`) that `properties` does not declare",
        note=": declared as `{}` when the object is closed, so the closed schema "
        'accepts what yours did (`{"properties": {"a": ...}, "required": '
        '["b"]}` is served with `"b": {}`, not as a schema no call can satisfy)',
        enforced_by="the validator",
    ),
    Rule(
        "properties",
        Served.NORMALIZED,
        None,
        "",
        name="no arguments",
        label='the root `{"type": "object"}` with no properties (a tool without '
        "arguments)",
        note=': `{"type": "object", "properties": {}, "additionalProperties": false}`',
        enforced_by="the validator (only `{}`)",
    ),
    Rule(
        "$defs",
        Served.NOT_SERVED,
        None,
        "",
        name="unreached",
        label="a `$defs` / `definitions` entry no `$ref` reaches",
        note=", and not checked",
        enforced_by="— (it cannot apply to any input)",
    ),
    Rule(
        "type",
        Served.REFUSED,
        None,
        "the root of a strict tool's input schema must be an object "
        '("type": "object", found {found}); the Messages API takes a '
        "tool's input as a JSON object of named arguments",
        name="root",
        label='a root that is not an object (`{"type": "array", ...}`, '
        '`"type": ["object", "null"]`)',
        enforced_by="— (the API's tool type takes an object of named arguments)",
    ),
    Rule(
        "properties",
        Served.REFUSED,
        None,
        "object declares no properties: strict mode requires "
        "additionalProperties: false, which would only accept {{}}; "
        "declare the object's properties",
        name="no properties",
        label='an object deeper than the root that declares no properties (`{"type": '
        '"object"}`, a `dict` / `dict[str, X]` parameter)',
        enforced_by="— (closed, it could only be `{}`; strict mode has no "
        "free-form maps)",
    ),
    Rule(
        "additionalProperties",
        Served.REFUSED,
        _not_false,
        "additionalProperties must be false in strict mode (found {found}); "
        "strict mode has no open objects or free-form maps",
        label="`additionalProperties` other than `false` (`true`, a schema)",
        enforced_by="— (closing it would reject inputs you allowed)",
    ),
    Rule(
        "additionalProperties",
        Served.REFUSED,
        None,
        "object is not closed: strict mode requires additionalProperties: "
        "false. The SDK closes objects for you, but not one evaluated "
        "under not or as an if condition unless the object it applies to "
        "is closed too (alone, closing it would let more inputs "
        'through): give the enclosing schema "type": "object" and its '
        "properties, or close this object yourself",
        name="not closed",
        label="an object evaluated negated (under `not`, or as an `if` condition) "
        "whose enclosing object is not closed",
        enforced_by="— (closing it alone would let more inputs through; give the "
        'enclosing schema `"type": "object"` and its properties, or close it '
        "yourself)",
    ),
    Rule(
        "unevaluatedProperties",
        Served.REFUSED,
        _false,
        "unevaluatedProperties is not used in strict schemas: the SDK "
        "closes every object with additionalProperties: false over "
        "the property names declared for it (in its properties, "
        "anyOf/oneOf/allOf branches, $ref, if/then/else and "
        "dependentSchemas); remove it",
        label="`unevaluatedProperties`",
        enforced_by="— (the SDK closes objects with `additionalProperties: "
        "false`; remove it)",
    ),
    Rule(
        "unevaluatedProperties",
        Served.REFUSED,
        _not_false,
        "unevaluatedProperties leaves the object open (found {found}); strict "
        "mode has no open objects or free-form maps",
    ),
    Rule(
        "unevaluatedItems",
        Served.REFUSED,
        _not_false,
        "unevaluatedItems leaves the array open (found {found}); describe every "
        "item with items/prefixItems, or set it to false",
        label="`unevaluatedItems` other than `false`",
        enforced_by="— (describe every item with `items`/`prefixItems`)",
    ),
    Rule(
        "patternProperties",
        Served.REFUSED,
        _names_with_regex_constructs,
        _REGEX,
        label="a `patternProperties` name with a backreference, lookaround or a "
        "word boundary",
        enforced_by="— (a property name cannot be served in words)",
    ),
    Rule(
        "$ref",
        Served.REFUSED,
        None,
        "recursive schema: $ref {ref!r} leads back into a schema that contains "
        "it; strict mode cannot compile recursive schemas",
        name="recursive $ref",
        label="recursion: a `$ref` that leads back into a schema containing it "
        '(`"#"`, a `$defs` entry referring to itself, directly or through '
        "others, an embedded `$id` or an `$anchor`)",
        enforced_by=_RECURSION,
    ),
    *(
        Rule(
            keyword,
            Served.REFUSED,
            _always,
            "recursive schema: {keyword} exists for recursion, which strict "
            "mode cannot compile",
            label=f"`{keyword}`",
            enforced_by=_RECURSION,
        )
        for keyword in ("$dynamicRef", "$recursiveRef")
    ),
    Rule(
        "$ref",
        Served.REFUSED,
        None,
        "$ref must be a string",
        name="$ref not a string",
    ),
    Rule(
        "$ref",
        Served.REFUSED,
        None,
        "external $ref {ref!r}: strict mode only resolves references within "
        "the schema ('#/$defs/...')",
        name="external $ref",
    ),
    Rule(
        "$ref",
        Served.REFUSED,
        None,
        "$ref {ref!r} does not point into this schema",
        name="$ref to nowhere",
    ),
    Rule(
        "$ref",
        Served.REFUSED,
        None,
        "its references reach more than {limit} schema positions; strict mode "
        "cannot compile it",
        name="too complex",
    ),
    Rule(
        "",
        Served.REFUSED,
        None,
        "input schema nests deeper than {limit} levels (or contains itself); "
        "flatten it or move shared parts into $defs",
        name="too deep",
    ),
    Rule(
        "",
        Served.REFUSED,
        None,
        "{value!r} is not a JSON number; strict schemas must be plain JSON (it "
        "would be sent as null)",
        name="not finite",
    ),
    Rule(
        "", Served.REFUSED, None, "input schema is not JSON: {error}", name="not JSON"
    ),
    Rule(
        "",
        Served.REFUSED,
        None,
        "expected a schema (a JSON object or boolean), found {found}",
        name="not a schema",
    ),
    Rule(
        "",
        Served.KEPT,
        None,
        "",
        name="everything else",
        label="everything else (`oneOf`, `format`, `enum`, `const`, "
        "`prefixItems`, `patternProperties`, `minProperties`, …)",
        enforced_by="the validator, and the grammar as far as the API compiles "
        "it (`oneOf` is not rewritten to `anyOf`, which would drop its "
        "exclusivity)",
    ),
)
"""Strict mode's rules, in the order docs/strict-mode.md lists them: which
keywords strict mode supports, which the SDK moves into the description and
enforces, and which it refuses, with what message."""

_KEYWORD_RULES: dict[str, tuple[Rule, ...]] = {}
for _rule_ in RULES:
    if _rule_.check is not None:
        _KEYWORD_RULES[_rule_.keyword] = (
            *_KEYWORD_RULES.get(_rule_.keyword, ()),
            _rule_,
        )
del _rule_
_NAMED_RULES = {rule.name: rule for rule in RULES if rule.name}


def rule_message(name: str, **fields: Any) -> str:
    """The message of the rule called ``name``, with ``fields`` filled in."""
    return _NAMED_RULES[name].message.format(**fields)


DESCRIBED_KEYWORDS = tuple(
    dict.fromkeys(rule.keyword for rule in RULES if rule.served_as is Served.DESCRIBED)
)
"""Keywords strict mode cannot compile (``minItems`` and ``pattern`` for some
values) that move into a description, in the order they are written there."""

PYDANTIC_DESCRIBED_KEYWORDS = frozenset(
    rule.keyword
    for rule in RULES
    if rule.served_as is Served.DESCRIBED and rule.pydantic_enforces
)
"""Those of ``DESCRIBED_KEYWORDS`` a pydantic model enforces when it derives
them from a field's constraints."""

_NOT_DESCRIBED = rule_message("not described")


@dataclass(frozen=True)
class StrictViolation:
    """One place where a schema breaks a strict-mode rule."""

    path: str
    """JSON Pointer (``#/properties/count/maximum``) to the offending keyword."""

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


def make_strict(
    schema: Any, *, describe: bool = False
) -> tuple[Any, list[StrictViolation]]:
    """Return the schema to serve for a strict tool, and every rule it breaks.

    The result is a copy (the caller's schema is never changed) in which each
    object that does not set ``additionalProperties`` gets
    ``additionalProperties: false``, closed over every property name declared
    for the instances it meets: its own ``properties`` plus those of the
    ``anyOf``/``oneOf``/``allOf`` branches, ``$ref`` targets,
    ``if``/``then``/``else`` and ``dependentSchemas`` applied with it, and
    the names its ``required`` and ``dependentRequired`` speak of (a name it
    lacks is added as ``{}``). So an input that is valid against the
    author's schema and uses only declared names is valid against the served
    one. Objects evaluated negated (``not``, an ``if`` condition) whose
    enclosing object is not closed, objects with ``unevaluatedProperties``
    and objects other than the root with no declared names are left as they
    are and reported, like every other rule. Only what the root can reach is
    checked and served: a ``$defs`` entry no reference reaches is dropped.

    With ``describe``, the constraints strict mode cannot compile but a
    validator can check (``DESCRIBED_KEYWORDS``) move into the description
    of the schema that held them instead of being reported; see
    ``strict_schemas``, which also returns the schema to validate with.
    """
    forms = strict_schemas(schema, describe=describe)
    return forms.served, forms.violations


@dataclass(frozen=True)
class StrictSchemas:
    """The two forms of a strict tool's input schema."""

    served: Any
    """What is listed, and compiled into the grammar: closed, and with the
    constraints strict mode cannot compile moved into descriptions."""

    enforced: Any
    """What every call is validated against: the author's schema with the
    same closing and the same pruned ``$defs``, every constraint kept, and
    ECMA-262 patterns written for Python's ``re`` (``python_pattern``)."""

    violations: list[StrictViolation]
    """Every rule ``served`` still breaks; the tool is refused if any."""


def strict_schemas(schema: Any, *, describe: bool = True) -> StrictSchemas:
    """The served and enforced forms of a strict tool's ``schema``.

    ``describe`` is for schemas validated with ``enforced`` (JSON Schema
    dicts and Python types): what strict mode cannot express there is
    served in words, and still checked on every call. A pydantic model's
    schema is described by the model's own path, for what the model
    enforces, and is not described again here.

    The schema is copied through JSON (``as_json``), its graph built once
    and handed to ``transform``; a caller that has both already (the
    definition-time pass of ``schema_checks.served_input_schema``) calls
    ``transform`` itself.
    """
    document, problems = as_json(schema)
    if problems:
        return StrictSchemas(schema, schema, problems)
    return transform(document, SchemaGraph.build(document), describe=describe)


def transform(document: Any, graph: SchemaGraph, *, describe: bool) -> StrictSchemas:
    """``strict_schemas`` of a plain-JSON ``document`` whose graph is ``graph``.

    ``document`` is the caller's own copy (``as_json``) and is changed in
    place into the served form. The graph is the only one built: pruned of
    the ``$defs`` entries no reference reaches, it indexes the closing, the
    descriptions and the rules.
    """
    root_problems = root_violations(document)
    reached = _reached(graph)
    graph = _drop_unreached_definitions(document, graph, reached)
    index = _close_objects(document, graph)
    enforced = python_patterns(document, plain=True)
    violations = root_problems
    if describe and not index.graph.too_complex:
        widening = {path for path in index.graph.nodes if not reached.get(path, False)}
        for node in index.nodes:
            if isinstance(node.value, dict) and node.path not in widening:
                describe_constraints(node.value)
        pointers = {
            _pointer((*path, key)) for path in widening for key in DESCRIBED_KEYWORDS
        }
        violations += [
            StrictViolation(violation.path, violation.rule + _NOT_DESCRIBED)
            if violation.path in pointers
            else violation
            for violation in _violations(index)
        ]
    else:
        violations += _violations(index)
    return StrictSchemas(document, enforced, violations)


# --- what the root reaches ----------------------------------------------------

# Subschemas where accepting more (a constraint moved into words) makes the
# schema holding them accept less: a negation, an if condition, and a oneOf
# branch (two branches that both match fail oneOf).
_NARROWING = frozenset({"not", "if", "oneOf"})


def _reached(graph: SchemaGraph) -> dict[Path, bool]:
    """Every position validation can reach from the root, without entering
    ``$defs`` except through a reference, with whether it is only reached
    where widening it is safe (never under ``not``, ``if`` or ``oneOf``)."""
    nodes = graph.nodes
    reached: dict[Path, bool] = {}
    stack: list[tuple[Path, bool]] = [((), True)]
    while stack:
        path, safe = stack.pop()
        before = reached.get(path)
        if before is not None and (before is False or before == safe):
            continue
        reached[path] = safe if before is None else False
        safe = reached[path]
        value = nodes.get(path)
        if not isinstance(value, dict):
            continue
        for target in graph.targets.get(path, ()):
            stack.append((target, safe))
        for child, keyword, _ in subschemas(value, path):
            if keyword not in _DEFINITIONS:
                stack.append((child, safe and keyword not in _NARROWING))
    return reached


def _drop_unreached_definitions(
    document: Any, graph: SchemaGraph, reached: dict[Path, bool]
) -> SchemaGraph:
    """Remove each ``$defs``/``definitions`` entry no reference reaches, and
    return ``graph`` without them.

    Nothing in them can apply to an input, so they are neither checked nor
    served. A schema whose references could not all be followed (too many
    positions, ``$dynamicRef``) is left whole.
    """
    if not isinstance(document, dict):
        return graph
    if graph.too_complex or any(
        reference.keyword != "$ref" for reference in graph.references
    ):
        return graph
    kept = {path[:length] for path in reached for length in range(len(path) + 1)}
    entries = [
        path for path in graph.nodes if len(path) >= 2 and path[-2] in _DEFINITIONS
    ]
    dropped = {path for path in entries if path not in kept}
    # Deepest first, so an entry inside a dropped one is gone with it.
    for path in sorted(dropped, key=len, reverse=True):
        holder: Any = document
        for key in path[:-2]:
            holder = holder[key]
        definitions = holder.get(path[-2])
        if isinstance(definitions, dict):
            definitions.pop(path[-1], None)
            if not definitions:
                del holder[path[-2]]
    return graph.without(dropped) if dropped else graph


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


# --- moving constraints into descriptions -------------------------------------------


def unexpressible(keyword: str, value: Any) -> bool:
    """Whether strict mode refuses ``keyword`` with ``value``, and the SDK
    can move it into the description (a ``Served.DESCRIBED`` rule)."""
    return any(
        True
        for rule in _KEYWORD_RULES.get(keyword, ())
        if rule.served_as is Served.DESCRIBED and rule.check is not None
        for _ in rule.check(value)
    )


def describe_constraints(
    schema: dict[str, Any], keywords: Collection[str] | None = None
) -> dict[str, Any]:
    """Move what strict mode cannot compile from ``schema`` into its description.

    Each of ``DESCRIBED_KEYWORDS`` (only those in ``keywords``, if given)
    that strict mode refuses with its value is removed from ``schema`` and
    written after a blank line at the end of its ``description`` as
    ``{minimum: 1, maximum: 50}``, the form the Anthropic Python SDK's
    ``transform_schema`` uses. ``uniqueItems: false`` says nothing and is
    just removed. Returns what was moved.
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
    words = {
        key: value
        for key, value in moved.items()
        if not (key == "uniqueItems" and value is False)
    }
    if words:
        text = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in words.items()) + "}"
        description = schema.get("description")
        schema["description"] = (
            f"{description}\n\n{text}"
            if isinstance(description, str) and description
            else text
        )
    return moved


def find_strict_violations(schema: Any) -> list[StrictViolation]:
    """List every place where ``schema`` breaks one of strict mode's rules.

    The schema is checked as it stands: an object without
    ``additionalProperties: false`` is a violation here (``make_strict``
    closes the ones it safely can before checking).
    """
    document, problems = as_json(schema)
    if problems:
        return problems
    return _violations(_SchemaIndex(document))


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
        raise ValueError(format_limits("this query's SDK MCP servers", exceeded))


def format_violations(tool_name: str, violations: list[StrictViolation]) -> str:
    """The message of the error that refuses a strict tool's schema."""
    count = len(violations)
    return (
        f"Tool '{tool_name}' has strict=True but its input schema breaks strict "
        f"mode's rules ({count} violation{'s' if count != 1 else ''}):\n"
        + "\n".join(f"  - {violation}" for violation in violations)
    )


def format_limits(servers: str, exceeded: list[StrictLimitExceeded]) -> str:
    """The message of the error that refuses servers whose tools go over a cap."""
    return (
        f"The strict tools of {servers} go over strict mode's per-request "
        "limits:\n" + "\n".join(f"  - {limit}" for limit in exceeded)
    )


# --- walking a schema -------------------------------------------------------


class _Node(NamedTuple):
    """A value in a schema position, with where it is."""

    path: Path
    value: Any
    closable: bool
    """Whether the SDK may close an object here (see ``_close_objects``)."""


def as_json(schema: Any) -> tuple[Any, list[StrictViolation]]:
    """Copy ``schema`` through JSON, as the wire will see it.

    This makes the copy the normalization works on, and turns everything a
    walk could trip over into reported problems: nesting deeper than
    ``MAX_SCHEMA_DEPTH`` (or a container that contains itself), NaN and
    infinities (which would go on the wire as ``null``), and values JSON
    cannot carry.
    """
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
        return json.loads(json.dumps(schema, allow_nan=False)), []
    except (TypeError, ValueError, RecursionError) as e:
        return None, [StrictViolation("#", rule_message("not JSON", error=e))]


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


# In-place applicators: subschemas evaluated against the same instance as the
# schema holding them, with whether they are evaluated negated (a closed
# object there can let more through, not less).
_IN_PLACE_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_IN_PLACE_MAPS = frozenset({"dependentSchemas", "dependencies"})
_IN_PLACE = {"then": False, "else": False, "if": True, "not": True}
_DEFINITIONS = frozenset({"$defs", "definitions"})


class _SchemaIndex:
    """The schema positions of a document, its references and its groups.

    References are resolved as jsonschema resolves them (``SchemaGraph``:
    embedded ``$id`` resources, ``$anchor`` names, base URIs). A *group* is
    every schema applied to one instance: a schema at an instance position
    (the root, a property, ``items``, ...) and everything reached from it
    through ``allOf``/``anyOf``/``oneOf``, ``$ref``, ``if``/``then``/``else``,
    ``dependentSchemas`` and ``not``. The property names declared anywhere
    in a group (or in groups that share a schema with it) are the names an
    object closed there must keep.
    """

    def __init__(self, document: Any, graph: SchemaGraph | None = None):
        self.document = document
        self.graph = SchemaGraph.build(document) if graph is None else graph
        nodes = self.graph.nodes
        ordered = [node.path for node in _walk(document) if node.path in nodes]
        placed = set(ordered)
        rest = [path for path in nodes if path not in placed]
        self.paths: list[Path] = ordered + rest
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


def _pointer(path: Path) -> str:
    return pointer(path)


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
    one did, and the served schema accepts exactly what the author's schema
    accepts among those inputs; inputs with other names are refused. Objects
    evaluated negated (under ``not``, or as an ``if`` condition) are closed
    only when the object they apply to is closed too, by the SDK or by the
    author: otherwise closing them would let more through.
    """
    index = _SchemaIndex(document, graph)
    if index.graph.too_complex:
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


# --- the rules ----------------------------------------------------------------


def _violations(index: _SchemaIndex) -> list[StrictViolation]:
    found: dict[Path, list[StrictViolation]] = {}
    for node in index.nodes:
        found[node.path] = list(_node_violations(node, index))
    if index.graph.too_complex:
        found.setdefault((), []).insert(
            0,
            StrictViolation(
                "#", rule_message("too complex", limit=MAX_SCHEMA_POSITIONS)
            ),
        )
    reported: set[str] = set()
    for reference in index.graph.references:
        if reference.keyword != "$ref" or reference.problem is None:
            continue
        if reference.at not in reported:
            reported.add(reference.at)
            found.setdefault(reference.path, []).insert(0, _ref_violation(reference))
    for reference in index.graph.recursive_references():
        if reference.keyword != "$ref" or reference.at in reported:
            continue
        reported.add(reference.at)
        found.setdefault(reference.path, []).insert(
            0,
            StrictViolation(
                reference.at, rule_message("recursive $ref", ref=reference.ref)
            ),
        )
    order = [node.path for node in index.nodes]
    placed = set(order)
    order += [path for path in found if path not in placed]
    return [violation for path in order for violation in found.get(path, [])]


def _ref_violation(reference: Reference) -> StrictViolation:
    name = {"not a string": "$ref not a string", "external": "external $ref"}.get(
        str(reference.problem), "$ref to nowhere"
    )
    return StrictViolation(reference.at, rule_message(name, ref=reference.ref))


def _node_violations(node: _Node, index: _SchemaIndex) -> Iterator[StrictViolation]:
    schema = node.value
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        yield StrictViolation(
            _pointer(node.path),
            rule_message("not a schema", found=type(schema).__name__),
        )
        return

    for key, value in schema.items():
        for rule in _KEYWORD_RULES.get(key, ()):
            yield from rule.findings(value, node.path)

    if (
        _is_object_schema(schema)
        and "additionalProperties" not in schema
        and "unevaluatedProperties" not in schema
    ):
        if isinstance(schema.get("properties"), dict) or index.names_for(node.path):
            message = rule_message("not closed")
        else:
            message = rule_message("no properties")
        yield StrictViolation(_pointer(node.path), message)


def _is_zero_or_one(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value in (0, 1)
    )


def _unsupported_regex_constructs(pattern: str) -> list[tuple[str, str]]:
    """Backreferences, lookaround and word boundaries in an ECMA-262 pattern.

    Each kind is listed once, with its first occurrence. Inside a character
    class ``\\b`` is a backspace and none of these constructs exist, so
    classes are skipped.
    """
    found: dict[str, str] = {}
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape = pattern[i : i + 2]
            if not in_class:
                if escape[1:] in tuple("123456789"):
                    found.setdefault("a backreference", escape)
                elif pattern.startswith("\\k<", i):
                    found.setdefault("a backreference", pattern[i : i + 3])
                elif escape in ("\\b", "\\B"):
                    found.setdefault("a word boundary", escape)
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif pattern.startswith("(?=", i) or pattern.startswith("(?!", i):
            found.setdefault("a lookahead", pattern[i : i + 3])
        elif pattern.startswith("(?<=", i) or pattern.startswith("(?<!", i):
            found.setdefault("a lookbehind", pattern[i : i + 4])
        elif pattern.startswith("(?P=", i):
            found.setdefault("a backreference", pattern[i : i + 4])
        i += 1
    return list(found.items())


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


def strict_input_schema(
    tool_name: str, schema: dict[str, Any], *, describe: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The schema a ``strict=True`` tool is served with, and the one it enforces.

    Held to strict mode's rules on the SDK's side, because the API answers a
    strict schema it cannot compile with a 400 on some later turn. What is
    served is the normalized copy (with ``describe``, the constraints strict
    mode cannot compile moved into descriptions); what calls and examples
    are validated against is the same copy with every constraint kept
    (``strict_schemas``).
    """
    forms = strict_schemas(schema, describe=describe)
    if forms.violations:
        raise ValueError(format_violations(tool_name, forms.violations))
    served: dict[str, Any] = forms.served
    enforced: dict[str, Any] = forms.enforced
    return served, enforced


_ENFORCED_ATTRIBUTE = "_strict_enforced_input_schema"


def remember_enforced(tool_def: Any, served: Any, enforced: Any) -> None:
    """Keep, on ``tool_def``, the schema its calls are validated against."""
    object.__setattr__(tool_def, _ENFORCED_ATTRIBUTE, (served, enforced))


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
        enforced: dict[str, Any] = remembered[1]
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
        raise ValueError(format_limits(f"SDK MCP server '{server_name}'", exceeded))
    remember_strict_tools(server, strict_tools)
