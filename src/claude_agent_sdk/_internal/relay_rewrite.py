"""The tool-fields relay's request rewrite: pure functions, no I/O.

``tool_fields_relay.py`` runs the relay; this is what it does to a Messages
API request body: add the declared ``strict`` and ``input_examples`` to the
SDK tools' entries, check strict mode's per-request caps on the result, and
add the beta header ``input_examples`` needs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .strict_schema import StrictLimitExceeded, find_limit_violations

ADVANCED_TOOL_USE_BETA = "advanced-tool-use-2025-11-20"
"""The beta under which the Messages API accepts ``input_examples``."""

RELAYED_FIELDS = ("strict", "input_examples")
"""The tool fields the relay adds; everything else the SDK lists stays on
``tools/list``, because the Messages API defines no other tool fields."""


@dataclass
class Rewrite:
    """What the relay did to one request body."""

    body: bytes
    modified_tools: list[str] = field(default_factory=list)
    added_examples: bool = False
    exceeded: list[StrictLimitExceeded] = field(default_factory=list)


def rewrite_body(
    body: bytes, fields_by_name: Mapping[str, Mapping[str, Any]]
) -> Rewrite:
    """Add the declared fields to the matching ``tools`` entries of ``body``.

    Returns the body unchanged (the same bytes) when there is nothing to add
    or it is not a JSON object. When something was added, the strict tools
    of the resulting request (those marked ``strict: true``, whoever marked
    them) are counted against strict mode's per-request caps; any cap they go
    over is in ``exceeded``, and such a request must not be sent.
    """
    unchanged = Rewrite(body)
    # Cheap test first: tool names are plain ASCII, so a name that is not in
    # the raw bytes is not in the request, and most requests (tool search's
    # first turn, side requests) skip JSON parsing altogether.
    if not fields_by_name or not any(name.encode() in body for name in fields_by_name):
        return unchanged
    try:
        request = json.loads(body)
    except ValueError:
        return unchanged
    tools = request.get("tools") if isinstance(request, dict) else None
    if not isinstance(tools, list):
        return unchanged
    rewrite = Rewrite(body)
    replaced: list[tuple[bytes, dict[str, Any]]] = []
    for entry in tools:
        if not isinstance(entry, dict):
            continue
        declared = fields_by_name.get(entry.get("name"))  # type: ignore[arg-type]
        if not declared:
            continue
        before = _compact(entry)
        changed = False
        for key in RELAYED_FIELDS:
            if key in declared and entry.get(key) != declared[key]:
                entry[key] = declared[key]
                changed = True
                if key == "input_examples":
                    rewrite.added_examples = True
        if changed:
            rewrite.modified_tools.append(str(entry["name"]))
            replaced.append((before, entry))
    if not rewrite.modified_tools:
        return unchanged
    rewrite.exceeded = list(
        _limit_violations(
            tuple(
                (str(entry.get("name")), _compact(entry.get("input_schema")))
                for entry in tools
                if isinstance(entry, dict) and entry.get("strict") is True
            )
        )
    )
    rewrite.body = _splice(body, replaced) or _compact(request)
    return rewrite


@functools.lru_cache(maxsize=64)
def _limit_violations(
    strict_tools: tuple[tuple[str, bytes], ...],
) -> tuple[StrictLimitExceeded, ...]:
    # The CLI sends the same tools on every turn of a query, so the counts
    # are kept (keyed by the encoded schemas) instead of walked each time.
    return tuple(
        find_limit_violations(
            (name, json.loads(schema)) for name, schema in strict_tools
        )
    )


def _compact(value: Any) -> bytes:
    # How the CLI writes its request bodies: compact, non-ASCII as is.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _splice(body: bytes, replaced: list[tuple[bytes, dict[str, Any]]]) -> bytes | None:
    """``body`` with each changed tool entry swapped in place, or None.

    Re-serializing a whole ~70 KB request costs about half a millisecond per
    API call; writing back only the changed entries costs a few
    microseconds. It is used only where each entry's original bytes are found
    exactly once, so the result is the same JSON the full rewrite produces;
    anything else (other formatting or escaping) takes the full rewrite.
    """
    for before, entry in replaced:
        if body.count(before) != 1:
            return None
        body = body.replace(before, _compact(entry))
    return body


def with_beta(
    headers: list[tuple[bytes, bytes]], beta: str = ADVANCED_TOOL_USE_BETA
) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``beta`` in ``anthropic-beta`` (appended if missing)."""
    encoded = beta.encode()
    betas = [
        (index, value)
        for index, (name, value) in enumerate(headers)
        if name.lower() == b"anthropic-beta"
    ]
    for _, value in betas:
        if encoded in (part.strip() for part in value.split(b",")):
            return headers
    result = list(headers)
    if betas:
        index, value = betas[0]
        joined = value.rstrip(b", ") + b"," + encoded if value.strip() else encoded
        result[index] = (b"anthropic-beta", joined)
    else:
        result.append((b"anthropic-beta", encoded))
    return result


def limits_message(rewrite: Rewrite) -> str:
    return (
        "tool_fields_relay did not send this request: adding strict to "
        f"{', '.join(rewrite.modified_tools)} goes over strict mode's per-request "
        "limits: " + "; ".join(str(limit) for limit in rewrite.exceeded)
    )
