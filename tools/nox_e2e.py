"""Nox sessions for the real Claude Code CLI: install it, test through it, demo it.

Imported by the repository's noxfile (every ``tools/nox_*.py`` is).

    nox -s cli  [-- --cli-version X]           install the CLI into .cache/, print its path
    nox -s e2e  [-- --cli-version X] [pytest args]   tests/e2e on mcp 1.x and 2.x
    nox -s demo [-- --real-api] [--cli-version X]    one agent turn, boundary by boundary

The CLI is downloaded from the npm registry once per version (about 170 MB)
into ``.cache/claude-code/<version>/``; later runs reuse it. The default
version is the one the vendored SDK bundles (``src/claude_agent_sdk/_cli_version.py``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import nox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from pins import MCP_MAJORS, TEST_DEPS, TOOL_PYTHON  # noqa: E402

E2E_PYTHON = TOOL_PYTHON
E2E_MCP = MCP_MAJORS
E2E_DEPS = TEST_DEPS
DEMO_MCP = E2E_MCP["mcp2"]


def _claude_cli() -> ModuleType:
    """tools/claude_cli.py, loaded by path (this module is loaded the same way)."""
    spec = importlib.util.spec_from_file_location(
        "claude_cli", ROOT / "tools" / "claude_cli.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("claude_cli", module)
    spec.loader.exec_module(module)
    return module


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
    claude_cli = _claude_cli()
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


@nox.session(python=E2E_PYTHON, venv_backend="uv|virtualenv")
@nox.parametrize("mcp", list(E2E_MCP), ids=list(E2E_MCP))
def e2e(session: nox.Session, mcp: str) -> None:
    """The end-to-end tests through the real Claude Code CLI and a stand-in API.

    nox -s e2e                                  both mcp majors, bundled CLI version
    nox -s "e2e(mcp2)" -- --cli-version X       another CLI version
    Other arguments go to pytest.
    """
    version, pytest_args = _posargs(session)
    cli_path = _install_cli(session, version)
    session.install(".", E2E_MCP[mcp], *E2E_DEPS)
    session.run(
        "pytest",
        "tests/e2e",
        "-p",
        "no:cacheprovider",
        "-rxXs",
        *pytest_args,
        env={"CLAUDE_E2E_CLI": cli_path},
    )


@nox.session(python=E2E_PYTHON, venv_backend="uv|virtualenv")
def demo(session: nox.Session) -> None:
    """One agent turn through the real CLI, printing what crossed each boundary.

    nox -s demo                          against the embedded stand-in API (offline)
    nox -s demo -- --real-api            against the real API (needs ANTHROPIC_API_KEY)
    nox -s demo -- --cli-version X       with another CLI version
    """
    version, demo_args = _posargs(session)
    cli_path = _install_cli(session, version)
    session.install(".", DEMO_MCP)
    session.run("python", "tools/demo.py", "--cli", cli_path, *demo_args)
