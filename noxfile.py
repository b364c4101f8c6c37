"""Every workflow of the fork is a nox session.

`tools/nox` (no arguments) runs the default set, which is the README's test
command and what CI runs, sized to finish within 30 minutes on two cores: the
patch check, lint, type check on both mcp majors, the fork's tests and the
differential test against pristine upstream on the edges of the Python x mcp
matrix (3.10 and 3.13 on both majors, 3.11 and 3.12 on one each), upstream's
own suite on three mcp versions and at each step of the series (in full at
the upstream-track boundary, elsewhere the test modules the step's patch
touches), the proof that the feature tests fail without their patches, each
upstream-track patch as its pull request, and the end-to-end tests against
the real Claude Code CLI.

`tools/nox -t full` runs what the default run leaves out (the rest of the
matrix, `steps` in full); the two together are the complete run, made before
every release (CONTRIBUTING.md).

Maintenance sessions (in neither run): vendor, export, rebase, bench,
bench_relay, demo, cli, docs, mcp_corpus, strict_report.

`tools/nox` runs nox as ``python -m nox`` from the repository's root, which
is what puts ``tools`` on the import path here.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import nox

from tools import claude_cli, forktool
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
# newest Python, on both mcp majors) and one major on each Python between,
# alternating, so that every Python and every major is in it. The cells it
# leaves out are in the full run.
def _default_cell(python: str, mcp: str) -> bool:
    if python in (PYTHONS[0], PYTHONS[-1]):
        return True
    majors = list(MCP_MAJORS)
    return mcp == majors[(PYTHONS.index(python) + 1) % len(majors)]


def _cells(name: str, default: bool) -> list[str]:
    return [
        f"{name}-{python}({mcp})"
        for python in PYTHONS
        for mcp in MCP_MAJORS
        if _default_cell(python, mcp) == default
    ]


MATRIX_SESSIONS = ["tests", "differential"]
DEFAULT_SESSIONS = [
    "patch_check",
    "lint",
    "typecheck",
    *_cells("tests", default=True),
    "repo",
    "upstream",
    "steps",
    "prove",
    "pull_requests",
    *_cells("differential", default=True),
    "strict_properties",
    "e2e",
]
# What the default run leaves out; `tools/nox -t full` runs them (the `full`
# session requires each).
FULL_SESSIONS = [
    *_cells("tests", default=False),
    *_cells("differential", default=False),
    "steps_full",
]
# In neither run: tools for maintainers, run by hand.
MAINTENANCE_SESSIONS = [
    "vendor",
    "export",
    "rebase",
    "bench",
    "bench_relay",
    "demo",
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
    # upstream, or on pristine plus exactly what its Depends-on line names.
    problems = _fail_on_fork_error(session, forktool.check_dependencies)
    if problems:
        session.error("\n".join(problems))  # type: ignore[arg-type]
    session.log("every patch applies on pristine + its Depends-on")


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
    session.run("pytest", "-q", *NOT_PACKAGE_TESTS, *XDIST_ARGS, *session.posargs)


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
    """Install ``tree``'s package over the one installed before (same version,
    other code), leaving its dependencies as they are when they still fit."""
    if session.venv_backend == "uv":  # uv's --reinstall would relink every package
        session.install("--reinstall-package", forktool.DIST, str(tree), *deps)
    else:
        session.install("--force-reinstall", "--no-deps", str(tree))
        session.install(str(tree), *deps)


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
    in full at the upstream-track boundary, elsewhere the test modules the
    step's patch touches (``steps_full``: every step in full).

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
                selection = [
                    f
                    for f in forktool.patch_files(patch)
                    if f.startswith("tests/") and (tree.path / f).exists()
                ]
                if not selection:
                    session.error(f"{patch.name} touches no test module of upstream's")
                session.log(
                    f"with {patch.name} on top, the test modules it touches: "
                    + ", ".join(selection)
                )
            with session.chdir(tree.path):
                session.run("pytest", "-q", "-p", "no:cacheprovider", "-x", *selection)


@nox.session(python=TOOL_PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, with upstream's configuration, on the package, the fork's files and
    the upstream tests the series changes."""
    session.install(RUFF)
    paths = ["src", "tests", "tools", "noxfile.py", "hatch_build.py"]
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
    patches before it) is installed and the tests marked
    ``requires_patch("<slug of N>")`` are run there: every one of them must
    fail. On pristine upstream, the unmarked tests must pass.
    """
    patches = _fail_on_fork_error(session, forktool.series)
    assert isinstance(patches, list)
    with tempfile.TemporaryDirectory() as tmp:
        for index, patch in enumerate([None, *patches]):
            before = patches[: max(index - 1, 0)]
            tree = _build_tree(session, Path(tmp) / f"tree{index}", before)
            _install_tree(session, tree.path, MCP_MAJORS[mcp], *TEST_DEPS)
            if patch is None:
                session.log("pristine upstream: unmarked tests must pass")
                session.run(
                    "pytest", "-q", *NOT_PACKAGE_TESTS, "--without-patches", *XDIST_ARGS
                )  # fmt: skip
                continue
            slug = forktool.patch_slug(patch)
            report = Path(tmp) / f"{slug}.xml"
            session.log(f"without {patch.name}: its tests must all fail")
            session.run(
                "pytest", "-q", *NOT_PACKAGE_TESTS, f"--only-patch={slug}",
                f"--junitxml={report}", "--tb=no", "-p", "no:randomly",
                success_codes=[0, 1],
            )  # fmt: skip
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
    """Each upstream-track patch as the pull request a maintainer would test.

    On pristine plus the patch's ``Depends-on:`` only: the tests the patch
    adds to upstream's own test files are run without its ``src/`` change
    (those of its feature fail; the rest guard behaviour upstream already
    has, which must not change) and upstream's whole suite with it.
    Size and dependencies are checked by tests/repo/test_series.py; the
    figures are written to .cache/pr/report.md for the pull requests.
    """
    patches = _fail_on_fork_error(session, forktool.series)
    assert isinstance(patches, list)
    session.install(
        MCP_MAJORS["mcp2"], *UPSTREAM_TEST_DEPS, *UPSTREAM_OPTIONAL_DEPS, XDIST
    )
    rows = [
        "| patch | `src/` lines | depends on | upstream suite with it "
        "| its added tests failing without it |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for patch in forktool.tracks()["upstream"]:
            deps = forktool.patch_dependencies(patch)
            chosen = [p for p in patches if forktool.patch_slug(p) in deps]
            files = [f for f in forktool.patch_files(patch) if f.startswith("tests/")]
            if not files:
                session.error(f"{patch.name} adds no tests to upstream's suite")
            name = patch.name.removesuffix(".patch")
            without = _build_tree(session, Path(tmp) / f"{name}-without", chosen)
            _install_tree(session, without.path)
            before = _run_tests(session, without.path, files, Path(tmp) / f"{name}-0")
            forktool.git(
                "apply", "--include=tests/*", str(patch.resolve()), cwd=without.path
            )
            missing = _run_tests(session, without.path, files, Path(tmp) / f"{name}-1")
            added = sorted(set(missing[0] + missing[1]) - set(before[0] + before[1]))
            if not added:
                session.error(f"{patch.name} adds no test to {', '.join(files)}")
            failing = [t for t in added if t in missing[1]]
            if not failing:
                session.error(
                    f"no test {patch.name} adds fails without its src/ change"
                )
            with_it = _build_tree(session, Path(tmp) / f"{name}-with", [*chosen, patch])
            shutil.copy2(ROOT / "CHANGELOG.md", with_it.path / "CHANGELOG.md")
            _install_tree(session, with_it.path)
            suite = _run_tests(session, with_it.path, [], Path(tmp) / f"{name}-2")
            if suite[1]:
                session.error(
                    f"upstream's suite fails with {patch.name}:\n  "
                    + "\n  ".join(suite[1])
                )
            rows.append(
                f"| {name} | {forktool.src_lines_changed(patch)} "
                f"| {', '.join(deps) or 'pristine only'} | {len(suite[0])} passed "
                f"| {len(failing)} of {len(added)} |"
            )
    report = forktool.CACHE / "pr" / "report.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join(rows) + "\n", "utf-8")
    session.log("\n" + "\n".join(rows))


def _run_tests(
    session: nox.Session, tree: Path, files: list[str], report: Path
) -> tuple[list[str], list[str]]:
    """Run ``files`` of ``tree``'s tests (all: ``[]``) against the installed
    package; their outcomes. Files the tree does not have yet (a new test
    file) have none. Only tests change between two runs on one tree, so
    the caller installs each tree once. The whole suite is spread over the
    cores (pytest-xdist).
    """
    present = [f for f in files if (tree / f).exists()]
    if files and not present:
        return [], []
    spread = [] if files else XDIST_ARGS
    with session.chdir(tree):
        session.run(
            "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no",
            f"--junitxml={report}", *present, *spread,
            success_codes=[0, 1],
        )  # fmt: skip
    return _junit_outcomes(report)


@nox.session(python=PYTHONS)
@nox.parametrize("mcp", list(MCP_MAJORS), ids=list(MCP_MAJORS))
def differential(session: nox.Session, mcp: str) -> None:
    """The fork against pristine upstream, case by case (docs/differences.md).

    Pristine upstream comes from its hash-checked sdist into a venv of its
    own, beside the fork in the session's venv, with the same Python and mcp.
    ``-- --write`` (Python 3.11) rewrites the figures in docs/differences.md.
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
    # The relay's load turn (a 10 s tool run beside a flood) once per run:
    # the relay's HTTP does not depend on the mcp major.
    once = ["--ignore=tests/e2e/test_e2e_relay_load.py"] if mcp != "mcp2" else []
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
