"""The default run and the full run (`tools/nox -t full`) split the sessions.

Every session nox knows is in exactly one of: the default run (what CI runs),
the full run (what the default run leaves out, made before each release), or
the maintenance sessions run by hand. The matrix sessions cover each
Python x mcp cell once between the two runs, and the default run still has
every Python and every mcp major.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import noxfile
from tools import lanes, session_times
from tools.pins import MCP_MAJORS, PYTHONS

ROOT = Path(__file__).resolve().parents[2]


def _nox_list(*args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "nox", "--list", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_each_session_is_in_the_default_run_the_full_run_or_maintenance() -> None:
    every = re.findall(r"^[*-] (\S+)", _nox_list(), flags=re.MULTILINE)
    default = [s["session"] for s in json.loads(_nox_list("--json"))]
    full = [s["session"] for s in json.loads(_nox_list("--json", "-t", "full"))]
    assert "full" in full
    full.remove("full")
    maintenance = [
        name
        for name in every
        if re.sub(r"[-(].*", "", name) in noxfile.MAINTENANCE_SESSIONS
    ]
    assert not set(default) & set(full), set(default) & set(full)
    unplaced = set(every) - {*default, *full, *maintenance, "full"}
    assert not unplaced, (
        f"sessions in neither run: {sorted(unplaced)}; name each in noxfile.py's "
        "DEFAULT_SESSIONS (within the 30-minute budget), FULL_SESSIONS or "
        "MAINTENANCE_SESSIONS"
    )
    assert sorted([*default, *full, *maintenance, "full"]) == sorted(every)
    assert sorted(full) == sorted(noxfile.FULL_SESSIONS)


def test_the_matrix_is_split_between_the_runs_and_its_edges_are_default() -> None:
    for name in noxfile.MATRIX_SESSIONS:
        cells = {f"{name}-{py}({mcp})" for py in PYTHONS for mcp in MCP_MAJORS}
        default = {c for c in noxfile.DEFAULT_SESSIONS if c.startswith(f"{name}-")}
        full = {c for c in noxfile.FULL_SESSIONS if c.startswith(f"{name}-")}
        assert default | full == cells and not default & full
        for edge in (PYTHONS[0], PYTHONS[-1]):
            assert {f"{name}-{edge}({mcp})" for mcp in MCP_MAJORS} <= default
        if name == "tests":  # the differential's middle cells are full-run only
            for python in PYTHONS:
                assert any(f"-{python}(" in cell for cell in default), (name, python)
        for mcp in MCP_MAJORS:
            assert any(cell.endswith(f"({mcp})") for cell in default), (name, mcp)


@pytest.mark.parametrize(
    ("lanes", "sessions"),
    [
        (noxfile.LANES, noxfile.DEFAULT_SESSIONS),
        (noxfile.FULL_LANES, noxfile.FULL_SESSIONS),
    ],
    ids=["default", "full"],
)
def test_the_lanes_are_the_run(lanes: list[list[str]], sessions: list[str]) -> None:
    """tools/nox runs the default and the full sessions in lanes: each once,
    none left out."""
    in_lanes = [session for lane in lanes for session in lane]
    assert len(lanes) == 2
    assert sorted(in_lanes) == sorted(sessions)
    assert len(set(in_lanes)) == len(in_lanes)


@pytest.mark.parametrize(
    ("args", "rest"),
    [
        (["-t", "full"], []),
        (["--no-color", "--tags=full"], ["--no-color"]),
        (["-tfull", "-R", "--", "-x"], ["-R", "--", "-x"]),
        (["-t", "full", "-s", "lint"], None),
        (["-t", "other"], None),
        ([], None),
        (["--", "-t", "full"], None),
    ],
)
def test_the_full_run_alone_runs_in_lanes(
    args: list[str], rest: list[str] | None
) -> None:
    assert lanes._full_run(args) == rest


@pytest.mark.parametrize(
    ("args", "chosen"),
    [
        ([], False),
        (["--no-color"], False),
        (["-R"], False),
        (["--", "-x"], False),
        (["-s", "lint"], True),
        (["--sessions=lint"], True),
        (["-t", "full"], True),
        (["-tfull"], True),
        (["-l"], True),
        (["--list"], True),
        (["-k", "tests"], True),
        (["--", "-s"], False),
        (["-"], False),
        (["-R", "-"], False),
    ],
)
def test_tools_nox_runs_lanes_only_when_no_session_is_chosen(
    args: list[str], chosen: bool
) -> None:
    assert lanes.selects_sessions(args) is chosen


def test_the_time_table_of_a_run_in_lanes_has_each_lane_and_the_wall_time() -> None:
    report = {
        "sessions": [
            {"name": "lint", "result": "success", "duration": 61, "lane": 1},
            {"name": "steps", "result": "failed", "duration": 125, "lane": 2},
            {"name": "repo", "result": "success", "duration": 59, "lane": 1},
        ]
    }
    text = session_times.table(report, wall=130)
    assert "| `steps` | 2 | failed | 2:05 |" in text
    assert "| lane 1 | 1 | | 2:00 |" in text
    assert "| lane 2 | 2 | | 2:05 |" in text
    assert "| sessions' total | | | 4:05 |" in text
    assert text.endswith("| **run's wall time** | | | **2:10** |")
