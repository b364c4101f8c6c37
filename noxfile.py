"""Every workflow of the fork is a nox session.

`tools/nox` (no arguments) runs the default set, which is the README's test
command and what CI runs, sized to finish within 30 minutes on two cores, in
two lanes side by side (``LANES``, tools/lanes.py): the patch check, lint,
type check on both mcp majors, the fork's tests on the edges of the Python x
mcp matrix (3.10 and 3.13 on both majors) and 3.11 and 3.12 on one major
each, the differential test against pristine upstream on the edges, upstream's
own suite on three mcp versions and at each step of the series (in full at
the upstream-track boundary, elsewhere the test modules the step's patch
touches), the proof that the feature tests fail without their patches, each
upstream-track patch as its pull request, and the end-to-end tests against
the real Claude Code CLI.

`tools/nox -t full` runs what the default run leaves out (the rest of the
matrix, `steps` in full); the two together are the complete run, made before
every release (CONTRIBUTING.md).

Maintenance sessions (in neither run): vendor, export, rebase, bench,
bench_relay, demo, live, cli, docs, mcp_corpus, strict_report.

`tools/nox` runs nox as ``python -m nox`` from the repository's root, which
is what puts ``tools`` on the import path here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nox

from tools import claude_cli, forktool
from tools import live as live_check
from tools.pins import (
    MCP_FLOOR,
    MCP_MAJORS,
    MYPY,
    NOX,
    PACKAGING_DEPS,
    PYPERF,
    PYTHONS,
    RUFF,
    STRICT_PROPERTY_DEPS,
    STRICT_REPORT_PEERS,
    TEST_DEPS,
    TOOL_PYTHON,
    TRIO,
    UPSTREAM_OPTIONAL_DEPS,
    UPSTREAM_TEST_DEPS,
    XDIST,
)

ROOT = Path(__file__).resolve().parent

# Tests that need something other than the installed package: the tooling
# (tests/repo), the real CLI (tests/e2e, run by the e2e session) and pristine
# upstream beside the fork (tests/differential, run by the differential
# session).
NOT_PACKAGE_TESTS = [
    "--ignore=tests/e2e",
    "--ignore=tests/repo",
    "--ignore=tests/differential",
    "--ignore=tests/strict_properties",
]

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True


# The Python x mcp matrix of the default run: its edges (the oldest and the
# newest Python, on both mcp majors) and, for the fork's tests, one major on
# each Python between, alternating, so that every Python and every major is in
# it. The differential's cells between the edges are in the full run only: the
# tests cells run the fork on those Pythons, and the Python-dependent readings
# the differential compares (typing's forms, TypedDict detection) are those of
# 3.10 or of 3.13 (tests/differential/cases.py). The cells left out are in the
# full run.
def _default_cell(python: str, mcp: str, name: str = "tests") -> bool:
    if python in (PYTHONS[0], PYTHONS[-1]):
        return True
    if name == "differential":
        return False
    majors = list(MCP_MAJORS)
    return mcp == majors[(PYTHONS.index(python) + 1) % len(majors)]


def _cells(name: str, default: bool) -> list[str]:
    return [
        f"{name}-{python}({mcp})"
        for python in PYTHONS
        for mcp in MCP_MAJORS
        if _default_cell(python, mcp, name) == default
    ]


MATRIX_SESSIONS = ["tests", "differential"]
# The default run (what `.ci/run` runs): tools/nox runs it in these two lanes
# side by side (tools/lanes.py), each about half of its sessions' wall time,
# each lane mixing sessions that keep both cores busy (pytest-xdist, the
# differential's six runners) with ones that leave one idle (installs, mypy,
# the CLI's start-up). `python -m nox` with no session runs them in a row.
LANES = [
    [
        "patch_check",
        "lint",
        "typecheck",
        *_cells("tests", default=True),
        "repo",
        "upstream",
        "pull_requests",
        "e2e(mcp1)",
    ],
    [
        "steps",
        "prove(mcp2)",
        *_cells("differential", default=True),
        "strict_properties",
        # About 5 minutes since the relay's network-path turns (25 settings
        # through the real CLI): lane 1 ran 17:57 beside lane 2's 9:33.
        "e2e(mcp2)",
    ],
]
DEFAULT_SESSIONS = [*LANES[0], *LANES[1]]
# What the default run leaves out; `tools/nox -t full` runs them (the `full`
# session requires each).
FULL_SESSIONS = [
    *_cells("tests", default=False),
    *_cells("differential", default=False),
    "steps_full",
    "prove(mcp1)",
    "pull_requests_full",
]
# `tools/nox -t full` runs them in these two lanes side by side, as the
# default run's (`full`, which only requires them, is left out there).
# Measured (full runs of 2026-12-03 and -04): steps_full ~18 min, pull_requests_full
# ~17, prove(mcp1) ~4, each tests or differential cell ~1.5.
FULL_LANES = [
    [
        *_cells("tests", default=False),
        *[c for c in _cells("differential", default=False) if "-3.11(" in c],
        "prove(mcp1)",
        "pull_requests_full",
    ],
    [
        *[c for c in _cells("differential", default=False) if "-3.11(" not in c],
        "steps_full",
    ],
]
# In neither run: tools for maintainers, run by hand.
MAINTENANCE_SESSIONS = [
    "vendor",
    "export",
    "rebase",
    "bench",
    "bench_relay",
    "demo",
    "live",
    "cli",
    "docs",
    "mcp_corpus",
    "strict_report",
]
# pytest-xdist's workers for the heavy pytest runs: the machine's cores.
XDIST_ARGS = ["-n", "auto"]

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True
nox.options.sessions = DEFAULT_SESSIONS


@nox.session(python=False, tags=["full"], requires=FULL_SESSIONS)
def full(session: nox.Session) -> None:
    """What the default run leaves out: the rest of the matrix, steps in full."""
    session.log(
        "the complete run = tools/nox (the default run) + tools/nox -t full (this)"
    )


def _fail_on_fork_error(session: nox.Session, action: object) -> object:
    try:
        return action() if callable(action) else action
    except forktool.ForkError as e:
        session.error(str(e))


# ---------------------------------------------------------------------------
# The patch series


@nox.session(python=False)
def vendor(session: nox.Session) -> None:
    """Fetch the pinned sdist (hash-checked), apply patches/series, write src/."""
    _fail_on_fork_error(session, forktool.vendor)


@nox.session(python=False)
def patch_check(session: nox.Session) -> None:
    """Prove src/claude_agent_sdk/ == pristine upstream + patches/series, byte for byte."""
    problems = _fail_on_fork_error(session, forktool.check)
    if problems:
        session.error(
            "\n".join(problems)  # type: ignore[arg-type]
            + "\n"
            + forktool.CHECK_HELP.format(
                dist=forktool.DIST, version=forktool.base_version()
            )
        )
    session.log(
        f"src/ == pristine {forktool.DIST} {forktool.base_version()} "
        f"+ {len(forktool.series())} patch(es)"
    )
    # Each patch is its own pull request: it applies alone to pristine
    # upstream, or on pristine plus exactly what its depends-on annotation
    # (patches/series) names.
    problems = _fail_on_fork_error(session, forktool.check_dependencies)
    if problems:
        session.error("\n".join(problems))  # type: ignore[arg-type]
    session.log("every patch applies on pristine + its depends-on")


@nox.session(python=False)
def export(session: nox.Session) -> None:
    """Turn edits in src/ (or commits in .work/upstream) into patches/.

    nox -s export                        commits in .work/upstream only
    nox -s export -- --into 0002         fold uncommitted edits into a patch
    nox -s export -- --new "Subject"     a new patch at the end of the series
    """
    code = forktool.main(["export", *session.posargs])
    if code:
        session.error("export failed (see above)")


@nox.session(python=TOOL_PYTHON)
def rebase(session: nox.Session) -> None:
    """Apply the series to another upstream release; run the fork's tests there.

    nox -s rebase -- 0.2.184
    """
    if len(session.posargs) != 1:
        session.error("usage: nox -s rebase -- <upstream version>")
    (version,) = session.posargs
    dest = forktool.CACHE / "rebase" / version
    tree = _fail_on_fork_error(session, lambda: forktool.rebase_trial(version, dest))
    assert isinstance(tree, forktool.Tree)
    if not tree.all_applied:
        session.error(f"the series does not apply cleanly to {version} (see above)")
    session.install(str(tree.path), MCP_MAJORS["mcp2"], *TEST_DEPS)
    session.run("pytest", "-q", *NOT_PACKAGE_TESTS, "-p", "no:cacheprovider")


# ---------------------------------------------------------------------------
# Tests


@nox.session(python=PYTHONS)
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def tests(session: nox.Session, mcp: str) -> None:
    """The fork's own tests (contract, property, ...) against the built package."""
    session.install(".", MCP_MAJORS[mcp], *TEST_DEPS)
    # The property tests draw the same (derandomized) examples in every cell:
    # all of them in the default run's last cell and in the full run's cells,
    # a fifth in the other default cells (tests/lib/examples.py).
    python = str(session.python)
    every = not _default_cell(python, mcp) or (python, mcp) == (PYTHONS[-1], "mcp2")
    session.run(
        "pytest",
        "-q",
        *NOT_PACKAGE_TESTS,
        *XDIST_ARGS,
        *session.posargs,
        env={"FORK_PROPERTY_EXAMPLES": "all" if every else "sample"},
    )


@nox.session(python=TOOL_PYTHON)
def repo(session: nox.Session) -> None:
    """Tests of the repository itself: packaging, tooling, docs generated from tests."""
    # The package too: the drop-in check calls a tool through it.
    # nox: tests/repo/test_sessions.py lists the sessions of both runs.
    session.install(".", MCP_MAJORS["mcp2"], *TEST_DEPS, *PACKAGING_DEPS, NOX)
    session.run("pytest", "-q", "tests/repo", *session.posargs)


def _build_tree(
    session: nox.Session, dest: Path, patches: list[Path] | None = None
) -> forktool.Tree:
    """Pristine upstream plus ``patches`` (default: the series), all applied."""
    try:
        tree = forktool.build_tree(dest, patches=patches)
        forktool.require_applied(tree)
    except forktool.ForkError as e:
        session.error(str(e))
    return tree


def _install_tree(session: nox.Session, tree: Path, *deps: str) -> None:
    """Make the session's Python import ``tree``'s package, without building it.

    ``steps``, ``prove`` and ``pull_requests`` test about 45 trees a run that
    differ from each other only in the package's pure-Python files. The first
    call installs the repository's package with ``deps`` (so every dependency
    of the whole series is there, at the versions the caller pins), then takes
    the package itself out again and puts a ``.pth`` entry in its place: a
    directory holding one link, ``claude_agent_sdk`` -> ``tree/src/...``.
    Every later call re-points that link (a build and install took ~4 s a
    tree). How the package is built and installed is tested by the ``tests``
    sessions (which install the built wheel) and ``repo``.
    """
    venv = Path(session.virtualenv.location)
    links = venv / "fork-tree"
    if not links.exists():
        session.install(str(ROOT), *deps)
        if session.venv_backend == "uv":
            session.run(
                "uv", "pip", "uninstall", "--python", str(_venv_python(venv)),
                forktool.DIST, external=True, silent=True,
            )  # fmt: skip
        else:
            session.run("python", "-m", "pip", "uninstall", "-y", "-q", forktool.DIST)
        site = session.run(
            "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
            silent=True,
        )  # fmt: skip
        assert isinstance(site, str)
        links.mkdir()
        (Path(site.strip()) / "fork_tree.pth").write_text(f"{links}\n", "utf-8")
    link = links / forktool.PACKAGE
    fresh = links / f".{forktool.PACKAGE}.new"
    fresh.unlink(missing_ok=True)
    fresh.symlink_to(tree / "src" / forktool.PACKAGE, target_is_directory=True)
    fresh.replace(link)
    session.log(f"{forktool.PACKAGE} imported from {tree}")


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts" if sys.platform == "win32" else "bin") / "python"


def _upstream_tree(session: nox.Session, dest: Path) -> Path:
    """Pristine + series (upstream's tests with the patches' changes), testing src/.

    The tree's package directory is replaced by a link to this repository's
    src/claude_agent_sdk, so upstream's suite exercises exactly what ships;
    the repository's CHANGELOG.md stands in for upstream's, which the sdist
    does not carry and tests/test_changelog.py reads.
    """
    tree = _build_tree(session, dest)
    package = tree.path / "src" / forktool.PACKAGE
    shutil.rmtree(package)
    package.symlink_to(forktool.SRC, target_is_directory=True)
    shutil.copy2(ROOT / "CHANGELOG.md", tree.path / "CHANGELOG.md")
    return tree.path


@nox.session(python=TOOL_PYTHON)
@nox.parametrize(
    "mcp",
    [MCP_MAJORS["mcp2"], MCP_MAJORS["mcp1"], MCP_FLOOR],
    ids=["mcp2", "mcp1", "mcp-floor"],
)
def upstream(session: nox.Session, mcp: str) -> None:
    """Upstream's own test suite (with the series' test changes) against src/."""
    session.install(".", mcp, *UPSTREAM_TEST_DEPS, *UPSTREAM_OPTIONAL_DEPS, XDIST)
    with tempfile.TemporaryDirectory() as tmp:
        tree = _upstream_tree(session, Path(tmp) / "upstream")
        with session.chdir(tree):
            session.run(
                "pytest", "-q", "-p", "no:cacheprovider", *XDIST_ARGS, *session.posargs
            )  # fmt: skip


@nox.session(python=TOOL_PYTHON)
def steps(session: nox.Session) -> None:
    """Upstream's own suite at each step of the series (pristine + patches 1..k):
    in full at the upstream-track boundary, elsewhere the test modules that
    patches 1..k touch (``steps_full``: every step in full).

    The whole series is the ``upstream`` session; this covers every prefix
    before it, so each pull request leaves upstream's suite green.
    """
    _steps(session, full=False)


@nox.session(python=TOOL_PYTHON)
def steps_full(session: nox.Session) -> None:
    """Upstream's whole suite at every step of the series (the full run)."""
    _steps(session, full=True)


def _steps(session: nox.Session, *, full: bool) -> None:
    patches = _fail_on_fork_error(session, forktool.series)
    assert isinstance(patches, list)
    boundary = len(forktool.tracks()["upstream"])
    session.install(
        MCP_MAJORS["mcp2"], *UPSTREAM_TEST_DEPS, *UPSTREAM_OPTIONAL_DEPS, XDIST
    )
    with tempfile.TemporaryDirectory() as tmp:
        for count in range(1, len(patches)):
            patch = patches[count - 1]
            tree = _build_tree(session, Path(tmp) / f"step{count}", patches[:count])
            shutil.copy2(ROOT / "CHANGELOG.md", tree.path / "CHANGELOG.md")
            _install_tree(session, tree.path)
            if full or count == boundary:
                session.log(f"upstream's suite with {patch.name} on top")
                selection = [*XDIST_ARGS]
            else:
                if not any(f.startswith("tests/") for f in forktool.patch_files(patch)):
                    session.error(f"{patch.name} touches no test module of upstream's")
                selection = _touched_test_modules(tree.path, patches[:count])
                session.log(
                    f"with {patch.name} on top, the test modules patches 1..{count} "
                    "touch: " + ", ".join(selection)
                )
            with session.chdir(tree.path):
                session.run("pytest", "-q", "-p", "no:cacheprovider", "-x", *selection)


def _touched_test_modules(tree: Path, patches: list[Path]) -> list[str]:
    """The upstream test modules any of ``patches`` touches that ``tree`` has, in
    the order first touched: a later patch that breaks an earlier patch's test
    (until a patch after it repairs it) fails at its own step, not only in
    ``steps_full``."""
    selection: list[str] = []
    for patch in patches:
        for f in forktool.patch_files(patch):
            if f.startswith("tests/") and f not in selection and (tree / f).exists():
                selection.append(f)
    return selection


@nox.session(python=TOOL_PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, with upstream's configuration, on the package, the fork's files and
    the upstream tests the series changes."""
    session.install(RUFF)
    paths = ["src", "tests", "tools", "examples", "noxfile.py", "hatch_build.py"]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)
    with tempfile.TemporaryDirectory() as tmp:
        tree = _upstream_tree(session, Path(tmp) / "upstream")
        with session.chdir(tree):
            session.run("ruff", "check", "tests")
            session.run("ruff", "format", "--check", "tests")


@nox.session(python=TOOL_PYTHON)
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def typecheck(session: nox.Session, mcp: str) -> None:
    """mypy strict, configured as upstream configures it, on both mcp majors."""
    session.install(".", MCP_MAJORS[mcp], MYPY, TRIO, *TEST_DEPS, NOX)
    session.run("mypy", "src/claude_agent_sdk")
    # The fork's own code too, with the same configuration: the tests (a
    # pydantic model types the tool's handler: tests/pydantic/typing_check.py),
    # the tooling and this file.
    session.run("mypy", "tests", "tools", "noxfile.py")


@nox.session(python=TOOL_PYTHON)
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def prove(session: nox.Session, mcp: str) -> None:
    """Show that the tests can fail: each patch's feature tests fail without it.

    For every patch N in the series, the tree without N (pristine + the
    patches before it) is imported and the tests marked
    ``requires_patch("<slug of N>")`` are run there: every one of them must
    fail. On pristine upstream, the unmarked tests must pass.
    """
    patches = _fail_on_fork_error(session, forktool.series)
    assert isinstance(patches, list)
    with tempfile.TemporaryDirectory() as tmp:
        pristine = _build_tree(session, Path(tmp) / "pristine", [])
        _install_tree(session, pristine.path, MCP_MAJORS[mcp], *TEST_DEPS)
        session.log("pristine upstream: unmarked tests must pass")
        session.run(
            "pytest", "-q", *NOT_PACKAGE_TESTS, "--without-patches", *XDIST_ARGS
        )
        # Each patch's tests on the tree without it: small runs, each mostly
        # interpreter start and collection, so they run side by side, one per
        # core, each importing its own tree's package (PYTHONPATH).
        runs = []
        for index, patch in enumerate(patches):
            tree = (
                pristine
                if index == 0
                else _build_tree(session, Path(tmp) / f"tree{index}", patches[:index])
            )
            slug = forktool.patch_slug(patch)
            report = Path(tmp) / f"{slug}.xml"
            runs.append((patch, tree.path, report))
        venv = Path(session.virtualenv.location)

        def without(run: tuple[Path, Path, Path]) -> subprocess.CompletedProcess[str]:
            patch, tree, report = run
            python = _venv_python(venv)
            env = {
                **os.environ,
                "PYTHONPATH": str(tree / "src"),
                "VIRTUAL_ENV": str(venv),
                "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}",
            }
            # The run must import this tree's package, not the linked one:
            # tests/conftest.py checks it first (a usage error otherwise).
            env["FORK_EXPECT_PACKAGE_UNDER"] = str(tree / "src")
            return subprocess.run(
                [
                    str(python), "-m", "pytest", "-q", *NOT_PACKAGE_TESTS,
                    f"--only-patch={forktool.patch_slug(patch)}",
                    f"--junitxml={report}", "--tb=no", "-p", "no:randomly",
                    "-p", "no:cacheprovider",
                ],
                cwd=ROOT, text=True, capture_output=True, env=env,
            )  # fmt: skip

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for (patch, _, report), done in zip(
                runs, pool.map(without, runs), strict=True
            ):
                session.log(f"without {patch.name}: its tests must all fail")
                if done.returncode not in (0, 1):
                    session.error(
                        f"pytest could not run {patch.name}'s tests "
                        f"(exit {done.returncode}):\n{done.stdout}{done.stderr}"
                    )
                passed, failed = _junit_outcomes(report)
                if not failed:
                    session.error(f"no test exercises {patch.name}")
                if passed:
                    session.error(
                        f"these tests pass without {patch.name}, so they cannot "
                        "detect its absence:\n  " + "\n  ".join(passed)
                    )
                session.log(
                    f"{len(failed)} test(s) fail without {patch.name}, as they must"
                )


@nox.session(python=TOOL_PYTHON)
def pull_requests(session: nox.Session) -> None:
    """Each upstream-track patch as the pull request a maintainer would review.

    On pristine plus the patch's ``depends-on`` only (its baseline, from
    ``patches/series``): on mcp 1.x and 2.x every test it adds to upstream's
    suite fails on the baseline or ``patches/series`` pins it (``#   pin:``
    under the patch, ``forktool.pinned_tests``), and passes with it;
    its plain tools answer the differential
    cases as the baseline's do but for the rows of docs/differences.md that
    belong to it (``tests/differential/pull_request.py``; mcp 2.x, 60
    generated cases and the named and docs ones); every module it newly
    imports is a dependency its pyproject declares. ``pull_requests_full``
    does it all on both majors, with upstream's whole suite passing with
    each pull request and the differential with 600 generated cases and the
    corpus. The figures go to .cache/pr/report.md.
    """
    _pull_requests(session, full=False)


@nox.session(python=TOOL_PYTHON)
def pull_requests_full(session: nox.Session) -> None:
    """``pull_requests`` with upstream's whole suite and the differential on
    both mcp majors, the differential with 600 generated cases and the
    corpus's."""
    _pull_requests(session, full=True)


# The differential cases of the default run and of the full run: how many are
# generated, and whether the corpus's are added (the named and docs ones are).
PR_CASES = {False: ["60", "--no-corpus"], True: ["600"]}


@dataclass
class _PullRequest:
    patch: Path
    base: Path  # pristine + its depends-on: its baseline
    without: Path  # the baseline with the patch's tests
    with_it: Path  # the baseline with the patch
    added: list[str] = field(default_factory=list)  # node ids of its tests
    rows: dict[str, list[str]] = field(default_factory=dict)  # report cells

    @property
    def name(self) -> str:
        return self.patch.name.removesuffix(".patch")


def _children_cpu() -> float:
    """CPU seconds the session's finished child processes used (0 where the
    platform cannot say): the report's measure of each phase, which a
    loaded machine's wall time is not."""
    try:
        import resource
    except ImportError:  # Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pull_requests(session: nox.Session, *, full: bool) -> None:
    cpu = {"start": _children_cpu()}
    patches = _fail_on_fork_error(session, forktool.series)
    assert isinstance(patches, list)
    hypothesis = [d for d in TEST_DEPS if d.startswith("hypothesis")]
    session.install(
        MCP_MAJORS["mcp2"], *UPSTREAM_TEST_DEPS, *UPSTREAM_OPTIONAL_DEPS, XDIST,
        *hypothesis,
    )  # fmt: skip
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        # Pristine is installed for its dependencies and metadata; each tree's
        # own code is imported from its src/ (PYTHONPATH): a tree costs no
        # install, and the single-process runs go two at a time (_jobs).
        session.install(str(_build_tree(session, tmp / "pristine", []).path))
        trees: dict[tuple[str, ...], Path] = {}

        def tree(chosen: list[Path], tag: str = "") -> Path:
            key = (*[p.name for p in chosen], tag)
            if key not in trees:
                path = tmp / f"tree{len(trees)}"
                trees[key] = _build_tree(session, path, chosen).path
                shutil.copy2(ROOT / "CHANGELOG.md", trees[key] / "CHANGELOG.md")
            return trees[key]

        prs = []
        for patch in forktool.tracks()["upstream"]:
            deps = forktool.patch_dependencies(patch)
            base = [p for p in patches if forktool.patch_slug(p) in deps]
            pr = _PullRequest(
                patch, tree(base), tree(base, "tests"), tree([*base, patch])
            )
            forktool.git(
                "apply", "--include=tests/*", str(patch.resolve()), cwd=pr.without
            )
            problems += _new_imports(session, pr)
            prs.append(pr)
        # Which tests each patch adds: node ids with it, not on its baseline.
        files = {
            pr.name: [
                f for f in forktool.patch_files(pr.patch) if f.startswith("tests/")
            ]
            for pr in prs
        }
        collect = {
            (t, tuple(files[pr.name])): _collect_job(t, files[pr.name], tmp)
            for pr in prs
            for t in (pr.base, pr.with_it)
        }
        cases = tmp / "cases.json"
        generate = ["python", "-m", "tests.differential.cases", str(cases)]
        done = _jobs(
            session,
            [
                *collect.values(),
                ([*generate, *PR_CASES[full]], ROOT, None, [0], tmp / "cases.log"),
            ],
        )
        cpu["trees, installs, collection, cases"] = _children_cpu()
        for pr in prs:
            key = tuple(files[pr.name])
            before = set(_collected(done[collect[pr.base, key][-1]]))
            after = _collected(done[collect[pr.with_it, key][-1]])
            pr.added = [t for t in after if t not in before]
            if not pr.added:
                session.error(f"{pr.name} adds no test to upstream's suite")
        for major in MCP_MAJORS:
            session.install(MCP_MAJORS[major])
            # Upstream's whole suite with each pull request alone: the full
            # run (the default run has it at the track boundary in ``steps``
            # and on the whole series in ``upstream``).
            whole = full
            differential = full or major == "mcp2"
            jobs = {}
            for pr in prs:
                jobs[pr.name, "without"] = _pytest_job(
                    pr.without, pr.added, tmp / f"{pr.name}-{major}-without.xml"
                )
                if not whole:
                    jobs[pr.name, "with"] = _pytest_job(
                        pr.with_it, pr.added, tmp / f"{pr.name}-{major}-with.xml"
                    )
                for t in (pr.base, pr.with_it) if differential else ():
                    jobs[t.name, "differential"] = _runner_job(t, cases, tmp, major)
            _jobs(session, list(jobs.values()))
            cpu[f"{major}: added tests, differential runs"] = _children_cpu()
            for pr in prs:
                problems += _added_tests(session, pr, major, jobs, tmp, whole=whole)
                if differential:
                    problems += _pr_differential(pr, major, cases, tmp)
            if whole:
                cpu[f"{major}: upstream's whole suite x {len(prs)}"] = _children_cpu()
    report = forktool.CACHE / "pr" / "report.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    phases, last = [], cpu.pop("start")
    for phase, total in cpu.items():
        phases.append(f"{phase} {total - last:.0f} s")
        last = total
    report.write_text(
        _pr_report(prs, full)
        + f"\nCPU time of the run's processes: {', '.join(phases)}.\n",
        "utf-8",
    )
    session.log("\n" + report.read_text("utf-8"))
    if problems:
        session.error("\n".join(problems))


def _jobs(
    session: nox.Session, jobs: list[tuple[Any, ...]], workers: int = 2
) -> dict[Path, str]:
    """Run single-process commands ``workers`` at a time in the session's
    venv; their output, by output file. A job is (command, directory, the
    tree whose package it imports or None, its exit codes that are no
    failure, its output file); any other exit code ends the session."""
    import concurrent.futures
    import subprocess

    venv_env = {
        **os.environ,
        "PATH": f"{session.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(Path(session.bin).parent),
    }

    def run(job: tuple[Any, ...]) -> tuple[tuple[Any, ...], int]:
        command, cwd, tree, codes, out = job
        env = dict(venv_env)
        env["PYTHONPATH"] = os.pathsep.join(
            [*([str(tree / "src")] if tree else []), str(ROOT)]
        )
        with out.open("w", encoding="utf-8") as sink:
            code = subprocess.run(
                command, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT
            ).returncode
        return job, code

    outputs = {}
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for job, code in pool.map(run, jobs):
            command, cwd, _, codes, out = job
            text = out.read_text("utf-8")
            session.log(f"[{code}] {' '.join(command[:6])} ... (in {cwd.name})")
            if code not in codes:
                session.error(f"{' '.join(command)} failed ({code}):\n{text[-4000:]}")
            outputs[out] = text
    return outputs


def _collect_job(tree: Path, files: list[str], tmp: Path) -> tuple[Any, ...]:
    present = [f for f in files if (tree / f).exists()] or ["--version"]
    out = tmp / f"{tree.name}-{len(files)}-{abs(hash(tuple(files)))}.collect"
    command = ["pytest", "-q", "--collect-only", "-p", "no:cacheprovider", *present]
    return (command, tree, tree, [0, 5], out)


def _collected(output: str) -> list[str]:
    """Node ids from ``pytest -q --collect-only``'s output."""
    ids = []
    for line in output.splitlines():
        if not line.strip():
            break  # the node ids end where pytest's summary begins
        ids.append(line)
    return [i for i in ids if "::" in i]


def _pytest_job(tree: Path, ids: list[str], report: Path) -> tuple[Any, ...]:
    listed = report.with_suffix(".args")
    listed.write_text("\n".join(ids) + "\n", "utf-8")
    command = [
        "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no",
        f"--junitxml={report}", f"@{listed}",
    ]  # fmt: skip
    return (command, tree, tree, [0, 1, 2], report.with_suffix(".log"))


def _runner_job(tree: Path, cases: Path, tmp: Path, major: str) -> tuple[Any, ...]:
    out = tmp / f"{tree.name}-{major}.json"
    command = ["python", "-m", "tests.differential.runner", str(cases), str(out)]
    return (command, ROOT, tree, [0], out.with_suffix(".log"))


def _junit_key(node_id: str) -> str:
    """``tests/test_x.py::Class::name[p]`` as the JUnit report names it:
    ``tests.test_x.Class::name[p]``."""
    path, _, rest = node_id.partition("::")
    where, _, name = rest.rpartition("::")
    module = path.removesuffix(".py").replace("/", ".")
    return f"{module}.{where}::{name}" if where else f"{module}::{name}"


def _outcomes(report: Path, ids: list[str]) -> tuple[list[str], list[str]]:
    """(passed, failed) JUnit keys; every one of ``ids`` failed without a report."""
    if not report.exists():
        return [], [_junit_key(i) for i in ids]
    return _junit_outcomes(report)


def _added_tests(
    session: nox.Session,
    pr: _PullRequest,
    major: str,
    jobs: dict[tuple[str, str], tuple[Any, ...]],
    tmp: Path,
    *,
    whole: bool,
) -> list[str]:
    """Each test ``pr`` adds fails on its baseline or is declared pinning (and
    then passes there), and passes with it; with ``whole``, so does
    upstream's whole suite (run here, spread over the cores)."""
    problems = []
    added = {_junit_key(i) for i in pr.added}
    without = tmp / f"{pr.name}-{major}-without.xml"
    _, failed = _outcomes(without, pr.added)
    pins = forktool.pinned_tests(pr.patch)
    undeclared = sorted(
        t
        for t in added - set(failed)
        if not any(forktool.pin_matches(p, t) for p in pins)
    )
    if undeclared:
        problems.append(
            f"{pr.name} ({major}): these added tests pass without its src/ change "
            f"and patches/series does not declare them (`#   pin:` under the patch):\n  "
            + "\n  ".join(undeclared)
        )
    for pin in pins:
        named = [t for t in added if forktool.pin_matches(pin, t)]
        if not named:
            problems.append(f"{pr.name}: it declares {pin!r}, which it does not add")
        elif any(t in failed for t in named):
            problems.append(
                f"{pr.name} ({major}): it declares {pin!r} as pinning existing "
                "behaviour, but it fails without its src/ change"
            )
    if whole:
        report = tmp / f"{pr.name}-{major}-suite.xml"
        with session.chdir(pr.with_it):
            session.run(
                "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                "--tb=short", f"--junitxml={report}", *XDIST_ARGS,
                env=_tree_env(pr.with_it), success_codes=[0, 1],
            )  # fmt: skip
        suite = _junit_outcomes(report)
        missing = added - set(suite[0]) - set(suite[1])
    else:
        suite = _outcomes(tmp / f"{pr.name}-{major}-with.xml", pr.added)
        missing = added - set(suite[0]) - set(suite[1])
    if suite[1] or missing:
        what = "upstream's suite" if whole else "its added tests"
        problems.append(
            f"{what} fails with {pr.name} ({major}):\n  "
            + "\n  ".join([*suite[1], *sorted(missing)])
        )
    failing = len(added & set(failed))
    pr.rows.setdefault("added", []).append(
        f"{major}: {failing} fail without it, {len(added) - failing} declared "
        f"pinning; with it {'in the whole suite' if whole else 'all pass'}"
    )
    if whole:
        pr.rows.setdefault("suite", []).append(
            f"{major}: {len(suite[0])} passed, {len(suite[1])} failed"
        )
    return problems


def _tree_env(tree: Path) -> dict[str, str]:
    """Import ``tree``'s package (and this repository's tests.*) first."""
    return {"PYTHONPATH": f"{tree / 'src'}{os.pathsep}{ROOT}"}


def _pr_differential(pr: _PullRequest, major: str, cases: Path, tmp: Path) -> list[str]:
    """``pr``'s plain tools against its baseline's, case by case."""
    from tests.differential import pull_request

    def loaded(path: Path) -> Any:
        return json.loads(path.read_text("utf-8"))

    summary = pull_request.compare(
        loaded(cases),
        loaded(tmp / f"{pr.base.name}-{major}.json"),
        loaded(tmp / f"{pr.with_it.name}-{major}.json"),
        forktool.patch_slug(pr.patch),
    )
    rows = ", ".join(f"`{k}` {n}" for k, n in summary["by_row"].items()) or "none"
    pr.rows.setdefault("differential", []).append(
        f"{major}: {summary['compared']} cases, {summary['differences']} "
        f"differences ({rows})"
    )
    if not summary["unexplained"]:
        return []
    return [
        f"{pr.name} ({major}): plain tools differ from pristine + its depends-on "
        "where no row of docs/differences.md for it accounts for it:\n  "
        + "\n  ".join(summary["unexplained"][:10])
    ]


def _new_imports(session: nox.Session, pr: _PullRequest) -> list[str]:
    """Every module ``pr`` newly imports is a dependency its pyproject declares."""
    package = Path("src") / forktool.PACKAGE
    before = forktool.third_party_imports(pr.base / package)
    after = forktool.third_party_imports(pr.with_it / package)
    declared = set(forktool.declared_dependencies(pr.with_it / "pyproject.toml"))
    out = session.run(
        "python", "-c",
        "import importlib.metadata as m, json; "
        "print(json.dumps(m.packages_distributions()))",
        silent=True,
    )  # fmt: skip
    distributions = json.loads(str(out).strip().splitlines()[-1])
    problems, cells = [], []
    for module in sorted(set(after) - set(before)):
        names = distributions.get(module, [module])
        dists = {re.sub(r"[-_.]+", "-", n).lower() for n in names}
        ok = bool(dists & declared)
        cells.append(f"`{module}` ({'declared' if ok else 'NOT declared'})")
        if not ok:
            problems.append(
                f"{pr.name} imports {module} ({', '.join(after[module])}) but its "
                f"pyproject does not declare {' or '.join(sorted(dists))}"
            )
    pr.rows["imports"] = [", ".join(cells) or "none"]
    return problems


def _pr_report(prs: list[_PullRequest], full: bool) -> str:
    def cell(pr: _PullRequest, key: str) -> str:
        return "; ".join(pr.rows.get(key, [])) or "-"

    run = "full run" if full else "default run"
    lines = [
        f"Each upstream-track patch as its pull request ({run}): pristine + its "
        "`depends-on` is its baseline.",
        "",
        "| patch | `src/` lines | depends on | new imports | tests it adds "
        "(on the baseline) | upstream's suite with it | differential, plain "
        "tools against the baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for pr in prs:
        deps = ", ".join(forktool.patch_dependencies(pr.patch)) or "pristine only"
        lines.append(
            f"| {pr.name} | {forktool.src_lines_changed(pr.patch)} | {deps} "
            f"| {cell(pr, 'imports')} | {len(pr.added)} added; {cell(pr, 'added')} "
            f"| {cell(pr, 'suite')} | {cell(pr, 'differential')} |"
        )
    return "\n".join(lines) + "\n"


@nox.session(python=PYTHONS)
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def differential(session: nox.Session, mcp: str) -> None:
    """The fork against pristine upstream, case by case (docs/differences.md).

    Pristine upstream comes from its hash-checked sdist into a venv of its
    own, beside the fork in the session's venv, with the same Python and mcp.
    ``-- --write`` (the newest Python) rewrites the figures in docs/differences.md.
    """
    session.install(".", MCP_MAJORS[mcp], *TEST_DEPS)
    posargs = list(session.posargs)
    env = {}
    if "--write" in posargs:
        posargs.remove("--write")
        env["DIFFERENTIAL_WRITE"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        tree = _build_tree(session, Path(tmp) / "pristine", patches=[])
        venv = Path(tmp) / "upstream-venv"
        python = venv / ("Scripts" if sys.platform == "win32" else "bin") / "python"
        uv = shutil.which("uv")  # tools/nox provides it (tools/nox-requirements.txt)
        if uv:  # seconds where pip takes tens of them
            session.run("python", "-m", "venv", "--without-pip", str(venv), silent=True)
            session.run(
                uv, "pip", "install", "-q", "--python", str(python),
                str(tree.path), MCP_MAJORS[mcp],
                external=True, silent=True,
            )  # fmt: skip
        else:
            session.run("python", "-m", "venv", str(venv), silent=True)
            session.run(
                str(python), "-m", "pip", "install", "-q",
                "--disable-pip-version-check", str(tree.path), MCP_MAJORS[mcp],
                external=True, silent=True,
            )  # fmt: skip
        env["DIFFERENTIAL_UPSTREAM_PYTHON"] = str(python)
        session.run(
            "pytest", "-q", "tests/differential", "-p", "no:cacheprovider", *posargs,
            env=env,
        )  # fmt: skip


@nox.session(python=TOOL_PYTHON)
def strict_properties(session: nox.Session) -> None:
    """Every served strict schema accepts every instance of the author's
    (hypothesis-jsonschema over the corpus and hand-written schemas)."""
    session.install(".", MCP_MAJORS["mcp2"], *STRICT_PROPERTY_DEPS)
    session.run("pytest", "-q", "tests/strict_properties", *session.posargs)


@nox.session(python=TOOL_PYTHON)
def strict_report(session: nox.Session) -> None:
    """The corpus figures in docs/strict-mode.md: the SDK against its peers
    (the Anthropic SDK's transform_schema, the OpenAI Agents SDK's
    ensure_strict_json_schema), installed here only."""
    session.install(".", MCP_MAJORS["mcp2"], *STRICT_REPORT_PEERS)
    session.run("python", "-m", "tools.strict_report", "--write")


@nox.session(python=TOOL_PYTHON)
def mcp_corpus(session: nox.Session) -> None:
    """Re-collect tests/data/mcp_corpus.json from the servers pinned in
    tools/mcp_corpus.py (needs the npm registry and PyPI; ``-- --only NAME``
    refreshes one server)."""
    session.install(MCP_MAJORS["mcp2"])
    session.run("python", "tools/mcp_corpus.py", "--write", *session.posargs)


@nox.session(python=TOOL_PYTHON)
def docs(session: nox.Session) -> None:
    """Regenerate the docs tables that come from tests or code.

    docs/refused-definitions.md's table, and docs/strict-mode.md's rules.
    """
    session.install(".", MCP_MAJORS["mcp2"], *TEST_DEPS)
    session.run("python", "-m", "tests.robustness.bad_inputs", "--write")
    session.run("python", "-m", "tools.strict_rules_doc", "--write")


def _junit_outcomes(report: Path) -> tuple[list[str], list[str]]:
    passed, failed = [], []
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        else:  # passed, skipped or xfailed: none of them shows the patch missing
            passed.append(name)
    return passed, failed


# ---------------------------------------------------------------------------
# The real Claude Code CLI: install it, test through it, demo it.
#
#     nox -s cli  [-- --cli-version X]                 install into .cache/, print its path
#     nox -s e2e  [-- --cli-version X] [pytest args]   tests/e2e on mcp 1.x and 2.x
#     nox -s demo [-- --real-api [--relay]] [--cli-version X]
#     nox -s live [-- --cli-version X]                 your platform, your credentials
#
# The CLI comes from the npm registry once per version (about 170 MB) into
# .cache/claude-code/<version>/; the default version is the one the vendored
# SDK bundles (src/claude_agent_sdk/_cli_version.py).


def _split_cli_version(posargs: list[str]) -> tuple[str | None, list[str]]:
    """Take ``--cli-version X`` / ``--cli-version=X`` out of the session's posargs."""
    version = None
    rest: list[str] = []
    args = iter(posargs)
    for arg in args:
        if arg == "--cli-version":
            version = next(args, None)
            if not version:
                raise ValueError("--cli-version needs a value")
        elif arg.startswith("--cli-version="):
            version = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return version, rest


def _install_cli(session: nox.Session, version: str | None) -> str:
    try:
        resolved = claude_cli.resolve_version(version, ROOT)
        session.log(f"Claude Code CLI {resolved} (project-local, .cache/claude-code/)")
        return str(claude_cli.install(resolved, ROOT))
    except claude_cli.CLIInstallError as error:
        session.error(f"cannot provide the Claude Code CLI: {error}")
        raise  # session.error raises; this keeps type checkers informed


def _posargs(session: nox.Session) -> tuple[str | None, list[str]]:
    try:
        return _split_cli_version(list(session.posargs))
    except ValueError as error:
        session.error(str(error))
        raise


@nox.session(python=False)
def cli(session: nox.Session) -> None:
    """Install the Claude Code CLI into .cache/claude-code/<version> (once); print its path.

    nox -s cli -- --cli-version 2.1.332
    """
    version, rest = _posargs(session)
    if rest:
        session.error(f"unexpected arguments: {rest} (only --cli-version X)")
    print(_install_cli(session, version))


@nox.session(python=TOOL_PYTHON, venv_backend="uv|virtualenv")
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def e2e(session: nox.Session, mcp: str) -> None:
    """The end-to-end tests through the real Claude Code CLI and a stand-in API.

    nox -s e2e                                  both mcp majors, bundled CLI version
    nox -s "e2e(mcp2)" -- --cli-version X       another CLI version
    Other arguments go to pytest.
    """
    version, pytest_args = _posargs(session)
    cli_path = _install_cli(session, version)
    session.install(".", MCP_MAJORS[mcp], *TEST_DEPS)
    # Once per run, on mcp 2.x: the relay's load turn (a 10 s tool run beside
    # a flood) and its turns on Bedrock, Vertex AI and Foundry (12). What
    # they check is the relay's HTTP, signing and platform framing, which do
    # not depend on the mcp major; the other relay turns run on both.
    once = (
        [
            "--ignore=tests/e2e/test_e2e_relay_load.py",
            "--ignore=tests/e2e/test_e2e_platforms.py",
        ]
        if mcp != "mcp2"
        else []
    )
    session.run(
        "pytest",
        "tests/e2e",
        "-p",
        "no:cacheprovider",
        "-rxXs",
        *once,
        *pytest_args,
        env={"CLAUDE_E2E_CLI": cli_path},
    )


@nox.session(python=TOOL_PYTHON, venv_backend="uv|virtualenv")
def demo(session: nox.Session) -> None:
    """One agent turn through the real CLI, printing what crossed each boundary.

    nox -s demo                          against the embedded stand-in API (offline)
    nox -s demo -- --real-api            against the real API (needs ANTHROPIC_API_KEY)
    nox -s demo -- --cli-version X       with another CLI version
    """
    version, demo_args = _posargs(session)
    cli_path = _install_cli(session, version)
    session.install(".", MCP_MAJORS["mcp2"])
    session.run("python", "-m", "tools.demo", "--cli", cli_path, *demo_args)


@nox.session(python=TOOL_PYTHON, venv_backend="uv|virtualenv")
def live(session: nox.Session) -> None:
    """One strict turn through the relay against the real platform your
    environment names (your credentials), and a verdict (tools/live.py).

    nox -s live                          Claude API, Bedrock, Vertex AI or Foundry
    nox -s live -- --cli-version X       with another CLI version
    Without credentials: one line saying what it needs; nothing installed or sent.
    """
    missing = live_check.needs(os.environ)
    if missing is not None:
        print(missing)
        return
    version, args = _posargs(session)
    cli_path = _install_cli(session, version)
    botocore = [d for d in TEST_DEPS if d.startswith("botocore")]  # Bedrock SigV4
    session.install(".", MCP_MAJORS["mcp2"], *botocore)
    session.run("python", "-m", "tools.live", "--cli", cli_path, *args)


# ---------------------------------------------------------------------------
# Performance


@nox.session(python=TOOL_PYTHON, venv_backend="virtualenv")
def bench(session: nox.Session) -> None:
    """Fork vs. pristine upstream with pyperf on both mcp majors; rewrites
    docs/performance.md's table (`-- --quick` to try it, `-- --render-only`).

    virtualenv, not uv: forktool fetches the upstream sdist with pip.
    """
    session.install(PYPERF)
    session.run("python", "-m", "tools.bench", *session.posargs)


@nox.session(python=TOOL_PYTHON, venv_backend="uv|virtualenv")
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def bench_relay(session: nox.Session, mcp: str) -> None:
    """What tool_fields_relay=True costs against no relay (tools/bench_relay.py);
    rewrites the table in docs/relay.md from every mcp major measured so far.

    nox -s bench_relay                   both majors, 400 rounds
    nox -s "bench_relay(mcp2)" -- --rounds 100
    """
    session.install(".", MCP_MAJORS[mcp])
    figures = f".cache/bench/relay-{mcp}.json"
    session.run(
        "python", "-m", "tools.bench_relay", "--json", figures, "--publish",
        *session.posargs,
    )  # fmt: skip
