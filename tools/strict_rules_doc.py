"""docs/strict-mode.md's rules table, generated from ``strict.transform.RULES``.

Strict mode's rules are one table in the SDK (which keywords are kept,
normalized, moved into the description and enforced, or refused, with what
message, whether the documentation states the rule or it is the project's
judgement and why, and whether a pydantic model enforces it); the transform,
the checks and the pydantic path read it, and so does this renderer, so the
doc cannot drift from the code (tests/repo/test_strict_rules_doc.py compares
them). Rewrite the block with ``python -m tools.strict_rules_doc --write``
(or ``tools/nox -s docs``); ``--check`` exits 1 when it is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from claude_agent_sdk._internal.strict.transform import (
    DOCUMENTED,
    JUDGEMENT,
    RULES,
    Rule,
    Served,
)
from tools.doc_blocks import read_block, write_block

ROOT = Path(__file__).resolve().parents[1]

DOC = ROOT / "docs" / "strict-mode.md"
BLOCK = "strict-rules"
HEADER = (
    "| Keyword (strict mode) | Served as | Enforced by | Why: the documentation, "
    "or the project's judgement | Pydantic model enforces it |\n"
    "|---|---|---|---|---|"
)
_SERVED = {
    Served.KEPT: "as written",
    Served.DESCRIBED: "**described**",
    Served.NORMALIZED: "**normalized**",
    Served.NOT_SERVED: "**not served**",
    Served.REFUSED: "**refused**",
}
_SOURCE = {DOCUMENTED: "documented", JUDGEMENT: "the project's judgement"}


def _row_key(rule: Rule) -> tuple[object, ...]:
    return (
        rule.served_as,
        rule.note,
        rule.enforced_by,
        rule.pydantic_enforces,
        rule.source,
        rule.why,
    )


def _rows() -> list[list[Rule]]:
    """The shown rules, consecutive ones served, enforced and sourced alike
    in one row."""
    rows: list[list[Rule]] = []
    for rule in RULES:
        if not rule.label:
            continue
        if rows and _row_key(rows[-1][-1]) == _row_key(rule):
            rows[-1].append(rule)
        else:
            rows.append([rule])
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table() -> str:
    lines = [HEADER]
    for row in _rows():
        first = row[0]
        keyword = ", ".join(rule.label for rule in row)
        served = _SERVED[first.served_as] + first.note
        why = f"{_SOURCE[first.source]}: {first.why}"
        pydantic = "yes" if first.pydantic_enforces else "—"
        cells = (keyword, served, first.enforced_by or "—", why, pydantic)
        lines.append("| " + " | ".join(map(_cell, cells)) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        write_block(DOC, BLOCK, render_table())
        return 0
    if argv == ["--check"]:
        if read_block(DOC, BLOCK) != render_table():
            print(f"{DOC} is stale: python -m tools.strict_rules_doc --write")
            return 1
        return 0
    if argv:
        print(
            "usage: python -m tools.strict_rules_doc [--write | --check]",
            file=sys.stderr,
        )
        return 2
    print(render_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
