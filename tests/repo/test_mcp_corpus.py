"""The checked-in corpus of real MCP tool schemas is whole and well-formed.

``tests/data/mcp_corpus.json`` is written by ``tools/mcp_corpus.py --write``
from published servers; these checks read only the file (no network, no
servers), independently of the script's own ``--check``, which must pass too.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tools import mcp_corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "mcp_corpus.json"
SCRIPT = ROOT / "tools" / "mcp_corpus.py"


def _load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CORPUS.read_text("utf-8"))
    return data


CORPUS_DATA = _load()
SERVERS: list[dict[str, Any]] = CORPUS_DATA["servers"]


def test_top_level() -> None:
    assert set(CORPUS_DATA) == {"collected", "servers"}
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", CORPUS_DATA["collected"])
    assert len(SERVERS) >= 10
    names = [server["name"] for server in SERVERS]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("server", SERVERS, ids=[s["name"] for s in SERVERS])
def test_server(server: dict[str, Any]) -> None:
    for key in ("name", "registry", "package", "version"):
        assert isinstance(server.get(key), str), key
        assert server[key], key
    assert server["registry"] in {"npm", "pypi"}
    # An exact version, not a range.
    assert re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", server["version"])
    tools = server["tools"]
    assert isinstance(tools, list)
    assert tools
    names = []
    for tool in tools:
        assert isinstance(tool, dict)
        assert isinstance(tool.get("name"), str)
        assert tool["name"]
        assert isinstance(tool.get("inputSchema"), dict), tool["name"]
        names.append(tool["name"])
    assert len(set(names)) == len(names), "tool names repeat"


def test_check_mode_passes() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_mode_rejects_a_broken_corpus(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(CORPUS_DATA))
    broken["servers"][0]["tools"].append({"name": broken["servers"][0]["tools"][0]})
    del broken["servers"][-1]["tools"][0]["inputSchema"]
    path = tmp_path / "corpus.json"
    path.write_text(mcp_corpus.dumps(broken), "utf-8")
    found = mcp_corpus.check(path)
    assert any("has no name" in problem for problem in found), found
    assert any("inputSchema" in problem for problem in found), found
    assert mcp_corpus.check(CORPUS) == []
