"""One agent turn through the real Claude Code CLI, showing what crosses each boundary.

    nox -s demo                      # offline: embedded stand-in Messages API
    nox -s demo -- --real-api        # the real API (needs ANTHROPIC_API_KEY)
    nox -s demo -- --real-api --relay   # ... with the tool-fields relay on

or, from the repository root, in an environment where this repository's
package is installed (a module of the ``tools`` package: it imports the test
helpers as ``tests.lib``)::

    python -m tools.demo [--cli PATH | --cli-version X] [--real-api]

A strict tool (``@tool(..., strict=True, input_examples=[...],
extra_fields={...})``) is served by an in-process SDK MCP server, listed by the
CLI, called by the model, and answered. The demo prints, per boundary, what
went over it: the ``tools/list`` entry the CLI received (recorded on the stdio
control channel), the tool definition the CLI sent to the Messages API, the
tool call and its result, and the final text.

With ``--real-api`` there is no stand-in: the CLI talks to the real API (or
``$ANTHROPIC_BASE_URL`` if set) through a loopback recorder that forwards every
request unchanged, so the CLI -> API boundary is still shown. The model then
decides by itself whether to call the tool.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    TextBlock,
    ToolUseBlock,
)
from tests.lib.cases import ARGUMENTS, FORK_FIELDS, SEARCH, SERVER, LegalServer
from tests.lib.cli_harness import Turn, cli_version, isolated_env, run_turn
from tests.lib.fake_api import FakeMessagesAPI, text, tool_use
from tools import claude_cli

API_TOOL_NAME = SEARCH
PROMPT = (
    "Use the search tool to find Swedish (jurisdiction 'se') cases about "
    "insurance payout claims, then answer in one sentence."
)
REAL_API_DEFAULT = "https://api.anthropic.com"


def build_server() -> tuple[Any, list[str]]:
    try:
        return LegalServer(FORK_FIELDS).config, []
    except TypeError as error:
        # Pristine upstream: tool() has no strict/input_examples/extra_fields.
        note = (
            f"NOTE: this claude_agent_sdk's tool() rejects the fork's fields ({error});"
            " serving a plain tool instead. Install this repository's package."
        )
        return LegalServer().config, [note]


def compact_json(value: Any, indent: str = "") -> str:
    """JSON with every value that fits on a line kept on one line."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) + len(indent) <= 76 or not isinstance(value, dict | list):
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k)}: {compact_json(v, inner).lstrip()}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + compact_json(v, inner).lstrip() for v in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def show(title: str, payload: Any) -> None:
    print(f"\n{title}")
    body = payload if isinstance(payload, str) else compact_json(payload)
    print("\n".join("    " + line for line in body.splitlines()))


def field_report(served: dict[str, Any], sent: dict[str, dict[str, Any] | None]) -> str:
    """Per field: on tools/list (SDK -> CLI), then in each API request (CLI -> API).

    ``sent`` maps a column title (relay off, relay on) to the tool's
    definition in that turn's first Messages API request.
    """
    names = ["strict", "input_examples", *FORK_FIELDS["extra_fields"]]
    table = [("field", "SDK -> CLI (tools/list)", *sent)]
    for name in names:
        row = [name, json.dumps(served[name]) if name in served else "absent"]
        for definition in sent.values():
            found = definition is not None and name in definition
            row.append(json.dumps(definition[name]) if found else "absent")  # type: ignore[index]
        table.append(tuple(row))
    widths = [max(len(row[i]) for row in table) + 2 for i in range(len(table[0]))]
    return "\n".join(
        "".join(
            f"{cell:<{width}}" for cell, width in zip(row, widths, strict=True)
        ).rstrip()
        for row in table
    )


def report(
    turn: Turn,
    api: FakeMessagesAPI,
    header: str,
    notes: list[str],
    relayed: dict[str, dict[str, Any] | None],
) -> int:
    print(header)
    for note in notes:
        print(note)

    (served,) = turn.transport.listed_tools(SERVER)
    show(
        "[1] SDK -> CLI: tools/list entry the CLI received (stdio control channel)",
        served,
    )

    agent_requests = api.messages_requests()
    sent = agent_requests[0].tool(API_TOOL_NAME) if agent_requests else None
    show(
        f"[2] CLI -> API: definition of {API_TOOL_NAME} in the Messages API request",
        sent if sent is not None else "(not in the request's tools)",
    )
    title = "CLI -> API (relay on)" if not relayed and RELAY_ON else "CLI -> API"
    show("    what survived each hop", field_report(served, {title: sent, **relayed}))

    uses = [
        block
        for message in turn.messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, ToolUseBlock)
    ]
    calls = [
        e for e in turn.transport.mcp_exchanges(SERVER) if e.method == "tools/call"
    ]
    if uses:
        show(
            "[3] API -> CLI: tool_use from the model",
            {"name": uses[0].name, "input": uses[0].input},
        )
    else:
        show("[3] API -> CLI: tool_use from the model", "(the model called no tool)")
    for exchange in calls:
        show("    CLI -> SDK: tools/call (stdio)", exchange.request.get("params"))
        show(
            "    SDK -> CLI: its result (stdio)",
            (exchange.response or {}).get("result"),
        )
    results = [r for request in agent_requests[1:2] for r in request.tool_results()]
    if results:
        show("    CLI -> API: tool_result in the next request", results)

    final = [
        block.text
        for message in turn.messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, TextBlock)
    ]
    show("[4] final text", final[-1] if final else "(none)")
    result = turn.result
    ok = result is not None and not result.is_error
    print(
        f"\nturn {'succeeded' if ok else 'FAILED'}: {result.subtype if result else 'no result'}"
    )
    return 0 if ok else 1


RELAY_ON = False  # set by --relay for a --real-api run


def _script(api: FakeMessagesAPI) -> None:
    api.script(
        tool_use(API_TOOL_NAME, ARGUMENTS, preamble="Let me search."),
        text("Two Swedish cases match: NJA 2019 s. 123 and NJA 2021 s. 45."),
    )


async def _relayed_definition(cli: str) -> dict[str, Any] | None:
    """The tool's API definition in a second, offline turn with the relay on."""
    server, _ = build_server()
    with FakeMessagesAPI() as api, tempfile.TemporaryDirectory() as tmp:
        _script(api)
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        work.mkdir()
        await run_turn(
            cli=cli,
            prompt=PROMPT,
            mcp_servers={SERVER: server},
            env=isolated_env(api.url, home),
            cwd=work,
            allowed_tools=[API_TOOL_NAME],
            tool_fields_relay=True,
        )
        requests = api.messages_requests()
        return requests[0].tool(API_TOOL_NAME) if requests else None


async def run(cli: str, real_api: bool) -> int:
    server, notes = build_server()
    relayed: dict[str, dict[str, Any] | None] = {}
    if not real_api:
        relayed["CLI -> API (relay on)"] = await _relayed_definition(cli)
    if real_api:
        upstream = os.environ.get("ANTHROPIC_BASE_URL") or REAL_API_DEFAULT
        api = FakeMessagesAPI(upstream=upstream)
        where = f"the real API ({upstream}) through a loopback recorder"
    else:
        api = FakeMessagesAPI()
        _script(api)
        where = "the embedded stand-in Messages API"
    with api, tempfile.TemporaryDirectory(prefix="claude-demo-") as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "work"
        work.mkdir()
        env = isolated_env(api.url, home)
        if real_api:
            env["ANTHROPIC_API_KEY"] = os.environ["ANTHROPIC_API_KEY"]
        extra: dict[str, Any] = (
            {"max_turns": 4, "tool_fields_relay": RELAY_ON} if real_api else {}
        )
        turn = await run_turn(
            cli=cli,
            prompt=PROMPT,
            mcp_servers={SERVER: server},
            env=env,
            cwd=work,
            allowed_tools=[API_TOOL_NAME],
            timeout=300 if real_api else 90,
            **extra,
        )
        header = (
            f"Claude Code {cli_version(cli)} ({cli}) against {where}\nprompt: {PROMPT}"
        )
        return report(turn, api, header, notes, relayed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cli", help="CLI executable (default: $CLAUDE_E2E_CLI, else install)"
    )
    parser.add_argument("--cli-version", help="CLI version to install and use")
    parser.add_argument(
        "--real-api",
        action="store_true",
        help="talk to the real Messages API (needs ANTHROPIC_API_KEY)",
    )
    parser.add_argument(
        "--relay",
        action="store_true",
        help="with --real-api: turn the tool-fields relay on (tool_fields_relay=True)",
    )
    args = parser.parse_args(argv)
    global RELAY_ON
    RELAY_ON = args.relay
    if args.real_api and not os.environ.get("ANTHROPIC_API_KEY"):
        parser.error("--real-api needs ANTHROPIC_API_KEY in the environment")
    cli = args.cli or (None if args.cli_version else os.environ.get("CLAUDE_E2E_CLI"))
    if not cli:
        try:
            cli = str(claude_cli.install(claude_cli.resolve_version(args.cli_version)))
        except claude_cli.CLIInstallError as error:
            print(f"demo: {error}", file=sys.stderr)
            return 2
    return asyncio.run(run(cli, args.real_api))


if __name__ == "__main__":
    sys.exit(main())
