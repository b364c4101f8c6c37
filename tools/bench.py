"""Benchmark the fork against pristine upstream claude-agent-sdk, side by side.

For each mcp major of ``tools/pins.py`` this keeps two venvs under
``.cache/bench/venvs`` on this interpreter: upstream from its hash-checked
PyPI sdist (``forktool.sdist``) and the fork from this checkout, reinstalled
every run. pyperf measures each benchmark of ``tools/bench_worker.py`` in its
own worker processes; the one thing added here is the interleaving: each
benchmark runs in short chunks on fork and upstream back to back, the first
side alternating, round after round, so that drift in the machine's speed
falls on both alike. pyperf's files (``.cache/bench/pyperf/*.json``) keep
every value and the metadata.

The run prints ``pyperf compare_to`` for each major, writes
``.cache/bench/bench-results.json`` and rewrites the table between the
``bench`` markers in docs/performance.md. ``--render-only`` redoes the last two from
existing pyperf files. Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyperf  # type: ignore[import-untyped, import-not-found, unused-ignore]

from tools import forktool
from tools.bench_harness import (
    CACHE,
    DOCS,
    ROOT,
    alternate,
    environment,
    log,
    publish_block,
    save_json,
    table,
)
from tools.bench_worker import FORK_ONLY, IMPORT, NAMES
from tools.pins import MCP_MAJORS, PYPERF

RESULTS = CACHE / "pyperf"
TABLE = DOCS / "performance.md"  # between the bench markers
VARIANTS = ("fork", "upstream")
UPSTREAM = forktool.base_version()

# (label, benchmark, statistic, unit): "median" of seconds per operation,
# or "rate", operations per second from the mean time.
ROWS = [
    *(
        (f"tools/list, {n} tool{'s' * (n > 1)} (ms)", f"list_{n}", "median", "ms")
        for n in (1, 10, 100, 1000)
    ),
    ("tools/list, 100 tools, `strict` + `input_examples` (ms)",
     "list_100_strict_examples", "median", "ms"),
    ("tools/call latency, median (ms)", "call_1", "median", "ms"),
    ("tools/call throughput, 1 caller (calls/s)", "call_1", "rate", "/s"),
    ("tools/call throughput, 50 callers (calls/s)", "call_50", "rate", "/s"),
    ("definition per tool, `@tool` + server of 10 (µs)", "define", "median", "µs"),
    ("definition per tool, `strict=True` (µs)", "define_strict", "median", "µs"),
    ("`import claude_agent_sdk`, fresh interpreter (ms)", IMPORT, "median", "ms"),
]  # fmt: skip
# What a fork-only benchmark is compared with: (its plain counterpart, on whose side).
COUNTERPART = {"list_100_strict_examples": ("list_100", "upstream"),
               "define_strict": ("define", "fork")}  # fmt: skip
SCALE = {"ms": 1e3, "µs": 1e6}


def venv(name: str, requirements: list[str]) -> Path:
    """The python of venv ``name``, made anew unless made for these requirements."""
    path, stamp = CACHE / "venvs" / name, f"{sys.version} {requirements}"
    python, stamp_file = path / "bin" / "python", path / "bench-stamp"
    if not (stamp_file.exists() and stamp_file.read_text() == stamp):
        log(f"creating venv {name}")
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        pip(python, *requirements)
        stamp_file.write_text(stamp)
    return python


def pip(python: Path, *args: str) -> None:
    quiet = ["--quiet", "--disable-pip-version-check"]
    subprocess.run([str(python), "-m", "pip", "install", *quiet, *args], check=True)


def prepare() -> dict[tuple[str, str], Path]:
    """Pythons by (mcp major, variant)."""
    sdist = str(forktool.sdist())
    pythons = {}
    for major, mcp in MCP_MAJORS.items():
        pythons[major, "upstream"] = venv(f"upstream-{major}", [sdist, mcp, PYPERF])
        fork = pythons[major, "fork"] = venv(f"fork-{major}", [str(ROOT), mcp, PYPERF])
        log(f"installing the fork into fork-{major}")
        pip(fork, "--no-deps", "--force-reinstall", str(ROOT))
    return pythons


def chunk(python: Path, name: str, out: Path, processes: int) -> None:
    """pyperf's runs of one benchmark, appended to ``out``. Loops are calibrated
    by the first chunk and kept for the others."""
    suite = pyperf.BenchmarkSuite.load(str(out)) if out.exists() else None
    loops = []
    if suite and name in suite.get_benchmark_names():
        loops = ["--loops", str(int(suite.get_benchmark(name).get_loops()))]
    command = [str(python), str(ROOT / "tools" / "bench_worker.py"), "--only", name]
    options = ["--quiet", "--processes", str(processes), "--append", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # tests.lib's stand-in CLI
    subprocess.run(
        [*command, *options, *loops], check=True, stdout=subprocess.DEVNULL, env=env
    )


def measure(pythons: dict[tuple[str, str], Path], rounds: int, processes: int) -> None:
    shutil.rmtree(RESULTS, ignore_errors=True)
    RESULTS.mkdir(parents=True)
    for round_ in range(rounds):
        log(f"round {round_ + 1} of {rounds}")
        for major in MCP_MAJORS:
            for index, name in enumerate(NAMES):
                # Which side goes first alternates by benchmark and by round.
                for variant in alternate(VARIANTS, round_ + index):
                    if variant == "fork" or name not in FORK_ONLY:
                        out = RESULTS / f"{variant}-{major}.json"
                        chunk(pythons[major, variant], name, out, processes)


def load(major: str) -> dict[str, dict[str, pyperf.Benchmark]]:
    """Benchmarks by variant and name, once pyperf's metadata shows that each
    venv held what it should."""
    expected = {"fork": forktool.distribution_version(), "upstream": UPSTREAM}
    benches = {}
    for variant in VARIANTS:
        suite = pyperf.BenchmarkSuite.load(str(RESULTS / f"{variant}-{major}.json"))
        meta = suite.get_metadata()
        held = (meta.get("claude-agent-sdk_version"), meta.get("mcp_version"))
        if held != (expected[variant], MCP_MAJORS[major].split("==")[1]):
            raise SystemExit(f"{variant}-{major} measured {held}, not {variant}")
        benches[variant] = {bench.get_name(): bench for bench in suite}
    return benches


def figure(bench: pyperf.Benchmark | None, statistic: str, unit: str) -> float | None:
    if bench is None:
        return None
    if statistic == "rate":
        return 1 / float(bench.mean())
    return float(bench.median()) * SCALE[unit]


def summarize(major: str) -> dict[str, dict[str, float | None]]:
    """Fork and upstream figures of each row, and fork ÷ upstream."""
    benches, rows = load(major), {}
    for label, name, statistic, unit in ROWS:
        fork = figure(benches["fork"].get(name), statistic, unit)
        upstream = figure(benches["upstream"].get(name), statistic, unit)
        against, side = COUNTERPART.get(name, (name, "upstream"))
        base = figure(benches[side].get(against), statistic, unit)
        ratio = fork / base if fork is not None and base else None
        rows[label] = {"fork": fork, "upstream": upstream, "ratio": ratio}
    return rows


def cell(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def ratio_cell(name: str, ratio: float | None) -> str:
    if ratio is None:
        return "—"
    against, side = COUNTERPART.get(name, (name, "upstream"))
    return f"{ratio:.2f}×" + (f" {side} {against}" if against != name else "")


def render(summary: dict[str, dict[str, dict[str, float | None]]], meta: str) -> str:
    header = ["Measurement"]
    for major in summary:
        pin = MCP_MAJORS[major].replace("==", " ")
        header += [f"fork, {pin}", f"upstream, {pin}", "ratio"]
    rows = []
    for label, name, _, _ in ROWS:
        cells = [label]
        for figures in (summary[major][label] for major in summary):
            cells += [cell(figures["fork"]), cell(figures["upstream"])]
            cells.append(ratio_cell(name, figures["ratio"]))
        rows.append(cells)
    lines = table(header, "l" + "rrr" * len(summary), rows)
    intro = (
        f"Fork against pristine upstream {UPSTREAM} (PyPI sdist), {meta}, measured "
        "with pyperf in interleaved rounds, in process through "
        "`Query._handle_sdk_mcp_request`. Figures are medians of pyperf's values "
        "(each a mean over calibrated loops, in fresh processes); throughput is "
        "1 ÷ the mean time per call. Ratio = fork ÷ upstream, below 1× faster "
        "for times, above 1× for throughput; the fork-only rows compare with the "
        "plain counterpart named. Reproduce with `tools/nox -s bench`; pyperf's "
        "files are in `.cache/bench/pyperf`."
    )
    return "\n".join([intro, "", *lines]) + "\n"


def publish(rounds: int | None) -> None:
    majors = [m for m in MCP_MAJORS if (RESULTS / f"fork-{m}.json").exists()]
    for major in majors:
        files = [str(RESULTS / f"{v}-{major}.json") for v in ("upstream", "fork")]
        log(f"pyperf compare_to, {MCP_MAJORS[major]} (reference: upstream)")
        compare = [sys.executable, "-m", "pyperf", "compare_to", "--table", *files]
        subprocess.run(compare, check=True, stdout=sys.stderr)
    info = pyperf.BenchmarkSuite.load(str(RESULTS / f"fork-{majors[0]}.json"))
    common, machine = info.get_benchmarks()[0].get_metadata(), environment()
    meta = (
        f"Python {common.get('python_version', '?')} on {machine['system']} "
        f"({machine['cpus']} CPUs)" + (f", {rounds} rounds" if rounds else "")
    )
    summary = {major: summarize(major) for major in majors}
    results = {
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "upstream": UPSTREAM, "environment": meta, "mcp": summary,
    }  # fmt: skip
    save_json(CACHE / "bench-results.json", results)
    publish_block(TABLE, "bench", render(summary, meta))
    log(f"updated {TABLE} and {CACHE / 'bench-results.json'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="default: 3")
    parser.add_argument("--processes", type=int, default=2,
                        help="pyperf worker processes per chunk (default: 2)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="1 round, 1 process")
    parser.add_argument("--render-only", action="store_true",
                        help="only redo the table from .cache/bench/pyperf")  # fmt: skip
    args = parser.parse_args()
    rounds, processes = (1, 1) if args.quick else (args.rounds, args.processes)
    if not args.render_only:
        measure(prepare(), rounds, processes)
    publish(None if args.render_only else rounds)


if __name__ == "__main__":
    main()
