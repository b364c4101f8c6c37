"""The house's checks (tools/house.py) hold on the repository, and each can fail.

- hooks: the fork-track patches change at most ``HOOK_LINES`` (56) lines of
  upstream's files and the upstream track's modules under src/ (issue 44,
  item 1 set 60);
- packages: each src/ file a fork-track patch creates lives in a fork
  package, each one an upstream-track patch creates outside them (item 2);
- circles: no import circle among the fork's modules (item 4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import forktool, house

PKG = f"src/{forktool.PACKAGE}"


# ---------------------------------------------------------------------------
# The repository


def test_fork_track_changes_upstream_files_only_by_small_hooks() -> None:
    report = house.hooks()
    assert report.ok, "\n".join(report.lines())


def test_each_module_the_series_creates_lives_in_its_tracks_packages() -> None:
    report = house.packages()
    assert report.files, "the series creates no src/ file"
    assert report.ok, "\n".join(report.lines())


def test_no_import_circle_among_the_fork_modules() -> None:
    report = house.repository_circles()
    relay = [m for m in report.modules if m.startswith("_internal.relay.")]
    assert len(relay) > 5 and report.edges > 10, report.lines()[0]
    assert report.ok, "\n".join(report.lines())


# ---------------------------------------------------------------------------
# A synthetic series: each check fails on a breach


def _new(path: str, lines: list[str]) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n"
        f"index 0000000..1111111\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def _edit(path: str, removed: list[str], added: list[str]) -> str:
    body = " context\n" + "".join(f"-{line}\n" for line in removed)
    body += "".join(f"+{line}\n" for line in added) + " context\n"
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n"
        f"--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{len(removed) + 2} +1,{len(added) + 2} @@\n{body}"
    )


def _patch(directory: Path, name: str, track: str, *diffs: str) -> Path:
    trailer = "\nTrack: fork\n" if track == "fork" else ""
    path = directory / f"{name}.patch"
    path.write_text(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: someone <someone@localhost>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
        f"Subject: [PATCH] {name}\n\nWhat it does.\n{trailer}---\n"
        " a | 1 +\n\n" + "".join(diffs),
        "utf-8",
    )
    return path


@pytest.fixture
def series(tmp_path: Path) -> list[Path]:
    return [
        _patch(
            tmp_path,
            "0001-upstream-feature",
            "upstream",
            _edit(f"{PKG}/__init__.py", ["old"], ["new", "newer"]),
            _new(f"{PKG}/_internal/feature.py", ["x = 1", "y = 2"]),
        ),
        _patch(
            tmp_path,
            "0002-fork-feature",
            "fork",
            # a removed line reading "-- x" shows as "--- x": a line, no header
            _edit(f"{PKG}/__init__.py", ["-- x", "b"], ["hook()"]),
            _edit(f"{PKG}/_internal/feature.py", [], ["z = 3"]),
            _new(f"{PKG}/_internal/relay/own.py", ["a = 1"] * 50),
            _edit("tests/test_upstream.py", [], ["def test_it(): ..."]),
        ),
        _patch(
            tmp_path,
            "0003-fork-more",
            "fork",
            _edit(f"{PKG}/_internal/relay/own.py", ["a = 1"], ["a = 2"]),
            _edit(f"{PKG}/types.py", [], ["field: int = 0"] * 4),
        ),
    ]


def test_hooks_counts_fork_lines_in_upstream_files_and_upstream_modules(
    series: list[Path],
) -> None:
    report = house.hooks(series, limit=8)
    assert report.by_file == {
        f"{PKG}/__init__.py": 3,
        f"{PKG}/_internal/feature.py": 1,
        f"{PKG}/types.py": 4,
    }
    assert report.by_patch == {"0002-fork-feature": 4, "0003-fork-more": 4}
    assert (report.total, report.ok) == (8, True)
    over = house.hooks(series, limit=7)
    assert not over.ok
    assert "hooks: 8 fork-track lines" in over.lines()[0]


def test_packages_reports_a_module_outside_its_tracks_packages(
    tmp_path: Path, series: list[Path]
) -> None:
    assert house.packages(series).ok
    loose = _patch(
        tmp_path, "0004-fork-loose", "fork", _new(f"{PKG}/_internal/loose.py", ["a"])
    )
    inside = _patch(
        tmp_path,
        "0005-upstream-inside",
        "upstream",
        _new(f"{PKG}/_internal/strict/rules.py", ["a"]),
    )
    report = house.packages([*series, loose, inside])
    assert [row[0] for row in report.misplaced] == [
        f"{PKG}/_internal/loose.py",
        f"{PKG}/_internal/strict/rules.py",
    ]
    assert not report.ok


def test_the_command_exits_non_zero_on_a_breach(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    series: list[Path],
) -> None:
    monkeypatch.setattr(forktool, "series", lambda: series)
    assert house.main(["hooks", "packages"]) == 0
    monkeypatch.setattr(house, "HOOK_LINES", 7)
    assert house.main(["hooks"]) == 1
    assert "house: FAILED: hooks" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# A synthetic package: circles


def _package(src: Path, files: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = src / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        paths.append(path)
    return paths


def test_circles_finds_a_circle_through_every_form_of_import(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "",
            # relative, from a package, inside a function, absolute, TYPE_CHECKING
            "a.py": "from .sub import b\n",
            "sub/b.py": "def f():\n    from ..c import C, D\n",
            "c.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    import pkg.d\n",
            "d.py": "from pkg import a as first\n",
            "e.py": "from . import a\nimport os\n",
        },
    )
    report = house.circles(tmp_path, modules)
    assert len(report.circles) == 1, report.lines()
    circle = report.circles[0]
    assert circle.modules == ["pkg.a", "pkg.c", "pkg.d", "pkg.sub.b"]
    assert circle.cycle == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.d", "pkg.a"]
    assert ("pkg.sub.b", "pkg.c", ["C", "D"]) in circle.edges
    assert ("pkg.d", "pkg.a", ["a"]) in circle.edges
    assert not report.ok
    # Without the import that closes it, no circle is left.
    (tmp_path / "pkg" / "d.py").write_text("import os\n", "utf-8")
    report = house.circles(tmp_path, modules)
    assert report.ok, report.lines()
    assert report.edges == 4  # a->b, b->c, c->d, e->a
