"""The fork installs from git as a drop-in `claude-agent-sdk`.

These build and install the repository for real (fresh venvs, pip), so they
live in the `repo` session rather than in the per-Python test matrix.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from tools import forktool

ROOT = forktool.ROOT


def run(*cmd: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, text=True, capture_output=True, check=False
    )
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", out, ROOT)
    (built,) = out.glob("*.whl")
    return built


def test_version_is_upstream_plus_local_label(wheel: Path) -> None:
    cfg = forktool.fork_config()
    expected = f"{cfg['upstream-version']}+{cfg['local-label']}.{cfg['release']}"
    assert wheel.name.startswith(f"claude_agent_sdk-{expected}-")
    with zipfile.ZipFile(wheel) as zf:
        metadata = zf.read(f"claude_agent_sdk-{expected}.dist-info/METADATA").decode()
    assert f"Version: {expected}\n" in metadata
    assert "Requires-Dist: mcp<3.0.0,>=1.23.0" in metadata
    assert "Requires-Python: >=3.10" in metadata


def test_wheel_ships_package_typing_marker_and_both_licences(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        upstream_licence = next(n for n in names if n.endswith("LICENSE.upstream"))
        assert "Anthropic" in zf.read(upstream_licence).decode()
    assert "claude_agent_sdk/py.typed" in names
    assert "claude_agent_sdk/__init__.py" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "tools/", "patches/")) for n in names)


def test_package_version_stays_upstreams() -> None:
    text = (forktool.SRC / "_version.py").read_text()
    assert f'__version__ = "{forktool.base_version()}"' in text


def test_git_install_in_fresh_venv(tmp_path: Path) -> None:
    """pip install git+file://<clone> works, pip check is clean, and a package
    that depends on claude-agent-sdk>=0.2.100 is satisfied by the fork."""
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    if head.returncode != 0:
        pytest.fail("the repository has no commit to install from git")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    pip: list[str | Path] = [
        python,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "--quiet",
    ]
    run(*pip, "install", f"git+file://{ROOT}")
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [build-system]
            requires = ["setuptools>=61"]
            build-backend = "setuptools.build_meta"
            [project]
            name = "agent-consumer"
            version = "1.0"
            dependencies = ["claude-agent-sdk>=0.2.100"]
            [tool.setuptools]
            py-modules = []
            """
        )
    )
    run(*pip, "install", consumer)
    run(*pip, "check")
    probe = run(
        python,
        "-c",
        "import json, importlib.metadata as m, claude_agent_sdk as s;"
        "print(json.dumps([s.__version__, m.version('claude-agent-sdk')]))",
    )
    package_version, dist_version = json.loads(probe)
    assert package_version == forktool.base_version()
    assert dist_version == forktool.distribution_version()
