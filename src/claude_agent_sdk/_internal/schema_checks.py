"""Checks every SDK MCP tool's schemas get when the tool is defined.

Upstream builds a fresh ``jsonschema`` validator for every ``tools/call``
with jsonschema's default reference registry, which fetches any ``$ref`` it
does not find in the schema over the network (``urlopen``, blocking, inside
the event loop) on every call. Schemas the validator cannot compile, or that
fail their metaschema, make every call fail. All of that is known when the
tool is defined, so it is checked there:

- ``check_input_schema`` reports a reference that resolves outside the
  schema document (``http:``, ``https:``, ``file:``, ``urn:``, a relative
  URI against no base: anything not found in the document itself, embedded
  ``$id`` resources and ``$anchor`` names included), which the SDK never
  fetches, a schema nested deeper than ``MAX_SCHEMA_DEPTH`` (jsonschema
  validates recursively and would raise ``RecursionError`` on every call),
  and a schema that fails its metaschema, a ``pattern`` or ``patternProperties`` name
  Python's ``re`` cannot compile (jsonschema matches with ``re.search``), a
  local ``$ref`` that points nowhere, or a NaN/infinity (which goes on the
  wire as ``null``) is refused for a tool that opted in to checks
  (``strict=True`` or ``input_examples``) and reported with a
  ``UserWarning`` for any other tool, which upstream serves as it is.
- ``SchemaGraph`` resolves every reference of a schema the way jsonschema
  does (the ``referencing`` library, the same dialect rules, base URIs from
  ``$id``), without retrieving anything; strict mode's checks use it too.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema

if sys.version_info >= (3, 11):
    from typing import is_typeddict
else:  # 3.10's does not recognize typing_extensions.TypedDict
    from typing_extensions import is_typeddict

MAX_SCHEMA_DEPTH = 128
"""Deepest JSON nesting (objects and arrays) accepted in a tool's schema.

jsonschema checks a schema against its metaschema recursively, spending
several Python frames per level; at the default recursion limit it fails
between 160 and 200 levels. 128 leaves room for the caller's own stack.
"""

MAX_SCHEMA_POSITIONS = 100_000
"""Most (schema position, base URI) pairs the reference walk will visit."""

Path = tuple[str | int, ...]

# Where a schema keeps its subschemas, in every dialect jsonschema knows.
# Values under ``enum``, ``const``, ``default`` or ``examples`` are data.
_SUBSCHEMA_MAPS = frozenset(
    {
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependencies",
    }
)
_SUBSCHEMA_LISTS = frozenset({"prefixItems", "anyOf", "oneOf", "allOf"})
_SUBSCHEMAS = frozenset(
    {
        "additionalProperties",
        "items",
        "additionalItems",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


class SchemaCheckError(ValueError):
    """A tool's schema refused when the tool is defined."""


def pointer(path: Path) -> str:
    """``path`` as a JSON Pointer in URI fragment form (``#/properties/a``)."""
    return "#" + "".join(
        "/" + str(token).replace("~", "~0").replace("/", "~1") for token in path
    )


def subschemas(schema: dict[str, Any], path: Path) -> Iterator[tuple[Path, str, Any]]:
    """The direct subschemas of ``schema``: path, keyword, value."""
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for name, subschema in value.items():
                # draft 7 "dependencies" also maps names to lists of names
                if not (key == "dependencies" and isinstance(subschema, list)):
                    yield (*path, key, name), key, subschema
        elif (key in _SUBSCHEMA_LISTS or key == "items") and isinstance(value, list):
            for i, subschema in enumerate(value):
                yield (*path, key, i), key, subschema
        elif key in _SUBSCHEMAS:
            yield (*path, key), key, value


# --- the shape of the document ------------------------------------------------


@dataclass(frozen=True)
class ShapeProblem:
    path: Path
    kind: str  # "too deep" or "not finite"
    value: Any = None


def shape_problems(document: Any, limit: int = MAX_SCHEMA_DEPTH) -> list[ShapeProblem]:
    """Nesting past ``limit`` (the first place) and every non-finite number.

    Iterative, so it is safe on any depth; a container that contains itself
    is reported as too deep.
    """
    problems: list[ShapeProblem] = []
    stack: list[tuple[Path, Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(ShapeProblem(path, "not finite", value))
        elif isinstance(value, dict | list):
            if len(path) >= limit:
                return [ShapeProblem(path, "too deep")]
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((*path, key), item) for key, item in reversed(list(items)))
    return problems


def depth_message(where: str) -> str:
    return (
        f"{where} nests deeper than {MAX_SCHEMA_DEPTH} levels (or contains "
        "itself); jsonschema checks schemas recursively and would fail every "
        "call with RecursionError. Flatten it, or move shared parts into "
        "$defs"
    )


# --- resolving references the way jsonschema does -----------------------------


class _RetrievalRefusedError(LookupError):
    pass


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    raise _RetrievalRefusedError(f"the SDK never retrieves schemas ({uri!r})")


_NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry(  # type: ignore[call-arg]
    retrieve=_refuse_retrieval
)


def _specification(schema: Any) -> referencing.Specification[Any]:
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(dialect, str):
        return referencing.jsonschema.DRAFT202012
    return referencing.jsonschema.specification_with(
        dialect, default=referencing.jsonschema.DRAFT202012
    )


@dataclass(frozen=True)
class Reference:
    """One ``$ref`` (or ``$dynamicRef``, ``$recursiveRef``) of a schema."""

    path: Path
    """Where the schema holding it is."""
    keyword: str
    ref: Any
    base_uri: str
    target: Path | None
    """Where it resolves to in the document, or None."""
    problem: str | None
    """None, "external", "nowhere" or "not a string"."""

    @property
    def at(self) -> str:
        return pointer((*self.path, self.keyword))


Key = tuple[Path, str]
# (path, value, resolver, whether the resolver already accounts for value's
#  $id, the key of the position it was reached from, the reference followed)
_Step = tuple[Path, Any, Any, bool, Key | None, "Reference | None"]


@dataclass
class SchemaGraph:
    """Every schema position of a document that validation can reach.

    Positions are walked from the root and from every reference target, each
    with the base URI jsonschema would have there (``$id`` changes it, and a
    reference carries the base of what it resolves to). ``edges`` holds both
    kinds of step: into a subschema, and from a reference to its target; a
    cycle through it is a recursive schema.
    """

    document: Any
    nodes: dict[Path, Any] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    edges: dict[Key, list[tuple[Key, Reference | None]]] = field(default_factory=dict)
    targets: dict[Path, set[Path]] = field(default_factory=dict)
    too_complex: bool = False

    @classmethod
    def build(cls, document: Any) -> SchemaGraph:
        graph = cls(document)
        graph._walk()
        return graph

    def _walk(self) -> None:
        document = self.document
        if not isinstance(document, dict):  # no references to resolve
            self.nodes[()] = document
            self.edges[((), "")] = []
            return
        specification = _specification(document)
        locations = _locations(document)
        root = specification.create_resource(document)
        root_uri = root.id() or ""
        registry = _NO_RETRIEVAL.with_resource(root_uri, root)
        with contextlib.suppress(Exception):  # malformed; lookups report it
            registry = registry.crawl()
        resolver = registry.resolver(base_uri=root_uri)
        stack: list[_Step] = [((), document, resolver, True, None, None)]
        seen: set[Key] = set()
        while stack:
            path, value, resolver, entered, parent, via = stack.pop()
            if isinstance(value, dict) and not entered:
                with contextlib.suppress(Exception):
                    resolver = resolver.in_subresource(
                        specification.create_resource(value)
                    )
            key: Key = (path, str(getattr(resolver, "_base_uri", "")))
            if parent is not None:
                self.edges.setdefault(parent, []).append((key, via))
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_SCHEMA_POSITIONS:
                self.too_complex = True
                return
            self.nodes.setdefault(path, value)
            self.edges.setdefault(key, [])
            if not isinstance(value, dict):
                continue
            children: list[_Step] = []
            for keyword in REFERENCE_KEYWORDS:
                if keyword not in value:
                    continue
                reference, resolved = _resolve(
                    path, keyword, value[keyword], resolver, locations
                )
                self.references.append(reference)
                if reference.target is not None and resolved is not None:
                    self.targets.setdefault(path, set()).add(reference.target)
                    children.append(
                        (
                            reference.target,
                            resolved.contents,
                            resolved.resolver,
                            True,
                            key,
                            reference,
                        )
                    )
            for child_path, _, child in subschemas(value, path):
                children.append((child_path, child, resolver, False, key, None))
            stack.extend(reversed(children))

    def recursive_references(self) -> list[Reference]:
        """The references that close a cycle: each makes the schema recursive."""
        exploring, done = 1, 2
        state: dict[Key, int] = {}
        found: dict[tuple[Path, str], Reference] = {}
        roots = [key for key in self.edges if key[0] == ()][:1]
        for root in roots:
            state[root] = exploring
            stack = [(root, iter(self.edges.get(root, ())))]
            while stack:
                _, steps = stack[-1]
                for child, via in steps:
                    child_state = state.get(child)
                    if child_state == exploring and via is not None:
                        found.setdefault((via.path, via.keyword), via)
                    elif child_state is None:
                        state[child] = exploring
                        stack.append((child, iter(self.edges.get(child, ()))))
                        break
                else:
                    key, _ = stack.pop()
                    state[key] = done
        return list(found.values())


def _locations(document: Any) -> dict[int, Path]:
    """Where each container of ``document`` is (the first place, by identity)."""
    where: dict[int, Path] = {}
    stack: list[tuple[Path, Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if not isinstance(value, dict | list) or id(value) in where:
            continue
        where[id(value)] = path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend(((*path, key), item) for key, item in items)
    return where


def _resolve(
    path: Path, keyword: str, ref: Any, resolver: Any, locations: dict[int, Path]
) -> tuple[Reference, Any]:
    base = str(getattr(resolver, "_base_uri", ""))

    def reference(target: Path | None, problem: str | None) -> Reference:
        return Reference(path, keyword, ref, base, target, problem)

    if not isinstance(ref, str):
        return reference(None, "not a string"), None
    try:
        resolved = resolver.lookup(ref)
    except referencing.exceptions.Unresolvable as e:
        external = isinstance(e.__cause__, referencing.exceptions.Unretrievable)
        if not external and not ref.startswith("#"):
            uri, _ = urldefrag(urljoin(base, ref))
            external = uri not in _known_uris(resolver)
        return reference(None, "external" if external else "nowhere"), None
    except Exception:  # a URI urljoin cannot parse, a malformed anchor, ...
        return reference(
            None, "external" if not ref.startswith("#") else "nowhere"
        ), None
    contents = resolved.contents
    if isinstance(contents, dict | list):
        target = locations.get(id(contents))
        if target is None:  # not part of this document
            return reference(None, "external"), None
        return reference(target, None), resolved
    if isinstance(contents, bool):
        return reference(None, None), None
    return reference(None, "nowhere"), None


def _known_uris(resolver: Any) -> set[str]:
    registry = getattr(resolver, "_registry", None)
    try:
        return set(registry) if registry is not None else set()
    except Exception:
        return set()


# --- the checks -----------------------------------------------------------------


@dataclass(frozen=True)
class SchemaProblem:
    at: str
    """JSON Pointer of the offending keyword."""
    keyword: str
    message: str
    hard: bool
    """Refused for every tool (external reference), not only opted-in ones."""


def find_schema_problems(schema: Any, metaschema: bool = True) -> list[SchemaProblem]:
    """Every problem ``check_input_schema`` acts on, except nesting depth.

    ``metaschema=False`` skips the metaschema check (the dearest part, about
    a millisecond) for schemas the SDK generated itself from Python types.
    """
    problems: list[SchemaProblem] = []
    for shape in shape_problems(schema):
        if shape.kind == "too deep":
            raise RecursionError  # callers report nesting on their own terms
        if shape.kind == "not finite":
            problems.append(
                SchemaProblem(
                    pointer(shape.path),
                    str(shape.path[-1]) if shape.path else "",
                    f"{shape.value!r} is not a JSON number (it would be sent as null)",
                    hard=False,
                )
            )
    graph = SchemaGraph.build(schema)
    if graph.too_complex:
        problems.append(
            SchemaProblem(
                "#",
                "$ref",
                f"its references reach more than {MAX_SCHEMA_POSITIONS} schema "
                "positions",
                hard=True,
            )
        )
    seen: set[str] = set()
    for reference in graph.references:
        if reference.problem is None or reference.at in seen:
            continue
        seen.add(reference.at)
        if reference.problem == "external":
            problems.append(
                SchemaProblem(
                    reference.at,
                    reference.keyword,
                    f"{reference.keyword} {reference.ref!r} resolves outside the "
                    "schema; the SDK never fetches schemas (jsonschema would, on "
                    "every call). Copy the referenced schema into $defs and "
                    "refer to it as '#/$defs/...'",
                    hard=True,
                )
            )
        elif reference.problem == "nowhere":
            problems.append(
                SchemaProblem(
                    reference.at,
                    reference.keyword,
                    f"{reference.keyword} {reference.ref!r} points to nothing in "
                    "the schema; every call that reaches it would fail",
                    hard=False,
                )
            )
    for path, value in graph.nodes.items():
        if not isinstance(value, dict):
            continue
        if "pattern" in value:
            problem = _regex_problem(value["pattern"])
            if problem is not None:
                problems.append(
                    SchemaProblem(
                        pointer((*path, "pattern")),
                        "pattern",
                        f"pattern {value['pattern']!r} {problem}",
                        hard=False,
                    )
                )
        names = value.get("patternProperties")
        if isinstance(names, dict):
            for name in names:
                problem = _regex_problem(name)
                if problem is not None:
                    problems.append(
                        SchemaProblem(
                            pointer((*path, "patternProperties", name)),
                            "patternProperties",
                            f"patternProperties name {name!r} {problem}",
                            hard=False,
                        )
                    )
    if metaschema and not any(
        p.keyword in ("pattern", "patternProperties") for p in problems
    ):
        problems.extend(_metaschema_problems(schema))
    return problems


# Schemas known to pass their metaschema, by content: a tool is checked when
# it is defined and again when its server is built, and one schema object is
# often shared by several tools. Bounded, so it cannot grow without limit.
_VALID_SCHEMAS: dict[str, None] = {}
_VALID_SCHEMAS_MAX = 4096
_META_VALIDATORS: dict[type[Any], Any] = {}
# Schemas check_input_schema found nothing wrong with, by content.
_CLEAN_SCHEMAS: dict[tuple[str, bool], None] = {}


def _regex_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str):
        return None  # the metaschema check reports it
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        return (
            f"is not a regular expression Python's re can compile ({e}); "
            "jsonschema matches patterns with re.search, so every call it "
            "applies to would fail"
        )
    return None


def _metaschema_problems(schema: Any) -> list[SchemaProblem]:
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        key = validator_class.__name__ + json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _VALID_SCHEMAS:
        return []
    try:
        # What validator_class.check_schema does, with the metaschema's own
        # validator built once per dialect instead of on every check.
        meta = _META_VALIDATORS.get(validator_class)
        if meta is None:
            meta = _META_VALIDATORS[validator_class] = validator_class(
                validator_class.META_SCHEMA,
                format_checker=validator_class.FORMAT_CHECKER,
            )
        error = jsonschema.exceptions.best_match(meta.iter_errors(schema))
        if error is not None:
            raise jsonschema.SchemaError.create_from(error)
        if key is not None:
            if len(_VALID_SCHEMAS) >= _VALID_SCHEMAS_MAX:
                _VALID_SCHEMAS.clear()
            _VALID_SCHEMAS[key] = None
    except jsonschema.SchemaError as e:
        path = tuple(e.path)
        keyword = str(path[-1]) if path else str(e.validator)
        return [
            SchemaProblem(
                pointer(path),
                keyword,
                f"not a valid {validator_class.__name__.removesuffix('Validator')} "
                f"schema: {e.message} (metaschema keyword {e.validator!r})",
                hard=False,
            )
        ]
    return []


def check_input_schema(
    tool_name: str,
    schema: dict[str, Any],
    *,
    opted_in: bool,
    field: str = "input_schema",
    written: bool = True,
) -> None:
    """Refuse or warn about what would make a tool misbehave on every call.

    When ``opted_in`` (``strict=True`` or ``input_examples``), raises
    ``ValueError`` naming the tool, ``field`` and the JSON Pointer for a
    reference that resolves outside the schema, nesting deeper than
    ``MAX_SCHEMA_DEPTH``, a metaschema failure, a pattern Python's ``re``
    cannot compile, a local reference to nothing or a non-finite number. For
    other tools each kind is one ``UserWarning`` naming the tool and listing
    where, and the tool is served as upstream serves it.
    """
    where = f"Tool '{tool_name}': {field}"
    if any(p.kind == "too deep" for p in shape_problems(schema)):
        _too_deep(where, opted_in)
        return
    try:
        dumped: str | None = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        dumped = None  # not plain JSON: checked in full, never cached
    if dumped is not None and (dumped, written) in _CLEAN_SCHEMAS:
        return  # checked before (at definition, say) and found clean
    try:
        problems = find_schema_problems(schema, metaschema=written)
    except RecursionError:
        _too_deep(where, opted_in)
        return
    if not problems and dumped is not None:
        if len(_CLEAN_SCHEMAS) >= _VALID_SCHEMAS_MAX:
            _CLEAN_SCHEMAS.clear()
        _CLEAN_SCHEMAS[(dumped, written)] = None
    hard = [p for p in problems if p.hard]
    soft = [p for p in problems if not p.hard]
    if hard and opted_in:
        raise SchemaCheckError(
            f"{where} refers outside itself:\n"
            + "\n".join(f"  - {p.at}: {p.message}" for p in hard)
        )
    if soft and opted_in:
        raise SchemaCheckError(
            f"{where} would fail every call it applies to, which a tool with "
            "strict=True or input_examples may not "
            f"({len(soft)} problem{'s' if len(soft) != 1 else ''}):\n"
            + "\n".join(f"  - {p.at} ({p.keyword}): {p.message}" for p in soft)
        )
    if hard:
        warnings.warn(
            f"{where} refers outside itself, and the SDK never fetches schemas: "
            "the values those references govern are not checked "
            "(refused for tools with strict=True or input_examples):\n"
            + "\n".join(f"  - {p.at}: {p.message}" for p in hard),
            UserWarning,
            stacklevel=4,
        )
    if soft:
        warnings.warn(
            f"{where} would fail every call it applies to; the tool is served "
            "as written (refused for tools with strict=True or input_examples):\n"
            + "\n".join(f"  - {p.at} ({p.keyword}): {p.message}" for p in soft),
            UserWarning,
            stacklevel=4,
        )


def _too_deep(where: str, opted_in: bool) -> None:
    if opted_in:
        raise SchemaCheckError(depth_message(where)) from None
    warnings.warn(
        depth_message(where) + ". It is served as written, though mcp cannot "
        "serialize a schema this deep either: this server's tools/list fails "
        "(mcp 2.x) or the server stops (mcp 1.x). Refused for tools with "
        "strict=True or input_examples",
        UserWarning,
        stacklevel=5,
    )


def opted_in(tool_def: Any) -> bool:
    """Whether ``tool_def`` asked for checks (``strict=True`` or examples)."""
    return tool_def.strict is True or tool_def.input_examples is not None


def served_input_schema(tool_def: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, the input schema built for ``tool_def``, once checked.

    Run once per tool: when it is defined for a tool that opted in to
    checks (so a mistake is reported where it is written), else when its
    server is built.
    """
    # A schema built from Python types is valid by construction; only one
    # the author wrote as JSON needs its (costly) metaschema check.
    declared = tool_def.input_schema
    written = isinstance(declared, dict) and all(
        isinstance(value, (str, int, float, bool, dict, list)) or value is None
        for value in declared.values()
    )
    if tool_def.strict is not True:
        check_input_schema(
            tool_def.name, schema, opted_in=opted_in(tool_def), written=written
        )
        return schema
    # Imported here: strict_schema builds on this module.
    from .strict_schema import (
        format_violations,
        python_patterns,
        remember_enforced,
        root_violations,
        strict_input_schema,
    )

    if written and "type" in declared:
        # A JSON Schema whose root is not an object (read as shorthand
        # otherwise, as upstream reads it) cannot be a strict tool's input.
        problems = root_violations(declared)
        if problems:
            raise ValueError(format_violations(tool_def.name, problems))

    # Checked with its patterns as Python's re will match them (a strict
    # schema's ECMA-262 named groups are translated, not refused).
    check_input_schema(
        tool_def.name, python_patterns(schema), opted_in=True, written=written
    )
    # A JSON Schema, written or built from a dict of types or a TypedDict,
    # is enforced by the SDK's validator, so what strict mode cannot express
    # can be served in words. (A pydantic model describes what it enforces
    # itself, and is validated by the model.)
    served, enforced = strict_input_schema(
        tool_def.name,
        schema,
        describe=isinstance(declared, dict) or is_typeddict(declared),
    )
    remember_enforced(tool_def, served, enforced)
    return served
