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
CLI, called by the model, and answered. Offline, the main section is a turn
with the tool-fields relay on in proxy mode, the mode production uses with no
``ANTHROPIC_BASE_URL`` (Claude Code stays first-party and reaches
``api.anthropic.com`` through the relay as its HTTPS proxy; a loopback TLS
stand-in plays the API, as in the tests). It prints, per boundary, what went
over it: the ``tools/list`` entry the CLI received (recorded on the stdio
control channel), the tool definition and the ``anthropic-beta`` header the
API received (the relay's betas marked), the relay's report
(``ToolFieldsReport``), the tool call and its result, and the final text. A
table then shows which field survived each hop with the relay on in proxy
mode, on in base-URL mode (for a gateway), and off (two more turns).

With ``--real-api`` there is no stand-in: the CLI talks to the real API (or
``$ANTHROPIC_BASE_URL`` if set) through a loopback recorder that forwards every
request unchanged, so the CLI -> API boundary is still shown (relay off, or
with ``--relay`` on in base-URL mode, the recorder being the base URL). The
model then decides by itself whether to call the tool. ``tools/nox -s live``
is the check of your own platform and credentials.
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
from tests.lib.relay_upstream import Upstream
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


ADDED_BETAS = ("structured-outputs-2025-12-15", "advanced-tool-use-2025-11-20")

MODES = {
    "proxy": (
        "relay on, proxy mode: Claude Code keeps https://api.anthropic.com (it "
        "stays first-party) and reaches it through the relay as its HTTPS_PROXY; "
        "a loopback TLS stand-in plays api.anthropic.com"
    ),
    "base_url": (
        "relay on, base-URL mode: Claude Code's ANTHROPIC_BASE_URL is the relay, "
        "which forwards to the stand-in (your gateway's place)"
    ),
    "off": "relay off: Claude Code talks to the stand-in directly",
}


def _betas(request: Any) -> str:
    """The request's anthropic-beta header, the relay's additions marked."""
    sent = [b for b in (request.headers.get("anthropic-beta") or "").split(",") if b]
    return ",".join(f"{b} (added)" if b in ADDED_BETAS else b for b in sent) or "(none)"


def report(
    turn: Turn,
    api: FakeMessagesAPI,
    header: str,
    notes: list[str],
    relayed: dict[str, dict[str, Any] | None],
    mode: str,
    reports: list[Any],
) -> int:
    print(header)
    for note in notes:
        print(note)
    print(f"\n== {MODES[mode]} ==")

    (served,) = turn.transport.listed_tools(SERVER)
    show(
        "[1] SDK -> CLI: tools/list entry the CLI received (stdio control channel)",
        served,
    )

    agent_requests = api.messages_requests()
    carrying = [r for r in agent_requests if r.tool(API_TOOL_NAME) is not None]
    first = carrying[0] if carrying else None
    sent = first.tool(API_TOOL_NAME) if first is not None else None
    hop = "CLI -> relay -> API" if mode != "off" else "CLI -> API"
    show(
        f"[2] {hop}: {API_TOOL_NAME} in the Messages API request the API received",
        sent if sent is not None else "(not in the request's tools)",
    )
    if first is not None:
        show("    anthropic-beta on that request", _betas(first))
    if mode != "off":
        show(
            "    what the relay reported (ClaudeAgentOptions.tool_fields_report)",
            "\n".join(r.describe() for r in reports) or "(no report: nothing changed)",
        )
    show(
        "    what survived each hop",
        field_report(served, {f"CLI -> API ({_label(mode)})": sent, **relayed}),
    )

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


def _label(mode: str) -> str:
    return {"proxy": "relay on, proxy mode", "base_url": "relay on, base-URL mode"}.get(
        mode, "relay off"
    )


RELAY_ON = False  # set by --relay for a --real-api run


def _script(api: FakeMessagesAPI) -> None:
    api.script(
        tool_use(API_TOOL_NAME, ARGUMENTS, preamble="Let me search."),
        text("Two Swedish cases match: NJA 2019 s. 123 and NJA 2021 s. 45."),
    )


async def _offline_turn(
    cli: str,
    tmp: Path,
    api_url: str,
    api: FakeMessagesAPI,
    relay: bool,
    extra_env: dict[str, str] | None = None,
    reports: list[Any] | None = None,
) -> Turn:
    server, _ = build_server()
    _script(api)
    home, work = tmp / "home", tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    options: dict[str, Any] = {"tool_fields_relay": relay}
    if reports is not None:
        options["tool_fields_report"] = reports.append
    return await run_turn(
        cli=cli,
        prompt=PROMPT,
        mcp_servers={SERVER: server},
        env=isolated_env(api_url, home, **(extra_env or {})),
        cwd=work,
        allowed_tools=[API_TOOL_NAME],
        **options,
    )


def _definition(api: FakeMessagesAPI) -> dict[str, Any] | None:
    requests = [r for r in api.messages_requests() if r.tool(API_TOOL_NAME)]
    return requests[0].tool(API_TOOL_NAME) if requests else None


async def run_offline(cli: str) -> int:
    """Three offline turns: relay on in proxy mode (the main section), relay
    on in base-URL mode and relay off (the other columns of the table)."""
    _, notes = build_server()
    relayed: dict[str, dict[str, Any] | None] = {}
    with tempfile.TemporaryDirectory(prefix="claude-demo-") as tmp:
        for mode, relay in (("base_url", True), ("off", False)):
            with FakeMessagesAPI() as api:
                await _offline_turn(cli, Path(tmp) / mode, api.url, api, relay)
                relayed[f"CLI -> API ({_label(mode)})"] = _definition(api)
        reports: list[Any] = []
        stand_in = Upstream.first_party(Path(tmp) / "ca").start()
        try:
            turn = await _offline_turn(
                cli,
                Path(tmp) / "proxy",
                "",
                stand_in.api,
                True,
                stand_in.env(),
                reports,
            )
        finally:
            stand_in.stop()
        header = (
            f"Claude Code {cli_version(cli)} ({cli}), offline: stand-in Messages "
            f"API on loopback\nprompt: {PROMPT}"
        )
        return report(turn, stand_in.api, header, notes, relayed, "proxy", reports)


async def run(cli: str, real_api: bool) -> int:
    if not real_api:
        return await run_offline(cli)
    server, notes = build_server()
    upstream = os.environ.get("ANTHROPIC_BASE_URL") or REAL_API_DEFAULT
    api = FakeMessagesAPI(upstream=upstream)
    where = f"the real API ({upstream}) through a loopback recorder"
    reports: list[Any] = []
    with api, tempfile.TemporaryDirectory(prefix="claude-demo-") as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "work"
        work.mkdir()
        env = isolated_env(api.url, home)
        env["ANTHROPIC_API_KEY"] = os.environ["ANTHROPIC_API_KEY"]
        turn = await run_turn(
            cli=cli,
            prompt=PROMPT,
            mcp_servers={SERVER: server},
            env=env,
            cwd=work,
            allowed_tools=[API_TOOL_NAME],
            timeout=300,
            max_turns=4,
            tool_fields_relay=RELAY_ON,
            tool_fields_report=reports.append,
        )
        header = (
            f"Claude Code {cli_version(cli)} ({cli}) against {where}\nprompt: {PROMPT}"
        )
        mode = "base_url" if RELAY_ON else "off"
        return report(turn, api, header, notes, {}, mode, reports)


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
