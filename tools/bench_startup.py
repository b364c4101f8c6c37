"""Start-up of SDK MCP servers, fork against pristine upstream, side by side.

Start-up is what a query pays before its first request: ``@tool`` and
``create_sdk_mcp_server`` for 1, 20 and 200 distinct tools, written as
``{name: type}`` shorthand, as a TypedDict and as a JSON Schema dict. Each
figure is one fresh interpreter (imports done, the package's first-use
imports included), timed around the definitions and the server; rounds
alternate which side runs first, so drift in the machine falls on both.
Upstream is the hash-checked PyPI sdist (``forktool.sdist``) extracted once
under ``.cache/bench/startup``, the fork is this checkout's ``src/``; both
run on this interpreter, which needs ``mcp`` installed (any test session's
venv). The table between the ``startup`` markers of docs/performance.md is
rewritten with ``--write``. Timings are reported, never asserted.

    .nox/tests-3-11-mcp2/bin/python -m tools.bench_startup --rounds 9 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

from tools import forktool
from tools.doc_blocks import write_block

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench" / "startup"
TABLE = ROOT / "docs" / "performance.md"  # between the startup markers
KINDS = ("shorthand", "typeddict", "jsonschema")
SIZES = (1, 20, 200)

WORKER = r"""
import json, sys, time
from typing import TypedDict
kind, n = sys.argv[1], int(sys.argv[2])
import claude_agent_sdk
from claude_agent_sdk import create_sdk_mcp_server, tool

async def handler(args):
    return {"content": []}

def schema(i):
    if kind == "shorthand":
        return {f"a{i}": int, f"b{i}": str, "note": float}
    if kind == "typeddict":
        return TypedDict(f"T{i}", {f"a{i}": int, f"b{i}": str, "note": float})
    return {"type": "object", "properties": {
        f"a{i}": {"type": "integer", "minimum": 0}, f"b{i}": {"type": "string"},
        "note": {"type": "number"}}, "required": [f"a{i}", f"b{i}"]}

schemas = [schema(i) for i in range(n)]
start = time.perf_counter()
tools = [tool(f"t{i}", "d", schemas[i])(handler) for i in range(n)]
create_sdk_mcp_server("s", tools=tools)
print(json.dumps((time.perf_counter() - start) / n))
"""


def upstream_src() -> Path:
    src = CACHE / f"upstream-{forktool.base_version()}"
    if not (src / "claude_agent_sdk").exists():
        tree = CACHE / "tree"
        forktool.extract_sdist(forktool.sdist(), tree)
        (src).parent.mkdir(parents=True, exist_ok=True)
        (tree / "src").rename(src)
    return src


def once(src: Path, kind: str, n: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", WORKER, kind, str(n)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(out.strip().splitlines()[-1])


def measure(rounds: int) -> dict[str, dict[str, float]]:
    sides = {"fork": ROOT / "src", "upstream": upstream_src()}
    figures: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        for n in SIZES:
            times: dict[str, list[float]] = {side: [] for side in sides}
            once(sides["fork"], kind, n)  # bytecode written before timing
            once(sides["upstream"], kind, n)
            for round_ in range(rounds):
                order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
                for side in order:
                    times[side].append(once(sides[side], kind, n))
            row = {side: statistics.median(t) for side, t in times.items()}
            row["ratio"] = row["fork"] / row["upstream"]
            figures[f"{kind} {n}"] = row
            print(f"{kind} {n}: {json.dumps(row)}", file=sys.stderr)
    return figures


def render(figures: dict[str, dict[str, float]], rounds: int) -> str:
    lines = [
        f"Start-up per tool (µs): `@tool` + `create_sdk_mcp_server`, one fresh "
        f"interpreter per figure, median of {rounds} interleaved rounds, fork "
        f"against pristine upstream {forktool.base_version()} on Python "
        f"{platform.python_version()} ({platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, shared). Reproduce with `python -m "
        "tools.bench_startup --write` from a test session's venv.",
        "",
        "| tools per server | kind | fork | upstream | ratio |",
        "|--:|---|--:|--:|--:|",
    ]
    for key, row in figures.items():
        kind, n = key.split()
        lines.append(
            f"| {n} | {kind} | {row['fork'] * 1e6:.1f} | "
            f"{row['upstream'] * 1e6:.1f} | {row['ratio']:.2f}× |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="rewrite the docs table")
    args = parser.parse_args()
    table = render(measure(args.rounds), args.rounds)
    print(table)
    if args.write:
        write_block(TABLE, "startup", table)


if __name__ == "__main__":
    main()
