"""Strict mode's schema rules, checked when a strict tool is defined.

A tool marked ``strict=True`` asks the Claude API to constrain generation to
the tool's input schema with a grammar compiled from that schema. Grammar
compilation cannot express every JSON Schema keyword, so the API answers a
request whose strict schema uses one of them with a 400, and the Claude Code
CLI's own conversion quietly sends such a tool as non-strict after a warning
on stderr. Either way the author finds out late and far from the tool. The
SDK sees every schema when the tool is defined, so it checks there:

- ``make_strict`` turns a strict tool's schema into the one the SDK serves
  and validates calls against, and lists every rule that schema still
  breaks. Its one normalization closes each object with
  ``additionalProperties: false`` over every property name declared for it
  (branches of ``anyOf``/``oneOf``/``allOf``, ``$ref`` and conditionals
  included), so closing only narrows inputs to declared names. Everything
  else strict mode cannot
  express is refused rather than dropped or moved into a description: the
  SDK validates calls against the schema it serves, so dropping ``maximum``
  would quietly let through calls the author meant to refuse.
- ``find_strict_violations`` is the check on its own: every place a schema
  breaks a rule, as a JSON Pointer to the offending keyword and the rule.
- ``find_limit_violations`` applies the per-request caps to all strict tools
  that can reach one request, and ``check_request_limits`` does so for the
  SDK servers handed to one query.

References (``$ref``, embedded ``$id`` resources, ``$anchor``) are resolved
as jsonschema resolves them, with the ``referencing`` library and never over
the network (``schema_checks.SchemaGraph``), so a recursive schema is found
however it is spelled. None of this raises on any value: a malformed,
non-finite or too deeply nested schema is reported, not crashed on.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .schema_checks import (
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_POSITIONS,
    Reference,
    SchemaGraph,
    pointer,
    shape_problems,
    subschemas,
)

STRICT_TOOL_LIMIT = 20
"""Most strict tools one request may carry."""

OPTIONAL_PARAMETER_LIMIT = 24
"""Most optional parameters across all strict schemas of one request."""

UNION_PARAMETER_LIMIT = 16
"""Most union-typed parameters (``anyOf``/``oneOf`` or a ``type`` array)."""

Path = tuple[str | int, ...]

_NUMERIC_CONSTRAINTS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)
_STRING_LENGTH_CONSTRAINTS = ("minLength", "maxLength")
# Everything JSON Schema can say about an array's length or contents beyond
# its item schemas. Strict mode allows only ``minItems`` of 0 or 1.
_ARRAY_CONSTRAINTS = (
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
)
_RECURSIVE_REFS = ("$dynamicRef", "$recursiveRef")


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
    """
    document, problems = _as_json(schema)
    if problems:
        return StrictSchemas(schema, schema, problems)
    root_problems = root_violations(document)
    _drop_unreached_definitions(document)
    index = _close_objects(document)
    enforced = python_patterns(document)
    violations = root_problems
    if describe and not index.graph.too_complex:
        widening = _widening_unsafe(index.graph)
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


_NOT_DESCRIBED = (
    " (it is not moved into the description here: under not, in an if "
    "condition or in a oneOf branch, a schema that accepts more makes the "
    "schema around it accept less)"
)


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


def _widening_unsafe(graph: SchemaGraph) -> set[Path]:
    """Positions where a constraint may not move into the description."""
    reached = _reached(graph)
    return {path for path in graph.nodes if not reached.get(path, False)}


def _drop_unreached_definitions(document: Any) -> None:
    """Remove each ``$defs``/``definitions`` entry no reference reaches.

    Nothing in them can apply to an input, so they are neither checked nor
    served. A schema whose references could not all be followed (too many
    positions, ``$dynamicRef``) is left whole.
    """
    if not isinstance(document, dict):
        return
    graph = SchemaGraph.build(document)
    if graph.too_complex or any(
        reference.keyword != "$ref" for reference in graph.references
    ):
        return
    kept = {
        reached[:length]
        for reached in _reached(graph)
        for length in range(len(reached) + 1)
    }
    entries = [
        path for path in graph.nodes if len(path) >= 2 and path[-2] in _DEFINITIONS
    ]
    # Deepest first, so an entry inside a dropped one is gone with it.
    for path in sorted(entries, key=len, reverse=True):
        if path in kept:
            continue
        holder: Any = document
        for key in path[:-2]:
            holder = holder[key]
        definitions = holder.get(path[-2])
        if isinstance(definitions, dict):
            definitions.pop(path[-1], None)
            if not definitions:
                del holder[path[-2]]


def root_violations(document: Any) -> list[StrictViolation]:
    """A root that is not an object: the API's tools take an object."""
    if isinstance(document, dict):
        declared = document.get("type", "object")
        if declared == "object" or declared == ["object"]:
            return []
        found = json.dumps(declared)
    else:
        found = json.dumps(document)
    return [
        StrictViolation(
            "#",
            f"the root of a strict tool's input schema must be an object "
            f'("type": "object", found {found}); the Messages API takes a '
            "tool's input as a JSON object of named arguments",
        )
    ]


# --- moving constraints into descriptions -------------------------------------------

DESCRIBED_KEYWORDS = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
)
"""Keywords strict mode cannot compile (``minItems`` and ``pattern`` for some
values) that move into a description, in the order they are written there."""


def unexpressible(keyword: str, value: Any) -> bool:
    """Whether strict mode refuses ``keyword`` with ``value``."""
    if keyword == "minItems":
        return not _is_zero_or_one(value)
    if keyword == "pattern":
        # Only backreferences, lookaround and word boundaries.
        return not isinstance(value, str) or bool(_unsupported_regex_constructs(value))
    return keyword in DESCRIBED_KEYWORDS


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


def python_patterns(schema: Any) -> Any:
    """A copy of ``schema`` with every ``pattern`` and ``patternProperties``
    name written for Python's ``re`` (``python_pattern``)."""
    if shape_problems(schema):
        return schema  # reported as it is
    try:
        copy = json.loads(json.dumps(schema))
    except (TypeError, ValueError, RecursionError):
        return schema
    for node in _walk(copy):
        value = node.value
        if not isinstance(value, dict):
            continue
        if isinstance(value.get("pattern"), str):
            value["pattern"] = python_pattern(value["pattern"])
        names = value.get("patternProperties")
        if isinstance(names, dict):
            value["patternProperties"] = {
                python_pattern(name): sub for name, sub in names.items()
            }
    return copy


def find_strict_violations(schema: Any) -> list[StrictViolation]:
    """List every place where ``schema`` breaks one of strict mode's rules.

    The schema is checked as it stands: an object without
    ``additionalProperties: false`` is a violation here (``make_strict``
    closes the ones it safely can before checking).
    """
    document, problems = _as_json(schema)
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


def _as_json(schema: Any) -> tuple[Any, list[StrictViolation]]:
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
            StrictViolation(
                "#",
                f"input schema nests deeper than {MAX_SCHEMA_DEPTH} levels (or "
                "contains itself); flatten it or move shared parts into $defs",
            )
            if problem.kind == "too deep"
            else StrictViolation(
                pointer(problem.path),
                f"{problem.value!r} is not a JSON number; strict schemas must be "
                "plain JSON (it would be sent as null)",
            )
            for problem in problems
        ]
    try:
        return json.loads(json.dumps(schema, allow_nan=False)), []
    except (TypeError, ValueError, RecursionError) as e:
        return None, [StrictViolation("#", f"input schema is not JSON: {e}")]


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

    def __init__(self, document: Any):
        self.document = document
        self.graph = SchemaGraph.build(document)
        nodes = self.graph.nodes
        ordered = [node.path for node in _walk(document) if node.path in nodes]
        rest = [path for path in nodes if path not in set(ordered)]
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


def _close_objects(document: Any) -> _SchemaIndex:
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
    index = _SchemaIndex(document)
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
                "#",
                f"its references reach more than {MAX_SCHEMA_POSITIONS} schema "
                "positions; strict mode cannot compile it",
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
                reference.at,
                f"recursive schema: $ref {reference.ref!r} leads back into a schema "
                "that contains it; strict mode cannot compile recursive schemas",
            ),
        )
    order = [node.path for node in index.nodes]
    order += [path for path in found if path not in set(order)]
    return [violation for path in order for violation in found.get(path, [])]


def _ref_violation(reference: Reference) -> StrictViolation:
    at = reference.at
    if reference.problem == "not a string":
        return StrictViolation(at, "$ref must be a string")
    if reference.problem == "external":
        return StrictViolation(
            at,
            f"external $ref {reference.ref!r}: strict mode only resolves "
            "references within the schema ('#/$defs/...')",
        )
    return StrictViolation(
        at, f"$ref {reference.ref!r} does not point into this schema"
    )


def _node_violations(node: _Node, index: _SchemaIndex) -> Iterator[StrictViolation]:
    schema = node.value
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        yield StrictViolation(
            _pointer(node.path),
            f"expected a schema (a JSON object or boolean), found {type(schema).__name__}",
        )
        return

    def at(*keys: str | int) -> str:
        return _pointer((*node.path, *keys))

    for key, value in schema.items():
        if key in _RECURSIVE_REFS:
            yield StrictViolation(
                at(key),
                f"recursive schema: {key} exists for recursion, which strict "
                "mode cannot compile",
            )
        elif key in _NUMERIC_CONSTRAINTS:
            yield StrictViolation(
                at(key),
                f"numeric constraint '{key}' is not supported in strict mode; "
                "check the range in the tool's handler",
            )
        elif key in _STRING_LENGTH_CONSTRAINTS:
            yield StrictViolation(
                at(key),
                f"string length constraint '{key}' is not supported in strict "
                "mode; check the length in the tool's handler",
            )
        elif key == "additionalProperties" and value is not False:
            found = "true" if value is True else "a schema"
            yield StrictViolation(
                at(key),
                f"additionalProperties must be false in strict mode (found "
                f"{found}); strict mode has no open objects or free-form maps",
            )
        elif key == "unevaluatedProperties":
            if value is False:
                yield StrictViolation(
                    at(key),
                    "unevaluatedProperties is not used in strict schemas: the SDK "
                    "closes every object with additionalProperties: false over "
                    "the property names declared for it (in its properties, "
                    "anyOf/oneOf/allOf branches, $ref, if/then/else and "
                    "dependentSchemas); remove it",
                )
            else:
                found = "true" if value is True else "a schema"
                yield StrictViolation(
                    at(key),
                    f"unevaluatedProperties leaves the object open (found "
                    f"{found}); strict mode has no open objects or free-form maps",
                )
        elif key == "unevaluatedItems" and value is not False:
            found = "true" if value is True else "a schema"
            yield StrictViolation(
                at(key),
                f"unevaluatedItems leaves the array open (found {found}); "
                "describe every item with items/prefixItems, or set it to false",
            )
        elif key == "minItems" and not _is_zero_or_one(value):
            yield StrictViolation(
                at(key),
                f"minItems must be 0 or 1 in strict mode (found {value!r}); "
                "check longer minimums in the tool's handler",
            )
        elif key in _ARRAY_CONSTRAINTS:
            yield StrictViolation(
                at(key),
                f"array constraint '{key}' is not supported in strict mode "
                "(only minItems 0 or 1 is); check it in the tool's handler",
            )
        elif key == "pattern":
            yield from _pattern_violations(value, at(key))
        elif key == "patternProperties" and isinstance(value, dict):
            for pattern in value:
                yield from _pattern_violations(pattern, at(key, pattern))

    if (
        _is_object_schema(schema)
        and "additionalProperties" not in schema
        and "unevaluatedProperties" not in schema
    ):
        if isinstance(schema.get("properties"), dict) or index.names_for(node.path):
            rule = (
                "object is not closed: strict mode requires additionalProperties: "
                "false. The SDK closes objects for you, but not one evaluated "
                "under not or as an if condition unless the object it applies to "
                "is closed too (alone, closing it would let more inputs "
                'through): give the enclosing schema "type": "object" and its '
                "properties, or close this object yourself"
            )
        else:
            rule = (
                "object declares no properties: strict mode requires "
                "additionalProperties: false, which would only accept {}; "
                "declare the object's properties"
            )
        yield StrictViolation(_pointer(node.path), rule)


def _is_zero_or_one(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value in (0, 1)
    )


def _pattern_violations(pattern: Any, at: str) -> Iterator[StrictViolation]:
    if not isinstance(pattern, str):
        yield StrictViolation(at, "pattern must be a string")
        return
    for construct, example in _unsupported_regex_constructs(pattern):
        yield StrictViolation(
            at,
            f"pattern uses {construct} ({example!r}), which strict mode's "
            "regular expressions do not support",
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
    document, problems = _as_json(schema)
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
