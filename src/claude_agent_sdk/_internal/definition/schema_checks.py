"""Checks every SDK MCP tool's schemas get when the tool is defined.

A reference outside the document, a schema nested too deep, one that fails
its metaschema, a pattern Python cannot compile, NaN or infinity: refused
for a tool that opted in (``strict=True`` or ``input_examples``), a notice
for any other. How it is built: docs/internals.md.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import jsonschema

from ..strict.schema_graph import (
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_POSITIONS,
    SchemaGraph,
    pointer,
    python_pattern,
    python_patterns,
    shape_problems,
)
from .fields import opted_in, schema_from_types
from .notices import notice_logger
from .plain_schema import JSON_SCHEMA_KEYWORDS, nearest_keyword, plainly_valid

if sys.version_info >= (3, 11):
    from typing import is_typeddict
else:  # 3.10's does not recognize typing_extensions.TypedDict
    from typing_extensions import is_typeddict

logger = notice_logger(__name__)


class SchemaCheckError(ValueError):
    """A tool's schema refused when the tool is defined."""


def depth_message(where: str) -> str:
    return (
        f"{where} nests deeper than {MAX_SCHEMA_DEPTH} levels (or contains "
        "itself); jsonschema checks schemas recursively and would fail every "
        "call with RecursionError. Flatten it, or move shared parts into "
        "$defs"
    )


# --- the checks -----------------------------------------------------------------


def _local_file(reference: Any) -> bool:
    """Whether ``reference`` names a local ``file:`` document, which the
    argument validator reads once (``argument_validation``)."""
    uri = urljoin(reference.base_uri, str(reference.ref))
    parts = urlsplit(uri)
    return parts.scheme == "file" and parts.netloc in ("", "localhost")


def _metaschema(reference: Any) -> bool:
    """Whether ``reference`` names a JSON Schema metaschema (or a part of
    one): jsonschema bundles them and resolves them offline, so the
    arguments they govern are checked, with no fetch."""
    import jsonschema_specifications  # type: ignore[import-untyped]

    uri = urljoin(reference.base_uri, str(reference.ref))
    return uri.partition("#")[0] in jsonschema_specifications.REGISTRY


@dataclass(frozen=True)
class SchemaProblem:
    at: str
    """JSON Pointer of the offending keyword."""
    keyword: str
    message: str
    hard: bool
    """Refused for every tool (external reference), not only opted-in ones."""
    kind: str = "other"
    """For a hard problem, what its reference names: "local file" (read
    once), "metaschema" (bundled, checked offline) or "other" (never
    fetched: a call whose values it governs is refused)."""


def find_schema_problems(
    schema: Any,
    metaschema: bool = True,
    graph: SchemaGraph | None = None,
    *,
    strict: bool = False,
) -> list[SchemaProblem]:
    """Every problem ``check_input_schema`` acts on, except nesting depth.

    ``metaschema=False`` skips the metaschema check (the dearest part, about
    a millisecond) for schemas the SDK generated itself from Python types.
    ``graph`` is ``schema``'s (``SchemaGraph.of``: a JSON copy of a schema of
    sound shape), when the caller built it already. With
    ``strict``, patterns are checked as the SDK will match them: ECMA-262
    named groups written for Python's ``re`` (``python_pattern``).
    """
    problems: list[SchemaProblem] = []
    # A graph is built from a JSON copy, made only of a schema of sound shape.
    for shape in shape_problems(schema) if graph is None else ():
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
    if graph is None:
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
        if reference.problem == "external" and _local_file(reference):
            problems.append(
                SchemaProblem(
                    reference.at,
                    reference.keyword,
                    f"{reference.keyword} {reference.ref!r} names a local file, "
                    "which the SDK reads once, on the first call that reaches "
                    "it (jsonschema would, on every call); the model is shown "
                    "only the reference. Copy the referenced schema into $defs "
                    "and refer to it as '#/$defs/...'",
                    hard=True,
                    kind="local file",
                )
            )
        elif reference.problem == "external" and _metaschema(reference):
            problems.append(
                SchemaProblem(
                    reference.at,
                    reference.keyword,
                    f"{reference.keyword} {reference.ref!r} names a JSON Schema "
                    "metaschema, which the SDK checks arguments against offline "
                    "(jsonschema bundles it); the model is shown only the "
                    "reference. Copy the referenced schema into $defs and refer "
                    "to it as '#/$defs/...'",
                    hard=True,
                    kind="metaschema",
                )
            )
        elif reference.problem == "external":
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
        for key in value:
            if key not in JSON_SCHEMA_KEYWORDS:
                nearest = nearest_keyword(key)
                if nearest is not None:
                    problems.append(
                        SchemaProblem(
                            pointer((*path, key)),
                            key,
                            f"{key!r} is not a JSON Schema keyword (did you mean "
                            f"{nearest!r}?), so it constrains nothing",
                            hard=False,
                            kind="typo",
                        )
                    )
        if "pattern" in value:
            problem = _regex_problem(value["pattern"], strict)
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
                problem = _regex_problem(name, strict)
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
        problems.extend(_metaschema_problems(schema, strict))
    return problems


# Schemas known to pass their metaschema, by content: a tool is checked when
# it is defined and again when its server is built, and one schema object is
# often shared by several tools. Bounded, so it cannot grow without limit.
_VALID_SCHEMAS: dict[str, None] = {}
_VALID_SCHEMAS_MAX = 4096
_META_VALIDATORS: dict[type[Any], Any] = {}
# Schemas check_input_schema found nothing wrong with, by content.
_CLEAN_SCHEMAS: dict[tuple[str, bool, bool], None] = {}


def _regex_problem(pattern: Any, strict: bool = False) -> str | None:
    if not isinstance(pattern, str):
        return None  # the metaschema check reports it
    if strict:
        pattern = python_pattern(pattern)
    try:
        with warnings.catch_warnings():
            # Whatever re warns about (FutureWarning, DeprecationWarning) is
            # not this check's to raise, under -W error least of all.
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        return (
            f"is not a regular expression Python's re can compile ({e}); "
            "jsonschema matches patterns with re.search, so every call it "
            "applies to would fail"
        )
    return None


def _metaschema_problems(schema: Any, strict: bool = False) -> list[SchemaProblem]:
    if plainly_valid(schema):
        return []
    if strict:  # the metaschema's "regex" format is checked with Python's re
        schema = python_patterns(schema)
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
    graph: SchemaGraph | None = None,
    strict: bool = False,
) -> None:
    """Refuse or warn about what would make a tool misbehave on every call.

    When ``opted_in`` (``strict=True`` or ``input_examples``), raises
    ``ValueError`` naming the tool, ``field`` and the JSON Pointer for a
    reference that resolves outside the schema, nesting deeper than
    ``MAX_SCHEMA_DEPTH``, a metaschema failure, a pattern Python's ``re``
    cannot compile, a local reference to nothing or a non-finite number. For
    other tools each kind is one log record (level WARNING, never a
    ``warnings.warn``, see ``notices``) naming the tool and listing where,
    and the tool is served as upstream serves it.
    """
    where = f"Tool '{tool_name}': {field}"
    if plainly_valid(schema, clean=True):
        return  # nothing any check below could find, seen in one walk
    if graph is None and any(p.kind == "too deep" for p in shape_problems(schema)):
        _too_deep(where, opted_in)
        return
    try:
        dumped: str | None = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        dumped = None  # not plain JSON: checked in full, never cached
    if dumped is not None and (dumped, written, strict) in _CLEAN_SCHEMAS:
        return  # checked before (at definition, say) and found clean
    try:
        with warnings.catch_warnings():
            # A check must not change what defining the tool does under a
            # warnings filter (jsonschema warns of an unknown $schema, say).
            warnings.simplefilter("ignore")
            problems = find_schema_problems(
                schema, metaschema=written, graph=graph, strict=strict
            )
    except RecursionError:
        _too_deep(where, opted_in)
        return
    if not problems and dumped is not None:
        if len(_CLEAN_SCHEMAS) >= _VALID_SCHEMAS_MAX:
            _CLEAN_SCHEMAS.clear()
        _CLEAN_SCHEMAS[(dumped, written, strict)] = None
    typos = [p for p in problems if p.kind == "typo"]
    problems = [p for p in problems if p.kind != "typo"]
    hard = [p for p in problems if p.hard]
    soft = [p for p in problems if not p.hard]
    if typos and not strict:
        # A likely misspelling, served as written (a strict schema refuses
        # it in strict mode's rules): one notice per tool, its first one.
        logger.warning(
            "%s: %s: %s; the tool is served as written (a tool with "
            "strict=True is refused for it)",
            where,
            typos[0].at,
            typos[0].message,
        )
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
        kinds = frozenset(p.kind for p in hard)
        logger.warning(
            _REFERENCE_NOTICES.get(kinds, _REFERENCE_NOTICES[None]),
            where,
            "\n".join(f"  - {p.at}: {p.message}" for p in hard),
        )
    if soft:
        logger.warning(
            "%s would fail every call it applies to; the tool is served as "
            "written (refused for tools with strict=True or input_examples):\n%s",
            where,
            "\n".join(f"  - {p.at} ({p.keyword}): {p.message}" for p in soft),
        )


_REFUSED = "(refused for tools with strict=True or input_examples):\n%s"
# The notice for a tool that refers outside its schema, by the kinds of
# reference it makes (each reference's own line says what it governs).
_REFERENCE_NOTICES: dict[frozenset[str] | None, str] = {
    frozenset({"other"}): "%s refers outside itself, and the SDK never fetches "
    "schemas: a call whose values those references govern is refused " + _REFUSED,
    frozenset({"local file"}): "%s refers outside itself; the SDK reads a local "
    "file once and never fetches other documents: a call whose values they "
    "govern is refused " + _REFUSED,
    frozenset({"metaschema"}): "%s refers outside itself, to a JSON Schema "
    "metaschema, which the SDK checks arguments against offline; the model is "
    "shown only the reference " + _REFUSED,
    None: "%s refers outside itself; each reference below says whether the SDK "
    "checks the values it governs " + _REFUSED,
}
_REFERENCE_NOTICES[frozenset({"local file", "other"})] = _REFERENCE_NOTICES[
    frozenset({"local file"})
]


def _too_deep(where: str, opted_in: bool) -> None:
    if opted_in:
        raise SchemaCheckError(depth_message(where)) from None
    logger.warning(
        "%s. It is served as written, though mcp cannot serialize a schema "
        "this deep either: this server's tools/list fails (mcp 2.x) or the "
        "server stops (mcp 1.x). Refused for tools with strict=True or "
        "input_examples",
        depth_message(where),
    )


def served_input_schema(tool_def: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, the input schema built for ``tool_def``, once checked.

    Run once per tool: when it is defined for a tool that opted in to
    checks (so a mistake is reported where it is written), else at its
    server's first ``tools/list`` or ``tools/call``.
    """
    # A schema built from Python types is valid by construction; only one
    # the author wrote as JSON needs its (costly) metaschema check.
    declared = tool_def.input_schema
    from_types = schema_from_types(declared)
    written = isinstance(declared, dict) and not from_types
    if tool_def.strict is not True:
        if from_types and not opted_in(tool_def):
            # Upstream's converter built it from Python types: a JSON type
            # per parameter, nothing these checks could find.
            return schema
        check_input_schema(
            tool_def.name, schema, opted_in=opted_in(tool_def), written=written
        )
        return schema
    # Strict mode's rules and transform: loaded with the first strict tool.
    from ..strict.transform import (
        format_violations,
        remember_enforced,
        root_violations,
        strict_schemas,
    )

    if written and "type" in declared:
        # A JSON Schema whose root is not an object (read as shorthand
        # otherwise, as upstream reads it) cannot be a strict tool's input.
        problems = root_violations(declared)
        if problems:
            raise ValueError(format_violations(tool_def.name, problems))

    # One pass. The graph is built once, for the checks every tool gets, and
    # only when they need it (the one-walk check finds most schemas clean);
    # then strict mode's transform takes it (or serves a schema that needs
    # no graph without one). Patterns are checked as Python's re will match
    # them: a strict schema's ECMA-262 named groups are translated.
    graph = None if plainly_valid(schema, clean=True) else SchemaGraph.of(schema)
    check_input_schema(
        tool_def.name,
        schema if graph is None else graph.document,
        opted_in=True,
        written=written,
        graph=graph,
        strict=True,
    )
    # A JSON Schema, written or built from a dict of types or a TypedDict,
    # is enforced by the SDK's validator, so what strict mode cannot express
    # can be served in words. (A pydantic model describes what it enforces
    # itself, and is validated by the model.)
    describe = isinstance(declared, dict) or is_typeddict(declared)
    forms = strict_schemas(schema, describe=describe, graph=graph)
    if forms.violations:
        raise ValueError(format_violations(tool_def.name, forms.violations))
    remember_enforced(tool_def, forms)
    served: dict[str, Any] = forms.served
    return served
