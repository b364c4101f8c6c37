"""Fixtures for the end-to-end tests through the real Claude Code CLI.

The CLI comes from ``$CLAUDE_E2E_CLI``, which ``nox -s e2e`` sets after
installing it with ``tools/claude_cli.py``. Without it these tests fail --
they do not skip -- so a CI run cannot go green without having exercised the
real client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lib.cli_harness import CLI_ENV_VAR, cli_from_env, isolated_env
from tests.lib.fake_api import FakeMessagesAPI


@pytest.fixture(scope="session")
def claude_cli() -> str:
    """Absolute path of the Claude Code CLI under test."""
    cli = cli_from_env()
    if cli is None:
        pytest.fail(
            f"${CLI_ENV_VAR} must name the Claude Code CLI executable for the e2e "
            "tests (it is unset or not an executable file). Run them with "
            "`nox -s e2e`, or install the CLI with `python tools/claude_cli.py` and "
            f"export {CLI_ENV_VAR}=<the path it prints>.",
            pytrace=False,
        )
    return cli


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """A fresh stand-in Messages API on 127.0.0.1, stopped after the test."""
    with FakeMessagesAPI() as api:
        yield api


@pytest.fixture
def e2e_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def e2e_env(fake_api: FakeMessagesAPI, e2e_home: Path) -> dict[str, str]:
    """CLI environment: the stand-in API, a dummy key, an isolated HOME."""
    return isolated_env(fake_api.url, e2e_home)


@pytest.fixture(
    params=[
        pytest.param("false", id="tool-search-off"),
        pytest.param("true", id="tool-search-on"),
    ]
)
def tool_search(request: pytest.FixtureRequest) -> str:
    """``ENABLE_TOOL_SEARCH`` for the CLI: a test that takes it runs with tool
    search off (MCP tools in ``tools`` from the first request) and on (the
    model loads them with ``ToolSearch``: ``fake_api.loading``)."""
    value: str = request.param
    return value


@pytest.fixture
def e2e_cwd(tmp_path: Path) -> Path:
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd
