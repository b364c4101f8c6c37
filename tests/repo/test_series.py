"""The patch series is a set of pull requests upstream can take one by one.

- 0001 is the minimal change for #1243, within its line budget;
- every patch applies alone to pristine upstream, or on pristine plus
  exactly the patches its ``depends-on`` annotation in ``patches/series``
  names; what the tooling needs (dependencies, pinning tests, sizes) lives
  there, never in a message;
- every message reads as a pull-request description, an upstream-track one
  in upstream's style (``feat:``/``fix:`` subject, nothing about this
  repository's tooling);
- the fork stays a drop-in: types upstream 0.2.189 accepts build a schema,
  and a call with a JSON value reaches the handler.
"""

from __future__ import annotations

import asyncio
import datetime
import re
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

from tools import forktool

FIRST_PATCH_SRC_BUDGET = 100


def test_first_patch_is_the_minimal_fix_within_its_line_budget() -> None:
    first = forktool.series()[0]
    changed = forktool.src_lines_changed(first)
    message = forktool.patch_message(first)
    assert forktool.patch_slug(first) == "serve-extra-tool-fields"
    assert changed <= FIRST_PATCH_SRC_BUDGET, changed
    assert forktool.patch_dependencies(first) == []
    assert "#1243" in message


def test_the_series_records_each_upstream_pull_requests_size() -> None:
    annotations = forktool.series_annotations()
    for patch in forktool.tracks()["upstream"]:
        recorded = annotations[forktool.patch_slug(patch)]["src-lines"]
        assert recorded == [str(forktool.src_lines_changed(patch))], patch.name


def test_every_patch_applies_on_pristine_plus_what_it_declares() -> None:
    assert forktool.check_dependencies() == []


def test_dependencies_are_checked_not_assumed(monkeypatch: pytest.MonkeyPatch) -> None:
    # A patch whose depends-on annotation is dropped must be reported.
    patches = forktool.series()
    dependent = next(p for p in patches if forktool.patch_dependencies(p))
    declared = forktool.patch_dependencies
    monkeypatch.setattr(
        forktool,
        "patch_dependencies",
        lambda p: [] if p == dependent else declared(p),
    )
    index = patches.index(dependent)
    monkeypatch.setattr(forktool, "series", lambda: patches[: index + 1])
    problems = forktool.check_dependencies()
    assert problems and problems[0].startswith(f"{dependent.name} does not apply")


def test_series_annotations_are_read_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = forktool.SERIES.read_text("utf-8")
    assert "\n#   depends-on: " in text and "\n#   pin: " in text
    names = [p.name for p in forktool.series()]
    series = tmp_path / "series"
    series.write_text(forktool.series_text(names), "utf-8")
    monkeypatch.setattr(forktool, "SERIES", series)
    assert forktool.series_text(names) == text  # export keeps them by slug
    pins = [
        pin for name in names for pin in forktool.pinned_tests(forktool.PATCHES / name)
    ]
    assert pins and all(" " not in pin for pin in pins)


@pytest.mark.parametrize("patch", forktool.series(), ids=lambda p: p.name)
def test_message_reads_as_a_pull_request(patch: Path) -> None:
    message = forktool.patch_message(patch)
    for heading in ("## Summary", "## Why", "## Test plan"):
        assert f"\n{heading}\n" in message, heading
    assert len(message.splitlines()) <= 80


def test_pull_request_bodies_are_written_for_the_upstream_track(
    tmp_path: Path,
) -> None:
    (tmp_path / "0099.md").write_text("stale", "utf-8")
    written = forktool.write_pull_requests(tmp_path)
    upstream = forktool.tracks()["upstream"]
    assert [p.name for p in written] == [f"{p.name[:4]}.md" for p in upstream]
    assert sorted(tmp_path.iterdir()) == sorted(written)
    first = written[0].read_text("utf-8")
    assert first.startswith("# feat: serve strict")
    for heading in ("## Summary", "## Why", "## Test plan"):
        assert f"\n{heading}\n" in first


# --- The two tracks -----------------------------------------------------------

UPSTREAM_SRC_BUDGET = 150
# Words that would tell a maintainer the pull request comes from this fork.
FORK_WORDS = ("fork", "relay", "patch series", "patches/", "upstream track")


def test_the_series_is_the_upstream_track_then_the_fork_track() -> None:
    split = forktool.tracks()
    assert split["upstream"] and split["fork"]
    assert forktool.series() == split["upstream"] + split["fork"]
    assert forktool.patch_slug(split["upstream"][0]) == "serve-extra-tool-fields"
    text = forktool.SERIES.read_text("utf-8")
    assert text == forktool.series_text([p.name for p in forktool.series()])
    assert text.index("# == upstream track") < text.index("# == fork track")


@pytest.mark.parametrize("patch", forktool.tracks()["upstream"], ids=lambda p: p.name)
def test_an_upstream_track_patch_is_a_mergeable_pull_request(patch: Path) -> None:
    message = forktool.patch_message(patch)
    assert forktool.src_lines_changed(patch) <= UPSTREAM_SRC_BUDGET
    upstream = {forktool.patch_slug(p) for p in forktool.tracks()["upstream"]}
    assert set(forktool.patch_dependencies(patch)) <= upstream
    diff = patch.read_text("utf-8").split("\n---\n", 1)[1]
    added = "\n".join(
        line for line in diff.splitlines() if line.startswith("+") and "+++" not in line
    )
    for word in FORK_WORDS:
        assert word not in message.lower(), word
        assert word not in added.lower(), word


# Lines a reviewer strips: they speak to this repository's tooling, which
# reads what it needs from patches/series.
TOOLING_LINES = (
    r"^Depends-on:",
    r"^Track:",
    r"Changed `src/` lines",
    r"^For a Claude Code user today:",
    r"^## Tests that pin existing behaviour",
)


@pytest.mark.parametrize("patch", forktool.tracks()["upstream"], ids=lambda p: p.name)
def test_an_upstream_track_message_is_in_upstreams_style(patch: Path) -> None:
    message = forktool.patch_message(patch)
    subject = message.split("\n", 1)[0]
    assert re.match(r"(feat|fix): [a-z]", subject), subject
    for pattern in TOOLING_LINES:
        assert not re.search(pattern, message, flags=re.M), (patch.name, pattern)
    assert "CHANGELOG" not in "\n".join(forktool.patch_files(patch))


@pytest.mark.parametrize("patch", forktool.tracks()["upstream"], ids=lambda p: p.name)
def test_an_upstream_track_patch_names_its_pinning_tests_machine_readably(
    patch: Path,
) -> None:
    """What the pull_requests session checks on the baseline; here, that the
    series' pins parse and name test functions the patch adds."""
    pins = forktool.pinned_tests(patch)
    added = set(
        re.findall(
            r"^\+\s*(?:async )?def (test_\w+)",
            patch.read_text("utf-8").split("\n---\n", 1)[1],
            flags=re.M,
        )
    )
    for pin in pins:
        function = pin.rpartition("::")[2].partition("[")[0]
        assert function in added, (patch.name, pin)


def test_upstream_track_patches_carry_the_projects_identity() -> None:
    identity = (
        f"From: {forktool.GIT_ENV['GIT_AUTHOR_NAME']}\n "
        f"<{forktool.GIT_ENV['GIT_AUTHOR_EMAIL']}>"
    )
    for patch in forktool.tracks()["upstream"]:
        head = patch.read_text("utf-8").split("\nSubject:", 1)[0]
        assert identity in head, (patch.name, head)


def test_the_fork_declares_every_dependency_the_series_declares_upstream(
    tmp_path: Path,
) -> None:
    tree = forktool.build_tree(tmp_path / "tree")
    forktool.require_applied(tree)
    upstream = forktool.declared_dependencies(tree.path / "pyproject.toml")
    fork = forktool.declared_dependencies(forktool.ROOT / "pyproject.toml")
    assert "referencing" in upstream  # compiled-argument-validators declares it
    assert set(upstream) <= set(fork), set(upstream) - set(fork)


def test_fork_track_patches_say_so() -> None:
    for patch in forktool.tracks()["fork"]:
        assert "\nTrack: fork\n" in forktool.patch_message(patch), patch.name


class Opaque:
    pass


DROP_IN = [
    (datetime.date, "2026-12-01"),
    (datetime.datetime, "2026-12-01T10:00:00Z"),
    (datetime.time, "10:00:00"),
    (uuid.UUID, "00000000-0000-0000-0000-000000000001"),
    (dict[int, str], {"1": "a"}),
    (Opaque, "anything"),
]


@pytest.mark.parametrize(("py_type", "value"), DROP_IN, ids=lambda v: repr(v))
def test_types_upstream_accepts_are_served_and_called(py_type: Any, value: Any) -> None:
    from claude_agent_sdk import create_sdk_mcp_server, tool
    from tests.lib.cli_peer import call_tool

    received: list[Any] = []

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        received.append(args["v"])
        return {"content": [{"type": "text", "text": "ok"}]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown types warn; they still work
        config = create_sdk_mcp_server(
            "srv", tools=[tool("t", "d", {"v": py_type})(handler)]
        )

    result = asyncio.run(call_tool(config, "t", {"v": value}))
    assert not result.get("isError"), result
    assert received == [value]


def test_no_cli_version_remarks_in_the_series_new_modules() -> None:
    # What a CLI version does goes stale in a docstring; the README says it.
    new_files = []
    for patch in forktool.series():
        lines = patch.read_text("utf-8").splitlines()
        for index, line in enumerate(lines[:-1]):
            if line.startswith("diff --git a/src/") and lines[index + 1].startswith(
                "new file mode"
            ):
                new_files.append(line.split()[2].removeprefix("a/"))
    assert new_files
    for path in new_files:
        text = (forktool.ROOT / path).read_text("utf-8")
        assert not re.search(r"\b2\.1\.\d{3}\b", text), path


def test_contributing_carries_the_generated_owners_map() -> None:
    from tools.doc_blocks import read_block

    assert read_block(forktool.ROOT / "CONTRIBUTING.md", "owners") == (
        forktool.owners_table()
    ), "CONTRIBUTING.md's owners map is stale: python3 tools/forktool.py owners --write"
    tracks = {path: track for path, _, track in forktool.owners()}
    assert tracks["src/claude_agent_sdk/_internal/tool_results.py"] == "upstream"
    assert tracks["src/claude_agent_sdk/_internal/strict/transform.py"] == "fork"
