"""Evidence: what the fork did to each request, in logs and for the caller's
code (``ToolFieldsReport``, ``ClaudeAgentOptions.tool_fields_report``).

Relay on (changed), on but degraded at strict mode's caps, on but unable to
change a body, and off; against the stdlib stand-in upstream.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKError,
    create_sdk_mcp_server,
    tool,
)
from tests.lib.relay_upstream import Upstream
from tests.relay.cases import EXAMPLES, FIELDS, PLAIN, SCHEMA, STRICT, messages_body

try:
    from claude_agent_sdk import ToolFieldsReport
    from claude_agent_sdk._internal.relay.lifecycle import ToolFieldsRelay
except ImportError:  # a tree without the relay patch: these tests must fail
    ToolFieldsReport = None  # type: ignore[assignment, misc]
    ToolFieldsRelay = None  # type: ignore[assignment, misc]
from claude_agent_sdk._internal.transport.subprocess_cli import (
    SubprocessCLITransport,
)

pytestmark = pytest.mark.requires_patch("tool-fields-relay")

STRUCTURED = "structured-outputs-2025-12-15"
EXAMPLES_BETA = "advanced-tool-use-2025-11-20"
VERTEX_EXAMPLES_BETA = "tool-examples-2025-10-29"  # Vertex AI's name for it
API_KEY = "sk-ant-api03-SECRET-never-logged"


def _sdk_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("claude_agent_sdk")]


def _request_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The INFO records about requests (the relay's start may log its own)."""
    return [
        r
        for r in caplog.records
        if r.name == "claude_agent_sdk._internal.relay.evidence"
        and r.levelno == logging.INFO
    ]


def _no_secret_nor_body(records: list[logging.LogRecord]) -> None:
    for record in records:
        text = record.getMessage()
        assert API_KEY not in text
        assert '"messages"' not in text and '"input_schema"' not in text


async def test_a_changed_request_is_one_info_record_and_one_report(
    upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    reports: list[ToolFieldsReport] = []
    threads: list[str] = []

    def collect(report: ToolFieldsReport) -> None:
        threads.append(threading.current_thread().name)
        reports.append(report)

    async with ToolFieldsRelay(FIELDS, upstream.url) as relay:
        relay.report = collect
        for _ in range(2):  # the same tools on every turn: a record each
            await client.post(
                relay.url + "/v1/messages?beta=true",
                json=messages_body(PLAIN, STRICT),
                headers={"x-api-key": API_KEY},
            )
    assert upstream.seen[-1].json()["tools"][1]["strict"] is True
    assert len(reports) == 2
    report = reports[0]
    assert report == ToolFieldsReport(
        outcome="changed",
        platform="anthropic",
        mode="base_url",
        route="/v1/messages",
        strict_tools=(STRICT,),
        example_tools=(STRICT,),
        betas=(STRUCTURED, EXAMPLES_BETA),
    )
    records = _sdk_records(caplog)
    assert [r.levelno for r in records] == [logging.INFO, logging.INFO]
    text = records[0].getMessage()
    assert text == report.describe()
    assert f"strict on {STRICT}" in text and f"input_examples on {STRICT}" in text
    assert STRUCTURED in text and "base-URL mode" in text and "anthropic" in text
    assert PLAIN not in text
    _no_secret_nor_body(records)
    # Given on the relay's own thread, never the caller's.
    assert all(
        name.startswith("claude-agent-sdk-tool-fields-relay") for name in threads
    )


async def test_a_request_without_declared_tools_has_no_record(
    relay: Any, upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    reports: list[ToolFieldsReport] = []
    relay.report = reports.append
    await client.post(relay.url + "/v1/messages", json=messages_body(PLAIN))
    await client.get(relay.url + "/v1/models")
    assert len(upstream.seen) == 2
    assert reports == [] and _sdk_records(caplog) == []


async def test_degraded_at_the_caps_the_report_names_the_tools_left_non_strict(
    upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    names = [f"mcp__docs__t{i}" for i in range(21)]
    reports: list[ToolFieldsReport] = []
    async with ToolFieldsRelay(
        dict.fromkeys(names, {"strict": True}), upstream.url
    ) as relay:
        relay.report = reports.append
        await client.post(relay.url + "/v1/messages", json=messages_body(*names))
        await client.post(relay.url + "/v1/messages", json=messages_body(*names))
    [first, second] = reports
    assert first == second
    assert first.outcome == "changed" and first.strict_tools == tuple(names[:20])
    assert [tool for tool, _ in first.not_strict] == [names[20]]
    assert (
        "caps" in first.not_strict[0][1] and "21 strict tools" in first.not_strict[0][1]
    )
    assert first.betas == (STRUCTURED,)
    infos = _request_records(caplog)
    # One INFO per request, each naming the tool left without strict and why;
    # the WARNING about the caps comes once.
    assert len(infos) == 2
    assert all(f"sent without strict: {names[20]}" in r.getMessage() for r in infos)
    warnings = [r for r in _sdk_records(caplog) if r.levelno == logging.WARNING]
    assert len(warnings) == 1


async def test_a_request_it_could_not_change_is_reported_with_why(
    relay: Any, upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    reports: list[ToolFieldsReport] = []
    relay.report = reports.append
    # An entry that names its tool twice: which one is meant cannot be told.
    body = f'{{"tools": [{{"name": "{STRICT}", "name": "{STRICT}"}}]}}'.encode()
    await client.post(relay.url + "/v1/messages", content=body)
    assert upstream.seen[-1].body == body  # forwarded as sent
    [report] = reports
    assert report.outcome == "unchanged" and report.strict_tools == ()
    assert report.reason and STRICT in report.dropped_tools
    # The relay's WARNING is the request's one record.
    records = _sdk_records(caplog)
    assert [r.levelno for r in records] == [logging.WARNING]
    assert report.reason in records[0].getMessage()


async def test_a_failing_report_callback_is_logged_and_the_request_goes_on(
    relay: Any, upstream: Upstream, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(report: ToolFieldsReport) -> None:
        raise RuntimeError("the caller's bug")

    relay.report = broken
    response = await client.post(relay.url + "/v1/messages", json=messages_body(STRICT))
    assert response.status_code == 200
    assert upstream.seen[-1].json()["tools"][0]["strict"] is True
    assert any(
        "tool_fields_report raised RuntimeError" in r.getMessage()
        for r in caplog.records
    )


def _declaring_server() -> Any:
    @tool("search", "Search case law", SCHEMA, strict=True, input_examples=EXAMPLES)
    async def search(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("plain", "p", SCHEMA)
    async def plain(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    return create_sdk_mcp_server("legal", tools=[search, plain])


async def test_relay_off_one_notice_per_query_naming_the_tools_and_the_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    reports: list[ToolFieldsReport] = []
    options = ClaudeAgentOptions(
        cli_path="/nonexistent/claude",
        mcp_servers={"legal": _declaring_server()},
        tool_fields_report=reports.append,
    )
    for _ in range(2):  # two queries, two notices
        transport = SubprocessCLITransport(prompt="x", options=options)
        with pytest.raises(ClaudeSDKError):
            await transport.connect()
    assert [r.outcome for r in reports] == ["relay_off", "relay_off"]
    assert reports[0].dropped_tools == ("mcp__legal__search",)
    assert reports[0].mode is None and reports[0].platform == "anthropic"
    notices = [
        r for r in _sdk_records(caplog) if "tool_fields_relay is off" in r.getMessage()
    ]
    assert len(notices) == 2 and notices[0].levelno == logging.WARNING
    text = notices[0].getMessage()
    assert "mcp__legal__search" in text and "plain" not in text
    assert "2.1.332" in text and "tool_fields_relay=True" in text


async def test_relay_off_without_declared_fields_says_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="claude_agent_sdk")

    @tool("plain", "p", SCHEMA)
    async def plain(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    reports: list[ToolFieldsReport] = []
    transport = SubprocessCLITransport(
        prompt="x",
        options=ClaudeAgentOptions(
            cli_path="/nonexistent/claude",
            mcp_servers={"legal": create_sdk_mcp_server("legal", tools=[plain])},
            tool_fields_report=reports.append,
        ),
    )
    with pytest.raises(ClaudeSDKError):
        await transport.connect()
    assert reports == []
    assert not [
        r for r in _sdk_records(caplog) if "tool_fields_relay" in r.getMessage()
    ]


async def test_the_option_reaches_the_relay_the_transport_starts(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_agent_sdk._internal.relay.lifecycle import prepare_for_cli

    def collect(report: ToolFieldsReport) -> None:
        pass

    relay = prepare_for_cli(
        {"legal": _declaring_server()},
        {"ANTHROPIC_BASE_URL": upstream.url},
        None,
        collect,
    )
    assert relay.report is collect


def test_the_errors_and_the_report_are_exported() -> None:
    import claude_agent_sdk
    from claude_agent_sdk import SchemaCheckError, ToolFieldsRelayError
    from claude_agent_sdk._internal.definition.schema_checks import (
        SchemaCheckError as Internal,
    )
    from claude_agent_sdk._internal.relay import lifecycle
    from claude_agent_sdk._internal.relay.evidence import ToolFieldsReport as Report

    assert SchemaCheckError is Internal and issubclass(SchemaCheckError, ValueError)
    assert ToolFieldsRelayError is lifecycle.ToolFieldsRelayError
    assert ToolFieldsReport is Report
    for name in ("SchemaCheckError", "ToolFieldsRelayError", "ToolFieldsReport"):
        assert name in claude_agent_sdk.__all__


# -- on a platform ----------------------------------------------------------


@pytest.mark.requires_patch("relay-platforms")
async def test_a_platform_request_is_reported_with_its_platform_and_betas(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import asyncio
    import json

    from tests.lib.platform_api import BEARER, PlatformAPI
    from tests.relay.test_platforms import VERTEX_PATH, _post, _relay, _vertex_body

    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    reports: list[ToolFieldsReport] = []
    with PlatformAPI("vertex") as api:
        env = {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "ANTHROPIC_VERTEX_BASE_URL": api.base_url + "/v1",
        }
        relay = await _relay(FIELDS, env)
        relay.report = reports.append
        try:
            await asyncio.to_thread(
                _post,
                relay.url,
                VERTEX_PATH.removeprefix("/v1"),
                json.dumps(_vertex_body()).encode(),
                {"authorization": f"Bearer {BEARER}"},
            )
        finally:
            await relay.stop()
    [report] = reports
    # Strict is GA on Vertex AI: only the examples' beta goes on the request.
    assert (report.platform, report.mode, report.outcome) == (
        "vertex",
        "base_url",
        "changed",
    )
    assert report.strict_tools == (STRICT,) and report.betas == (VERTEX_EXAMPLES_BETA,)
    [record] = _request_records(caplog)
    assert "vertex, base-URL mode" in record.getMessage()
    assert BEARER not in caplog.text


@pytest.mark.requires_patch("relay-platforms")
async def test_a_bedrock_request_it_cannot_sign_again_is_reported_unchanged(
    no_aws: None, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio
    import json

    from tests.lib.platform_api import PlatformAPI, sigv4_sign
    from tests.relay.test_platforms import BEDROCK_PATH, _bedrock_body, _post, _relay

    caplog.set_level(logging.INFO, logger="claude_agent_sdk")
    reports: list[ToolFieldsReport] = []
    with PlatformAPI("bedrock") as api:
        env = {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": api.base_url,
        }
        relay = await _relay(FIELDS, env)
        relay.report = reports.append
        try:
            body = json.dumps(_bedrock_body()).encode()
            headers = sigv4_sign("POST", f"{api.base_url}{BEDROCK_PATH}", {}, body)
            await asyncio.to_thread(_post, relay.url, BEDROCK_PATH, body, headers)
        finally:
            await relay.stop()
    [report] = reports
    assert (report.platform, report.outcome) == ("bedrock", "unchanged")
    assert report.reason == "no AWS credentials to sign it again"
    assert report.dropped_tools == (STRICT,) and report.strict_tools == ()
    # Its WARNING is the request's one record (besides the relay's start-up
    # warning that it found no credentials).
    per_request = [r for r in _sdk_records(caplog) if "request" in r.getMessage()]
    assert [r.levelno for r in per_request] == [logging.WARNING]
    assert "cannot sign the Bedrock request again" in per_request[0].getMessage()
