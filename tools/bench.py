"""Benchmark the fork against pristine upstream claude-agent-sdk, side by side.

For each supported mcp major (1.30.0 and 2.3.0 by default) this builds two
venvs on one Python: the fork (a local project directory, the repository
root by default) and upstream 0.2.189 installed from its PyPI sdist, whose
sha256 is checked. In each venv it starts ``tools/bench_worker.py`` (one
process serving tools/list and tools/call, one for definition cost and
import time) and then sends every measurement in short chunks to fork and
upstream back to back, alternating which goes first, round after round, so
that drift in the machine's speed falls on both sides alike. It pools the
raw samples and writes

- a machine-readable result file (``.cache/bench/bench-results.json`` under
  the repository root, or ``--out``), with every figure in absolute units,
  the fork/upstream ratio beside it, and the per-tool slope of tools/list;
- the same figures as a Markdown table next to it (``.md``), which also
  replaces whatever stands between ``<!-- bench:start -->`` and
  ``<!-- bench:end -->`` in README.md, if the README has both markers.

``--render-only RESULTS.json`` regenerates the table and README block from an
existing result file without measuring anything.

Timings are reported, never asserted: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "bench_worker.py"


def _upstream_base() -> tuple[str, str]:
    """The upstream release the fork is built on, from ``[tool.fork]`` in the
    repository's pyproject.toml (the one place that names it)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import forktool

    fork = forktool.fork_config()
    return str(fork["upstream-version"]), str(fork["upstream-sdist-sha256"])


UPSTREAM_VERSION, UPSTREAM_SHA256 = _upstream_base()
UPSTREAM_SDIST = f"claude_agent_sdk-{UPSTREAM_VERSION}.tar.gz"
sys.path.insert(0, str(ROOT / "tools"))
from pins import MCP_MAJORS  # noqa: E402

MCP_VERSIONS = tuple(spec.split("==")[1] for spec in MCP_MAJORS.values())
VARIANTS = ("fork", "upstream")
# Commands a worker started in its "define" role answers (see bench_worker.py).
DEFINE_OPS = ("define", "import")
LIST_SIZES = (1, 10, 100, 1000)
# The fork's workers also serve this many tools that carry every field the
# fork adds (strict, input_examples, extra_fields); see bench_worker.py.
EXTRA_SIZE = "1000"

README_START = "<!-- bench:start -->"
README_END = "<!-- bench:end -->"

# One round = every command below, each sent to fork and upstream back to
# back (in alternating order) for each mcp major. Chunks are short (tens to
# hundreds of milliseconds) so that both sides of a comparison see the same
# machine; the default 16 rounds over two mcp majors take about three
# minutes on two cores, measuring included, and pool dozens (tools/list at
# 1000 tools) to thousands (tools/call) of samples per figure.
ROUNDS = 16
ROUND: dict[str, Any] = {
    "list_samples": {"1": 20, "10": 20, "100": 10, "1000": 5},
    "latency_samples": 60,
    "throughput": {"1": 100, "50": 250},
    "define_tools": 50,
    "import_samples": 1,
    "import_every": 2,
}
QUICK_ROUNDS = 3
QUICK_ROUND: dict[str, Any] = {
    **ROUND,
    "list_samples": {"1": 10, "10": 10, "100": 5, "1000": 2},
    "latency_samples": 30,
    "import_every": 3,
}


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=True, text=True, **kwargs)


# --- Installation ---------------------------------------------------------------


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def package_digest(package_dir: Path) -> str:
    """Digest of every .py file of a claude_agent_sdk package directory, so an
    installed copy can be matched against the tree it was built from."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


class Installer:
    """Creates venvs and installs into them, with uv when it is on PATH (much
    faster) and with venv + pip otherwise."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.uv = shutil.which("uv")

    def create(self, venv: Path) -> None:
        if venv.exists():
            shutil.rmtree(venv)
        if self.uv:
            run([self.uv, "venv", "-q", "--seed", "-p", self.python, str(venv)])
        else:
            run([self.python, "-m", "venv", str(venv)])

    def install(self, venv: Path, requirements: list[str], reinstall: str = "") -> None:
        python = str(venv_python(venv))
        if self.uv:
            cmd = [self.uv, "pip", "install", "-q", "--compile-bytecode", "-p", python]
            if reinstall:
                # Also refreshes uv's cache of the build, which would otherwise
                # be reused for a local directory whose pyproject is unchanged.
                cmd += ["--reinstall-package", reinstall]
            run(cmd + requirements)
            return
        cmd = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if reinstall:
            cmd += ["--force-reinstall", "--no-cache-dir"]
        run(cmd + requirements)


def fetch_upstream_sdist(cache: Path, installer: Installer) -> Path:
    sdist_dir = cache / "sdist"
    sdist = sdist_dir / UPSTREAM_SDIST
    if not (sdist.exists() and sha256_of(sdist) == UPSTREAM_SHA256):
        sdist_dir.mkdir(parents=True, exist_ok=True)
        if sdist.exists():
            sdist.unlink()
        log(f"downloading the upstream sdist {UPSTREAM_SDIST}")
        pip_python = installer.python
        probe = subprocess.run(
            [pip_python, "-m", "pip", "--version"], capture_output=True, text=True
        )
        if probe.returncode != 0:
            # An interpreter without pip (a uv-made venv, say): borrow a
            # seeded venv's.
            helper = cache / "venvs" / "pip-helper"
            if not venv_python(helper).exists():
                installer.create(helper)
            pip_python = str(venv_python(helper))
        run(
            [
                pip_python,
                "-m",
                "pip",
                "download",
                "-q",
                "--disable-pip-version-check",
                "--no-binary",
                ":all:",
                "--no-deps",
                "-d",
                str(sdist_dir),
                f"claude-agent-sdk=={UPSTREAM_VERSION}",
            ]
        )
    actual = sha256_of(sdist)
    if actual != UPSTREAM_SHA256:
        raise SystemExit(
            f"{sdist}: sha256 {actual} is not the published {UPSTREAM_SHA256}"
        )
    return sdist


def python_identity(python: str) -> str:
    return run(
        [python, "-c", "import sys; print(sys.version.split()[0], sys.base_prefix)"],
        capture_output=True,
    ).stdout.strip()


def prepare_venvs(
    fork: Path, cache: Path, installer: Installer, mcp_versions: list[str]
) -> dict[tuple[str, str], Path]:
    """Venvs keyed by (mcp version, variant). Upstream venvs are reused while
    the interpreter, mcp version and sdist match; the fork is reinstalled
    every run so the figures always describe the tree as it is now."""
    sdist = fetch_upstream_sdist(cache, installer)
    identity = python_identity(installer.python)
    venvs: dict[tuple[str, str], Path] = {}
    for mcp_version in mcp_versions:
        for variant in VARIANTS:
            venv = cache / "venvs" / f"{variant}-mcp{mcp_version}"
            stamp = venv / "bench-stamp.json"
            wanted = {"python": identity, "mcp": mcp_version, "variant": variant}
            if variant == "upstream":
                wanted["sdist_sha256"] = UPSTREAM_SHA256
            current = json.loads(stamp.read_text()) if stamp.exists() else None
            if current != wanted or not venv_python(venv).exists():
                log(f"creating venv {venv.name}")
                installer.create(venv)
                current = None
            if variant == "upstream":
                if current is None:
                    installer.install(venv, [str(sdist), f"mcp=={mcp_version}"])
            else:
                log(f"installing the fork from {fork} into {venv.name}")
                installer.install(
                    venv, [str(fork), f"mcp=={mcp_version}"], "claude-agent-sdk"
                )
            stamp.write_text(json.dumps(wanted))
            venvs[(mcp_version, variant)] = venv
    return venvs


def installed_package_dir(venv: Path) -> Path:
    # Found by asking the venv, without importing the package itself.
    out = run(
        [
            str(venv_python(venv)),
            "-I",
            "-c",
            "import importlib.util, os; "
            "print(os.path.dirname(importlib.util.find_spec('claude_agent_sdk').origin))",
        ],
        capture_output=True,
    ).stdout.strip()
    return Path(out)


def describe_fork(fork: Path) -> dict[str, Any]:
    info: dict[str, Any] = {
        "path": str(fork),
        "package_digest": package_digest(fork / "src" / "claude_agent_sdk"),
    }
    git = shutil.which("git")
    if git and (fork / ".git").exists():
        head = subprocess.run(
            [git, "-C", str(fork), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        status = subprocess.run(
            [git, "-C", str(fork), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
        )
        if head.returncode == 0:
            info["git_head"] = head.stdout.strip()
            info["src_dirty"] = bool(status.stdout.strip())
    return info


# --- Measuring ------------------------------------------------------------------


class Worker:
    """A ``bench_worker.py`` process in one venv, answering one command at a
    time (see that file for the protocol)."""

    def __init__(self, venv: Path, role: str, cwd: str) -> None:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PYTHON", "VIRTUAL_ENV"))
        }
        env["PYTHONHASHSEED"] = "0"
        self.venv = venv
        self.process = subprocess.Popen(
            [str(venv_python(venv)), "-I", str(WORKER), role],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _read(self) -> Any:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            raise SystemExit(f"bench worker in {self.venv} exited ({code})")
        return json.loads(line)

    def ready(self) -> None:
        if not self._read().get("ready"):
            raise SystemExit(f"bench worker in {self.venv} did not start")

    def ask(self, **command: Any) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self._read()["result"]

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def round_commands(
    config: dict[str, Any], round_index: int, strict_on: set[str]
) -> list[tuple[str, dict[str, Any], set[str]]]:
    """(figure, command, variants that run it) for one round."""
    both = set(VARIANTS)
    commands: list[tuple[str, dict[str, Any], set[str]]] = []
    for size, samples in config["list_samples"].items():
        command = {"op": "list", "server": f"list{size}", "samples": samples}
        commands.append((f"list_{size}", command, both))
    latency = {"op": "latency", "samples": config["latency_samples"]}
    commands.append(("latency", latency, both))
    for callers, calls in config["throughput"].items():
        command = {"op": "throughput", "callers": int(callers), "calls": calls}
        commands.append((f"throughput_{callers}", command, both))
    define = {"op": "define", "tools": config["define_tools"]}
    commands.append(("define", {**define, "strict": False}, both))
    if strict_on:
        commands.append(("define_strict", {**define, "strict": True}, strict_on))
    if round_index % config["import_every"] == 0:
        command = {"op": "import", "samples": config["import_samples"]}
        commands.append(("import", command, both))
    return commands


# variant -> figure -> values
Samples = dict[str, dict[str, list[float]]]


@dataclasses.dataclass
class Measurements:
    """Everything the rounds produced, per mcp version.

    ``samples[mcp][variant][figure]``: every sample, pooled over rounds.
    ``chunks[mcp][variant][figure]``: the median of each chunk, in order.
    ``paired[mcp][figure]``: fork ÷ upstream for each pair of chunks run
    back to back (for the fork-only extra-fields list: extra ÷ plain).
    """

    installed: dict[str, dict[str, Any]]
    samples: dict[str, Samples]
    chunks: dict[str, Samples]
    paired: dict[str, dict[str, list[float]]]


def measure(
    venvs: dict[tuple[str, str], Path],
    mcp_versions: list[str],
    rounds: int,
    config: dict[str, Any],
) -> Measurements:
    def per_variant() -> dict[str, Samples]:
        return {v: {variant: {} for variant in VARIANTS} for v in mcp_versions}

    found = Measurements(
        installed={v: {} for v in mcp_versions},
        samples=per_variant(),
        chunks=per_variant(),
        paired={v: {} for v in mcp_versions},
    )

    def record(mcp_version: str, variant: str, figure: str, values: list[float]):
        found.samples[mcp_version][variant].setdefault(figure, []).extend(values)
        median = statistics.median(values)
        found.chunks[mcp_version][variant].setdefault(figure, []).append(median)
        return median

    with tempfile.TemporaryDirectory() as cwd, contextlib.ExitStack() as stack:

        def start(venv: Path, role: str) -> Worker:
            worker = Worker(venv, role, cwd)
            stack.callback(worker.close)
            return worker

        workers: dict[tuple[str, str, str], Worker] = {}
        for (mcp_version, variant), venv in venvs.items():
            for role in ("serve", "define"):
                workers[(mcp_version, variant, role)] = start(venv, role)
        for (mcp_version, variant, role), worker in list(workers.items()):
            worker.ready()
            if role == "serve":
                info = worker.ask(op="info")
                found.installed[mcp_version][variant] = info
                if info["has_fork_fields"]:
                    extra = start(venvs[(mcp_version, variant)], "extra")
                    extra.ready()
                    workers[(mcp_version, variant, "extra")] = extra
        strict_on = {
            v: {
                variant
                for variant in VARIANTS
                if found.installed[v][variant]["has_strict"]
            }
            for v in mcp_versions
        }
        extra_size = config["list_samples"][EXTRA_SIZE]
        for round_index in range(rounds):
            started = time.perf_counter()
            majors = mcp_versions if round_index % 2 == 0 else mcp_versions[::-1]
            for position, mcp_version in enumerate(majors):
                commands = round_commands(config, round_index, strict_on[mcp_version])
                for index, (figure, command, runs_on) in enumerate(commands):
                    # Alternate which side goes first, chunk by chunk.
                    flip = (round_index + position + index) % 2
                    order = VARIANTS[::-1] if flip else VARIANTS
                    chunk: dict[str, float] = {}
                    for variant in order:
                        if variant not in runs_on:
                            continue
                        role = "define" if command["op"] in DEFINE_OPS else "serve"
                        answer = workers[(mcp_version, variant, role)].ask(**command)
                        values = answer if isinstance(answer, list) else [answer]
                        chunk[variant] = record(mcp_version, variant, figure, values)
                    if len(chunk) == 2:
                        found.paired[mcp_version].setdefault(figure, []).append(
                            chunk["fork"] / chunk["upstream"]
                        )
                extra_worker = workers.get((mcp_version, "fork", "extra"))
                if extra_worker is not None:
                    lists = {}
                    servers = (f"list{EXTRA_SIZE}", f"extra{EXTRA_SIZE}")
                    for server in servers[:: -1 if round_index % 2 else 1]:
                        values = extra_worker.ask(
                            op="list", server=server, samples=extra_size
                        )
                        figure = f"list_{'extra' if 'extra' in server else 'plain'}"
                        lists[server] = record(
                            mcp_version, "fork", f"{figure}_{EXTRA_SIZE}", values
                        )
                    found.paired[mcp_version].setdefault(
                        f"list_extra_{EXTRA_SIZE}", []
                    ).append(lists[servers[1]] / lists[servers[0]])
            log(
                f"round {round_index + 1}/{rounds}: {time.perf_counter() - started:.1f}s"
            )
    return found


# --- Statistics -----------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(
    values: list[float], scale: float, tails: tuple[str, ...]
) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "median": statistics.median(values) * scale,
        "n": len(values),
    }
    for tail in tails:
        summary[tail] = percentile(values, int(tail[1:]) / 100) * scale
    return summary


def ratio(fork: float | None, upstream: float | None) -> float | None:
    if fork is None or upstream is None or upstream == 0:
        return None
    return fork / upstream


def linear_fit(xs: list[float], ys: list[float]) -> dict[str, float]:
    mean_x = statistics.fmean(xs)
    mean_y = statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    residual = sum(
        (y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys, strict=True)
    )
    total = sum((y - mean_y) ** 2 for y in ys)
    return {
        "slope": slope,
        "intercept": intercept,
        "r_squared": 1 - residual / total if total else 1.0,
    }


def compare(
    fork_values: list[float],
    upstream_values: list[float],
    paired: list[float],
    *,
    unit: str,
    scale: float,
    better: str,
    tails: tuple[str, ...] = (),
) -> dict[str, Any]:
    """One figure: both sides' statistics in ``unit``, and fork ÷ upstream of
    each statistic. ``paired_ratio`` is the median over chunks of the ratio
    between a fork chunk and the upstream chunk run right beside it, which
    drift cannot bias; it is given as a cross-check of ``ratio``."""
    entry: dict[str, Any] = {"unit": unit, "better": better}
    entry["fork"] = summarize(fork_values, scale, tails) if fork_values else None
    entry["upstream"] = (
        summarize(upstream_values, scale, tails) if upstream_values else None
    )
    entry["ratio"] = {
        stat: ratio(
            entry["fork"][stat] if entry["fork"] else None,
            entry["upstream"][stat] if entry["upstream"] else None,
        )
        for stat in ("median", *tails)
    }
    entry["paired_ratio"] = statistics.median(paired) if paired else None
    return entry


def analyse(
    samples: Samples, chunks: Samples, paired: dict[str, list[float]]
) -> dict[str, Any]:
    def figure(name: str, **kwargs: Any) -> dict[str, Any]:
        return compare(
            samples["fork"].get(name, []),
            samples["upstream"].get(name, []),
            paired.get(name, []),
            **kwargs,
        )

    metrics: dict[str, Any] = {}
    for size in LIST_SIZES:
        metrics[f"tools_list_{size}"] = figure(
            f"list_{size}", unit="ms", scale=1e3, better="lower", tails=("p95",)
        )
    metrics["tools_list_slope"] = list_slope(metrics, chunks)
    metrics["tools_call_latency"] = figure(
        "latency", unit="ms", scale=1e3, better="lower", tails=("p99",)
    )
    for callers in ("1", "50"):
        metrics[f"tools_call_throughput_{callers}"] = figure(
            f"throughput_{callers}", unit="calls/s", scale=1.0, better="higher"
        )
    metrics["define_per_tool"] = figure("define", unit="us", scale=1e6, better="lower")
    strict = figure("define_strict", unit="us", scale=1e6, better="lower")
    strict["note"] = (
        "strict exists only on the fork (upstream's tool() has no such "
        "parameter); ratio_to_non_strict is the fork's strict ÷ non-strict cost"
    )
    strict["ratio_to_non_strict"] = ratio(
        strict["fork"]["median"] if strict["fork"] else None,
        (metrics["define_per_tool"]["fork"] or {}).get("median"),
    )
    metrics["define_per_tool_strict"] = strict
    metrics[f"tools_list_extra_{EXTRA_SIZE}"] = extra_fields_list(samples, paired)
    metrics["import"] = figure("import", unit="ms", scale=1e3, better="lower")
    return metrics


def list_slope(metrics: dict[str, Any], chunks: Samples) -> dict[str, Any]:
    """Per-tool cost of tools/list between 1 and 1000 tools.

    Fitted per round (least squares over that round's chunk medians at the
    four sizes), so each fork slope has an upstream slope measured beside
    it; ``us_per_tool`` is the median over rounds and ``paired_ratio`` the
    median of the per-round ratios. The fit over the pooled medians, its
    r_squared and the plain difference between the ends say how linear the
    growth is.
    """
    sizes = [float(size) for size in LIST_SIZES]
    slope: dict[str, Any] = {"unit": "us/tool", "better": "lower"}
    per_round: dict[str, list[float]] = {}
    for variant in VARIANTS:
        rounds = zip(
            *(chunks[variant][f"list_{size}"] for size in LIST_SIZES), strict=True
        )
        per_round[variant] = [linear_fit(sizes, list(r))["slope"] for r in rounds]
        medians = [
            metrics[f"tools_list_{size}"][variant]["median"] for size in LIST_SIZES
        ]
        fit = linear_fit(sizes, medians)
        slope[variant] = {
            "us_per_tool": statistics.median(per_round[variant]) * 1e6,
            "pooled_fit_us_per_tool": fit["slope"] * 1e3,
            "pooled_fit_intercept_ms": fit["intercept"],
            "r_squared": fit["r_squared"],
            "endpoints_us_per_tool": (medians[-1] - medians[0])
            / (LIST_SIZES[-1] - LIST_SIZES[0])
            * 1e3,
        }
    slope["paired_ratio"] = statistics.median(
        f / u for f, u in zip(per_round["fork"], per_round["upstream"], strict=True)
    )
    return slope


def extra_fields_list(
    samples: Samples, paired: dict[str, list[float]]
) -> dict[str, Any]:
    """The fork-only list of tools that carry strict, input_examples and
    extra_fields, against a plain list of as many tools in the same process."""
    extra = samples["fork"].get(f"list_extra_{EXTRA_SIZE}", [])
    plain = samples["fork"].get(f"list_plain_{EXTRA_SIZE}", [])
    upstream_plain = samples["upstream"].get(f"list_{EXTRA_SIZE}", [])
    tails = ("p95",)
    entry: dict[str, Any] = {
        "unit": "ms",
        "better": "lower",
        "note": (
            f"fork only: {EXTRA_SIZE} tools that each carry input_examples and "
            "extra_fields (and strict=True on the first 20, strict mode's limit "
            "per request), which the fork adds after mcp has serialized the "
            f"tools/list result, against {EXTRA_SIZE} plain tools listed by the "
            "same process (plain); ratio_to_plain is the median of the ratios of "
            "chunks run back to back, ratio_to_upstream_plain compares with "
            "upstream's plain list, which cannot carry these fields"
        ),
        "fork": summarize(extra, 1e3, tails) if extra else None,
        "plain": summarize(plain, 1e3, tails) if plain else None,
        "upstream": None,
    }
    pairs = paired.get(f"list_extra_{EXTRA_SIZE}", [])
    entry["ratio_to_plain"] = statistics.median(pairs) if pairs else None
    entry["ratio_to_upstream_plain"] = (
        ratio(statistics.median(extra), statistics.median(upstream_plain))
        if extra and upstream_plain
        else None
    )
    return entry


# --- Rendering ------------------------------------------------------------------


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "calls/s":
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


ROWS: list[tuple[str, str, tuple[str, ...]]] = [
    *(
        (
            f"tools/list, {size} tool{'s' if size > 1 else ''} (median / p95, ms)",
            f"tools_list_{size}",
            ("median", "p95"),
        )
        for size in LIST_SIZES
    ),
    (
        "tools/list, 1000 tools with input_examples, extra_fields, 20 of them "
        "strict (median / p95, ms)",
        f"tools_list_extra_{EXTRA_SIZE}",
        ("median", "p95"),
    ),
    ("tools/list slope, 1→1000 tools (µs per tool)", "tools_list_slope", ()),
    ("tools/call latency (median / p99, ms)", "tools_call_latency", ("median", "p99")),
    (
        "tools/call throughput, 1 caller (calls/s)",
        "tools_call_throughput_1",
        ("median",),
    ),
    (
        "tools/call throughput, 50 callers (calls/s)",
        "tools_call_throughput_50",
        ("median",),
    ),
    (
        "definition per tool, `@tool` + server of 10 (µs)",
        "define_per_tool",
        ("median",),
    ),
    ("definition per tool, `strict=True` (µs)", "define_per_tool_strict", ("median",)),
    ("`import claude_agent_sdk` (ms)", "import", ("median",)),
]


def cells(metric: dict[str, Any], stats: tuple[str, ...]) -> tuple[str, str, str]:
    """Fork, upstream and ratio cells of one row. The ratio of a median is the
    paired one (see ``compare``); tails can only be compared pooled."""
    if "us_per_tool" in (metric.get("fork") or {}):
        return (
            fmt(metric["fork"]["us_per_tool"], "us"),
            fmt(metric["upstream"]["us_per_tool"], "us"),
            fmt_ratio(metric["paired_ratio"]),
        )
    unit = metric["unit"]

    def side(variant: str) -> str:
        summary = metric.get(variant)
        if not summary:
            return "—"
        return " / ".join(fmt(summary[stat], unit) for stat in stats)

    if metric.get("upstream") is None:
        # A fork-only figure, compared with the fork's own plain counterpart.
        for key, against in (
            ("ratio_to_non_strict", "non-strict"),
            ("ratio_to_plain", "plain"),
        ):
            if metric.get(key) is not None:
                return side("fork"), "n/a", f"{metric[key]:.2f}× {against}"
        return side("fork"), "n/a", "—"
    ratios = [
        metric.get("paired_ratio") if stat == "median" else metric["ratio"].get(stat)
        for stat in stats
    ]
    return side("fork"), side("upstream"), " / ".join(map(fmt_ratio, ratios))


def render_markdown(results: dict[str, Any]) -> str:
    majors = list(results["mcp"])
    head = "| Measurement |"
    rule = "|---|"
    for mcp_version in majors:
        head += f" fork, mcp {mcp_version} | upstream, mcp {mcp_version} | ratio |"
        rule += "--:|--:|--:|"
    lines = [head, rule]
    for label, key, stats in ROWS:
        row = f"| {label} |"
        for mcp_version in majors:
            row += " {} | {} | {} |".format(
                *cells(results["mcp"][mcp_version]["metrics"][key], stats)
            )
        lines.append(row)

    env = results["environment"]
    slopes = []
    for mcp_version in majors:
        slope = results["mcp"][mcp_version]["metrics"]["tools_list_slope"]
        slopes.append(
            f"mcp {mcp_version}: fork {slope['fork']['us_per_tool']:.1f} µs/tool "
            f"(R² {slope['fork']['r_squared']:.4f}), upstream "
            f"{slope['upstream']['us_per_tool']:.1f} µs/tool "
            f"(R² {slope['upstream']['r_squared']:.4f})"
        )
    intro = (
        f"Fork against pristine upstream {UPSTREAM_VERSION} (PyPI sdist), same "
        f"Python {env['python']} on {env['platform']} ({env['cpu_count']} CPUs), "
        f"{results['config']['rounds']} interleaved rounds, measured "
        f"{results['generated'][:10]}. Everything runs in process through "
        "`Query._handle_sdk_mcp_request`. Ratio = fork ÷ upstream (below 1× "
        "is faster for times, above 1× is faster for throughput); for a median "
        "it is the median of the ratios of fork and upstream chunks run side by "
        "side, for a tail the ratio of the pooled tails. `strict` exists only "
        f"on the fork. Load average during the run: {env.get('load_average')}."
    )
    notes = [
        "",
        "Per-tool slope of tools/list (least squares over 1, 10, 100 and 1000 "
        "tools, fitted per round; R² of the fit over the pooled medians): "
        + "; ".join(slopes)
        + ".",
        "",
        "Reproduce with `nox -s bench` (or `python tools/bench.py`); it writes "
        "`.cache/bench/bench-results.json` and regenerates this table.",
    ]
    return "\n".join([intro, "", *lines, *notes]) + "\n"


def update_readme(readme: Path, table: str) -> bool:
    if not readme.exists():
        return False
    text = readme.read_text()
    start = text.find(README_START)
    end = text.find(README_END, start + 1)
    if start < 0 or end < 0:
        return False
    updated = text[: start + len(README_START)] + "\n" + table + text[end:]
    if updated != text:
        readme.write_text(updated)
    return True


def publish(results: dict[str, Any], out: Path, readme: Path) -> None:
    table = render_markdown(results)
    out.with_suffix(".md").write_text(table)
    print(table)
    if update_readme(readme, table):
        log(f"updated the table in {readme}")
    else:
        log(f"{readme} has no {README_START} … {README_END} markers; left alone")


# --- Entry point ----------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--fork",
        type=Path,
        default=ROOT,
        help="project directory of the fork to measure (default: repository root)",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter every venv is built on (default: the one running this)",
    )
    parser.add_argument("--out", type=Path, help="result file (JSON)")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench")
    parser.add_argument(
        "--rounds", type=int, help=f"default {ROUNDS} ({QUICK_ROUNDS} with --quick)"
    )
    parser.add_argument(
        "--mcp",
        action="append",
        help="mcp version (repeatable; default: 1.30.0, 2.3.0)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="few samples, for trying the bench out"
    )
    parser.add_argument(
        "--render-only",
        type=Path,
        metavar="RESULTS",
        help="only regenerate the table and README block from a result file",
    )
    args = parser.parse_args(argv)
    out: Path = args.out or args.cache / "bench-results.json"

    if args.render_only:
        publish(json.loads(args.render_only.read_text()), out, args.readme)
        return 0

    fork = args.fork.resolve()
    if not (fork / "src" / "claude_agent_sdk" / "__init__.py").exists():
        raise SystemExit(
            f"{fork} is not a claude-agent-sdk project (no src/claude_agent_sdk); "
            "point --fork at one"
        )
    mcp_versions: list[str] = args.mcp or list(MCP_VERSIONS)
    config = QUICK_ROUND if args.quick else ROUND
    rounds: int = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    cache: Path = args.cache.resolve()
    started = time.perf_counter()

    installer = Installer(args.python)
    venvs = prepare_venvs(fork, cache, installer, mcp_versions)
    fork_info = describe_fork(fork)
    for mcp_version in mcp_versions:
        installed = installed_package_dir(venvs[(mcp_version, "fork")])
        if package_digest(installed) != fork_info["package_digest"]:
            raise SystemExit(
                f"the fork installed in {venvs[(mcp_version, 'fork')]} does not match "
                f"{fork}/src/claude_agent_sdk (stale build?)"
            )
    setup_seconds = time.perf_counter() - started

    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    found = measure(venvs, mcp_versions, rounds, config)
    installed = found.installed
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    # The 1-minute load average at both ends: other work on the machine is
    # what widens the tails most.
    load_average = (
        None if load_before is None else f"{load_before:.1f} → {load_after:.1f}"
    )

    for mcp_version in mcp_versions:
        for variant in VARIANTS:
            reported = installed[mcp_version][variant]
            venv = venvs[(mcp_version, variant)].resolve()
            if (
                reported["mcp_version"] != mcp_version
                or venv not in Path(reported["sdk_dir"]).resolve().parents
            ):
                raise SystemExit(f"{venv} does not hold what was installed: {reported}")
        if installed[mcp_version]["upstream"]["sdk_version"] != UPSTREAM_VERSION:
            raise SystemExit("the upstream venv does not hold upstream")

    first = installed[mcp_versions[0]]["fork"]
    results: dict[str, Any] = {
        "format": 1,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"
        ),
        "environment": {
            "python": first["python"],
            "python_executable": args.python,
            "platform": f"{platform.system()} {platform.machine()}",
            "cpu_count": os.cpu_count(),
            "load_average": load_average,
            "jsonschema": first["jsonschema_version"],
            "pydantic": first["pydantic_version"],
        },
        "fork": fork_info,
        "upstream": {"version": UPSTREAM_VERSION, "sdist_sha256": UPSTREAM_SHA256},
        "config": {"rounds": rounds, "quick": args.quick, **config},
        "mcp": {
            mcp_version: {
                "installed": {
                    variant: {
                        key: installed[mcp_version][variant][key]
                        for key in (
                            "sdk_version",
                            "mcp_version",
                            "has_strict",
                            "has_fork_fields",
                        )
                    }
                    for variant in VARIANTS
                },
                "metrics": analyse(
                    found.samples[mcp_version],
                    found.chunks[mcp_version],
                    found.paired[mcp_version],
                ),
            }
            for mcp_version in mcp_versions
        },
    }
    # Every sample as measured: seconds per operation (per tool for define),
    # calls per second for throughput.
    results["raw"] = {
        mcp_version: {
            variant: {
                figure: [float(f"{value:.6g}") for value in values]
                for figure, values in by_figure.items()
            }
            for variant, by_figure in found.samples[mcp_version].items()
        }
        for mcp_version in mcp_versions
    }
    results["seconds"] = {
        "setup": round(setup_seconds, 1),
        "total": round(time.perf_counter() - started, 1),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    log(f"wrote {out} ({results['seconds']['total']:.0f}s in all)")
    publish(results, out, args.readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
