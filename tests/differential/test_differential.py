"""The fork against pristine upstream 0.2.189, case by case.

Run by ``nox -s differential``, which installs pristine upstream (from its
hash-checked sdist) into a venv of its own and names that venv's Python in
``$DIFFERENTIAL_UPSTREAM_PYTHON``; this process's Python holds the fork,
with the same mcp. Both run ``runner.py`` on the same cases; every
difference must be accounted for by a row of ``differences.ROWS`` (and so
of the table in docs/differences.md), and every row by some case.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections import Counter
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.differential import differences
from tests.differential.cases import all_cases
from tools.pins import PYTHONS

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM_PYTHON = os.environ.get("DIFFERENTIAL_UPSTREAM_PYTHON")
GENERATED = 600
# Where the session's figures go. docs/differences.md quotes
# those of the newest Python, whose cells are in the default run.
FIGURES = ROOT / ".cache" / "differential"
FIGURES_PYTHON = PYTHONS[-1]

Outputs = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]


def _start(
    python: str, cases: Path, out: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [python, "-m", "tests.differential.runner", str(cases), str(out)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def _finish(process: subprocess.Popen[bytes], out: Path) -> Any:
    if process.wait() != 0:
        raise subprocess.CalledProcessError(process.returncode, process.args)
    return json.loads(out.read_text("utf-8"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("differential")


@pytest.fixture(scope="module")
def case_list() -> list[dict[str, Any]]:
    """Every case, as the runners read them (through JSON)."""
    loaded: list[dict[str, Any]] = json.loads(json.dumps(all_cases(GENERATED)))
    return loaded


@pytest.fixture(scope="module")
def cases(workdir: Path, case_list: list[dict[str, Any]]) -> Path:
    path = workdir / "cases.json"
    path.write_text(json.dumps(case_list), "utf-8")
    return path


@pytest.fixture(scope="module")
def hand_written_cases(workdir: Path, case_list: list[dict[str, Any]]) -> Path:
    """The cases but the generated ones (named, corpus and docs cases): what
    the sabotaged forks run, since a sabotage only needs one case to show."""
    path = workdir / "hand-written.json"
    kept = [c for c in case_list if not c["id"].startswith("generated-")]
    path.write_text(json.dumps(kept), "utf-8")
    return path


# The runner processes of one module. Each: (upstream's Python?, environment,
# which cases). The first four start together (independent processes: on a
# machine with two cores they take about half the time in a row); the two
# under -W error start when upstream and the fork have answered, and run only
# the cases where either of them issued a warning (``_warned``): a case that
# issues none runs alike whatever the warnings filter, so its answers under
# -W error are its answers in the first runs, which ``_with_warnings_as_errors``
# takes for it.
RUNS = {
    "upstream": (True, {}, "all"),
    "fork": (False, {}, "all"),
    "sabotaged": (
        False,
        {"DIFFERENTIAL_SABOTAGE": "faithful-types-for-every-tool"},
        "hand-written",
    ),
    "sabotaged-W": (
        False,
        {
            "DIFFERENTIAL_WARNINGS": "error",
            "DIFFERENTIAL_SABOTAGE": "notices-as-warnings",
        },
        "hand-written",
    ),
    "upstream-W": (True, {"DIFFERENTIAL_WARNINGS": "error"}, "warned"),
    "fork-W": (False, {"DIFFERENTIAL_WARNINGS": "error"}, "warned"),
}
# Cases without a warning that the -W error runs take too (``runs``).
CONTROL_CASES = 12
WARNING_PHASES = ("define_warnings", "server_warnings", "serve_warnings")


def _warned(*outputs: list[dict[str, Any]]) -> set[str]:
    """The cases where a run issued a warning (the runner records every one:
    its filter is ``always``)."""
    return {
        output["id"]
        for run in outputs
        for output in run
        if any(output.get(phase) for phase in WARNING_PHASES)
    }


def _with_warnings_as_errors(
    first: list[dict[str, Any]], again: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A run of every case under -W error: ``again``'s answer where it ran
    the case, else ``first``'s (the case issued no warning)."""
    rerun = {output["id"]: output for output in again}
    return [rerun.get(output["id"], output) for output in first]


@pytest.fixture(scope="module")
def runs(
    workdir: Path,
    case_list: list[dict[str, Any]],
    cases: Path,
    hand_written_cases: Path,
) -> dict[str, Any]:
    if not UPSTREAM_PYTHON:
        pytest.fail(
            "$DIFFERENTIAL_UPSTREAM_PYTHON must name a Python with pristine "
            "upstream installed: run these tests with `nox -s differential`",
            pytrace=False,
        )
    warned = workdir / "warned.json"

    def start(names: list[str]) -> dict[str, subprocess.Popen[bytes]]:
        paths = {"all": cases, "hand-written": hand_written_cases, "warned": warned}
        return {
            name: _start(
                UPSTREAM_PYTHON if RUNS[name][0] else sys.executable,
                paths[RUNS[name][2]],
                workdir / f"{name}.json",
                RUNS[name][1],
            )
            for name in names
        }

    first = start(["upstream", "fork", "sabotaged", "sabotaged-W"])
    done = {
        name: _finish(first.pop(name), workdir / f"{name}.json")
        for name in ("upstream", "fork")
    }
    ids = _warned(done["upstream"], done["fork"])
    # A few cases without a warning run again too, as a control of what
    # standing in for them rests on: they must answer as they did.
    quiet = [c["id"] for c in case_list if c["id"] not in ids]
    control = set(quiet[:: max(1, len(quiet) // CONTROL_CASES)][:CONTROL_CASES])
    again = [c for c in case_list if c["id"] in ids | control]
    warned.write_text(json.dumps(again), "utf-8")
    second = start(["upstream-W", "fork-W"])
    for name, process in [*first.items(), *second.items()]:
        done[name] = _finish(process, workdir / f"{name}.json")
    done["control"] = control
    for side in ("upstream", "fork"):
        assert {o["id"] for o in done[f"{side}-W"]} == ids | control
        done[f"{side}-W control"] = [o for o in done[f"{side}-W"] if o["id"] in control]
        done[f"{side}-W"] = _with_warnings_as_errors(done[side], done[f"{side}-W"])
    return done


def _sabotaged(outputs: Outputs, sabotaged: list[dict[str, Any]]) -> list[Any]:
    """The differences no row explains between upstream and a sabotaged fork,
    on the cases the sabotaged fork ran."""
    loaded, upstream, _ = outputs
    ran = {o["id"] for o in sabotaged}
    pairs = [(c, up) for c, up in zip(loaded, upstream, strict=True) if c["id"] in ran]
    assert [c["id"] for c, _ in pairs] == [o["id"] for o in sabotaged]
    return [
        d
        for (case, up), fk in zip(pairs, sabotaged, strict=True)
        for d in differences.compare(case, up, fk)
        if differences.explain(d) is None
    ]


@pytest.fixture(scope="module")
def outputs(case_list: list[dict[str, Any]], runs: dict[str, Any]) -> Outputs:
    return case_list, runs["upstream"], runs["fork"]


@pytest.fixture(scope="module")
def outputs_warnings_as_errors(
    case_list: list[dict[str, Any]], runs: dict[str, Any]
) -> Outputs:
    """Both sides with warnings as errors (``python -W error``)."""
    return case_list, runs["upstream-W"], runs["fork-W"]


def _differences(outputs: Outputs) -> list[differences.Difference]:
    loaded, upstream, fork = outputs
    assert [c["id"] for c in loaded] == [o["id"] for o in upstream]
    assert [c["id"] for c in loaded] == [o["id"] for o in fork]
    found = []
    for case, up, fk in zip(loaded, upstream, fork, strict=True):
        found += differences.compare(case, up, fk)
    return found


def test_the_upstream_venv_holds_pristine_upstream() -> None:
    assert UPSTREAM_PYTHON
    probe = (
        "import claude_agent_sdk, inspect; "
        "print(claude_agent_sdk.__version__, "
        "'strict' in inspect.signature(claude_agent_sdk.tool).parameters)"
    )
    answer = subprocess.run(
        [UPSTREAM_PYTHON, "-c", probe], check=True, capture_output=True, text=True
    ).stdout.split()
    assert answer == ["0.2.189", "False"]


def test_every_difference_is_a_row_of_the_table(outputs: Outputs) -> None:
    found = _differences(outputs)
    unexplained = [d for d in found if differences.explain(d) is None]
    shown = "\n".join(d.describe() for d in unexplained[:15])
    assert not unexplained, (
        f"{len(unexplained)} of {len(found)} differences from upstream match no "
        f"row of tests/differential/differences.py:\n{shown}"
    )
    loaded = outputs[0]
    rows = Counter(
        row.key for d in found if (row := differences.explain(d)) is not None
    )
    FIGURES.mkdir(parents=True, exist_ok=True)
    figures = {
        "python": platform.python_version(),
        "mcp": version("mcp"),
        "cases": len(loaded),
        "generated": sum(c["id"].startswith("generated-") for c in loaded),
        "corpus": sum(c["id"].startswith("corpus-") for c in loaded),
        "docs": sum(c["id"].startswith("docs-") for c in loaded),
        "named": sum(c["id"].startswith("named-") for c in loaded),
        "calls": sum(len(c["calls"]) for c in loaded),
        "differences": len(found),
        "cases_with_differences": len({d.case["id"] for d in found}),
        "rows": len(differences.ROWS),
        "by_row": dict(sorted(rows.items())),
    }
    name = f"py{sys.version_info.major}{sys.version_info.minor}-mcp{version('mcp')}"
    (FIGURES / f"{name}.json").write_text(json.dumps(figures, indent=1), "utf-8")
    if f"{sys.version_info.major}.{sys.version_info.minor}" == FIGURES_PYTHON:
        # The figures docs/differences.md quotes are this run's.
        major = version("mcp").split(".")[0]
        rendered = differences.figures_text(figures)
        if os.environ.get("DIFFERENTIAL_WRITE"):
            differences.write_figures(major, rendered)
        assert differences.read_figures(major) == rendered, (
            "docs/differences.md quotes other figures than this run's: "
            f"tools/nox -s 'differential-{FIGURES_PYTHON}(mcp{major})' -- --write"
        )


def test_every_row_of_the_table_is_shown_by_a_case(outputs: Outputs) -> None:
    shown = {
        row.key
        for d in _differences(outputs)
        if (row := differences.explain(d)) is not None
    }
    unseen = [
        row.key for row in differences.ROWS if row.always and row.key not in shown
    ]
    assert not unseen, f"no case shows these rows of the table: {unseen}"


def test_the_table_in_the_docs_is_current() -> None:
    assert differences.main([]) == 0, (
        "run: python -m tests.differential.differences --write"
    )


def test_breaking_one_neutral_behaviour_fails_the_comparison(
    outputs: Outputs, runs: dict[str, Any]
) -> None:
    """The comparison bites: a fork that serves ``Optional[X]`` as nullable
    for every tool (as it once did) is caught."""
    unexplained = _sabotaged(outputs, runs["sabotaged"])
    assert unexplained
    assert any(d.aspect == "list" for d in unexplained)


def test_with_warnings_as_errors_every_difference_is_a_row_too(
    outputs_warnings_as_errors: Outputs,
) -> None:
    """A notice never refuses: with warnings as errors the fork defines,
    serves and answers every case as upstream does (but for the rows), so a
    suite run with ``filterwarnings = error`` stays green on the fork."""
    found = _differences(outputs_warnings_as_errors)
    unexplained = [d for d in found if differences.explain(d) is None]
    shown = "\n".join(d.describe() for d in unexplained[:15])
    assert not unexplained, (
        f"{len(unexplained)} of {len(found)} differences from upstream under "
        f"-W error match no row:\n{shown}"
    )


def test_cases_without_warnings_answer_alike_under_w_error(
    case_list: list[dict[str, Any]], runs: dict[str, Any]
) -> None:
    # What lets the -W error runs skip the cases without a warning: a
    # control sample of them, run again under -W error, answers as before
    # (compared as the table compares upstream and the fork: no difference).
    cases = {c["id"]: c for c in case_list}
    assert len(runs["control"]) == CONTROL_CASES
    for side in ("upstream", "fork"):
        first = {o["id"]: o for o in runs[side]}
        again = runs[f"{side}-W control"]
        assert {o["id"] for o in again} == runs["control"]
        for output in again:
            case = cases[output["id"]]
            assert differences.compare(case, first[output["id"]], output) == [], (
                side,
                output["id"],
            )


def test_a_notice_issued_as_a_warning_fails_the_comparison(
    outputs_warnings_as_errors: Outputs, runs: dict[str, Any]
) -> None:
    """The -W error comparison bites: a fork that also warns its notices (as
    it once did) refuses definitions upstream accepts, and that is caught."""
    unexplained = _sabotaged(outputs_warnings_as_errors, runs["sabotaged-W"])
    assert any(d.aspect == "server_error" for d in unexplained)
