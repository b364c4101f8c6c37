"""The case-law search tool the fork's tests and demo define again and again:
an enum parameter next to an array parameter, the shape upstream issue #1243
measured (17 of 18 turns with unparseable array arguments)."""

from __future__ import annotations

from typing import Any

CASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "jurisdiction": {"type": "string", "enum": ["se", "no", "dk"]},
        "terms": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["jurisdiction", "terms"],
    # Closed, as strict mode requires, so a strict tool serves it unchanged.
    "additionalProperties": False,
}
GOOD_EXAMPLE: dict[str, Any] = {"jurisdiction": "se", "terms": ["payout"]}
EXTRA_FIELDS: dict[str, Any] = {"title": "Case search", "x-acme-tier": 2}
