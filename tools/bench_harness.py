"""What the benchmarks under ``tools/`` share: where they keep their files,
pristine upstream beside the fork, helper processes, interleaved rounds, the
statistics they report and the tables they write into docs/.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tools import forktool
from tools.doc_blocks import write_block

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench"
DOCS = ROOT / "docs"

Side = TypeVar("Side")
Result = TypeVar("Result")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Starting what is measured
# --------------------------------------------------------------------------


def upstream_src() -> Path:
    """Pristine upstream's ``src/``: the hash-checked PyPI sdist
    (``forktool.sdist``), extracted once under ``.cache/bench/startup``."""
    src = CACHE / "startup" / f"upstream-{forktool.base_version()}"
    if not (src / "claude_agent_sdk").exists():
        tree = CACHE / "startup" / "tree"
        forktool.extract_sdist(forktool.sdist(), tree)
        src.parent.mkdir(parents=True, exist_ok=True)
        (tree / "src").rename(src)
    return src


def fresh(code: str, *args: str, path: Sequence[Path]) -> dict[str, float]:
    """The figures a fresh interpreter running ``code`` prints as JSON on its
    last line, with ``path`` on ``PYTHONPATH`` and bytecode cached (as an
    installed package has it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "startup" / "pycache")
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return figures


class Helper:
    """A helper process, ``python -m <module> <args>`` from the root; its first
    line is its address, and it answers each ``cpu`` line with its CPU
    seconds so far (``answer_cpu``)."""

    def __init__(self, module: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.line = self.stdout.readline().strip()
        if not self.line:
            raise SystemExit(f"bench helper {args} failed to start")

    def cpu(self) -> float:
        self.stdin.write("cpu\n")
        self.stdin.flush()
        return float(self.stdout.readline())

    def stop(self) -> None:
        self.stdin.close()
        self.process.wait(30)


def answer_cpu() -> None:
    """A helper's side of ``Helper.cpu``, until the bench closes its stdin."""
    import resource

    for _ in sys.stdin:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(usage.ru_utime + usage.ru_stime, flush=True)


# --------------------------------------------------------------------------
# Interleaving
# --------------------------------------------------------------------------


def alternate(sides: Sequence[Side], round_: int) -> list[Side]:
    """The order of round ``round_``: as given in even rounds, reversed in
    odd ones, so that drift in the machine's speed falls on every side alike."""
    return list(sides) if round_ % 2 == 0 else list(reversed(sides))


def interleave(
    rounds: int, sides: Sequence[Side], measure: Callable[[Side, int], Result]
) -> dict[Side, list[Result]]:
    """``measure(side, round)`` of each side in each round, in alternating order."""
    results: dict[Side, list[Result]] = {side: [] for side in sides}
    for round_ in range(rounds):
        for side in alternate(sides, round_):
            results[side].append(measure(side, round_))
    return results


# --------------------------------------------------------------------------
# Statistics and the machine
# --------------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """The interquartile range of ``values``: where the middle half fell."""
    if len(values) < 2:
        return values[0], values[0]
    low, _, high = statistics.quantiles(values, n=4)
    return low, high


def span(values: Sequence[float], digits: int = 2) -> str:
    """``min–max`` of ``values`` (one figure where they round alike)."""
    low, high = min(values), max(values)
    if f"{low:.{digits}f}" == f"{high:.{digits}f}":
        return f"{low:.{digits}f}"
    return f"{low:.{digits}f}–{high:.{digits}f}"


def environment() -> dict[str, Any]:
    """What a table says of the machine it was measured on."""
    return {
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
        "load": os.getloadavg()[0],
    }


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table(
    header: Sequence[str], align: str, rows: Iterable[Sequence[str]]
) -> list[str]:
    """A markdown table's lines; ``align`` has a letter a column, ``l`` or ``r``."""
    rule = "|" + "".join("--:|" if side == "r" else "---|" for side in align)
    return [row(header), rule, *map(row, rows)]


def save_json(path: Path, figures: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n", "utf-8")


def publish_block(doc: Path, marker: str, text: str, write: bool = True) -> None:
    """Print ``text``; with ``write`` it also replaces the block between
    ``marker``'s markers in ``doc``."""
    print(text)
    if write:
        write_block(doc, marker, text)
