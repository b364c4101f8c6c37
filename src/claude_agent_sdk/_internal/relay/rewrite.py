"""The tool-fields relay's request rewrite: pure functions, no I/O.

Adds the declared ``strict`` and ``input_examples`` to the SDK tools' entries
of a Messages API body, makes the tools of ``strict_mcp_servers`` strict,
checks strict mode's per-request caps and names the betas the additions
need, writing only the new members into the original bytes (docs/relay.md)."""

from __future__ import annotations

import contextlib
import functools
import json
import json.decoder
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..strict.transform import (
    StrictLimitExceeded,
    count_parameters,
    find_limit_violations,
    find_strict_violations,
    select_within_limits,
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
    normalized (``evidence.normalize_mcp_name``). A tool name is
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

    def ranker(self, opted_in: Collection[str] | None = None) -> Callable[[str], int]:
        """A tool's rank for staying strict at the caps (lower first): SDK
        tools 0, then each server's in ``strict_mcp_servers`` order."""
        opted_in = frozenset(self.opted_in() if opted_in is None else opted_in)
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

    def matcher(self, opted_in: Collection[str] | None = None) -> Callable[[str], bool]:
        """Whether an API tool name is one to make strict (for one request:
        ``opted_in`` as read for it, else read now)."""
        opted_in = frozenset(self.opted_in() if opted_in is None else opted_in)
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


class Rewrite:
    """What the relay did to one request body."""

    def __init__(
        self,
        body: bytes,
        *,
        parts: tuple[bytes | memoryview, ...] | None = None,
        modified_tools: list[str] | None = None,
        added_strict: bool = False,
        added_examples: bool = False,
        exceeded: list[StrictLimitExceeded] | None = None,
        unchanged_because: str | None = None,
        lost_tools: list[str] | None = None,
        not_strict: list[tuple[str, str]] | None = None,
        over_caps: list[str] | None = None,
        caps: list[StrictLimitExceeded] | None = None,
        over_caps_why: list[tuple[str, str]] | None = None,
    ) -> None:
        self._body: bytes | None = body if parts is None else None
        self.parts = parts
        """The body as pieces to send one after the other (a splice not
        joined: what is before the ``tools`` array, the array as changed,
        what follows), or None; ``body`` joins them when asked for."""
        self.modified_tools = [] if modified_tools is None else modified_tools
        self.added_strict = added_strict
        self.added_examples = added_examples
        self.exceeded = [] if exceeded is None else exceeded
        self.unchanged_because = unchanged_because
        """Set when the body had declared tools but was left unchanged: why."""
        self.lost_tools = [] if lost_tools is None else lost_tools
        """The declared tools that did not get their fields (with the reason above)."""
        self.not_strict = [] if not_strict is None else not_strict
        """Tools of ``strict_mcp_servers`` sent unchanged because no strict form
        of their schema exists, each with the reason."""
        self.over_caps = [] if over_caps is None else over_caps
        """Tools sent without ``strict`` on this request because the strict
        tools together went over a per-request cap (the limits in ``caps``)."""
        self.caps = [] if caps is None else caps
        self.over_caps_why = [] if over_caps_why is None else over_caps_why
        """``over_caps`` as ``(tool, cap)`` pairs: the cap (``"strict tools"``,
        ``"optional parameters"`` or ``"union-typed parameters"``) that the
        tool, skipped in order, would have gone over beside those kept."""

    @property
    def body(self) -> bytes:
        if self._body is None:
            assert self.parts is not None
            self._body = b"".join(self.parts)
            self.parts = None
        return self._body

    @body.setter
    def body(self, value: bytes) -> None:
        self._body, self.parts = value, None

    @property
    def pieces(self) -> tuple[bytes | memoryview, ...]:
        """The body as pieces, joined or not."""
        return (self._body,) if self.parts is None else self.parts  # type: ignore[return-value]

    @property
    def length(self) -> int:
        return sum(map(len, self.pieces))

    def __repr__(self) -> str:
        return (
            f"Rewrite(body={self.body!r}, modified_tools={self.modified_tools!r}, "
            f"unchanged_because={self.unchanged_because!r}, "
            f"lost_tools={self.lost_tools!r}, exceeded={self.exceeded!r})"
        )

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


class RewriteMemo:
    """What one relay remembers between requests: the top-level ``tools``
    array of the last request it rewrote, and what it made of it.

    Claude Code sends the same tools on every turn of a query (the
    conversation before them grows, and changes where it is edited), so a
    request whose ``tools`` array is the one seen last (byte for byte, found
    by a C-speed comparison at the offset from the end it had, else by a
    search for its bytes) gets the same result without any of it being
    decoded again: the work is a comparison of the array's bytes, a read of
    the few members after it, and one join. Anything else is decoded as for
    a first request, and remembered in its place.
    """

    def __init__(self) -> None:
        self._last: _Remembered | None = None
        self._encoded: dict[int, tuple[Any, str]] = {}

    def reuse(self, body: bytes, key: tuple[Any, ...]) -> Rewrite | None:
        last = self._last
        if last is None or len(key) != len(last.key):
            return None
        if any(a is not b and a != b for a, b in zip(key, last.key, strict=True)):
            return None
        tools = last.tools
        start = len(body) - last.from_end
        if start <= 0 or not body.startswith(tools, start):
            start = body.rfind(tools)
            if start <= 0:
                return None
        end = start + len(tools)
        first = skip_bytes(body, 0)
        if body[first : first + 1] != b"{" or not _key_before(body, start):
            return None
        if len(body) - end != len(last.tail) or not body.endswith(last.tail):
            # The members after the array are not the ones seen: read them.
            try:
                tail = body[end:].decode("utf-8")
            except UnicodeDecodeError:
                return None
            keys = members_to_the_end(tail, 0)
            if keys is None or "tools" in keys:
                return None
            last.tail = bytes(body[end:])
        last.from_end = len(body) - start
        return last.result(body, start, end)

    def remember(
        self,
        key: tuple[Any, ...],
        body: bytes,
        start: int,
        end: int,
        replaced: bytes | None,
        rewrite: Rewrite,
    ) -> None:
        self._last = _Remembered(
            key,
            bytes(body[start:end]),
            replaced,
            len(body) - start,
            rewrite,
            bytes(body[end:]),
        )

    def prepare(self, fields_by_name: Mapping[str, Mapping[str, Any]]) -> None:
        """Encode the declared values now (when the relay starts), so a
        query's first request does not; a value that fails to encode is
        left to fail on the request, where it always has."""
        for declared in fields_by_name.values():
            for key in RELAYED_FIELDS:
                if key in declared:
                    # A failure is met again on the request, as before.
                    with contextlib.suppress(Exception):
                        self.encoded(declared[key], key)

    def encoded(self, value: Any, key: str) -> str:
        """``_encode(value, key)``, once per declared value (they live as
        long as the relay, so their identity is a key)."""
        known = self._encoded.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        text = _encode(value, key)
        if len(self._encoded) >= 4096:
            self._encoded.clear()
        self._encoded[id(value)] = (value, text)
        return text


class _Remembered:
    def __init__(
        self,
        key: tuple[Any, ...],
        tools: bytes,
        replaced: bytes | None,
        from_end: int,
        rewrite: Rewrite,
        tail: bytes,
    ) -> None:
        self.key = key
        self.tools = tools
        self.tail = tail  # what followed the array: members up to the end
        self.replaced = replaced
        self.from_end = from_end
        self._rewrite = rewrite

    def result(self, body: bytes, start: int, end: int) -> Rewrite:
        done = self._rewrite
        parts = None
        if self.replaced is not None:
            view = memoryview(body)
            parts = (view[:start], self.replaced, view[end:])
        return Rewrite(
            body,
            parts=parts,
            modified_tools=list(done.modified_tools),
            added_strict=done.added_strict,
            added_examples=done.added_examples,
            exceeded=list(done.exceeded),
            unchanged_because=done.unchanged_because,
            lost_tools=list(done.lost_tools),
            not_strict=list(done.not_strict),
            over_caps=list(done.over_caps),
            caps=list(done.caps),
            over_caps_why=list(done.over_caps_why),
        )


def rewrite_body(
    body: bytes,
    fields_by_name: Mapping[str, Mapping[str, Any]],
    strict_servers: StrictServers | None = None,
    memo: RewriteMemo | None = None,
) -> Rewrite:
    """Add the declared fields to the matching ``tools`` entries of ``body``.

    With ``strict_servers``, each of their tools is also given
    ``strict: true`` and, in place of its ``input_schema``, the schema's
    strict form (``strict.transform.strict_schemas``: objects closed, what
    strict mode cannot compile moved into descriptions). A tool whose schema
    has no strict form is left as sent, and named in ``not_strict``; one
    already strict with a schema strict mode accepts is left as it is.

    Returns the body unchanged (the same bytes) when there is nothing to add,
    and also when it cannot be changed safely (not UTF-8, not JSON, an entry
    that names two tools or repeats a key the relay would replace, a value
    that has no JSON spelling);
    then ``unchanged_because`` says why and ``lost_tools`` names the declared
    tools it holds. When something was added, the strict tools of the
    resulting request (those marked ``strict: true``, whoever marked them)
    are counted against strict mode's per-request caps: the relay's own
    strict additions are degraded to fit (``over_caps``), and any cap the
    tools the request already marked strict go over by themselves is in
    ``exceeded`` (the request still goes out; the API answers it as it
    would without the relay).

    The work is the ``tools`` array's and the members after it, never the
    conversation's: the top-level ``"tools"`` key is looked for from the
    body's end (in Claude Code's key order the messages come first), and
    with a ``memo`` a ``tools`` array seen on the previous request is not
    decoded again (``RewriteMemo``).
    """
    unchanged = Rewrite(body)
    if not fields_by_name and strict_servers is None:
        return unchanged
    opted_in = frozenset(() if strict_servers is None else strict_servers.opted_in())
    key = (fields_by_name, strict_servers, opted_in)
    if memo is not None:
        reused = memo.reuse(body, key)
        if reused is not None:
            return reused
    wants_strict = (
        (lambda name: False)
        if strict_servers is None
        else strict_servers.matcher(opted_in)
    )

    def relayed(name: Any) -> bool:
        return isinstance(name, str) and (name in fields_by_name or wants_strict(name))

    try:
        located = _locate_tools(body, relayed)
    except _UnsafeError as why:
        return _left_unchanged(body, fields_by_name, strict_servers, str(why))
    except UnicodeDecodeError:
        return _left_unchanged(
            body, fields_by_name, strict_servers, "the body is not valid UTF-8"
        )
    except (ValueError, IndexError):
        return _left_unchanged(
            body, fields_by_name, strict_servers, "the body is not valid JSON"
        )
    if located is None:
        return unchanged
    try:
        rewrite, edits = _rewrite_tools(
            body, located, fields_by_name, strict_servers, opted_in, relayed, memo
        )
    except _UnsafeError as why:
        rewrite = _left_unchanged(body, fields_by_name, strict_servers, str(why))
        edits = []
    replaced = _splice(located, edits) if edits else None
    if memo is not None:
        memo.remember(key, body, located.start, located.stop, replaced, rewrite)
    if replaced is not None:
        view = memoryview(body)
        rewrite.parts = (view[: located.start], replaced, view[located.stop :])
        rewrite._body = None  # noqa: SLF001 - joined when asked for
    return rewrite


def _rewrite_tools(
    body: bytes,
    located: _Located,
    fields_by_name: Mapping[str, Mapping[str, Any]],
    strict_servers: StrictServers | None,
    opted_in: frozenset[str],
    relayed: Callable[[Any], bool],
    memo: RewriteMemo | None,
) -> tuple[Rewrite, _Edits]:
    """What to do to the located ``tools`` entries: the result (its body the
    one given) and the edits on ``located.text``."""
    text = located.text
    wants_strict = (
        (lambda name: False)
        if strict_servers is None
        else strict_servers.matcher(opted_in)
    )
    rank = (
        (lambda name: 0) if strict_servers is None else strict_servers.ranker(opted_in)
    )
    encode = (memo or RewriteMemo()).encoded
    rewrite = Rewrite(body)
    edits: _Edits = []
    # Strict whatever the relay does (marked so by whoever sent them).
    fixed: list[tuple[str, str]] = []
    # Made strict by the relay, if the caps allow: (rank, position, name,
    # schema key, edits with strict, edits without, what each adds).
    candidates: list[tuple[int, int, str, str, _Edits, _Edits, list[str], list[str]]]
    candidates = []
    for position, entry in enumerate(located.entries):
        if entry is None:
            continue
        names = entry.names
        if len(names) > 1 and any(relayed(n) for n in names):
            raise _UnsafeError("a tools entry names more than one tool")
        name = names[-1] if names else None
        declared: Mapping[str, Any] | None = (
            fields_by_name.get(name) if isinstance(name, str) else None
        )
        form: tuple[int, int, str] | None = None
        if strict_servers is not None and isinstance(name, str) and wants_strict(name):
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
        entry_edits, added = _edits_for(text, entry, declared, encode)
        if form is not None:
            entry_edits = [form, *entry_edits]
        strict = declared.get("strict") is True
        key = (
            ""  # counted only when strict
            if not (strict or already)
            else form[2]
            if form is not None
            else _schema_key(text, entry)
        )
        if strict and not already:
            plain = {k: v for k, v in declared.items() if k != "strict"}
            without, added_without = _edits_for(text, entry, plain, encode)
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
        if strict or already:
            fixed.append((str(name), key))
    # At the caps: in order (SDK tools, then strict_mcp_servers order, then
    # as listed) each candidate stays strict if it fits beside the tools
    # already strict and those kept before it, and is skipped otherwise: a
    # tool too wide for the caps never makes the ones after it non-strict.
    candidates.sort(key=lambda c: (c[0], c[1]))
    strict_tools = fixed + [(c[2], c[3]) for c in candidates]
    skipped: dict[int, str] = {}
    if candidates and _limit_violations(tuple(strict_tools)):
        rewrite.caps = list(_limit_violations(tuple(strict_tools)))
        kept, skipped_pairs = select_within_limits(
            [_counts(key) for _, key in fixed],
            [(str(i), _counts(c[3])) for i, c in enumerate(candidates)],
        )
        skipped = {int(i): cap for i, cap in skipped_pairs}
        kept_at = {int(i) for i in kept}
        strict_tools = fixed + [
            (c[2], c[3]) for i, c in enumerate(candidates) if i in kept_at
        ]
    for index, candidate in enumerate(candidates):
        name, with_strict, without, added, added_without = (
            candidate[2],
            *candidate[4:],
        )
        strict = index not in skipped
        if not strict:
            rewrite.over_caps.append(name)
            rewrite.over_caps_why.append((name, skipped[index]))
        chosen, adds = (with_strict, added) if strict else (without, added_without)
        if chosen:
            edits.extend(chosen)
            rewrite.modified_tools.append(name)
            rewrite.added_strict |= strict
            rewrite.added_examples |= "input_examples" in adds
    if not edits:
        return (
            Rewrite(
                body,
                not_strict=rewrite.not_strict,
                over_caps=rewrite.over_caps,
                caps=rewrite.caps,
                over_caps_why=rewrite.over_caps_why,
            ),
            [],
        )
    rewrite.exceeded = list(_limit_violations(tuple(strict_tools)))
    return rewrite, edits


def _splice(located: _Located, edits: _Edits) -> bytes:
    """The ``tools`` array's bytes with ``edits`` made (one join, linear in
    the array and the edits; an ASCII array is spliced as bytes)."""
    text = located.text[: located.length]
    source: str | bytes = located.raw if located.ascii else text
    pieces: list[Any] = []
    last = 0
    for start, end, replacement in sorted(edits):
        pieces += (source[last:start], replacement.encode("utf-8"))
        last = end
    pieces.append(source[last:])
    if located.ascii:
        return b"".join(pieces)
    return "".join(
        p if isinstance(p, str) else p.decode("utf-8") for p in pieces
    ).encode("utf-8")


_Edits = list[tuple[int, int, str]]


def _left_unchanged(
    body: bytes,
    fields_by_name: Mapping[str, Any],
    strict_servers: StrictServers | None,
    why: str,
) -> Rewrite:
    lost = lost_tools(body, fields_by_name, strict_servers)
    if not lost:
        return Rewrite(body)
    return Rewrite(body, unchanged_because=why, lost_tools=lost)


def lost_tools(
    body: bytes,
    fields_by_name: Mapping[str, Any],
    strict_servers: StrictServers | None,
) -> list[str]:
    """The declared tools (and ``strict_mcp_servers`` markers, as
    ``mcp__<server>__*``) a body that is left unchanged may hold: those
    named from its first ``"tools"`` token on, found by one search."""
    tail = body.find(b'"tools"')
    if tail == -1:
        return []
    markers = [] if strict_servers is None else strict_servers.markers()
    wanted = [*fields_by_name, *markers]
    if not wanted:
        return []
    found = set(_names_pattern(tuple(wanted)).findall(body, tail))
    return [n for n in fields_by_name if n.encode() in found] + [
        m + "*" if m.endswith("__") else m for m in markers if m.encode() in found
    ]


# -- locating the tools -------------------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_scan_once: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
# Decodes an object to its (key, value) pairs, in order, repeated keys kept.
_PAIRS = json.JSONDecoder(object_pairs_hook=list)
# The C string scanner ``json.loads`` itself uses (typeshed leaves it out).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class _Entry:
    """One object in ``tools`` that the rewrite looks at: its value, its
    top-level members as decoded pairs (repeated keys kept) when asked for,
    and, when an edit needs them, their places."""

    def __init__(self, text: str, start: int, end: int, value: dict[str, Any]) -> None:
        self._text = text
        self.start = start  # where it starts in the text
        self.end = end  # just after its "}"
        self.value = value  # as json.loads reads it (the last of repeated keys)
        self._pairs: list[tuple[str, Any]] | None = None
        self._members: list[tuple[str, int, int]] | None = None

    @property
    def pairs(self) -> list[tuple[str, Any]]:
        if self._pairs is None:
            self._pairs = _PAIRS.raw_decode(self._text, self.start)[0]
        return self._pairs

    @property
    def names(self) -> list[Any]:
        """Every "name" member's value (more than one if repeated)."""
        if self._text.count('"name"', self.start, self.end) < 2:
            return [self.value["name"]] if "name" in self.value else []
        return [value for key, value in self.pairs if key == "name"]

    @property
    def repeated_key(self) -> bool:
        keys = [key for key, _ in self.pairs]
        return len(set(keys)) != len(keys)

    def has(self, key: str) -> bool:
        return key in self.value

    def get(self, key: str) -> Any:
        return self.value.get(key)

    @property
    def members(self) -> list[tuple[str, int, int]]:
        """(key, value start, value end) of each member, in order."""
        if self._members is None:
            members, _ = _members(self._text, self.start)
            self._members = [(key, start, stop) for key, start, stop, _ in members]
        return self._members

    @property
    def scanned(self) -> bool:
        return self._members is not None

    @property
    def last_member_end(self) -> int:
        """Where the last member's value ends: before the ``}`` and any
        whitespace in front of it."""
        index = self.end - 1  # the "}"
        while self._text[index - 1] in _SPACE:
            index -= 1
        return index


@dataclass
class _Located:
    """The body's top-level ``tools`` array: where it is, and its entries."""

    start: int  # byte index of its "[" in the body
    stop: int  # byte index just after its "]"
    text: str  # the body from ``start`` on, decoded
    length: int  # the array's length in ``text``
    entries: list[_Entry | None]  # None: an entry the rewrite need not look at
    raw: bytes  # the array's bytes
    ascii: bool  # whether text and bytes indices are the same


def _skip(text: str, index: int) -> int:
    # JSON.stringify writes no whitespace between tokens unless asked to.
    if text[index : index + 1] not in _SPACE:
        return index
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


_SPACE = frozenset(" \t\n\r")
_SPACE_BYTES = frozenset(b" \t\n\r")


def skip_bytes(body: bytes, index: int) -> int:
    """The index of the first byte from ``index`` on that is not JSON whitespace."""
    while index < len(body) and body[index] in _SPACE_BYTES:
        index += 1
    return index


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


def _key_before(body: bytes, value: int) -> bool:
    """Whether the value at ``body[value]`` is that of a ``"tools"`` key
    token: ``{`` or ``,``, then ``"tools"``, then ``:``, whitespace between.
    In valid JSON such a token is a key, never text inside a string (its
    first quote follows ``{``, ``,`` or whitespace, so it is not escaped)."""
    index = value - 1
    while index >= 0 and body[index] in _SPACE_BYTES:
        index -= 1
    if index < 0 or body[index] != 0x3A:  # ":"
        return False
    index -= 1
    while index >= 0 and body[index] in _SPACE_BYTES:
        index -= 1
    if index < 6 or body[index - 6 : index + 1] != b'"tools"':
        return False
    index -= 7
    while index >= 0 and body[index] in _SPACE_BYTES:
        index -= 1
    return index >= 0 and body[index] in b"{,"


def _locate_tools(body: bytes, relayed: Callable[[Any], bool]) -> _Located | None:
    """The body's top-level ``tools`` array, or None when it has none.

    Only entries that name a relayed tool, or are marked ``strict: true``,
    are kept for the rewrite (each decoded to its member pairs at C speed);
    the others are stepped over.

    The conversation, nearly all of a long body, is not read: ``"tools"``
    key tokens are looked for from the body's end (C-speed ``rfind``), and
    the first whose value is followed by members up to the body's last
    ``}`` is the top-level key (an object nested anywhere closes before that
    brace), the last one, which ``JSON.parse`` keeps. A body where that does
    not settle it is read whole.
    """
    first = skip_bytes(body, 0)
    if body[first : first + 1] != b"{":
        return _locate_tools_by_reading(body, relayed)
    end = len(body)
    while True:
        found = body.rfind(b'"tools"', first, end)
        if found == -1:
            return _locate_tools_by_reading(body, relayed)
        end = found
        colon = skip_bytes(body, found + 7)
        if body[colon : colon + 1] != b":":
            continue
        start = skip_bytes(body, colon + 1)
        if not _key_before(body, start):
            continue
        text = body[start:].decode("utf-8")
        try:
            if text[:1] == "[":
                entries, length = _array_entries(text, 0, relayed)
            else:
                entries, length = None, int(_DECODER.raw_decode(text, 0)[1])
        except (ValueError, IndexError):
            continue  # not a value that closes the body: not this one
        if members_to_the_end(text, length) is None:
            continue
        if entries is None:
            return None  # "tools" is not an array
        raw = body[start : start + len(text[:length].encode("utf-8"))]
        return _Located(
            start,
            start + len(raw),
            text,
            length,
            entries,
            raw,
            len(raw) == length,
        )


def members_to_the_end(text: str, index: int) -> list[str] | None:
    """The keys of the ``,"key":value`` members from ``text[index]`` up to
    the last ``}`` of ``text``, or None when what follows is not that."""
    keys: list[str] = []
    try:
        index = _skip(text, index)
        while text[index : index + 1] == ",":
            index = _skip(text, index + 1)
            if text[index : index + 1] != '"':
                return None
            key, index = _scanstring(text, index + 1, True)
            keys.append(key)
            index = _skip(text, index)
            if text[index : index + 1] != ":":
                return None
            index = _skip(
                text, int(_DECODER.raw_decode(text, _skip(text, index + 1))[1])
            )
        if text[index : index + 1] == "}" and _skip(text, index + 1) == len(text):
            return keys
        return None
    except (ValueError, IndexError):
        return None


def _locate_tools_by_reading(
    body: bytes, relayed: Callable[[Any], bool]
) -> _Located | None:
    """``_locate_tools`` by reading the whole body, member by member."""
    text = body.decode("utf-8")
    index = _skip(text, 0)
    if text[index] != "{":
        _DECODER.raw_decode(text, index)  # valid JSON that is not an object?
        return None
    found: tuple[int, list[_Entry | None], int] | None = None
    seen_tools = False

    def read(key: str, start: int) -> int:
        nonlocal found, seen_tools
        if key == "tools":
            seen_tools = True
            if text[start] == "[":
                entries, end = _array_entries(text, start, relayed)
                found = (start, entries, end)
                return end
            found = None  # the last "tools" key is what JSON.parse keeps
        return int(_DECODER.raw_decode(text, start)[1])

    index = _scan_object(text, index, read)
    if _skip(text, index) != len(text):
        raise ValueError("extra data after the body")
    if found is None:
        return None
    start, entries, end = found
    # Indices into the text from the array on, as _locate_tools gives them.
    offset = len(text[:start].encode("utf-8"))
    rest = text[start:]
    shifted = [
        None if e is None else _Entry(rest, e.start - start, e.end - start, e.value)
        for e in entries
    ]
    raw = body[offset : offset + len(text[start:end].encode("utf-8"))]
    return _Located(
        offset,
        offset + len(raw),
        rest,
        end - start,
        shifted,
        raw,
        len(raw) == end - start,
    )


@functools.lru_cache(maxsize=16)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[bytes]:
    # Longest first, so that one name that begins another still matches.
    ordered = sorted(names, key=len, reverse=True)
    return re.compile(b"|".join(re.escape(n.encode()) for n in ordered) or b"(?!)")


def _array_entries(
    text: str, index: int, relayed: Callable[[Any], bool]
) -> tuple[list[_Entry | None], int]:
    """The entries of the array at ``text[index]`` (each decoded by the C
    scanner, one call each), and the index just after it; an entry is kept
    when it names a relayed tool (in any of its "name" members) or is marked
    ``"strict": true``, else it is None."""
    entries: list[_Entry | None] = []
    append = entries.append
    scan = _scan_once  # raw_decode's own scanner, without its wrapper
    index = _skip(text, index + 1)
    if text[index] == "]":
        return entries, index + 1
    while True:
        try:
            value, end = scan(text, index)
        except StopIteration as error:
            raise json.JSONDecodeError("Expecting value", text, error.value) from None
        keep = None
        if type(value) is dict:
            if relayed(value.get("name")) or value.get("strict") is True:
                keep = _Entry(text, index, end, value)
            elif text.count('"name"', index, end) > 1:
                entry = _Entry(text, index, end, value)
                if any(relayed(name) for name in entry.names):
                    keep = entry
        append(keep)
        index = end
        char = text[index]
        if char in _SPACE:
            index = _skip(text, index)
            char = text[index]
        if char == ",":
            index = _skip(text, index + 1)
        elif char == "]":
            return entries, index + 1
        else:
            raise ValueError("expected ',' or ']'")


# -- writing the fields -------------------------------------------------------


def _edits_for(
    text: str,
    entry: _Entry,
    declared: Mapping[str, Any],
    encode: Callable[[Any, str], str] = lambda value, key: _encode(value, key),
) -> tuple[list[tuple[int, int, str]], list[str]]:
    """The text edits (``(start, end, replacement)`` on ``text``) that give
    ``entry`` the declared fields, and the fields they add."""
    value = entry.value
    wanted: list[str] = []
    present = False  # a wanted field the entry has, with another value
    for key in RELAYED_FIELDS:
        if key in declared:
            if key in value:
                if _json_equal(value[key], declared[key]):
                    continue
                present = True
            wanted.append(key)
    if not wanted:
        return [], []
    # A member replaced in place must be the one JSON.parse keeps (inserted
    # ones are absent from the entry, so no repeat can hide them).
    if present and entry.repeated_key:
        raise _UnsafeError(f"the tools entry {entry.get('name')!r} repeats a key")
    edits: list[tuple[int, int, str]] = []
    inserted = ""
    for key in wanted:
        encoded = encode(declared[key], key)
        if key not in value:
            inserted += f',"{key}":{encoded}'
            continue
        # present with another value: the declared one replaces it
        span = next((start, stop) for name, start, stop in entry.members if name == key)
        edits.append((span[0], span[1], encoded))
    if inserted:
        # Right after the entry's last member: an entry with a name has one.
        last_end = entry.last_member_end
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
    if not entry.has("input_schema"):
        return _NoStrictForm("the tool has no input_schema")
    if entry.repeated_key:
        raise _UnsafeError(f"the tools entry {entry.get('name')!r} repeats a key")
    span = next(
        (start, stop) for key, start, stop in entry.members if key == "input_schema"
    )
    form = _strict_form(text[span[0] : span[1]], entry.get("strict") is True)
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
    if entry.scanned:
        for key, start, stop in entry.members:
            if key == "input_schema":
                return text[start:stop]
    return json.dumps(entry.value.get("input_schema"), separators=(",", ":"))


@functools.lru_cache(maxsize=1024)
def _counts(schema: str) -> tuple[int, int]:
    """The optional and union-typed parameters of one encoded schema."""
    return count_parameters(json.loads(schema))


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
    why = dict(rewrite.over_caps_why)
    named = ", ".join(
        f"{tool} ({why[tool]})" if tool in why else tool for tool in tools
    )
    return (
        f"tool_fields_relay is sending {named} without strict: the request's "
        "strict tools go over strict mode's per-request limits ("
        + "; ".join(str(limit) for limit in rewrite.caps)
        + "), so, in order (SDK tools first, then strict_mcp_servers order), "
        "each tool stays strict if it fits beside those before it, and these "
        "did not fit (the limit each would go over in parentheses)"
    )


def limits_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay added strict to no tool of a request whose tools "
        "already marked strict go over strict mode's per-request limits by "
        "themselves: "
        + "; ".join(str(limit) for limit in rewrite.exceeded)
        + "; it is sent, and the API answers it as it would without the relay"
    )


def unchanged_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay forwarded a request unchanged because "
        f"{rewrite.unchanged_because}: {', '.join(rewrite.lost_tools)} did not get "
        "their strict/input_examples on it"
    )
