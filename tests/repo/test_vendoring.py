"""The tree is provably pristine upstream + patches/series, and the tooling
that proves it reports problems clearly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tools import forktool


def test_src_equals_pristine_plus_series() -> None:
    assert forktool.check() == []


def test_series_applies_with_git_am_to_pristine_sdist(tmp_path: Path) -> None:
    tree = forktool.build_tree(tmp_path / "tree")
    assert tree.all_applied, [r.message for r in tree.results if not r.applied]
    log = subprocess.run(
        ["git", "log", "--format=%s", "pristine..HEAD"],
        cwd=tree.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(log) == len(forktool.series())


def test_every_patch_is_format_patch_against_upstream_paths() -> None:
    # src/, tests/, and upstream's pyproject.toml where a pull request
    # declares a dependency it adds (compiled-argument-validators).
    for patch in forktool.series():
        text = patch.read_text("utf-8")
        assert text.startswith("From 0000000000000000000000000000000000000000 ")
        for line in text.splitlines():
            if line.startswith("diff --git "):
                a, b = line.split()[2:4]
                assert a.startswith(("a/src/", "a/tests/")) or a == (
                    "a/pyproject.toml"
                ), line
                assert b.startswith(("b/src/", "b/tests/")) or b == (
                    "b/pyproject.toml"
                ), line


def test_hand_edit_in_src_is_reported_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = tmp_path / "claude_agent_sdk"
    shutil.copytree(forktool.SRC, edited)
    with (edited / "query.py").open("a") as f:
        f.write("# a hand edit\n")
    (edited / "stray.py").write_text("")
    monkeypatch.setattr(forktool, "SRC", edited)
    problems = forktool.check()
    assert "differs: query.py" in problems
    assert "not produced by pristine + series: stray.py" in problems
    help_text = forktool.CHECK_HELP.format(dist="d", version="v")
    assert "nox -s export" in help_text and "nox -s vendor" in help_text


def test_vendor_is_idempotent_and_touches_only_src(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "src" / "claude_agent_sdk"
    licence = tmp_path / "LICENSE.upstream"
    monkeypatch.setattr(forktool, "SRC", target)
    monkeypatch.setattr(forktool, "UPSTREAM_LICENSE", licence)
    forktool.vendor()
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    forktool.vendor()
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == stamps
    assert sorted(p.name for p in tmp_path.iterdir()) == ["LICENSE.upstream", "src"]
    assert (
        forktool.tree_differences(forktool.ROOT / "src" / "claude_agent_sdk", target)
        == []
    )


def test_sdist_hash_mismatch_is_a_hard_error_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = forktool.sdist()
    monkeypatch.setattr(forktool, "CACHE", tmp_path)
    (tmp_path / "sdist").mkdir()
    shutil.copy2(real, tmp_path / "sdist" / real.name)
    wrong = "0" * 64
    with pytest.raises(forktool.ForkError) as caught:
        forktool.sdist(forktool.base_version(), expected_sha256=wrong)
    message = str(caught.value)
    assert wrong in message
    expected_sha256 = forktool.fork_config()["upstream-sdist-sha256"]
    assert isinstance(expected_sha256, str)
    assert expected_sha256 in message
    assert not (tmp_path / "sdist" / real.name).exists()


def test_the_sdist_comes_from_the_index_or_from_pip_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick way (the index's JSON simple API) and pip's way give the
    pinned sdist; an index that does not answer leaves pip's way."""
    pinned = forktool.fork_config()["upstream-sdist-sha256"]
    version = forktool.base_version()
    (tmp_path / "index").mkdir()
    (tmp_path / "pip").mkdir()
    fetched = forktool._fetch_sdist(version, tmp_path / "index")
    assert fetched is not None
    assert forktool.sha256_of(fetched) == pinned
    assert forktool.sha256_of(forktool._pip_download(version, tmp_path / "pip")) == (
        pinned
    )
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    assert forktool._fetch_sdist(version, tmp_path) is None


def test_base_version_is_named_in_one_place() -> None:
    """Only pyproject.toml [tool.fork] names the base version; the tooling reads it."""
    version = forktool.base_version()
    for path in [
        forktool.ROOT / "noxfile.py",
        forktool.ROOT / "hatch_build.py",
        *(forktool.ROOT / "tools").glob("*.py"),
    ]:
        text = path.read_text("utf-8")
        assert f'"{version}"' not in text and f"'{version}'" not in text, path


def test_patch_messages_survive_git_am_whole(tmp_path: Path) -> None:
    """Each patch's message is its pull-request description; ``git am`` stops
    a message at a bare ``---`` line, so nothing after such a line survives."""
    tree = forktool.build_tree(tmp_path / "tree")
    assert tree.all_applied
    log = subprocess.run(
        ["git", "log", "--reverse", "--format=%B%x00", "pristine..HEAD"],
        cwd=tree.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    messages = [m.strip() for m in log.split("\x00") if m.strip()]
    assert len(messages) == len(forktool.series())
    for patch, message in zip(forktool.series(), messages, strict=True):
        preamble = patch.read_text("utf-8").split("\ndiff --git ", 1)[0]
        # Only the separator before the diffstat may be a bare "---".
        assert preamble.count("\n---\n") == 1, f"{patch.name}: bare --- in message"
        assert len(message.splitlines()) >= 15, patch.name
        assert "test" in message.lower(), f"{patch.name} does not describe its tests"
