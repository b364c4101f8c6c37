"""Run one query through the real Claude Code CLI and record every boundary.

Shared by the e2e tests and ``tools/demo.py``. What it records:

- **SDK <-> CLI** (stdio): every JSON line in both directions, through a
  ``Transport`` that wraps the SDK's own subprocess transport. The MCP traffic
  of in-process (``type: "sdk"``) servers rides this channel as
  ``control_request``/``mcp_message`` lines from the CLI and
  ``control_response`` lines back, so :meth:`RecordingTransport.mcp_exchanges`
  shows the ``tools/list`` result exactly as the CLI received it -- not what
  the SDK's tool objects say.
- **CLI <-> API**: every HTTP request, in :class:`fake_api.FakeMessagesAPI`.
- **Hooks**: every hook callback the CLI invoked, by event.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookMatcher,
    Message,
    ResultMessage,
    Transport,
    query,
)
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

CLI_ENV_VAR = "CLAUDE_E2E_CLI"

# Variables of the developer's own environment that would send the CLI
# elsewhere than the stand-in, or change how it authenticates. The SDK passes
# os.environ through to the CLI, so these are blanked for every e2e run.
_NEUTRALIZED_ENV = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
)

TOOL_HOOK_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
CONTROL_HOOK_EVENTS = ("UserPromptSubmit", "Stop")


# --------------------------------------------------------------------------
# The CLI under test
# --------------------------------------------------------------------------


@cache
def cli_version(cli: str) -> str:
    """The version ``cli --version`` reports, e.g. ``"2.1.332"``."""
    completed = subprocess.run(
        [cli, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
    )
    return completed.stdout.split()[0]


def cli_from_env() -> str | None:
    """``$CLAUDE_E2E_CLI`` if it names an executable file, else None."""
    value = os.environ.get(CLI_ENV_VAR)
    if value and Path(value).is_file() and os.access(value, os.X_OK):
        return value
    return None


def cli_version_from_env() -> str:
    """The version of ``$CLAUDE_E2E_CLI``, or a placeholder saying it is missing."""
    cli = cli_from_env()
    if cli is None:
        return f"<unknown: ${CLI_ENV_VAR} not set>"
    try:
        return cli_version(cli)
    except (OSError, subprocess.SubprocessError):
        return f"<unknown: {cli} --version failed>"


def isolated_env(api_url: str, home: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI that talks only to ``api_url`` and keeps state in ``home``."""
    config_dir = home / ".claude"
    config_dir.mkdir(parents=True, exist_ok=True)
    env = dict.fromkeys(_NEUTRALIZED_ENV, "")
    env.update(
        {
            "ANTHROPIC_BASE_URL": api_url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # MCP tools are deferred behind tool search by default; off, they
            # are listed in the request's `tools` as mcp__<server>__<tool>.
            "ENABLE_TOOL_SEARCH": "false",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config_dir),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    env.update(extra)
    return env


# --------------------------------------------------------------------------
# SDK <-> CLI recording
# --------------------------------------------------------------------------


@dataclass
class WireLine:
    direction: str  # "cli->sdk" or "sdk->cli"
    message: dict[str, Any]


@dataclass
class McpExchange:
    """One JSON-RPC message the CLI sent to an SDK server, and the reply."""

    server: str
    request: dict[str, Any]
    response: dict[str, Any] | None

    @property
    def method(self) -> str | None:
        return self.request.get("method")


class RecordingTransport(Transport):
    """The SDK's subprocess transport, with every stdio JSON line recorded."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.wire: list[WireLine] = []

    async def connect(self) -> None:
        await self.inner.connect()

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if line.strip():
                try:
                    self.wire.append(WireLine("sdk->cli", json.loads(line)))
                except ValueError:
                    self.wire.append(WireLine("sdk->cli", {"_unparsed": line}))
        await self.inner.write(data)

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._read_and_record()

    async def _read_and_record(self) -> AsyncIterator[dict[str, Any]]:
        async for message in self.inner.read_messages():
            self.wire.append(WireLine("cli->sdk", message))
            yield message

    async def close(self) -> None:
        await self.inner.close()

    def is_ready(self) -> bool:
        return self.inner.is_ready()

    async def end_input(self) -> None:
        await self.inner.end_input()

    def mcp_exchanges(self, server: str | None = None) -> list[McpExchange]:
        """The ``mcp_message`` control requests, paired with their responses."""
        responses: dict[str, dict[str, Any] | None] = {}
        for line in self.wire:
            message = line.message
            if (
                line.direction == "sdk->cli"
                and message.get("type") == "control_response"
            ):
                body = message.get("response") or {}
                payload = body.get("response") or {}
                responses[str(body.get("request_id"))] = payload.get("mcp_response")
        exchanges = []
        for line in self.wire:
            message = line.message
            if line.direction != "cli->sdk" or message.get("type") != "control_request":
                continue
            request = message.get("request") or {}
            if request.get("subtype") != "mcp_message":
                continue
            if server is not None and request.get("server_name") != server:
                continue
            exchanges.append(
                McpExchange(
                    server=str(request.get("server_name")),
                    request=request.get("message") or {},
                    response=responses.get(str(message.get("request_id"))),
                )
            )
        return exchanges

    def listed_tools(self, server: str) -> list[dict[str, Any]]:
        """The ``tools`` of the last ``tools/list`` result the CLI received."""
        listed = [
            e
            for e in self.mcp_exchanges(server)
            if e.method == "tools/list" and e.response
        ]
        if not listed:
            raise AssertionError(
                f"the CLI never received a tools/list result from {server!r}"
            )
        response = listed[-1].response or {}
        if "result" not in response:
            raise AssertionError(f"tools/list from {server!r} failed: {response}")
        return list(response["result"]["tools"])


# --------------------------------------------------------------------------
# Hooks
# --------------------------------------------------------------------------


@dataclass
class HookRecorder:
    """Registers a pass-through callback for each event and records the calls."""

    events: Sequence[str] = TOOL_HOOK_EVENTS + CONTROL_HOOK_EVENTS
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def matchers(self) -> dict[Any, list[HookMatcher]]:
        def make(event: str) -> Any:
            async def record(
                hook_input: Any, tool_use_id: str | None, context: Any
            ) -> dict[str, Any]:
                self.calls.append((event, dict(hook_input)))
                return {}

            return record

        return {event: [HookMatcher(hooks=[make(event)])] for event in self.events}

    def fired(self, event: str) -> list[dict[str, Any]]:
        return [data for name, data in self.calls if name == event]


# --------------------------------------------------------------------------
# One turn
# --------------------------------------------------------------------------


@dataclass
class Turn:
    messages: list[Message]
    transport: RecordingTransport
    hooks: HookRecorder
    stderr: list[str]

    @property
    def result(self) -> ResultMessage | None:
        for message in reversed(self.messages):
            if isinstance(message, ResultMessage):
                return message
        return None


async def run_turn(
    *,
    cli: str,
    prompt: str,
    mcp_servers: Mapping[str, Any],
    env: Mapping[str, str],
    cwd: Path,
    allowed_tools: Sequence[str] = (),
    hooks: HookRecorder | None = None,
    timeout: float = 90.0,
    **option_overrides: Any,
) -> Turn:
    """One ``query()`` through the CLI at ``cli``; everything it did, recorded."""
    hooks = hooks if hooks is not None else HookRecorder()
    stderr: list[str] = []
    options = ClaudeAgentOptions(
        cli_path=cli,
        cwd=str(cwd),
        env=dict(env),
        mcp_servers=dict(mcp_servers),
        allowed_tools=list(allowed_tools),
        hooks=hooks.matchers(),
        setting_sources=[],
        stderr=stderr.append,
        **option_overrides,
    )
    transport = RecordingTransport(
        SubprocessCLITransport(prompt=prompt, options=options)
    )
    messages: list[Message] = []

    async def collect() -> None:
        async for message in query(prompt=prompt, options=options, transport=transport):
            messages.append(message)

    try:
        await asyncio.wait_for(collect(), timeout)
    except BaseException as error:
        if hasattr(error, "add_note"):  # Python 3.11+
            error.add_note("CLI stderr (last lines):\n" + "\n".join(stderr[-40:]))
        raise
    return Turn(messages=messages, transport=transport, hooks=hooks, stderr=stderr)
