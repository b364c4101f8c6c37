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
  breaks. Its one normalization closes each object that declares its
  properties with ``additionalProperties: false``, as the Anthropic Python
  SDK's ``transform_schema`` does. Everything else strict mode cannot
  express is refused rather than dropped or moved into a description: the
  SDK validates calls against the schema it serves, so dropping ``maximum``
  would quietly let through calls the author meant to refuse.
- ``find_strict_violations`` is the check on its own: every place a schema
  breaks a rule, as a JSON Pointer to the offending keyword and the rule.
- ``find_limit_violations`` applies the per-request caps to all strict tools
  that can reach one request, and ``check_request_limits`` does so for the
  SDK servers handed to one query.

Only the standard library is used, and none of this raises on any JSON
value: a malformed schema is reported, not crashed on.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote

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

# Where a schema keeps its subschemas. Values under ``enum``, ``const``,
# ``default`` or ``examples`` are data and are never walked.
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
# Subschemas that are combined with their siblings instead of describing a
# value of their own. Closing an object in one of them changes which inputs
# the whole schema accepts: under ``allOf`` two closed branches that each
# declare some of the properties reject every input, and under ``not`` a
# closed object widens what passes. So objects there are left to the author.
_COMBINED_WITH_SIBLINGS = frozenset(
    {"allOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"}
)


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


def make_strict(schema: Any) -> tuple[Any, list[StrictViolation]]:
    """Return the schema to serve for a strict tool, and every rule it breaks.

    The result is a copy (the caller's schema is never changed) in which each
    object that declares ``properties`` but not ``additionalProperties`` gets
    ``additionalProperties: false``. That is what strict mode needs and what
    the author of such an object almost always means; the exceptions are
    objects combined with siblings (see ``_COMBINED_WITH_SIBLINGS``) and
    objects with no declared properties, which closing would shrink to
    ``{}``. Those stay as they are and are reported, like every other rule.
    """
    document, problem = _as_json(schema)
    if problem is not None:
        return schema, [problem]
    index = _close_objects(document)
    return document, _violations(index)


def find_strict_violations(schema: Any) -> list[StrictViolation]:
    """List every place where ``schema`` breaks one of strict mode's rules.

    The schema is checked as it stands: an object without
    ``additionalProperties: false`` is a violation here (``make_strict``
    closes the ones it safely can before checking).
    """
    document, problem = _as_json(schema)
    if problem is not None:
        return [problem]
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
    """Whether closing an object here leaves the meaning of its parents alone."""


def _as_json(schema: Any) -> tuple[Any, StrictViolation | None]:
    """Copy ``schema`` through JSON, as the wire will see it.

    This makes the copy the normalization works on, and turns everything a
    walk could trip over (cycles, values JSON cannot carry, nesting deeper
    than the interpreter's recursion limit) into a reported problem.
    """
    try:
        return json.loads(json.dumps(schema)), None
    except (TypeError, ValueError, RecursionError) as e:
        return None, StrictViolation("#", f"input schema is not JSON: {e}")


def _subschemas(schema: dict[str, Any], path: Path) -> Iterator[tuple[Path, Any, bool]]:
    """The direct subschemas of ``schema``: path, value, combined with siblings."""
    for key, value in schema.items():
        combined = key in _COMBINED_WITH_SIBLINGS
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for name, subschema in value.items():
                # draft 7 "dependencies" also maps names to lists of names
                if not (key == "dependencies" and isinstance(subschema, list)):
                    yield (*path, key, name), subschema, combined
        elif (key in _SUBSCHEMA_LISTS or key == "items") and isinstance(value, list):
            for i, subschema in enumerate(value):
                yield (*path, key, i), subschema, combined
        elif key in _SUBSCHEMAS:
            yield (*path, key), value, combined


def _walk(value: Any, path: Path, unclosable: frozenset[Path]) -> Iterator[_Node]:
    """Every schema position under ``value``, parents first, in document order.

    Iterative, so nesting depth is bounded by the input, not the call stack.
    """
    stack = [(path, value, True)]
    while stack:
        path, value, closable = stack.pop()
        closable = closable and path not in unclosable
        yield _Node(path, value, closable)
        if isinstance(value, dict):
            children = [
                (child_path, child, closable and not combined)
                for child_path, child, combined in _subschemas(value, path)
            ]
            stack.extend(reversed(children))


def _resolve(document: Any, ref: str) -> Path | None:
    """Resolve a local ``$ref`` (``#`` or a ``#/...`` JSON Pointer), or None."""
    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None
    path: list[str | int] = []
    current = document
    for raw in ref[2:].split("/"):
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
            path.append(token)
        elif (
            isinstance(current, list)
            and token.isascii()
            and token.isdigit()
            and int(token) < len(current)
        ):
            current = current[int(token)]
            path.append(int(token))
        else:
            return None
    return tuple(path)


@dataclass(frozen=True)
class _Ref:
    node: _Node
    ref: Any
    target: Path | None


class _SchemaIndex:
    """Every schema position of a document, including local ``$ref`` targets.

    Targets outside the walked structure (``#/x-shared/address``, say) are
    walked too, from where they are, so nothing a reference reaches escapes
    the rules.
    """

    def __init__(self, document: Any, unclosable: frozenset[Path] = frozenset()):
        self.nodes: list[_Node] = []
        self.refs: list[_Ref] = []
        seen: set[Path] = set()
        pending: list[Path] = [()]
        while pending:
            start = pending.pop(0)
            if start in seen:
                continue
            value = _value_at(document, start)
            for node in _walk(value, start, unclosable):
                if node.path in seen:
                    continue
                seen.add(node.path)
                self.nodes.append(node)
                if isinstance(node.value, dict) and "$ref" in node.value:
                    ref = node.value["$ref"]
                    target = _resolve(document, ref) if isinstance(ref, str) else None
                    self.refs.append(_Ref(node, ref, target))
                    if target is not None:
                        pending.append(target)

    def recursive_refs(self) -> list[_Ref]:
        """The references that close a cycle, i.e. make the schema recursive.

        A reference leads into its target's subtree, and so on to every
        reference located there. Walking that graph depth-first from the
        document root, a reference to a target still being explored is one
        that leads back into a schema that contains it.
        """
        local = [ref for ref in self.refs if ref.target is not None]

        def leads_to(target: Path) -> Iterator[_Ref]:
            return (r for r in local if r.node.path[: len(target)] == target)

        exploring, done = object(), object()
        state: dict[Path, object] = {(): exploring}
        stack: list[tuple[Path, Iterator[_Ref]]] = [((), leads_to(()))]
        recursive = []
        while stack:
            _, edges = stack[-1]
            for ref in edges:
                assert ref.target is not None
                target_state = state.get(ref.target)
                if target_state is exploring:
                    recursive.append(ref)
                elif target_state is None:
                    state[ref.target] = exploring
                    stack.append((ref.target, leads_to(ref.target)))
                    break
            else:
                target, _ = stack.pop()
                state[target] = done
        return recursive


def _value_at(document: Any, path: Path) -> Any:
    for token in path:
        document = document[token]
    return document


def _pointer(path: Path) -> str:
    return "#" + "".join(
        "/" + str(token).replace("~", "~0").replace("/", "~1") for token in path
    )


def _is_object_schema(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if isinstance(declared, list):
        return "object" in declared
    if declared is None:
        return "properties" in schema
    return bool(declared == "object")


def _close_objects(document: Any) -> _SchemaIndex:
    """Add ``additionalProperties: false`` where that keeps the schema's meaning.

    An object reached through a ``$ref`` from a combined position is left
    alone like one written there, so the index is rebuilt until no new such
    target turns up. Returns the index, which still describes the document:
    the only positions closing adds hold ``false``, which breaks no rule.
    """
    unclosable: frozenset[Path] = frozenset()
    while True:
        index = _SchemaIndex(document, unclosable)
        more = frozenset(
            ref.target
            for ref in index.refs
            if ref.target is not None and not ref.node.closable
        )
        if more <= unclosable:
            break
        unclosable |= more
    for node in index.nodes:
        schema = node.value
        if (
            node.closable
            and isinstance(schema, dict)
            and _is_object_schema(schema)
            and isinstance(schema.get("properties"), dict)
            and "additionalProperties" not in schema
        ):
            schema["additionalProperties"] = False
    return index


# --- the rules ----------------------------------------------------------------


def _violations(index: _SchemaIndex) -> list[StrictViolation]:
    found: dict[Path, list[StrictViolation]] = {}
    for node in index.nodes:
        found[node.path] = list(_node_violations(node))
    for ref in index.refs:
        if ref.target is None:
            found[ref.node.path].insert(0, _ref_violation(ref))
    for ref in index.recursive_refs():
        found[ref.node.path].insert(
            0,
            StrictViolation(
                _pointer((*ref.node.path, "$ref")),
                f"recursive schema: $ref {ref.ref!r} leads back into a schema "
                "that contains it; strict mode cannot compile recursive schemas",
            ),
        )
    return [violation for node in index.nodes for violation in found[node.path]]


def _ref_violation(ref: _Ref) -> StrictViolation:
    at = _pointer((*ref.node.path, "$ref"))
    if not isinstance(ref.ref, str):
        return StrictViolation(at, "$ref must be a string")
    if not ref.ref.startswith("#"):
        return StrictViolation(
            at,
            f"external $ref {ref.ref!r}: strict mode only resolves references "
            "within the schema ('#/$defs/...')",
        )
    return StrictViolation(at, f"$ref {ref.ref!r} does not point into this schema")


def _node_violations(node: _Node) -> Iterator[StrictViolation]:
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

    if _is_object_schema(schema) and "additionalProperties" not in schema:
        if isinstance(schema.get("properties"), dict):
            rule = (
                "object is not closed: strict mode requires additionalProperties: "
                "false (the SDK adds it for you, except under allOf, not, "
                "if/then/else and dependentSchemas, where it would change which "
                "inputs the combined schema accepts)"
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
    document, problem = _as_json(schema)
    if problem is not None:
        return 0, 0
    optional = unions = 0
    for node in _walk(document, (), frozenset()):
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
