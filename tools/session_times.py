"""The wall time of each session of a nox run, as a Markdown table.

``tools/nox`` runs nox with ``--report`` and prints this table at the end of
every run; CONTRIBUTING.md keeps the default run's as the current figures.

    python -m tools.session_times REPORT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}"


def table(report: dict[str, Any]) -> str:
    """The sessions in the order they ran, then the total."""
    rows = ["| session | result | wall time (m:ss) |", "|---|---|---:|"]
    total = 0.0
    for entry in report["sessions"]:
        name = (entry.get("signatures") or [entry["name"]])[0]
        duration = float(entry.get("duration") or 0.0)
        total += duration
        rows.append(f"| `{name}` | {entry['result']} | {_clock(duration)} |")
    rows.append(f"| **total** | | **{_clock(total)}** |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tools.session_times REPORT.json", file=sys.stderr)
        return 2
    report = json.loads(Path(argv[0]).read_text("utf-8"))
    if report.get("sessions"):
        print("\nWall time of each session:\n")
        print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
