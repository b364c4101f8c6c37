"""The graph of a JSON Schema document: its subschemas and its references.

``SchemaGraph`` resolves every reference of a schema the way jsonschema
does (the ``referencing`` library, the same dialect rules, base URIs from
``$id``), with the SDK's one registry that never fetches anything
(``argument_validation.OFFLINE_REGISTRY``): a reference that resolves
outside the document is reported as external, never retrieved.
A document whose references are all local JSON Pointers and that changes
no base URI (most schemas) is walked without ``referencing``, with the same
result. ``shape_problems`` finds what a walk could trip over (nesting, NaN
and infinities); ``python_pattern`` writes an ECMA-262 pattern for Python's
``re``. This is the first stage of one pass per schema: the graph is built
once and handed on to the checks every tool gets (``schema_checks``) and to
strict mode's transform (``strict_schema.transform``); neither builds it
again.
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

from .argument_validation import OFFLINE_REGISTRY

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
# What makes a reference resolve other than as a plain JSON Pointer.
_BASE_CHANGING = frozenset(
    {"$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$dynamicRef",
     "$recursiveRef", "$schema"}
)  # fmt: skip
_DRAFT_7 = "http://json-schema.org/draft-07/schema#"
# Dialects in which, without an "$id" or anchor, references are plain JSON
# Pointers and the common keywords take the values draft 2020-12 gives them.
PLAIN_DIALECTS = frozenset(
    {
        f"{scheme}://json-schema.org/{draft}{tail}"
        for scheme in ("http", "https")
        for draft in ("draft-06/schema", "draft-07/schema", "draft/2019-09/schema",
                      "draft/2020-12/schema")
        for tail in ("", "#")
    }
)  # fmt: skip
_LOCAL_POINTER = re.compile(r"#(/[^%]*)?\Z")


def _follow(document: Any, ref: str) -> tuple[Path | None, Any]:
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
        if self._walk_without_references():
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
                    path, keyword, value[keyword], resolver, locations, known_uris
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

    def _walk_without_references(self) -> bool:
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
        edges: dict[Key, list[tuple[Key, Reference | None]]] = {}
        references: list[Reference] = []
        targets: dict[Path, set[Path]] = {}
        stack: list[tuple[Path, Any]] = [((), document)]
        while stack:
            path, value = stack.pop()
            key: Key = (path, "")
            if key in edges:
                continue
            nodes.setdefault(path, value)
            steps: list[tuple[Key, Reference | None]] = []
            edges[key] = steps
            if len(nodes) > MAX_SCHEMA_POSITIONS:
                return False
            if not isinstance(value, dict):
                continue
            if any(keyword in value for keyword in _BASE_CHANGING) and (
                path or any(k in value for k in _BASE_CHANGING - {"$schema"})
            ):
                return False
            children: list[tuple[Path, Any]] = []
            if "$ref" in value:
                ref = value["$ref"]
                if not isinstance(ref, str) or not _LOCAL_POINTER.match(ref):
                    return False
                target, contents = _follow(document, ref)
                if target is None:
                    reference = Reference(path, "$ref", ref, "", None, "nowhere")
                elif isinstance(contents, dict | list):
                    reference = Reference(path, "$ref", ref, "", target, None)
                    targets.setdefault(path, set()).add(target)
                    steps.append(((target, ""), reference))
                    children.append((target, contents))
                else:
                    reference = Reference(path, "$ref", ref, "", None, None)
                references.append(reference)
            for child_path, _, child in subschemas(value, path):
                steps.append(((child_path, ""), None))
                children.append((child_path, child))
            stack.extend(reversed(children))
        self.nodes, self.edges = nodes, edges
        self.references, self.targets = references, targets
        return True

    def without(self, dropped: set[Path]) -> SchemaGraph:
        """This graph less the positions at or under ``dropped`` (entries of
        ``$defs`` no reference reaches, removed from the document): what
        ``build`` would give for the document without them."""

        shortest = min(map(len, dropped), default=0)

        def kept(path: Path) -> bool:
            return not any(path[:n] in dropped for n in range(shortest, len(path) + 1))

        graph = SchemaGraph(self.document, too_complex=self.too_complex)
        graph.nodes = {p: v for p, v in self.nodes.items() if kept(p)}
        graph.references = [r for r in self.references if kept(r.path)]
        graph.edges = {
            key: [(child, via) for child, via in steps if kept(child[0])]
            for key, steps in self.edges.items()
            if kept(key[0])
        }
        graph.targets = {p: t for p, t in self.targets.items() if kept(p)}
        return graph

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
