"""The graph of a JSON Schema document: its subschemas and its references.

Built once per schema (``SchemaGraph.of``) for the schema checks and strict
mode's transform; references resolve as jsonschema resolves them, never
fetched. How it is built: docs/internals.md.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

import referencing
import referencing.exceptions
import referencing.jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from ..definition.plain_schema import MAX_SCHEMA_DEPTH as MAX_SCHEMA_DEPTH
from ..definition.plain_schema import PLAIN_DIALECTS as PLAIN_DIALECTS


class _Unfetched(dict[str, Any]):
    """Stands in for a document outside the schema: any part of it accepts
    any value, as an empty schema does."""

    def __missing__(self, key: str) -> _Unfetched:
        return _Unfetched()


def _unfetched(uri: str) -> Resource[Any]:
    return DRAFT202012.create_resource(_Unfetched())


OFFLINE_REGISTRY: Registry[Any] = Registry(retrieve=_unfetched)  # type: ignore[call-arg]
"""A reference registry that never fetches a document: a reference to one
lands in a stand-in that accepts any value. The definition-time reference
walk (``schema_graph.SchemaGraph``) uses it, and reports a reference that
lands in a stand-in document as external."""

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
# What makes a reference resolve other than as a plain JSON Pointer.
_BASE_CHANGING = frozenset(
    {"$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$dynamicRef",
     "$recursiveRef", "$schema"}
)  # fmt: skip
_BASE_CHANGING_BELOW_ROOT = _BASE_CHANGING - {"$schema"}
_DRAFT_7 = "http://json-schema.org/draft-07/schema#"
LOCAL_POINTER = re.compile(r"#(/[^%]*)?\Z")


def follow(document: Any, ref: str) -> tuple[Path | None, Any]:
    """Where the local JSON Pointer ``ref`` (``#/$defs/a``) leads, and what
    is there; (None, None) when it leads nowhere."""
    path: list[str | int] = []
    value = document
    for token in ref[2:].split("/") if ref != "#" else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            path.append(token)
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            path.append(int(token))
            value = value[int(token)]
        else:
            return None, None
    return tuple(path), value


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
    if _plain_shape(document, limit):
        return []
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


def _plain_shape(document: Any, limit: int) -> bool:
    """Whether ``shape_problems`` has nothing to report: one walk that keeps
    depths, not paths (most schemas; the paths are built only to report)."""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if type(value) is float:
            if not math.isfinite(value):
                return False
        elif isinstance(value, dict | list):
            if depth >= limit:
                return False
            depth += 1
            items = value.values() if isinstance(value, dict) else value
            stack.extend([(item, depth) for item in items])
        elif isinstance(value, float) and not math.isfinite(value):
            return False  # a float subclass
    return True


def json_copy(schema: Any, limit: int | None = MAX_SCHEMA_DEPTH) -> Any:
    """``schema`` copied through JSON, as the wire will see it; None when it
    has a problem ``shape_problems`` reports (too deep, contains itself, NaN
    or an infinity) or a value JSON cannot carry. With ``limit=None`` the
    depth is left to the graph's walk (``SchemaGraph.too_deep``)."""
    try:
        text = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    document = json.loads(text)
    if limit is not None and _too_deep(document, 0, limit):
        return None
    return document


def _too_deep(value: Any, depth: int, limit: int | None = None) -> bool:
    """Whether plain JSON ``value``, at ``depth``, nests to ``limit``
    (``MAX_SCHEMA_DEPTH`` unless given)."""
    if limit is None:
        limit = MAX_SCHEMA_DEPTH
    stack: list[tuple[Any, int]] = [(value, depth)]
    while stack:
        value, depth = stack.pop()
        kind = type(value)
        if kind is dict:
            items: Any = value.values()
        elif kind is list:
            items = value
        else:
            continue
        if depth >= limit:
            return True
        depth += 1
        stack.extend([(item, depth) for item in items])
    return False


# --- resolving references the way jsonschema does -----------------------------


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
# (path, value, resolver, whether the resolver already accounts for value's $id)
_Step = tuple[Path, Any, Any, bool]
_DEFINITIONS = frozenset({"$defs", "definitions"})


@dataclass
class SchemaGraph:
    """Every schema position of a document that validation can reach.

    Positions are walked from the root and from every reference target, each
    with the base URI jsonschema would have there (``$id`` changes it, and a
    reference carries the base of what it resolves to). ``reached`` is what
    the root reaches without entering ``$defs``/``definitions`` except
    through a reference; the other entries (which nothing can apply to an
    input) are walked after it, unless the graph is built for strict mode's
    transform alone (``whole=False``), which never looks at them.
    """

    document: Any
    nodes: dict[Path, Any] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    targets: dict[Path, set[Path]] = field(default_factory=dict)
    reached: set[Path] = field(default_factory=set)
    too_complex: bool = False
    too_deep: bool = False
    """Whether the document nests ``MAX_SCHEMA_DEPTH`` levels or deeper
    (checked by the walk, so a copy made with ``json_copy(..., limit=None)``
    needs no walk of its own)."""

    @classmethod
    def build(cls, document: Any, *, whole: bool = True) -> SchemaGraph:
        """The graph of ``document``, a plain-JSON value (``of`` makes one)."""
        graph = cls(document)
        graph._walk(whole)
        return graph

    @classmethod
    def of(cls, schema: Any, *, whole: bool = True) -> SchemaGraph | None:
        """The graph of a JSON copy of ``schema`` (its ``document``); None
        when ``schema`` nests too deep, holds NaN or an infinity, or is not
        JSON (``shape_problems`` and the checks report those)."""
        document = json_copy(schema)
        return None if document is None else cls.build(document, whole=whole)

    def reached_only(self) -> SchemaGraph:
        """This graph without the positions ``reached`` leaves out."""
        if len(self.reached) == len(self.nodes):
            return self
        reached = self.reached
        return SchemaGraph(
            self.document,
            {p: v for p, v in self.nodes.items() if p in reached},
            [r for r in self.references if r.path in reached],
            {p: t for p, t in self.targets.items() if p in reached},
            reached,
            self.too_complex,
            self.too_deep,
        )

    def _walk(self, whole: bool) -> None:
        document = self.document
        if not isinstance(document, dict):  # no references to resolve
            self.nodes[()] = document
            self.reached = {()}
            return
        if self._walk_without_references(whole):
            return
        specification = _specification(document)
        locations = _locations(document)
        root = specification.create_resource(document)
        root_uri = root.id() or ""
        registry = OFFLINE_REGISTRY.with_resource(root_uri, root)
        with contextlib.suppress(Exception):  # malformed; lookups report it
            registry = registry.crawl()
        # Every URI the document itself names (Registry is a Mapping).
        known_uris = frozenset(registry)
        resolver = registry.resolver(base_uri=root_uri)
        stack: list[_Step] = [((), document, resolver, True)]
        seen: set[Key] = set()
        while stack:
            path, value, resolver, entered = stack.pop()
            if isinstance(value, dict) and not entered:
                with contextlib.suppress(Exception):
                    resolver = resolver.in_subresource(
                        specification.create_resource(value)
                    )
            key: Key = (path, str(getattr(resolver, "_base_uri", "")))
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_SCHEMA_POSITIONS:
                self.too_complex = True
                return
            self.nodes.setdefault(path, value)
            if not isinstance(value, dict):
                continue
            children: list[_Step] = []
            for keyword in REFERENCE_KEYWORDS:
                if keyword not in value:
                    continue
                reference, resolved = _resolve(
                    path, keyword, value[keyword], resolver, locations, known_uris
                )
                self.references.append(reference)
                if reference.target is not None and resolved is not None:
                    self.targets.setdefault(path, set()).add(reference.target)
                    children.append(
                        (reference.target, resolved.contents, resolved.resolver, True)
                    )
            for child_path, _, child in subschemas(value, path):
                children.append((child_path, child, resolver, False))
            stack.extend(reversed(children))
        self._find_reached()
        self.too_deep = not _plain_shape(document, MAX_SCHEMA_DEPTH)

    def _find_reached(self) -> None:
        """``reached``, for a graph walked with ``referencing``."""
        nodes = self.nodes
        reached = self.reached
        stack: list[Path] = [()]
        while stack:
            path = stack.pop()
            if path in reached or path not in nodes:
                continue
            reached.add(path)
            value = nodes[path]
            if not isinstance(value, dict):
                continue
            stack.extend(self.targets.get(path, ()))
            for child, keyword, _ in subschemas(value, path):
                if keyword not in _DEFINITIONS:
                    stack.append(child)

    def _walk_without_references(self, whole: bool) -> bool:
        """The walk of a document whose references are all local JSON
        Pointers (``#``, ``#/$defs/...``) and that changes no base URI (no
        ``$schema``, ``$id``, ``$anchor``, ``$dynamicRef``...): most schemas.
        Base URIs then change nothing, and a reference resolves as the
        pointer reads, so ``referencing`` is not needed. Returns False,
        having recorded nothing, at anything else (the full walk then runs).
        """
        document = self.document
        dialect = document.get("$schema", _DRAFT_7)
        if not (isinstance(dialect, str) and dialect in PLAIN_DIALECTS):
            return False  # draft 4's "id", or a dialect jsonschema may not know
        nodes: dict[Path, Any] = {}
        references: list[Reference] = []
        targets: dict[Path, set[Path]] = {}
        stack: list[tuple[Path, Any]] = [((), document)]
        later: list[tuple[Path, Any]] = []  # definitions, unless referenced
        reached: set[Path] = set()
        while True:
            while stack:
                path, value = stack.pop()
                if path in nodes:
                    continue
                nodes[path] = value
                if len(nodes) > MAX_SCHEMA_POSITIONS:
                    return False
                kind = type(value)
                if kind is not dict:
                    if kind is list and _too_deep(value, len(path)):
                        self.too_deep = True
                    continue
                if len(path) >= MAX_SCHEMA_DEPTH:
                    self.too_deep = True
                if not _BASE_CHANGING.isdisjoint(value) and (
                    path or not _BASE_CHANGING_BELOW_ROOT.isdisjoint(value)
                ):
                    return False
                children: list[tuple[Path, Any]] = []
                inner = len(path) + 1
                for key, child in value.items():
                    kind = type(child)
                    if inner >= MAX_SCHEMA_DEPTH and (kind is dict or kind is list):
                        self.too_deep = True
                    if key in _SUBSCHEMA_MAPS and kind is dict:
                        into = (
                            later if key in _DEFINITIONS and not reached else children
                        )
                        for name, sub in child.items():
                            if key == "dependencies" and type(sub) is list:
                                if _too_deep(sub, inner + 1):
                                    self.too_deep = True
                            else:
                                into.append(((*path, key, name), sub))
                    elif kind is list and (key in _SUBSCHEMA_LISTS or key == "items"):
                        children.extend(
                            ((*path, key, i), sub) for i, sub in enumerate(child)
                        )
                    elif key in _SUBSCHEMAS:
                        children.append(((*path, key), child))
                    elif key == "$ref":
                        if kind is not str or not LOCAL_POINTER.match(child):
                            return False
                        target, contents = follow(document, child)
                        if target is None:
                            problem: str | None = "nowhere"
                        elif isinstance(contents, dict | list):
                            problem = None
                            targets.setdefault(path, set()).add(target)
                            children.append((target, contents))
                        else:
                            target, problem = None, None
                        references.append(
                            Reference(path, "$ref", child, "", target, problem)
                        )
                    elif (kind is dict or kind is list) and _too_deep(child, inner):
                        self.too_deep = True
                stack.extend(reversed(children))
            if reached or not whole:
                break
            reached = set(nodes)
            stack = list(reversed(later))
        self.nodes, self.references, self.targets = nodes, references, targets
        self.reached = reached or set(nodes)
        return True


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
    path: Path,
    keyword: str,
    ref: Any,
    resolver: Any,
    locations: dict[int, Path],
    known_uris: frozenset[str],
) -> tuple[Reference, Any]:
    base = str(getattr(resolver, "_base_uri", ""))

    def reference(target: Path | None, problem: str | None) -> Reference:
        return Reference(path, keyword, ref, base, target, problem)

    if not isinstance(ref, str):
        return reference(None, "not a string"), None
    try:
        resolved = resolver.lookup(ref)
    except referencing.exceptions.Unresolvable:
        # The document a reference names is either one of this document's
        # resources (the reference then points nowhere in it) or one the
        # registry stands in for without fetching it (external).
        uri = base if ref.startswith("#") else urldefrag(urljoin(base, ref))[0]
        external = uri not in known_uris
        return reference(None, "external" if external else "nowhere"), None
    except Exception:  # a URI urljoin cannot parse, a malformed anchor, ...
        return reference(
            None, "external" if not ref.startswith("#") else "nowhere"
        ), None
    contents = resolved.contents
    if isinstance(contents, dict | list):
        target = locations.get(id(contents))
        if target is None:  # not part of this document: never fetched
            return reference(None, "external"), None
        return reference(target, None), resolved
    if isinstance(contents, bool):
        return reference(None, None), None
    return reference(None, "nowhere"), None


# --- patterns for Python's re -------------------------------------------------------


def python_pattern(pattern: str) -> str:
    """An ECMA-262 ``pattern`` written for Python's ``re``, as far as needed.

    Named groups ``(?<name>...)`` become ``(?P<name>...)`` and named
    backreferences ``\\k<name>`` become ``(?P=name)``; character classes and
    escapes are left alone. Everything else is already the same in both.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if not in_class and pattern.startswith("\\k<", i):
                end = pattern.find(">", i + 3)
                if end != -1:
                    out.append(f"(?P={pattern[i + 3 : end]})")
                    i = end + 1
                    continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif (
            pattern.startswith("(?<", i)
            and not pattern.startswith("(?<=", i)
            and not pattern.startswith("(?<!", i)
        ):
            out.append("(?P<")
            i += 3
            continue
        out.append(char)
        i += 1
    return "".join(out)


def python_patterns(schema: Any, *, plain: bool = False) -> Any:
    """A copy of ``schema`` with every ``pattern`` and ``patternProperties``
    name written for Python's ``re`` (``python_pattern``). ``plain``: the
    schema is known to be plain JSON of a depth ``shape_problems`` accepts."""
    if not plain and shape_problems(schema):
        return schema  # reported as it is
    try:
        copy = json.loads(json.dumps(schema))
    except (TypeError, ValueError, RecursionError):
        return schema
    stack = [copy]
    while stack:
        value = stack.pop()
        if not isinstance(value, dict):
            continue
        stack.extend(child for _, _, child in subschemas(value, ()))
        if isinstance(value.get("pattern"), str):
            value["pattern"] = python_pattern(value["pattern"])
        names = value.get("patternProperties")
        if isinstance(names, dict):
            value["patternProperties"] = {
                python_pattern(name): sub for name, sub in names.items()
            }
    return copy
