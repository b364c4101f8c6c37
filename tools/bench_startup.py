"""Start-up of SDK MCP servers, fork against pristine upstream, side by side.

Start-up is what a query pays before its first request: ``@tool`` and
``create_sdk_mcp_server`` for 1, 20 and 200 distinct tools, written as
``{name: type}`` shorthand, as a TypedDict and as a JSON Schema dict. Each
figure is one fresh interpreter (imports done, the package's first-use
imports included), timed around the definitions and the server, then
around the server's first ``tools/list`` (where the fork runs the schema
checks of tools that did not opt in); ``import claude_agent_sdk`` is timed
in the same interpreters. Times are the CPU time of the interpreter's
thread (``time.thread_time``; all of this work runs on it), so that the
time slices other processes take on a shared machine are not counted: at
200 tools a figure spans a few milliseconds, about one time slice, and
wall-clock medians swung by 2-3x between runs on a loaded machine. Rounds alternate which side runs first, so drift
in the machine falls on both; the interquartile range of the rounds'
ratios is reported beside the medians' ratio.
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
import statistics
import sys
from functools import partial
from pathlib import Path

from tools import forktool
from tools.bench_harness import (
    DOCS,
    ROOT,
    environment,
    fresh,
    interleave,
    publish_block,
    quartiles,
    table,
    upstream_src,
)

TABLE = DOCS / "performance.md"  # between the startup markers
KINDS = ("shorthand", "typeddict", "jsonschema")
SIZES = (1, 20, 200)

WORKER = r"""
import json, sys, time
clock = time.thread_time  # this thread's CPU time (see the docstring)
started = clock()
import claude_agent_sdk
imported = clock() - started
import asyncio
from typing import TypedDict
from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import CliPeer  # the tests' stand-in CLI
kind, n = sys.argv[1], int(sys.argv[2])

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

async def first_listing(config):
    # As Claude Code starts a query: the handshake, then tools/list.
    cli = CliPeer({"s": config}, "2025-06-18", client_version="0")
    await cli.initialize("s")
    message = cli.message("tools/list", {})
    start = clock()
    listed = await cli.handle("s", message)
    elapsed = clock() - start
    assert len(listed["result"]["tools"]) == n, listed
    await cli.query.close()
    return elapsed

schemas = [schema(i) for i in range(n)]
start = clock()
tools = [tool(f"t{i}", "d", schemas[i])(handler) for i in range(n)]
config = create_sdk_mcp_server("s", tools=tools)
built = clock() - start
listing = asyncio.run(first_listing(config))
print(json.dumps({"start": built / n, "list": listing / n, "import": imported}))
"""


Figures = dict[str, float]


def once(src: Path, kind: str, n: int) -> Figures:
    """One fresh interpreter: per-tool start-up and first tools/list, and
    the package's import, in seconds."""
    return fresh(WORKER, kind, str(n), path=(src, ROOT))


def _run(sides: dict[str, Path], kind: str, n: int, side: str, _: int) -> Figures:
    return once(sides[side], kind, n)


def measure(rounds: int, fork: Path) -> dict[str, dict[str, float]]:
    """Medians per side and figure, the range of the rounds' ratios, and the
    package's import (every timed interpreter of a side counts)."""
    sides = {"fork": fork, "upstream": upstream_src()}
    imports: dict[str, list[float]] = {side: [] for side in sides}
    figures: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        for n in SIZES:
            once(sides["fork"], kind, n)  # bytecode written before timing
            once(sides["upstream"], kind, n)
            runs = interleave(rounds, list(sides), partial(_run, sides, kind, n))
            row: dict[str, float] = {}
            for what in ("start", "list"):
                for side in sides:
                    row[f"{what} {side}"] = statistics.median(
                        run[what] for run in runs[side]
                    )
                row[f"{what} ratio"] = row[f"{what} fork"] / row[f"{what} upstream"]
                pairs = [
                    fork[what] / upstream[what]
                    for fork, upstream in zip(
                        runs["fork"], runs["upstream"], strict=True
                    )
                ]
                row[f"{what} low"], row[f"{what} high"] = quartiles(pairs)
            for side in sides:
                imports[side].extend(run["import"] for run in runs[side])
            figures[f"{kind} {n}"] = row
            print(f"{kind} {n}: {json.dumps(row)}", file=sys.stderr)
    imported: dict[str, float] = {}
    for side, times in imports.items():
        imported[side] = statistics.median(times)
        imported[f"{side} low"], imported[f"{side} high"] = quartiles(times)
    imported["ratio"] = imported["fork"] / imported["upstream"]
    figures["import"] = imported
    return figures


def _cell(row: dict[str, float], what: str) -> list[str]:
    return [
        f"{row[f'{what} fork'] * 1e6:.1f}",
        f"{row[f'{what} upstream'] * 1e6:.1f}",
        f"{row[f'{what} ratio']:.2f}× ({row[f'{what} low']:.2f}–"
        f"{row[f'{what} high']:.2f})",
    ]


def render(figures: dict[str, dict[str, float]], rounds: int) -> str:
    imported, machine = figures["import"], environment()
    lines = [
        f"Per tool (µs of CPU time of the interpreter's thread, so that other "
        "processes' time slices on the shared machine do not count), one "
        f"fresh interpreter per figure, median of {rounds} "
        f"interleaved rounds, fork against pristine upstream "
        f"{forktool.base_version()} on Python {machine['python']} "
        f"({machine['system']}, {machine['cpus']} CPUs, "
        "shared). Start-up: `@tool` + `create_sdk_mcp_server`. First "
        "tools/list: the server's first `tools/list` after the handshake, "
        "through `Query._handle_sdk_mcp_request`. Ratio = fork ÷ upstream of "
        "the medians, with the interquartile range of the rounds' ratios "
        "(fork ÷ upstream within each round) in brackets. Reproduce with "
        "`python -m tools.bench_startup --write` from a test session's venv.",
        "",
        *table(
            ["tools per server", "kind", "start-up, fork", "upstream", "ratio",
             "first tools/list, fork", "upstream", "ratio"],
            "rlrrrrrr",
            (
                [key.split()[1], key.split()[0], *_cell(row, "start"), *_cell(row, "list")]
                for key, row in figures.items()
                if key != "import"
            ),
        ),
    ]  # fmt: skip
    lines += [
        "",
        f"`import claude_agent_sdk` in the same interpreters (before any of "
        f"the above): fork {imported['fork'] * 1e3:.0f} ms "
        f"({imported['fork low'] * 1e3:.0f}–{imported['fork high'] * 1e3:.0f}), "
        f"upstream {imported['upstream'] * 1e3:.0f} ms "
        f"({imported['upstream low'] * 1e3:.0f}–"
        f"{imported['upstream high'] * 1e3:.0f}), "
        f"{imported['ratio']:.2f}×; medians of "
        f"{len(KINDS) * len(SIZES) * rounds} interpreters each, interquartile "
        "range in brackets.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="rewrite the docs table")
    parser.add_argument(
        "--fork",
        type=Path,
        default=ROOT / "src",
        help="the fork's package directory (default: this checkout's src/)",
    )
    args = parser.parse_args()
    table = render(measure(args.rounds, args.fork), args.rounds)
    publish_block(TABLE, "startup", table, write=args.write)


if __name__ == "__main__":
    main()
