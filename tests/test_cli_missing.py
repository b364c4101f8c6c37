"""A git install carries no bundled CLI: the error a user gets must name the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_agent_sdk import ClaudeAgentOptions, CLINotFoundError
from claude_agent_sdk._internal.transport.subprocess_cli import (
    SubprocessCLITransport,
)


def test_git_install_has_no_bundled_cli() -> None:
    import claude_agent_sdk

    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled"
    assert not [p for p in bundled.glob("claude*") if p.is_file()]


def _missing_cli_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What the SDK says when no CLI is on PATH, bundled or in the home folder."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    transport = SubprocessCLITransport(prompt="hi", options=ClaudeAgentOptions())
    with pytest.raises(CLINotFoundError) as caught:
        transport._find_cli()
    return str(caught.value)


def test_missing_cli_error_names_npm_install_and_cli_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = _missing_cli_message(tmp_path, monkeypatch)
    assert "npm install -g @anthropic-ai/claude-code" in message
    assert "cli_path" in message


@pytest.mark.requires_patch("cli-not-found-version")
def test_missing_cli_error_names_the_pinned_version_and_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_agent_sdk._cli_version import __cli_version__

    message = _missing_cli_message(tmp_path, monkeypatch)
    assert f"npm install -g @anthropic-ai/claude-code@{__cli_version__}" in message
    assert "Node.js >= 22" in message
