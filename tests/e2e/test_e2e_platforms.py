"""End to end: ``tool_fields_relay=True`` on Amazon Bedrock, Vertex AI and
Foundry with the real Claude Code CLI (patch ``relay-platforms``).

Each platform's gateway route (``ANTHROPIC_<PLATFORM>_BASE_URL``) points at
the relay, whose upstream is that platform's loopback stand-in
(``tests/lib/platform_api.py``): it checks the path and body shape and the
credentials (on Bedrock the SigV4 signature, recomputed with the test's
credentials, so the relay's new signature is verified), and answers in the
platform's framing. One turn per platform and tool-search mode: strict and
the examples reach the stand-in, and the tool call runs.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.lib.cases import (
    ARGUMENTS,
    LOOKUP,
    SEARCH,
    SERVER,
    STRICT_FIELDS,
    LegalServer,
)
from tests.lib.cli_harness import isolated_env, run_turn
from tests.lib.fake_api import loading, text, tool_use
from tests.lib.platform_api import API_KEY, AWS_CREDENTIALS, PlatformAPI, PlatformProxy

pytestmark = [pytest.mark.e2e, pytest.mark.requires_patch("relay-platforms")]

TOOL_EXAMPLES = "tool-examples-2025-10-29"
HOSTS = {
    "bedrock": "bedrock-runtime.us-east-1.amazonaws.com",
    "vertex": "us-east5-aiplatform.googleapis.com",
    "foundry": "stand-in.services.ai.azure.com",
}


def _env(
    api: PlatformAPI, home: Path, tool_search: str, proxy: PlatformProxy | None
) -> dict[str, str]:
    """The CLI's settings for ``api``'s platform: through its gateway route
    (the base-URL variable) or, with ``proxy``, its public endpoint."""
    gateway = proxy is None
    extra: dict[str, str]
    if api.platform == "bedrock":
        extra = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "AWS_REGION": "us-east-1",
            **AWS_CREDENTIALS,
        }
        if gateway:
            extra["ANTHROPIC_BEDROCK_BASE_URL"] = api.base_url
    elif api.platform == "vertex":
        extra = {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
            "ANTHROPIC_VERTEX_PROJECT_ID": "stand-in-project",
            "CLOUD_ML_REGION": "us-east5",
        }
        if gateway:
            extra["ANTHROPIC_VERTEX_BASE_URL"] = api.base_url + "/v1"
    else:
        extra = {"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_API_KEY": API_KEY}
        if gateway:
            extra["ANTHROPIC_FOUNDRY_BASE_URL"] = api.base_url + "/anthropic"
        else:
            extra["ANTHROPIC_FOUNDRY_RESOURCE"] = "stand-in"
    env = isolated_env(api.base_url, home, ENABLE_TOOL_SEARCH=tool_search, **extra)
    if proxy is not None:
        env.update(proxy.env())
    return env


@pytest.mark.parametrize("route", ["gateway", "public"])
@pytest.mark.parametrize("platform", ["bedrock", "vertex", "foundry"])
async def test_strict_and_examples_reach_the_platform_and_the_tool_runs(
    claude_cli: str,
    e2e_home: Path,
    e2e_cwd: Path,
    tmp_path: Path,
    tool_search: str,
    platform: str,
    route: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = LegalServer(STRICT_FIELDS, lookup=True)
    api = PlatformAPI(platform, require_auth=platform != "vertex")
    proxy = (
        PlatformProxy(api, HOSTS[platform], tmp_path / "ca")
        if route == "public"
        else None
    )
    with contextlib.ExitStack() as served:
        served.enter_context(api)
        if proxy is not None:
            served.enter_context(proxy)
        api.script.extend(
            [
                *loading(tool_search, SEARCH, LOOKUP),
                tool_use(SEARCH, ARGUMENTS),
                text("Found one case."),
            ]
        )
        with caplog.at_level(logging.WARNING):
            turn = await run_turn(
                cli=claude_cli,
                prompt="Find Swedish cases about insurance payouts.",
                mcp_servers={SERVER: server.config},
                env=_env(api, e2e_home, tool_search, proxy),
                cwd=e2e_cwd,
                allowed_tools=[SEARCH, LOOKUP],
                tool_fields_relay=True,
            )
    assert api.failures == [], api.failures
    if proxy is not None:
        # The relay reached the public API host itself (through the caller's
        # proxy); the CLI's other hosts were tunnelled, never terminated.
        assert f"{HOSTS[platform]}:443" in proxy.connects
    carrying: list[Any] = [
        s
        for s in api.messages
        if any(t.get("name") == SEARCH for t in s.json().get("tools", []))
    ]
    assert carrying, [s.path for s in api.seen]
    for seen in carrying:
        search = seen.tool(SEARCH)
        assert search["strict"] is True
        assert search["input_examples"] == STRICT_FIELDS["input_examples"]
        assert "strict" not in seen.tool(LOOKUP)
        if platform == "bedrock":
            assert seen.signature_valid is True
            assert TOOL_EXAMPLES in seen.json()["anthropic_beta"]
        elif platform == "vertex":
            assert TOOL_EXAMPLES in seen.headers["anthropic-beta"].split(",")
        else:
            betas = seen.headers["anthropic-beta"].split(",")
            assert "structured-outputs-2025-12-15" in betas
            assert "advanced-tool-use-2025-11-20" in betas
    assert server.calls == [ARGUMENTS]
    assert turn.result is not None and not turn.result.is_error, turn.stderr
    assert turn.result.result == "Found one case."
    assert "cannot sign" not in caplog.text
