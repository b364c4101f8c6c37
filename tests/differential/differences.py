"""Every way the fork may answer a case differently from pristine upstream.

``compare`` lines up one case's two runner outputs (``runner.py``) aspect by
aspect (what defining the tools raised and warned, ``initialize``, each
``tools/list`` entry, each ``tools/call`` response and the arguments its
handler received, log records) and returns each difference. ``explain``
finds the row of ``ROWS`` that accounts for a difference, or None; the
differential test fails on any difference no row accounts for, and on any
row no case shows. ``docs/differences.md`` carries ``ROWS`` as a table
(``python -m tests.differential.differences --write``).

A row is a repair of something upstream breaks, or a notice (a log record,
never a warning) about a hazard upstream keeps silent; with none of the new
arguments nothing else may differ, also with warnings as errors.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "differences.md"

# JSON Schema keywords that may stand at the top of an input schema (the
# same list the fork's json_schema_dicts reads); repeated here so the table
# does not lean on the code it checks.
_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$defs", "definitions", "$anchor",
        "$dynamicRef", "$dynamicAnchor", "$comment", "type", "properties",
        "required", "additionalProperties", "patternProperties",
        "propertyNames", "minProperties", "maxProperties",
        "unevaluatedProperties", "dependentRequired", "dependentSchemas",
        "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "enum",
        "const", "title", "description", "default", "examples",
    }
)  # fmt: skip


@dataclass
class Difference:
    case: dict[str, Any]
    aspect: str  # define, server, serve, initialize, list, call, logs
    upstream: Any
    fork: Any
    tool: str | None = None
    index: int | None = None
    related: list[Difference] = field(default_factory=list)
    allowed: list[Any] | None = None  # the rows explain() may use (None: all)

    def describe(self) -> str:
        where = f"{self.case['id']} {self.aspect}"
        if self.tool is not None:
            where += f" (tool {self.tool!r})"
        if self.index is not None:
            where += f" #{self.index}"
        return f"{where}\n    upstream: {_short(self.upstream)}\n    fork:     {_short(self.fork)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 600 else text[:600] + "…"


# ---------------------------------------------------------------------------
# Lining the two outputs up


def _tools(case_out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    # The last definition of a name is the one its calls reach.
    return {t["name"]: t for t in case_out.get("tools") or []}


def _entries(case_out: dict[str, Any]) -> list[Any] | None:
    listing = case_out.get("list")
    if not isinstance(listing, dict) or "result" not in listing:
        return None
    entries: list[Any] = listing["result"]["tools"]
    return entries


def _extra(fork: list[str], upstream: list[str]) -> tuple[list[str], list[str]]:
    """(lines only the fork has, lines only upstream has), as multisets."""
    more = Counter(fork) - Counter(upstream)
    fewer = Counter(upstream) - Counter(fork)
    return list(more.elements()), list(fewer.elements())


def compare(
    case: dict[str, Any], upstream: dict[str, Any], fork: dict[str, Any]
) -> list[Difference]:
    found: list[Difference] = []
    up_tools = _tools(upstream)
    for phase in ("define", "server"):
        if upstream.get(f"{phase}_error") != fork.get(f"{phase}_error"):
            found.append(
                Difference(
                    case, f"{phase}_error",
                    upstream.get(f"{phase}_error"), fork.get(f"{phase}_error"),
                )
            )  # fmt: skip
    if found:
        return found  # one side has no server: nothing else lines up
    for phase in ("define", "server", "serve"):
        more, fewer = _extra(
            fork.get(f"{phase}_warnings") or [], upstream.get(f"{phase}_warnings") or []
        )
        found += [Difference(case, f"{phase}_warning", None, w) for w in more]
        found += [Difference(case, f"{phase}_warning", w, None) for w in fewer]
    if upstream.get("initialize") != fork.get("initialize"):
        found.append(
            Difference(
                case, "initialize", upstream.get("initialize"), fork.get("initialize")
            )
        )
    up_entries, fork_entries = _entries(upstream), _entries(fork)
    if (
        up_entries is None
        or fork_entries is None
        or len(up_entries) != len(fork_entries)
    ):
        if upstream.get("list") != fork.get("list"):
            found.append(
                Difference(case, "list", upstream.get("list"), fork.get("list"))
            )
    else:
        for index, (a, b) in enumerate(zip(up_entries, fork_entries, strict=True)):
            if a != b:
                found.append(
                    Difference(case, "list", a, b, tool=a.get("name"), index=index)
                )
    for index, (a, b) in enumerate(
        zip(upstream.get("calls") or [], fork.get("calls") or [], strict=True)
    ):
        if a != b:
            name = case["calls"][index]["name"]
            found.append(Difference(case, "call", a, b, tool=name, index=index))
    more, fewer = _extra(fork.get("logs") or [], upstream.get("logs") or [])
    found += [Difference(case, "logs", None, line) for line in more]
    found += [Difference(case, "logs", line, None) for line in fewer]
    for difference in found:
        difference.related = found
        if difference.tool is not None:
            difference.case = {**case, "declared": up_tools.get(difference.tool)}
    return found


# ---------------------------------------------------------------------------
# The rows


def _upstream_reads_as_schema(schema: dict[str, Any]) -> bool:
    return isinstance(schema.get("type"), str) and "properties" in schema


def _schema_reading(declared: dict[str, Any]) -> bool:
    """The one reading rule: JSON Schema only where shorthand cannot be meant
    (a value no shorthand holds, ``"type": "object"`` or a ``$schema`` URI)
    and the schema is valid (every key a keyword, ``required`` a list of
    names, ``properties`` an object, ``type`` a JSON type name or a list of
    them, ...)."""
    types = {"object", "array", "string", "number", "integer", "boolean", "null"}
    for key, value in declared.items():
        if key not in _KEYWORDS:
            return False
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            if not kinds or not all(isinstance(k, str) and k in types for k in kinds):
                return False
        elif key == "required":
            if not isinstance(value, list) or not all(
                isinstance(n, str) for n in value
            ):
                return False
        elif (
            key in ("properties", "$defs", "definitions")
            and not isinstance(value, dict)
            or key in ("anyOf", "oneOf", "allOf")
            and not isinstance(value, list)
        ):
            return False
    return any(
        not isinstance(v, str) or k == "type" or (k == "$schema" and "://" in v)
        for k, v in declared.items()
    )


def _repaired_json_schema(d: Difference) -> bool:
    """The tool's dict is JSON Schema; upstream read it as shorthand."""
    declared = (d.case.get("declared") or {}).get("json")
    if not isinstance(declared, dict) or _upstream_reads_as_schema(declared):
        return False
    if declared.get("type", "object") != "object" or not _schema_reading(declared):
        return False
    expected = declared if "type" in declared else {"type": "object", **declared}
    if d.aspect == "list":
        up, fork = d.upstream, d.fork
        same_rest = {k: v for k, v in up.items() if k != "inputSchema"} == {
            k: v for k, v in fork.items() if k != "inputSchema"
        }
        shorthand = set(up["inputSchema"].get("properties", {})) == set(declared)
        return same_rest and shorthand and fork["inputSchema"] == expected
    # A call: validated against the repaired schema (even where both sides'
    # listings fail, on mcp 2.x, because of another tool), so its answer may
    # differ in any way.
    return d.aspect == "call"


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


_REMOTE_RETRIEVAL_WARNING = (
    "DeprecationWarning: Automatically retrieving remote references"
)


def _remote_ref_call(d: Difference) -> bool:
    """Upstream fetched a reference outside the schema, the fork did not: a
    call upstream refused (the fetch failed, or what it fetched refused the
    arguments) that the fork refused too, without running the handler and
    with an error naming the document it does not fetch (or, for a local
    file, which the fork reads once, answered as the file says); and the
    warning jsonschema issues on each fetch that succeeds."""
    if d.aspect == "serve_warning":
        return (
            d.fork is None
            and isinstance(d.upstream, str)
            and d.upstream.startswith(_REMOTE_RETRIEVAL_WARNING)
        )
    if d.aspect != "call":
        return False
    response = d.upstream["response"].get("result") or {}
    outside = [
        r
        for r in _refs((d.case.get("declared") or {}).get("json"))
        if not r.startswith("#")
    ]
    fork = d.fork["response"].get("result") or {}
    fork_text = " ".join(c.get("text", "") for c in fork.get("content") or [])
    refused = (
        fork.get("isError") is True
        and d.fork["received"] == []
        and "names another document, which is not fetched" in fork_text
    )
    return (
        bool(outside)
        and response.get("isError") is True
        and (refused or any(r.startswith("file:") for r in outside))
    )


_RECURSION = "maximum recursion depth exceeded"


def _recursion_wording(d: Difference) -> bool:
    """Both sides fail the call on Python's recursion limit, in other words:
    which operation reaches the limit depends on how many frames the code
    that builds the validator takes, not on the schema or the arguments."""
    if d.aspect != "call" or d.upstream["received"] or d.fork["received"]:
        return False
    texts = []
    for side in (d.upstream, d.fork):
        result = side["response"].get("result") or {}
        content = result.get("content") or [{}]
        texts.append(content[0].get("text", "") if result.get("isError") else "")
    return all(text.startswith(_RECURSION) for text in texts)


def _too_deep(d: Difference) -> bool:
    """The notice of a schema nested too deep, or both sides failing its
    calls on Python's recursion limit, in other words."""
    return _too_deep_notice(d) or _recursion_wording(d)


def _notice(pattern: str) -> Callable[[Difference], bool]:
    """A log record at WARNING on the SDK's logger that only the fork has.

    Never a warning: a warning only the fork issues is a difference no row
    accounts for (under ``-W error`` it would refuse the definition)."""
    regex = re.compile(r"WARNING claude_agent_sdk[\w.]*: " + pattern, re.S)

    def matches(d: Difference) -> bool:
        return (
            d.aspect == "logs"
            and d.upstream is None
            and isinstance(d.fork, str)
            and regex.match(d.fork) is not None
        )

    return matches


def _model_class(d: Difference) -> bool:
    """A pydantic model tool: served as the model's schema and validated by
    it; a call differs only where the model refused it, since a handler not
    annotated with the model gets the arguments dict, as upstream's did."""
    declared = d.case.get("declared") or {}
    if d.aspect == "call" and declared.get("kind") == "ModelMetaclass":
        result = d.fork["response"].get("result") or {}
        text = " ".join(c.get("text", "") for c in result.get("content") or [])
        return (
            result.get("isError") is True
            and d.fork["received"] == []
            and text.startswith("Input validation error: the arguments of tool")
        )
    return (
        d.aspect == "list"
        and declared.get("kind") == "ModelMetaclass"
        and d.upstream.get("inputSchema") == {"type": "object", "properties": {}}
        and {k: v for k, v in d.upstream.items() if k != "inputSchema"}
        == {k: v for k, v in d.fork.items() if k != "inputSchema"}
    )


def _is_error_wire_name(d: Difference) -> bool:
    """A handler's ``isError`` (MCP's spelling): upstream answers a success,
    the fork the same result as an error; the handler got the same call."""
    if d.aspect != "call" or "result:isError" not in d.case["tags"]:
        return False
    up = d.upstream["response"].get("result") or {}
    fork = d.fork["response"].get("result") or {}
    return (
        d.upstream["received"] == d.fork["received"]
        and up.get("isError") is False
        and fork == {**up, "isError": True}
    )


def _consequence(d: Difference) -> bool:
    """A log line that only a call difference already accounted for explains."""
    return d.aspect == "logs" and any(
        r.aspect == "call" and explain(r, d.allowed) is not None for r in d.related
    )


# Names the fork exports that upstream does not: a docs example importing
# one fails on upstream at its import.
NEW_NAMES = ("ToolFieldsReport", "ToolFieldsRelayError", "SchemaCheckError")


def _new_argument(d: Difference) -> bool:
    """A docs example that uses a new argument or name: upstream has no such
    keyword, or no such name to import."""
    if not (
        "opt-in" in d.case["tags"]
        and d.aspect in ("define_error", "server_error")
        and isinstance(d.upstream, str)
    ):
        return False
    if re.match(r"TypeError: .*unexpected keyword argument", d.upstream):
        return True
    imported = re.match(
        r"ImportError: cannot import name '(\w+)' from 'claude_agent_sdk'", d.upstream
    )
    return imported is not None and imported.group(1) in NEW_NAMES


@dataclass(frozen=True)
class Row:
    key: str
    case: str
    upstream: str
    fork: str
    why: str
    matches: Callable[[Difference], bool]
    patch: str | tuple[str, ...] | None = None
    """Slug of the patch that makes the difference, or of each patch that
    makes a part of it (its pull request is compared with pristine + its
    dependencies on its rows alone); None for a row any patch may show."""
    always: bool = True
    """Whether some case shows it in every run (a wording that depends on
    the stack's depth may or may not differ)."""


_too_deep_notice = _notice(r"Tool '[^']*': input_schema nests deeper")

ROWS = [
    Row(
        "json-schema-without-properties",
        "An `input_schema` dict that lacks the `type` + `properties` pair, "
        "every key a JSON Schema keyword with a value of that keyword's type, "
        "one value no shorthand holds (an object, array, number, bool, "
        '`"type": "object"` or a `$schema` URI), top-level `type` absent or '
        '`"object"`: `{"type": "object"}`, `{"properties": ...}`, a top-level '
        '`anyOf` or `$ref` with `$defs`, a bare `{"$schema": ...}` (gitlab\'s '
        "published tools)",
        "read as `{name: type}` shorthand: each keyword becomes a required "
        "string parameter (`type`, `anyOf`, `$schema`), and calls are "
        "validated against that",
        'served as the schema it is (`"type": "object"` added when absent); '
        "calls are validated against it",
        "repair: read as JSON Schema only where upstream's shorthand reading "
        "cannot be what the author meant (a value no shorthand holds, "
        '`"type": "object"` or a `$schema` URI) and every key is a keyword '
        'with a value of its type; string-valued shorthand (`{"title": "str"}`) '
        "is read as upstream reads it (patch `json-schema-dicts`)",
        _repaired_json_schema,
        "json-schema-dicts",
    ),
    Row(
        "remote-ref",
        "A `$ref` that resolves outside the tool's schema (`https:`, `file:`, "
        "a relative URI)",
        "fetched with a blocking request inside the event loop on every call "
        "(a `DeprecationWarning` each time): what it fetches is enforced, and "
        "when the fetch fails, or the warning is an error (`-W error`), the "
        "call is an error result (`Unresolvable`)",
        "a local `file:` document (no host, or `localhost`) is read once, on "
        "the first call that reaches it, and enforced as upstream enforces "
        "it, without the warning, so also under `-W error`; any other "
        "document is never fetched: a call whose arguments reach it is "
        "refused, an error result naming the tool and the document "
        "(`Tool 't': these arguments cannot be checked: $ref '...' names "
        "another document, which is not fetched`), and the handler is not "
        "run; a call that does not reach it is validated and answered as "
        "upstream answers it",
        "repair: network I/O inside the event loop on every call, and a file "
        "read on every call that a `-W error` run turns into an error result; "
        "without network upstream refuses these calls too (`Unresolvable`), "
        "with network what it fetches decides; to keep a remote part "
        "checked, copy it into `$defs` (patch `ref-policy`)",
        _remote_ref_call,
        "ref-policy",
    ),
    Row(
        "remote-ref-notice",
        "The same tool",
        "nothing",
        "one log record (a notice), at its server's first `tools/list` or "
        "`tools/call`, naming the tool and each reference's JSON Pointer, and "
        "whether it is read once (a local file), checked offline (a JSON "
        "Schema metaschema, which jsonschema bundles) or never fetched",
        "hazard made visible (patch `schema-checks`)",
        _notice(r"Tool '[^']*': input_schema refers outside itself"),
        "schema-checks",
    ),
    Row(
        "remote-ref-call-notice",
        "The same tool, on the first call that reaches a reference to a "
        "document other than a local file",
        "nothing",
        "one log record (a notice) naming the tool and the document the "
        "reference names, saying that the calls it governs are refused, once "
        "per tool and document",
        "hazard made visible: which calls are refused, and how to keep them "
        "checked (patch `ref-policy`)",
        _notice(r"Tool '[^']*': \$ref '[^']*' names another document"),
        "ref-policy",
    ),
    Row(
        "fails-every-call-notice",
        "A schema that fails its metaschema, a `pattern` Python's `re` cannot "
        "compile, a local `$ref` to nothing, NaN",
        "served; every call is an error result",
        "the same, plus one notice (at the server's first `tools/list` or "
        "`tools/call`) naming the tool and listing each place",
        "hazard made visible (patch `schema-checks`)",
        _notice(r"Tool '[^']*': input_schema would fail every call"),
        "schema-checks",
    ),
    Row(
        "misspelled-keyword-notice",
        "A key in a schema that is one or two edits from a JSON Schema keyword "
        "(`itmes`, `requried`)",
        "served as written; the key constrains nothing",
        "the same, plus one notice per tool (at the server's first "
        "`tools/list` or `tools/call`) naming the first such key, its JSON "
        "Pointer and the keyword it is near; a tool with `strict=True` is "
        "refused for any key that is not a keyword",
        "hazard made visible (patch `strict-schema-checks`)",
        _notice(r"Tool '[^']*': input_schema: #[^:]*: '[^']*' is not a JSON"),
        "strict-schema-checks",
    ),
    Row(
        "too-deep-notice",
        "A schema nested deeper than 128 levels",
        "served as written: mcp cannot serialize it, so the server's "
        "`tools/list` fails (mcp 2.x) or the server stops (mcp 1.x), and "
        "every call is an error result from Python's `RecursionError`, worded "
        "after whichever operation reached the recursion limit (`maximum "
        "recursion depth exceeded while calling a Python object`, `... in "
        "comparison`), which depends on how deep the stack already is",
        "the same, plus one notice, logged before the first `tools/list` or "
        "`tools/call` is answered; the error result's wording depends on the "
        "stack's depth in the same way (patch `compiled-argument-validators` "
        "builds the validator with other frames than `jsonschema.validate`)",
        "hazard made visible (patch `schema-checks`)",
        _too_deep,
        ("schema-checks", "compiled-argument-validators"),
    ),
    Row(
        "non-object-top-notice",
        'An `input_schema` dict whose top-level `type` is not `"object"` '
        '(`{"type": "array", ...}`, `{"type": ["object", "null"]}`)',
        "read as shorthand (or, with `properties`, served as written, which "
        "mcp 2.x refuses to list)",
        "the same, plus one notice (when its server is built) saying what the "
        "tool became",
        "hazard made visible (patch `json-schema-dicts`)",
        _notice(r"Tool '[^']*': input_schema has the top-level"),
        "json-schema-dicts",
    ),
    Row(
        "duplicate-names-notice",
        "Two tools with one name in one server that differ (description, "
        "schema, handler, ...)",
        "both listed; calls reach the last one's handler (Claude Code shows "
        "the model the first one's definition)",
        "the same, plus one notice (when the server is built) naming the "
        "fields that differ",
        "hazard made visible (patch `tool-field-checks`)",
        _notice(r"SDK MCP server '[^']*' has two tools named"),
        "tool-field-checks",
    ),
    Row(
        "unknown-class-notice",
        "An `input_schema` that is a class other than a TypedDict or a "
        "pydantic model (a dataclass; a `typing_extensions.TypedDict` on "
        "Python 3.11-3.12, which `typing.is_typeddict` does not recognize)",
        "served as an object without properties; any arguments reach the handler",
        "the same, plus one notice (when its server is built) saying why",
        "hazard made visible (patch `pydantic-input-models`)",
        _notice(r"Tool '[^']*': input_schema .* is (neither|a typing_extensions)"),
        "pydantic-input-models",
    ),
    Row(
        "pydantic-model",
        "A pydantic `BaseModel` subclass as `input_schema`",
        "served as an object without properties; the handler gets the "
        "arguments dict, unchecked",
        "served as the model's JSON Schema; each call is validated by the "
        "model (a call it refuses is an error result listing every failing "
        "field) and the handler gets the arguments dict, as upstream's did "
        "(the model instance only if its parameter is annotated with the model)",
        "repair: upstream tells the model of no parameter and checks nothing "
        "(patch `pydantic-input-models`)",
        _model_class,
        "pydantic-input-models",
    ),
    Row(
        "is-error-wire-name",
        'A handler that returns `"isError": True` (MCP\'s spelling of `"is_error"`)',
        "ignored: the result is a success, and the model reads the failure as one",
        "an error result, as with `is_error` (`is_error` wins when both are returned)",
        "repair: 5 of 21 public repositories' tools return it (patch "
        "`handler-is-error`)",
        _is_error_wire_name,
        "handler-is-error",
    ),
    Row(
        "logs-of-a-repaired-call",
        "A log record (an unsupported content type, a binary resource) of a "
        "call that a row above accounts for",
        "logged when upstream's handler ran",
        "logged when the fork's handler ran",
        "consequence of the repair that made the handler run",
        _consequence,
        None,
    ),
    Row(
        "new-arguments",
        "A docs example that uses a new argument (`strict`, `input_examples`, "
        "`extra_fields`) or imports a new name (`ToolFieldsReport`)",
        "`TypeError`: no such keyword; `ImportError`: no such name",
        "the tool is defined, listed and called",
        "opt-in: the feature itself",
        _new_argument,
        None,
    ),
]


def explain(difference: Difference, rows: list[Row] | None = None) -> Row | None:
    """The row of ``rows`` (default: all of them) that accounts for ``difference``."""
    difference.allowed = rows
    for row in ROWS if rows is None else rows:
        if row.matches(difference):
            return row
    return None


def pull_request_rows(slug: str) -> list[Row]:
    """The rows a pull request may show against pristine + its dependencies:
    its own, and those any patch may show."""
    return [
        row
        for row in ROWS
        if row.patch is None
        or (slug == row.patch if isinstance(row.patch, str) else slug in row.patch)
    ]


# ---------------------------------------------------------------------------
# docs/differences.md


def table() -> str:
    lines = [
        "| row | case | upstream 0.2.189 | fork | why |",
        "|---|---|---|---|---|",
    ]
    for row in ROWS:
        lines.append(
            f"| `{row.key}` | {row.case} | {row.upstream} | {row.fork} | {row.why} |"
        )
    return "\n".join(lines)


def figures_text(figures: dict[str, Any]) -> str:
    by_row = ", ".join(f"`{k}` {n:,}" for k, n in figures["by_row"].items())
    return (
        f"- {figures['cases']:,} cases ({figures['generated']:,} generated, "
        f"{figures['named']} named, {figures['corpus']} from the corpus, "
        f"{figures['docs']} from the docs), {figures['calls']:,} tool calls;\n"
        f"- {figures['differences']:,} differences in "
        f"{figures['cases_with_differences']:,} cases, every one accounted for "
        f"by the {figures['rows']} rows of the table;\n"
        f"- by row: {by_row}."
    )


def read_figures(major: str) -> str:
    from tools.doc_blocks import read_block

    return read_block(DOC, f"differential-mcp{major}")


def write_figures(major: str, text: str) -> None:
    from tools.doc_blocks import write_block

    write_block(DOC, f"differential-mcp{major}", text)


def main(argv: list[str]) -> int:
    from tools.doc_blocks import read_block, write_block

    if argv == ["--write"]:
        write_block(DOC, "differences", table())
        return 0
    if read_block(DOC, "differences") != table():
        print(f"{DOC} is stale: python -m tests.differential.differences --write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
