"""Run nox, the default and the full run in two lanes side by side, and print
the time table.

``tools/nox`` calls this with its arguments. Without arguments that pick
sessions it is the default run (what ``.ci/run`` runs), split into the two
lanes of ``noxfile.LANES``; with ``-t full`` alone, the full run, split into
``noxfile.FULL_LANES``. Each lane is a nox process of its own, both started
together. With other arguments that pick sessions (``-s``, ``-k``, ``-l``,
...) it is one nox run, as nox itself would do it.

- a one-lane run left a core idle for about a third of its wall time
  (installs, mypy, the CLI's start-up, each session's slowest test at the
  end of a pytest-xdist run), so two lanes finish in about the time of the
  longer one;
- the first lane prints as it runs; the second writes to
  ``.cache/lanes/lane-2.log``, printed when both have ended;
- the run fails if a session of either lane fails, and the table lists every
  session of both (lane, result, wall time), then the run's own wall time.

    python -m tools.lanes [nox arguments]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools import session_times

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / ".cache" / "lanes"

# nox options that choose what runs (or run nothing): the run is then nox's own.
SELECTING = {
    "-s", "--session", "--sessions", "-e", "-t", "--tags", "-k", "--keywords",
    "-l", "--list", "--list-sessions", "--json", "-h", "--help", "--version",
    "-p", "--python", "--pythons", "--usage",
}  # fmt: skip


def selects_sessions(args: list[str]) -> bool:
    """Whether ``args`` choose sessions (or ask nox for something else)."""
    for arg in args:
        if arg == "--":
            return False
        if arg.split("=", 1)[0] in SELECTING:
            return True
        if len(arg) > 1 and arg[0] == "-" and arg[1] in "setkplh":
            return True  # -sfoo, -tfull and the like
    return False


def _nox(report: Path, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "nox", "--report", str(report), *args]


def _load(report: Path) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = json.loads(report.read_text("utf-8"))
        return loaded
    except (OSError, ValueError):
        return {"sessions": []}


def one_run(args: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        rc = subprocess.call(_nox(report, args), cwd=ROOT)
        loaded = _load(report)
    if loaded.get("sessions"):
        print("\nWall time of each session:\n")
        print(session_times.table(loaded))
    return rc


def lanes_run(lanes: list[list[str]], args: list[str]) -> int:
    """The default run: each lane a nox process, both started together."""
    options, posargs = (
        (args[: args.index("--")], args[args.index("--") :])
        if "--" in args
        else (args, [])
    )
    LOGS.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        reports = [Path(tmp) / f"lane-{n}.json" for n in range(1, len(lanes) + 1)]
        logs = [LOGS / f"lane-{n}.log" for n in range(2, len(lanes) + 1)]
        print(
            f"tools/nox: the default run in {len(lanes)} lanes side by side; "
            f"lane 1 prints here, "
            + ", ".join(f"lane {n + 2} to {log}" for n, log in enumerate(logs)),
            flush=True,
        )
        processes = [
            subprocess.Popen(
                _nox(reports[0], [*options, "--sessions", *lanes[0], *posargs]),
                cwd=ROOT,
            )
        ]
        handles = [log.open("w", encoding="utf-8") for log in logs]
        try:
            for lane, report, handle in zip(
                lanes[1:], reports[1:], handles, strict=True
            ):
                processes.append(
                    subprocess.Popen(
                        _nox(report, [*options, "--sessions", *lane, *posargs]),
                        cwd=ROOT,
                        stdout=handle,
                        stderr=subprocess.STDOUT,
                    )
                )
            codes = [process.wait() for process in processes]
        finally:
            for handle in handles:
                handle.close()
        wall = time.monotonic() - start
        for n, log in enumerate(logs, start=2):
            print(f"\n---- lane {n} (ran beside lane 1): {log} ----\n", flush=True)
            sys.stdout.write(log.read_text("utf-8", errors="replace"))
        sessions = []
        for n, report in enumerate(reports, start=1):
            for entry in _load(report).get("sessions", []):
                sessions.append({**entry, "lane": n})
    print("\nWall time of each session:\n")
    print(session_times.table({"sessions": sessions}, wall=wall))
    failed = [
        (e.get("signatures") or [e["name"]])[0]
        for e in sessions
        if e.get("result") not in ("success", "skipped")
    ]
    if failed:
        print(f"\ntools/nox: failed: {', '.join(failed)}")
    return 1 if any(codes) else 0


FULL = (["-t", "full"], ["-tfull"], ["--tags", "full"], ["--tags=full"])


def _full_run(args: list[str]) -> list[str] | None:
    """``args`` without the tag when they ask for the full run alone, else None."""
    options = args[: args.index("--")] if "--" in args else args
    for tag in FULL:
        for at in range(len(options) - len(tag) + 1):
            if options[at : at + len(tag)] == tag:
                rest = [*args[:at], *args[at + len(tag) :]]
                return None if selects_sessions(rest) else rest
    return None


def main(args: list[str]) -> int:
    import noxfile  # the lanes are the noxfile's

    rest = _full_run(args)
    if rest is not None:
        return lanes_run(noxfile.FULL_LANES, rest)
    if selects_sessions(args):
        return one_run(args)
    return lanes_run(noxfile.LANES, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
