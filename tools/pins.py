"""Versions every nox session installs, in one place (noxfile.py and the
tools/nox_*.py session modules import them), so a clean clone behaves the
same tomorrow as today."""

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
TOOL_PYTHON = "3.11"
MCP_MAJORS = {"mcp1": "mcp==1.30.0", "mcp2": "mcp==2.3.0"}
MCP_FLOOR = "mcp==1.23.3"
TEST_DEPS = [
    "pytest==9.2.0",
    "pytest-asyncio==1.5.0",
    # hypothesis left Python 3.10 behind after 6.168.5.
    "hypothesis==6.170.17; python_version >= '3.11'",
    "hypothesis==6.168.5; python_version < '3.11'",
]
UPSTREAM_TEST_DEPS = ["pytest==9.2.0", "anyio[trio]==4.16.0", "pytest-cov==7.1.0"]
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
