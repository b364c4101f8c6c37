"""End to end: an SDK MCP tool listed, offered, called and answered by the real CLI.

Each test runs one ``query()`` through the real Claude Code CLI with
``ANTHROPIC_BASE_URL`` pointing at the loopback stand-in (``fake_api.py``), and
asserts on what crossed each boundary:

- SDK -> CLI: the ``tools/list`` result as it went over stdio (recorded by
  ``cli_harness.RecordingTransport``), not the SDK's tool objects;
- CLI -> API: the ``tools`` and ``tool_result`` blocks of the requests the
  stand-in received;
- the handler's own calls, and the hooks the CLI invoked.

Tests of the fork's feature (patch 0001) carry
``requires_patch("serve-extra-tool-fields")``: on pristine upstream ``tool()``
has no ``strict``/``input_examples``/``extra_fields`` and they fail with a
``TypeError``. The rest pass on pristine upstream too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claude_agent_sdk import (
    AssistantMessage,
    ToolUseBlock,
)
from tests.lib.cases import (
    ARGUMENTS,
    CASE_SCHEMA,
    EXTRA_FIELDS,
    FORK_FIELDS,
    GOOD_EXAMPLE,
    SEARCH,
    SERVER,
    LegalServer,
    answer,
)
from tests.lib.cli_harness import TOOL_HOOK_EVENTS, Turn, cli_version_from_env, run_turn
from tests.lib.fake_api import (
    FakeMessagesAPI,
    RecordedRequest,
    broken_tool_use,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e

FEATURE = pytest.mark.requires_patch("serve-extra-tool-fields")

TOOL = "search"
API_TOOL_NAME = SEARCH
DESCRIPTION = "Search case law"
SCHEMA = CASE_SCHEMA
INPUT_EXAMPLES = [GOOD_EXAMPLE]
# The upstream report's case: an array written as bare words.
BROKEN_INPUT = '{"terms": [payout, claims]}'
PROMPT = "Find Swedish cases about insurance payouts and claims."


def legal_server(variant: str) -> LegalServer:
    """The ``search`` tool, plain or with the fork's fields."""
    # Only the fork's tool() takes these; upstream raises TypeError.
    return LegalServer(FORK_FIELDS if variant == "strict" else None)


VARIANTS = [
    pytest.param("plain", id="plain-tool"),
    pytest.param("strict", id="strict-tool", marks=FEATURE),
]


@pytest.fixture
def turn_runner(claude_cli: str, e2e_env: dict[str, str], e2e_cwd: Path) -> Any:
    async def run(server: LegalServer) -> Turn:
        return await run_turn(
            cli=claude_cli,
            prompt=PROMPT,
            mcp_servers={SERVER: server.config},
            env=e2e_env,
            cwd=e2e_cwd,
            allowed_tools=[API_TOOL_NAME],
        )

    return run


def agent_requests(api: FakeMessagesAPI, at_least: int) -> list[RecordedRequest]:
    requests = api.messages_requests()
    assert len(requests) >= at_least, (
        f"expected {at_least}+ agent-loop requests, the stand-in saw: "
        + repr([(r.method, r.path, r.answered_with) for r in api.requests])
    )
    return requests


def offered_tool(api: FakeMessagesAPI) -> dict[str, Any]:
    first: RecordedRequest = agent_requests(api, 1)[0]
    definition = first.tool(API_TOOL_NAME)
    assert definition is not None, (
        f"{API_TOOL_NAME} not in the API request's tools: "
        + repr([t.get("name") for t in first.tools])
    )
    return definition


# --------------------------------------------------------------------------
# SDK -> CLI: initialize and tools/list, as they crossed stdio
# --------------------------------------------------------------------------


async def test_sdk_server_initializes_and_lists_a_plain_tool_as_upstream(
    fake_api: FakeMessagesAPI, turn_runner: Any
) -> None:
    fake_api.script(text("Nothing to search."))
    turn = await turn_runner(legal_server("plain"))

    methods = [e.method for e in turn.transport.mcp_exchanges(SERVER)]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    initialize = turn.transport.mcp_exchanges(SERVER)[0].response
    assert initialize is not None
    assert initialize["result"]["serverInfo"]["name"] == SERVER
    assert "tools" in initialize["result"]["capabilities"]

    # A tool that sets none of the fork's fields lists exactly as upstream.
    assert turn.transport.listed_tools(SERVER) == [
        {"name": TOOL, "description": DESCRIPTION, "inputSchema": SCHEMA}
    ]
    assert turn.result is not None and not turn.result.is_error
    assert turn.result.result == "Nothing to search."


@FEATURE
async def test_tools_list_entry_the_cli_received_carries_strict_examples_and_extra_fields(
    fake_api: FakeMessagesAPI, turn_runner: Any
) -> None:
    fake_api.script(text("Nothing to search."))
    turn = await turn_runner(legal_server("strict"))

    (entry,) = turn.transport.listed_tools(SERVER)
    assert entry["name"] == TOOL
    assert entry["inputSchema"] == SCHEMA
    assert entry["strict"] is True
    assert entry["_meta"]["anthropic/strict"] is True
    assert entry["input_examples"] == INPUT_EXAMPLES
    for key, value in EXTRA_FIELDS.items():
        assert entry[key] == value, key
    assert turn.result is not None and not turn.result.is_error


# --------------------------------------------------------------------------
# CLI -> API: the tool definition the model is offered
# --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
async def test_tool_is_offered_to_the_model_as_mcp_name_with_declared_schema(
    variant: str, fake_api: FakeMessagesAPI, turn_runner: Any
) -> None:
    fake_api.script(text("Nothing to search."))
    await turn_runner(legal_server(variant))

    definition = offered_tool(fake_api)
    assert definition["name"] == API_TOOL_NAME
    assert definition["description"] == DESCRIPTION
    assert definition["input_schema"] == SCHEMA


# --------------------------------------------------------------------------
# API -> CLI -> SDK -> CLI -> API: a tool call and its result
# --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
async def test_tool_use_runs_the_handler_with_those_arguments_and_returns_its_result(
    variant: str, fake_api: FakeMessagesAPI, turn_runner: Any
) -> None:
    fake_api.script(
        tool_use(API_TOOL_NAME, ARGUMENTS, tool_use_id="toolu_e2e_call"),
        text("Two cases found."),
    )
    server = legal_server(variant)
    turn = await turn_runner(server)

    assert server.calls == [ARGUMENTS]
    (call,) = [
        e for e in turn.transport.mcp_exchanges(SERVER) if e.method == "tools/call"
    ]
    assert call.request["params"]["name"] == TOOL
    assert call.request["params"]["arguments"] == ARGUMENTS

    follow_up = agent_requests(fake_api, 2)[1]
    (result,) = [
        r for r in follow_up.tool_results() if r["tool_use_id"] == "toolu_e2e_call"
    ]
    assert not result.get("is_error")
    assert result["content"] == [{"type": "text", "text": answer(ARGUMENTS)}]

    assert [h["tool_input"] for h in turn.hooks.fired("PreToolUse")] == [ARGUMENTS]
    assert turn.result is not None and not turn.result.is_error
    assert turn.result.result == "Two cases found."


# --------------------------------------------------------------------------
# Broken tool-input JSON from the model (the upstream report's case)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
async def test_broken_tool_input_json_is_refused_before_the_tool_or_any_hook(
    variant: str, fake_api: FakeMessagesAPI, turn_runner: Any
) -> None:
    """What Claude Code does with tool input that is not JSON (observed, 2.1.332).

    It does not call the tool (no ``tools/call`` crosses stdio, the handler
    never runs), invokes none of the tool hooks (PreToolUse, PostToolUse,
    PostToolUseFailure), and answers the model itself with an error
    ``tool_result`` (``InputValidationError``) that quotes the raw input. The
    SDK sees, and the next API request echoes, the input as a placeholder
    object ``{"__unparsedToolInput": {"raw": ..., "len": ...}}``.
    """
    fake_api.script(
        broken_tool_use(API_TOOL_NAME, BROKEN_INPUT, tool_use_id="toolu_e2e_broken"),
        text("Sorry, retrying is not possible."),
    )
    server = legal_server(variant)
    turn = await turn_runner(server)

    assert server.calls == []
    methods = [e.method for e in turn.transport.mcp_exchanges(SERVER)]
    assert "tools/list" in methods
    assert "tools/call" not in methods
    for event in TOOL_HOOK_EVENTS:
        assert turn.hooks.fired(event) == [], event
    # Positive control: hooks are wired, so the silence above means something.
    assert turn.hooks.fired("UserPromptSubmit")
    assert turn.hooks.fired("Stop")

    (block,) = [
        b
        for m in turn.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]
    unparsed = {"__unparsedToolInput": {"raw": BROKEN_INPUT, "len": len(BROKEN_INPUT)}}
    assert block.name == API_TOOL_NAME
    assert block.input == unparsed

    follow_up = agent_requests(fake_api, 2)[1]
    (result,) = [
        r for r in follow_up.tool_results() if r["tool_use_id"] == "toolu_e2e_broken"
    ]
    # The history sent back to the model carries the same placeholder input.
    (echoed,) = [
        b
        for m in follow_up.body["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    assert echoed["id"] == "toolu_e2e_broken"
    assert echoed["input"] == unparsed
    assert result["is_error"] is True
    assert "InputValidationError" in result["content"]
    assert "could not be parsed as JSON" in result["content"]
    assert BROKEN_INPUT in result["content"]
    assert turn.result is not None and not turn.result.is_error


# --------------------------------------------------------------------------
# Canary: does the CLI forward strict / input_examples to the API yet?
# --------------------------------------------------------------------------

CANARY_REASON = (
    f"Claude Code {cli_version_from_env()} does not copy these from MCP tools"
)


@FEATURE
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=CANARY_REASON)
async def test_canary_cli_sends_strict_and_input_examples_to_the_api(
    fake_api: FakeMessagesAPI, turn_runner: Any
) -> None:
    """Turns red (XPASS, strict) the day a CLI forwards these: update the docs then.

    Only an ``AssertionError`` about the API request counts as the expected
    failure; a precondition that fails (the CLI did not even receive the
    fields on ``tools/list``, as on pristine upstream) is a real failure.
    """
    fake_api.script(text("Nothing to search."))
    turn = await turn_runner(legal_server("strict"))

    try:
        (entry,) = turn.transport.listed_tools(SERVER)
        definition = offered_tool(fake_api)
    except (AssertionError, ValueError) as error:
        pytest.fail(f"precondition: {error}")
    if (
        entry.get("strict") is not True
        or entry.get("_meta", {}).get("anthropic/strict") is not True
        or entry.get("input_examples") != INPUT_EXAMPLES
    ):
        pytest.fail(f"precondition: tools/list did not carry the fields: {entry}")

    # Served both as the top-level field and as _meta["anthropic/strict"]: a
    # CLI that reads either turns this red.
    assert definition.get("strict") is True, definition
    assert definition.get("input_examples") == INPUT_EXAMPLES, definition
