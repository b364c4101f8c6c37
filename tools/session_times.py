"""The wall time of each session of a nox run, as a Markdown table.

``tools/nox`` (``tools/lanes.py``) runs nox with ``--report`` and prints this
table at the end of every run, for a run in lanes with each session's lane;
CONTRIBUTING.md keeps the default run's as the current figures. By hand, for
any nox report:

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


def table(report: dict[str, Any], wall: float | None = None) -> str:
    """The sessions in the order they ran, then their total.

    Sessions run in lanes (``tools/lanes.py``) carry a ``lane`` each: the
    table then has a lane column, each lane's total, and ``wall``, the run's
    own wall time (less than the total: the lanes ran side by side).
    """
    sessions = report["sessions"]
    lanes = sorted({entry["lane"] for entry in sessions if "lane" in entry})
    if lanes:
        rows = [
            "| session | lane | result | wall time (m:ss) |",
            "|---|---:|---|---:|",
        ]
    else:
        rows = ["| session | result | wall time (m:ss) |", "|---|---|---:|"]
    total = 0.0
    by_lane: dict[int, float] = {}
    for entry in sessions:
        name = (entry.get("signatures") or [entry["name"]])[0]
        duration = float(entry.get("duration") or 0.0)
        total += duration
        if lanes:
            lane = entry["lane"]
            by_lane[lane] = by_lane.get(lane, 0.0) + duration
            rows.append(
                f"| `{name}` | {lane} | {entry['result']} | {_clock(duration)} |"
            )
        else:
            rows.append(f"| `{name}` | {entry['result']} | {_clock(duration)} |")
    if lanes:
        for lane in lanes:
            rows.append(f"| lane {lane} | {lane} | | {_clock(by_lane.get(lane, 0))} |")
        rows.append(f"| sessions' total | | | {_clock(total)} |")
    else:
        rows.append(f"| **total** | | **{_clock(total)}** |")
    if wall is not None:
        width = "| | " if lanes else "| "
        rows.append(f"| **run's wall time** {width}| **{_clock(wall)}** |")
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
