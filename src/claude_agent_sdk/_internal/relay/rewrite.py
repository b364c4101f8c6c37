"""The tool-fields relay's request rewrite: pure functions, no I/O.

``lifecycle.py`` runs the relay; this is what it does to a Messages
API request body: add the declared ``strict`` and ``input_examples`` to the
SDK tools' entries, make the tools of the servers named in
``strict_mcp_servers`` strict (``strict: true`` and a strict-compatible
``input_schema``, made by ``strict_schema``'s own transform), check strict
mode's per-request caps on the result, and name the beta headers the
additions need.

The body is never re-serialized. Claude Code writes its bodies with
JavaScript's ``JSON.stringify``, whose spellings (numbers such as ``1e-7``
or ``1e+21``, escapes such as ``\\ud800`` for a lone UTF-16 surrogate) a
Python round trip would not keep, and may even refuse to write. Instead the
body's structure is located with the standard library's own scanner, and
only the new members (``,"strict":true``) are written into the original
text, next to the entry they belong to; every other byte is left as sent.
A body whose ``tools`` cannot be located unambiguously is left unchanged,
and the result says which tools lost their fields and why.
"""

from __future__ import annotations

import functools
import json
import json.decoder
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..strict_schema import (
    StrictLimitExceeded,
    find_limit_violations,
    find_strict_violations,
    strict_schemas,
)

ADVANCED_TOOL_USE_BETA = "advanced-tool-use-2025-11-20"
"""The beta under which the Messages API accepts ``input_examples``."""

STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-12-15"
"""The beta Claude Code sends with ``strict`` on its own tools."""

RELAYED_FIELDS = ("strict", "input_examples")
"""The tool fields the relay adds; everything else the SDK lists stays on
``tools/list``, because the Messages API defines no other tool fields."""

_BETA_FOR_FIELD = {
    "strict": STRUCTURED_OUTPUTS_BETA,
    "input_examples": ADVANCED_TOOL_USE_BETA,
}


@dataclass(frozen=True)
class StrictServers:
    """The MCP servers whose tools the relay makes strict (``strict_mcp_servers``).

    The relay does not know these servers' tools; it knows their names, and
    Claude Code names each tool ``mcp__<server>__<tool>`` with both parts
    normalized (``lifecycle.normalize_mcp_name``). A tool name is
    attributed to the longest normalized server name of ``mcp_servers`` it
    starts with, so a listed server ``a`` does not take in the tools of an
    unlisted ``a__b``.
    """

    listed: frozenset[str]
    """The normalized names of the servers in ``strict_mcp_servers``."""

    known: tuple[str, ...] = ()
    """The normalized names of every server in ``mcp_servers``."""

    opted_in: Callable[[], Collection[str]] = frozenset
    """API names of further tools to make strict, read on each request: the
    tools SDK servers mark ``_meta["anthropic/strict"]: true``."""

    order: tuple[str, ...] = ()
    """``listed`` in ``strict_mcp_servers`` order: which tools stay strict
    when a request's strict tools go over a cap."""

    def ranker(self) -> Callable[[str], int]:
        """A tool's rank for staying strict at the caps (lower first): SDK
        tools 0, then each server's in ``strict_mcp_servers`` order."""
        opted_in = frozenset(self.opted_in())
        servers = sorted(self.order, key=len, reverse=True)

        def rank(name: str) -> int:
            if name in opted_in:
                return 0
            for server in servers:
                if name.startswith(f"mcp__{server}__"):
                    return 1 + self.order.index(server)
            return 1 + len(self.order)

        return rank

    def markers(self) -> list[str]:
        """Texts one of which a body must hold to carry such a tool."""
        return [f"mcp__{server}__" for server in sorted(self.listed)] + sorted(
            self.opted_in()
        )

    def matcher(self) -> Callable[[str], bool]:
        """Whether an API tool name is one to make strict (for one request)."""
        opted_in = frozenset(self.opted_in())
        servers = sorted(set(self.known) | self.listed, key=len, reverse=True)
        prefixes = [(f"mcp__{server}__", server in self.listed) for server in servers]

        def wants(name: str) -> bool:
            if name in opted_in:
                return True
            return next(
                (listed for prefix, listed in prefixes if name.startswith(prefix)),
                False,
            )

        return wants


@dataclass
class Rewrite:
    """What the relay did to one request body."""

    body: bytes
    modified_tools: list[str] = field(default_factory=list)
    added_strict: bool = False
    added_examples: bool = False
    exceeded: list[StrictLimitExceeded] = field(default_factory=list)
    unchanged_because: str | None = None
    """Set when the body had declared tools but was left unchanged: why."""
    lost_tools: list[str] = field(default_factory=list)
    """The declared tools that did not get their fields (with the reason above)."""
    not_strict: list[tuple[str, str]] = field(default_factory=list)
    """Tools of ``strict_mcp_servers`` sent unchanged because no strict form
    of their schema exists, each with the reason."""
    over_caps: list[str] = field(default_factory=list)
    """Tools sent without ``strict`` on this request because the strict
    tools together went over a per-request cap (the limits in ``caps``)."""
    caps: list[StrictLimitExceeded] = field(default_factory=list)

    @property
    def betas(self) -> list[str]:
        """The betas the additions need, in the order they are added."""
        return [
            beta
            for added, beta in (
                (self.added_strict, STRUCTURED_OUTPUTS_BETA),
                (self.added_examples, ADVANCED_TOOL_USE_BETA),
            )
            if added
        ]


class _UnsafeError(Exception):
    """The body is JSON, but where to write is ambiguous."""


def rewrite_body(
    body: bytes,
    fields_by_name: Mapping[str, Mapping[str, Any]],
    strict_servers: StrictServers | None = None,
) -> Rewrite:
    """Add the declared fields to the matching ``tools`` entries of ``body``.

    With ``strict_servers``, each of their tools is also given
    ``strict: true`` and, in place of its ``input_schema``, the schema's
    strict form (``strict_schema.strict_schemas``: objects closed, what
    strict mode cannot compile moved into descriptions). A tool whose schema
    has no strict form is left as sent, and named in ``not_strict``; one
    already strict with a schema strict mode accepts is left as it is.

    Returns the body unchanged (the same bytes) when there is nothing to add,
    and also when it cannot be changed safely (not UTF-8, not JSON, two
    ``tools`` keys, an entry with a repeated key, a value that has no JSON
    spelling); then ``unchanged_because`` says why and ``lost_tools`` names
    the declared tools it holds. When something was added, the strict tools
    of the resulting request (those marked ``strict: true``, whoever marked
    them) are counted against strict mode's per-request caps; any cap they go
    over is in ``exceeded``, and such a request must not be sent.
    """
    unchanged = Rewrite(body)
    # Cheap test first: tool names are plain ASCII, which JSON.stringify
    # never escapes, so a name that is not in the raw bytes is not in the
    # request, and most requests (tool search's first turn, side requests)
    # skip parsing altogether.
    if not fields_by_name and strict_servers is None:
        return unchanged
    # Names are looked for from the first "tools" key token on: the
    # top-level one is at or after it, and in Claude Code's key order it
    # follows the messages, so a long conversation is not searched once
    # per declared tool.
    tail = body.find(b'"tools"')
    if tail == -1:
        return unchanged
    present = [name for name in fields_by_name if body.find(name.encode(), tail) != -1]
    markers = (
        []
        if strict_servers is None
        else [
            marker
            for marker in strict_servers.markers()
            if body.find(marker.encode(), tail) != -1
        ]
    )
    if not present and not markers:
        return unchanged
    # Named in a warning when the body is left unchanged.
    lost = present + [m + "*" if m.endswith("__") else m for m in markers]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return _left_unchanged(body, lost, "the body is not valid UTF-8")
    try:
        tools = _locate_tools(text, present + markers)
    except _UnsafeError as why:
        return _left_unchanged(body, lost, str(why))
    except (ValueError, IndexError):
        return _left_unchanged(body, lost, "the body is not valid JSON")
    if tools is None:
        return unchanged

    wants_strict = (
        (lambda name: False) if strict_servers is None else strict_servers.matcher()
    )

    def relayed(name: Any) -> bool:
        return isinstance(name, str) and (name in fields_by_name or wants_strict(name))

    rank = (lambda name: 0) if strict_servers is None else strict_servers.ranker()
    rewrite = Rewrite(body)
    edits: list[tuple[int, int, str]] = []
    # Strict whatever the relay does (marked so by whoever sent them).
    fixed: list[tuple[str, str]] = []
    # Made strict by the relay, if the caps allow: (rank, position, name,
    # schema key, edits with strict, edits without, what each adds).
    candidates: list[tuple[int, int, str, str, _Edits, _Edits, list[str], list[str]]]
    candidates = []
    try:
        for position, entry in enumerate(tools):
            if entry is None:
                continue
            name = entry.value.get("name")
            if not entry.scanned and relayed(name):
                # Its name was written with escapes: scan it after all.
                entry = _scanned(text, entry.start, entry.value)
            if len(entry.names) > 1 and any(relayed(n) for n in entry.names):
                raise _UnsafeError("a tools entry names more than one tool")
            name = entry.value.get("name")
            declared: Mapping[str, Any] | None = (
                fields_by_name.get(name) if isinstance(name, str) else None
            )
            form: tuple[int, int, str] | None = None
            if isinstance(name, str) and wants_strict(name):
                external = _external_form(text, entry)
                if isinstance(external, _NoStrictForm):
                    rewrite.not_strict.append((name, external.reason))
                else:
                    form = external
                    declared = {**(declared or {}), "strict": True}
            already = entry.value.get("strict") is True
            if not declared:
                if already:
                    fixed.append((str(name), _schema_key(text, entry)))
                continue
            entry_edits, added = _edits_for(text, entry, declared)
            if form is not None:
                entry_edits = [form, *entry_edits]
            key = form[2] if form is not None else _schema_key(text, entry)
            if declared.get("strict") is True and not already:
                plain = {k: v for k, v in declared.items() if k != "strict"}
                without, added_without = _edits_for(text, entry, plain)
                candidates.append(
                    (
                        0 if name in fields_by_name else rank(str(name)),
                        position,
                        str(name),
                        key,
                        entry_edits,
                        without,
                        added,
                        added_without,
                    )
                )
                continue
            if added or form is not None:
                edits.extend(entry_edits)
                rewrite.modified_tools.append(str(name))
                rewrite.added_strict |= "strict" in added or form is not None
                rewrite.added_examples |= "input_examples" in added
            if declared.get("strict") is True or already:
                fixed.append((str(name), key))
    except _UnsafeError as why:
        return _left_unchanged(body, lost, str(why))
    # At the caps: the first candidates (SDK tools, then strict_mcp_servers
    # order, then as listed) stay strict, as many as fit; counts only grow
    # with more tools, so the longest fitting prefix is found by bisection.
    candidates.sort(key=lambda c: (c[0], c[1]))
    strict_tools = fixed + [(c[2], c[3]) for c in candidates]
    keep = len(candidates)
    if candidates and _limit_violations(tuple(strict_tools)):
        rewrite.caps = list(_limit_violations(tuple(strict_tools)))
        low, high = 0, len(candidates)
        while low < high:
            middle = (low + high + 1) // 2
            trial = fixed + [(c[2], c[3]) for c in candidates[:middle]]
            if _limit_violations(tuple(trial)):
                high = middle - 1
            else:
                low = middle
        keep = low
        strict_tools = fixed + [(c[2], c[3]) for c in candidates[:keep]]
    for index, candidate in enumerate(candidates):
        name, with_strict, without, added, added_without = (
            candidate[2],
            *candidate[4:],
        )
        strict = index < keep
        if not strict:
            rewrite.over_caps.append(name)
        chosen, adds = (with_strict, added) if strict else (without, added_without)
        if chosen:
            edits.extend(chosen)
            rewrite.modified_tools.append(name)
            rewrite.added_strict |= strict
            rewrite.added_examples |= "input_examples" in adds
    if not edits:
        return Rewrite(
            body,
            not_strict=rewrite.not_strict,
            over_caps=rewrite.over_caps,
            caps=rewrite.caps,
        )
    rewrite.exceeded = list(_limit_violations(tuple(strict_tools)))
    # One join: linear in the body and the edits, however many there are;
    # an ASCII body (text index = byte index) is spliced as bytes.
    ascii_body = len(text) == len(body)
    source: str | bytes = body if ascii_body else text
    pieces: list[Any] = []
    last = 0
    for start, end, replacement in sorted(edits):
        pieces += (source[last:start], replacement.encode("utf-8"))
        last = end
    pieces.append(source[last:])
    if ascii_body:
        rewrite.body = b"".join(pieces)
    else:
        rewrite.body = "".join(
            p if isinstance(p, str) else p.decode("utf-8") for p in pieces
        ).encode("utf-8")
    return rewrite


_Edits = list[tuple[int, int, str]]


def _left_unchanged(body: bytes, present: list[str], why: str) -> Rewrite:
    return Rewrite(body, unchanged_because=why, lost_tools=present)


# -- locating the tools -------------------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
# The C string scanner ``json.loads`` itself uses (typeshed leaves it out).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


@dataclass
class _Entry:
    """One object in ``tools``: its value, and where its members are."""

    value: dict[str, Any]
    members: list[tuple[str, int, int]]  # key, value start, value end
    repeated_key: bool
    names: list[Any]  # every "name" member's value (more than one if repeated)
    start: int  # where it starts in the text
    scanned: bool = False  # whether members and names are filled in


def _scanned(text: str, index: int, value: dict[str, Any]) -> _Entry:
    """The entry at ``text[index]``, member by member."""
    members, _ = _members(text, index)
    keys = [key for key, *_ in members]
    return _Entry(
        value,
        [(key, start, stop) for key, start, stop, _ in members],
        len(set(keys)) != len(keys),
        [member for key, _, _, member in members if key == "name"],
        index,
        scanned=True,
    )


def _skip(text: str, index: int) -> int:
    # JSON.stringify writes no whitespace between tokens unless asked to.
    if text[index : index + 1] not in _SPACE:
        return index
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


_SPACE = frozenset(" \t\n\r")


def _scan_object(text: str, index: int, read: Callable[[str, int], int]) -> int:
    """Walk the object starting at ``text[index]`` (a ``{``): for each member,
    ``read(key, start)`` reads the value starting at ``start`` and returns
    where it ends. Returns the index just after the object; raises
    ValueError on anything not JSON."""
    index = _skip(text, index + 1)
    if text[index] == "}":
        return index + 1
    while True:
        if text[index] != '"':
            raise ValueError("expected a key")
        key, index = _scanstring(text, index + 1, True)
        index = _skip(text, index)
        if text[index] != ":":
            raise ValueError("expected ':'")
        index = _skip(text, read(key, _skip(text, index + 1)))
        if text[index] == ",":
            index = _skip(text, index + 1)
        elif text[index] == "}":
            return index + 1
        else:
            raise ValueError("expected ',' or '}'")


def _members(text: str, index: int) -> tuple[list[tuple[str, int, int, Any]], int]:
    """The members of the object starting at ``text[index]`` (a ``{``),
    with the index just after it. Raises ValueError on anything not JSON."""
    members: list[tuple[str, int, int, Any]] = []

    def read(key: str, start: int) -> int:
        value, end = _DECODER.raw_decode(text, start)
        members.append((key, start, end, value))
        return int(end)

    return members, _scan_object(text, index, read)


_TOOLS_KEY = re.compile(r'[{,][ \t\n\r]*"tools"[ \t\n\r]*:[ \t\n\r]*')


def _locate_tools(text: str, names: list[str]) -> list[_Entry | None] | None:
    """The entries of the body's top-level ``tools`` array (None for an
    entry that is not an object), or None when there is no such array.

    ``names`` are the declared tools the body may hold: only entries whose
    text holds one are scanned member by member (to find where to write);
    the others are decoded whole, by the C scanner.

    The messages, which make up nearly all of a long conversation's body,
    are not read: the ``"tools"`` key is found by a C-speed search, and it
    is the top-level one when what follows its value is members up to the
    body's last ``}`` (an object nested anywhere closes before that brace).
    In valid JSON a ``"tools"`` key token after ``{`` or ``,`` cannot lie
    inside a string. A body where that does not settle it is read whole.
    """
    start = _skip(text, 0)
    if text[start : start + 1] != "{":
        return _locate_tools_by_reading(text, names)
    top_level = [
        value for value in _tools_keys(text, start) if _closes_the_body(text, value)
    ]
    if not top_level:
        return _locate_tools_by_reading(text, names)
    if len(top_level) > 1:
        # JSON.parse keeps the last; other parsers may keep the first.
        raise _UnsafeError('the body has more than one "tools" key')
    value = top_level[0]
    if text[value] != "[":
        return None
    return _array_entries(text, value, names)[0]


def _tools_keys(text: str, start: int) -> Iterator[int]:
    """Where the value of each ``"tools"`` key token of ``text`` starts
    (``str.find``: C speed; the pattern only checks around each hit)."""
    found = text.find('"tools"', start)
    while found != -1:
        match = _TOOLS_KEY.match(text, _token_start(text, found))
        if match is not None and match.end() > found:
            yield match.end()
        found = text.find('"tools"', found + 7)


def _token_start(text: str, index: int) -> int:
    """The index of the ``{`` or ``,`` a key at ``index`` follows (if any)."""
    before = index - 1
    while before > 0 and text[before] in _SPACE:
        before -= 1
    return max(before, 0)


def _closes_the_body(text: str, index: int) -> bool:
    """Whether the value at ``text[index]`` is followed by ``,"key":value``
    members, then the last ``}`` of ``text``."""
    try:
        index = _skip(text, int(_DECODER.raw_decode(text, index)[1]))
        while text[index : index + 1] == ",":
            index = _skip(text, index + 1)
            if text[index : index + 1] != '"':
                return False
            index = _skip(text, _scanstring(text, index + 1, True)[1])
            if text[index : index + 1] != ":":
                return False
            index = _skip(
                text, int(_DECODER.raw_decode(text, _skip(text, index + 1))[1])
            )
        return text[index : index + 1] == "}" and _skip(text, index + 1) == len(text)
    except (ValueError, IndexError):
        return False


def _locate_tools_by_reading(text: str, names: list[str]) -> list[_Entry | None] | None:
    """``_locate_tools`` by reading the whole body, member by member."""
    index = _skip(text, 0)
    if text[index] != "{":
        _DECODER.raw_decode(text, index)  # valid JSON that is not an object?
        return None
    tools: list[_Entry | None] | None = None
    seen_tools = False

    def read(key: str, start: int) -> int:
        nonlocal tools, seen_tools
        if key == "tools":
            if seen_tools:
                # JSON.parse keeps the last; other parsers may keep the first.
                raise _UnsafeError('the body has more than one "tools" key')
            seen_tools = True
            if text[start] == "[":
                tools, end = _array_entries(text, start, names)
                return end
        return int(_DECODER.raw_decode(text, start)[1])

    index = _scan_object(text, index, read)
    if _skip(text, index) != len(text):
        raise ValueError("extra data after the body")
    return tools


@functools.lru_cache(maxsize=16)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first, so that one name that begins another still matches.
    ordered = sorted(names, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered)) or "(?!)")


def _array_entries(
    text: str, index: int, names: list[str]
) -> tuple[list[_Entry | None], int]:
    entries: list[_Entry | None] = []
    index = _skip(text, index + 1)
    if text[index] == "]":
        return entries, index + 1
    # Each entry's own text is searched for a declared name, once: linear
    # in the tools, whatever their number and the body's size.
    search = _names_pattern(tuple(names)).search
    while True:
        value, end = _DECODER.raw_decode(text, index)
        if not isinstance(value, dict):
            entries.append(None)
        elif search(text, index, end) is not None:
            entries.append(_scanned(text, index, value))
        else:
            entries.append(_Entry(value, [], False, [], index))
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)
        elif text[index] == "]":
            return entries, index + 1
        else:
            raise ValueError("expected ',' or ']'")


# -- writing the fields -------------------------------------------------------


def _edits_for(
    text: str, entry: _Entry, declared: Mapping[str, Any]
) -> tuple[list[tuple[int, int, str]], list[str]]:
    """The text edits (``(start, end, replacement)`` on ``text``) that give
    ``entry`` the declared fields, and the fields they add."""
    wanted = [
        key
        for key in RELAYED_FIELDS
        if key in declared
        and not (key in entry.value and _json_equal(entry.value[key], declared[key]))
    ]
    if not wanted:
        return [], []
    if entry.repeated_key:
        raise _UnsafeError(f"the tools entry {entry.value.get('name')!r} repeats a key")
    edits: list[tuple[int, int, str]] = []
    inserted = ""
    for key in wanted:
        encoded = _encode(declared[key], key)
        span = next(
            ((start, stop) for name, start, stop in entry.members if name == key), None
        )
        if span is None:
            inserted += f',"{key}":{encoded}'
        else:  # present with another value: the declared one replaces it
            edits.append((span[0], span[1], encoded))
    if inserted:
        # Right after the entry's last member: an entry with a name has one.
        last_end = entry.members[-1][2]
        edits.append((last_end, last_end, inserted))
    return edits, wanted


@dataclass(frozen=True)
class _NoStrictForm:
    reason: str


def _external_form(
    text: str, entry: _Entry
) -> tuple[int, int, str] | _NoStrictForm | None:
    """The edit that replaces the entry's ``input_schema`` by its strict
    form, None when the schema may stay as sent, or why it has no strict form."""
    span = next(
        ((start, stop) for key, start, stop in entry.members if key == "input_schema"),
        None,
    )
    if span is None:
        return _NoStrictForm("the tool has no input_schema")
    if entry.repeated_key:
        raise _UnsafeError(f"the tools entry {entry.value.get('name')!r} repeats a key")
    form = _strict_form(text[span[0] : span[1]], entry.value.get("strict") is True)
    if isinstance(form, _NoStrictForm) or form is None:
        return form
    return (span[0], span[1], form)


@functools.lru_cache(maxsize=256)
def _strict_form(schema_text: str, marked_strict: bool) -> str | _NoStrictForm | None:
    # Keyed by the schema as sent: the CLI sends the same tools every turn.
    schema = json.loads(schema_text)
    if (
        marked_strict
        and isinstance(schema, dict)
        and not find_strict_violations(schema)
    ):
        return None  # already strict, with a schema strict mode takes
    forms = strict_schemas(schema, describe=True)
    if forms.violations:
        return _NoStrictForm(
            "its input schema has no strict form: "
            + "; ".join(str(violation) for violation in forms.violations)
        )
    if _json_equal(schema, forms.served):
        return None
    return _encode(forms.served, "input_schema")


def _json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values (``True`` is not ``1`` here, unlike Python)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _encode(value: Any, key: str) -> str:
    """``value`` in compact JSON, non-ASCII as is when it can be UTF-8."""
    try:
        encoded = json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError) as error:
        raise _UnsafeError(f"the declared {key} has no JSON spelling") from error
    try:
        encoded.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only its escape is UTF-8
        encoded = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return encoded


def _schema_key(text: str, entry: _Entry) -> str:
    """The entry's ``input_schema`` as JSON text, to count its parameters
    once per distinct schema: as sent when the entry was scanned, else
    re-encoded (ASCII only, so no schema, lone surrogates included, fails)."""
    for key, start, stop in entry.members:
        if key == "input_schema":
            return text[start:stop]
    return json.dumps(entry.value.get("input_schema"), separators=(",", ":"))


@functools.lru_cache(maxsize=64)
def _limit_violations(
    strict_tools: tuple[tuple[str, str], ...],
) -> tuple[StrictLimitExceeded, ...]:
    # The CLI sends the same tools on every turn of a query, so the counts
    # are kept (keyed by the encoded schemas) instead of walked each time.
    return tuple(
        find_limit_violations(
            (name, json.loads(schema)) for name, schema in strict_tools
        )
    )


# -- headers ------------------------------------------------------------------


def with_beta(
    headers: list[tuple[bytes, bytes]], beta: str = ADVANCED_TOOL_USE_BETA
) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``beta`` in ``anthropic-beta`` (appended if missing)."""
    return with_betas(headers, (beta,))


def with_betas(
    headers: list[tuple[bytes, bytes]], betas: Iterable[str]
) -> list[tuple[bytes, bytes]]:
    """``headers`` with each of ``betas`` in ``anthropic-beta``, once.

    A beta already named (in any ``anthropic-beta`` line) is left where it
    is; missing ones are appended, in the order given, to the last line, so
    the betas already sent keep their order. Without the header, one is
    added at the end.
    """
    result = list(headers)
    lines = [
        i for i, (name, _) in enumerate(result) if name.lower() == b"anthropic-beta"
    ]
    sent = {part.strip() for i in lines for part in result[i][1].split(b",")}
    missing = [
        beta.encode() for beta in dict.fromkeys(betas) if beta.encode() not in sent
    ]
    if not missing:
        return headers
    added = b",".join(missing)
    if lines:
        index = lines[-1]
        name, value = result[index]
        stripped = value.rstrip(b", \t")
        result[index] = (name, stripped + b"," + added if stripped.strip() else added)
    else:
        result.append((b"anthropic-beta", added))
    return result


def not_strict_message(tool: str, reason: str) -> str:
    return (
        f"tool_fields_relay is sending {tool} (strict_mcp_servers) without "
        f"strict: {reason}"
    )


def over_caps_message(tools: Iterable[str], rewrite: Rewrite) -> str:
    return (
        f"tool_fields_relay is sending {', '.join(tools)} without strict: the "
        "request's strict tools go over strict mode's per-request limits ("
        + "; ".join(str(limit) for limit in rewrite.caps)
        + "), so only the first stay strict (SDK tools first, then "
        "strict_mcp_servers order)"
    )


def limits_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay did not send this request: adding strict to "
        f"{', '.join(rewrite.modified_tools)} goes over strict mode's per-request "
        "limits: " + "; ".join(str(limit) for limit in rewrite.exceeded)
    )


def unchanged_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay forwarded a request unchanged because "
        f"{rewrite.unchanged_because}: {', '.join(rewrite.lost_tools)} did not get "
        "their strict/input_examples on it"
    )
