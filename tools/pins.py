"""Every version a nox session installs, in one place.

noxfile.py imports these and installs nothing else by name, so a clean
clone behaves the same tomorrow as today. The CLI's version is not here: it
is the one the vendored SDK bundles (src/claude_agent_sdk/_cli_version.py).
"""

from pathlib import Path

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
TOOL_PYTHON = "3.11"
MCP_MAJORS = {"mcp1": "mcp==1.30.0", "mcp2": "mcp==2.3.0"}
MCP_FLOOR = "mcp==1.23.3"
# Spreads the heavy pytest sessions over the machine's cores (`-n auto`).
XDIST = "pytest-xdist==3.8.0"
TEST_DEPS = [
    "pytest==9.2.0",
    XDIST,
    "pytest-asyncio==1.5.0",
    # The relay's lifecycle is tested under trio too (upstream supports it).
    "anyio[trio]==4.16.0",
    # The relay's Bedrock signing (the [bedrock] extra) and its SigV4 stand-in.
    "botocore==1.44.5",
    # The relay reads brotli request bodies and platform answers when brotli
    # is installed (bounded while decoding: tests/relay/test_bounds_v4.py).
    "brotli==1.2.1",
    # hypothesis left Python 3.10 behind after 6.168.5.
    "hypothesis==6.170.17; python_version >= '3.11'",
    "hypothesis==6.168.5; python_version < '3.11'",
]
# The property test of served strict schemas: hypothesis-jsonschema 0.23.1
# (the newest) needs a hypothesis that still has many.more() (<= 6.155).
STRICT_PROPERTY_DEPS = [
    "pytest==9.2.0",
    "pytest-asyncio==1.5.0",
    "hypothesis==6.155.2",
    "hypothesis-jsonschema==0.23.1",
]
# Peers the strict report compares the SDK with (never runtime dependencies).
STRICT_REPORT_PEERS = ["anthropic==2.15.0", "openai-agents==0.24.0"]
UPSTREAM_TEST_DEPS = ["pytest==9.2.0", "anyio[trio]==4.16.0", "pytest-cov==7.1.0"]
# Upstream's [examples] extra and the wheel recompressor, so that upstream's
# suite skips only what needs a live service or the git checkout.
UPSTREAM_OPTIONAL_DEPS = [
    "boto3==1.44.8",
    "moto[s3]==5.2.5",
    "redis==8.1.0",
    "fakeredis==2.41.0",
    "asyncpg==0.32.0",
    "zopfli==0.4.3",
]
TRIO = "anyio[trio]==4.16.0"
PACKAGING_DEPS = ["build==1.6.1", "pip==26.3"]
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
PYPERF = "pyperf==2.11.0"
# tools/nox bootstraps nox from this file; the typecheck session reads the
# same pin so that mypy sees the noxfile against the nox that runs it.
NOX = next(
    line.strip()
    for line in (Path(__file__).with_name("nox-requirements.txt"))
    .read_text()
    .splitlines()
    if line.startswith("nox==")
)
