"""A live check of strict tool use with your own credentials: ``tools/nox -s live``.

One short turn through the real Claude Code CLI and the tool-fields relay
against the platform your environment names, with the case-law tool strict
mode exists for (an enum beside an array of strings,
``tests/lib/cases.py``), then a verdict:

- whether the platform accepted the request (else its error, verbatim);
- whether ``strict`` was on the request, and which betas
  (``ToolFieldsReport``, the same facts your code gets from
  ``ClaudeAgentOptions.tool_fields_report``);
- whether the model's tool call is valid against the tool's schema.

Which platform, from the environment, as Claude Code reads it:

- the Claude API: ``ANTHROPIC_API_KEY`` or ``CLAUDE_CODE_OAUTH_TOKEN``
  (``ANTHROPIC_BASE_URL`` for a gateway of yours);
- Amazon Bedrock: ``CLAUDE_CODE_USE_BEDROCK=1``, ``AWS_REGION`` and AWS
  credentials (``AWS_ACCESS_KEY_ID``, ``AWS_PROFILE``, ``~/.aws``, or
  ``AWS_BEARER_TOKEN_BEDROCK``);
- Vertex AI: ``CLAUDE_CODE_USE_VERTEX=1``, ``ANTHROPIC_VERTEX_PROJECT_ID``,
  ``CLOUD_ML_REGION`` and Google credentials
  (``GOOGLE_APPLICATION_CREDENTIALS`` or gcloud's application default);
- Foundry: ``CLAUDE_CODE_USE_FOUNDRY=1``, ``ANTHROPIC_FOUNDRY_RESOURCE`` (or
  ``ANTHROPIC_FOUNDRY_BASE_URL``) and ``ANTHROPIC_FOUNDRY_API_KEY`` (or
  Azure credentials, ``AZURE_*``).

Without them it prints one line saying what it needs and exits 0, having
sent nothing (``needs`` reads the environment and the credential files'
presence only). With them, it exits 0 when all three checks pass, else 1.

Never part of a test run: it spends your tokens. Its verdict logic and the
no-credentials path are tested against a loopback stand-in
(``tests/repo/test_live.py``, ``tests/e2e/test_e2e_live.py``).

This module imports the SDK only when it runs a turn, so ``needs`` can be
called where the SDK is not installed (the nox session asks it first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROMPT = (
    "Call the search tool exactly once, with jurisdiction 'se' and the terms "
    "'insurance' and 'payout', then answer in one short sentence."
)
TURN_TIMEOUT_S = 240.0

_OFF = ("", "0", "false", "no", "off")


def _set(env: Mapping[str, str], name: str) -> bool:
    return (env.get(name) or "").strip().lower() not in _OFF


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def platform_name(env: Mapping[str, str]) -> str:
    for setting, name in (
        ("CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock"),
        ("CLAUDE_CODE_USE_VERTEX", "Vertex AI"),
        ("CLAUDE_CODE_USE_FOUNDRY", "Foundry"),
    ):
        if _set(env, setting):
            return name
    return "the Claude API"


def needs(env: Mapping[str, str]) -> str | None:
    """What the environment lacks for a live check, as one line; None when
    it names a platform and credentials for it. Reads ``env`` and whether
    credential files exist: nothing is sent anywhere."""
    home = _home(env)
    if _set(env, "CLAUDE_CODE_USE_BEDROCK"):
        if not (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")):
            return "live: Bedrock needs AWS_REGION (CLAUDE_CODE_USE_BEDROCK is set)"
        if not (
            _set(env, "AWS_BEARER_TOKEN_BEDROCK")
            or _set(env, "AWS_ACCESS_KEY_ID")
            or _set(env, "AWS_PROFILE")
            or _set(env, "AWS_WEB_IDENTITY_TOKEN_FILE")
            or _set(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI")
            or _set(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
            or (home / ".aws" / "credentials").is_file()
            or (home / ".aws" / "config").is_file()
        ):
            return (
                "live: Bedrock needs AWS credentials (AWS_ACCESS_KEY_ID, "
                "AWS_PROFILE, ~/.aws or AWS_BEARER_TOKEN_BEDROCK)"
            )
        return None
    if _set(env, "CLAUDE_CODE_USE_VERTEX"):
        missing = [
            name
            for name in ("ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION")
            if not _set(env, name)
        ]
        if missing:
            return f"live: Vertex AI needs {' and '.join(missing)}"
        adc = home / ".config" / "gcloud" / "application_default_credentials.json"
        if not (_set(env, "GOOGLE_APPLICATION_CREDENTIALS") or adc.is_file()):
            return (
                "live: Vertex AI needs Google credentials "
                "(GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth "
                "application-default login)"
            )
        return None
    if _set(env, "CLAUDE_CODE_USE_FOUNDRY"):
        if not (
            _set(env, "ANTHROPIC_FOUNDRY_RESOURCE")
            or _set(env, "ANTHROPIC_FOUNDRY_BASE_URL")
        ):
            return (
                "live: Foundry needs ANTHROPIC_FOUNDRY_RESOURCE or "
                "ANTHROPIC_FOUNDRY_BASE_URL"
            )
        if not (
            _set(env, "ANTHROPIC_FOUNDRY_API_KEY")
            or any(k.startswith("AZURE_") and _set(env, k) for k in env)
        ):
            return "live: Foundry needs ANTHROPIC_FOUNDRY_API_KEY or Azure credentials"
        return None
    if _set(env, "ANTHROPIC_API_KEY") or _set(env, "CLAUDE_CODE_OAUTH_TOKEN"):
        return None
    return (
        "live: nothing sent; needs ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN "
        "(Claude API), or CLAUDE_CODE_USE_BEDROCK / _VERTEX / _FOUNDRY with "
        "their settings (python -m tools.live --help)"
    )


# --------------------------------------------------------------------------
# The verdict
# --------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one live turn showed."""

    platform: str
    cli_version: str
    reports: list[Any] = field(default_factory=list)
    """The ``ToolFieldsReport``s the relay gave for the turn's requests."""
    tool_inputs: list[dict[str, Any]] = field(default_factory=list)
    """The arguments of each call the model made to the strict tool."""
    error: str | None = None
    """The platform's (or Claude Code's) error, verbatim, when the turn failed."""


_INTEGRITY_WORDS = ("cch", "integrity", "billing", "signature", "tamper")


def verdict(
    outcome: Outcome, tool: str, schema: Mapping[str, Any]
) -> tuple[list[str], bool]:
    """The verdict's lines, and whether every check passed."""
    import jsonschema

    changed = [
        r for r in outcome.reports if r.outcome == "changed" and tool in r.strict_tools
    ]
    modes = sorted({r.mode for r in outcome.reports if r.mode})
    mode = " and ".join(f"{m.replace('_', '-')} mode" for m in modes) or "mode unknown"
    lines = [
        f"live check: {outcome.platform}, relay in {mode}, Claude Code "
        f"{outcome.cli_version}"
    ]
    error = outcome.error
    accepted = error is None
    if error is None:
        lines.append("  request:   accepted")
    else:
        lines.append(f"  request:   REFUSED: {error}")
        if any(word in error.lower() for word in _INTEGRITY_WORDS):
            lines.append(
                "             (it names the request's integrity: see docs/relay.md"
                "#a-live-check; tool_fields_relay=False sends Claude Code's "
                "request unchanged)"
            )
    if changed:
        betas = sorted({b for r in changed for b in r.betas})
        lines.append(
            f"  strict:    on {tool}, in {len(changed)} of "
            f"{len(outcome.reports)} reported request(s)"
        )
        lines.append(f"  betas:     {', '.join(betas) or '(none needed)'}")
    else:
        why = "; ".join(
            r.reason or ", ".join(f"{t}: {w}" for t, w in r.not_strict)
            for r in outcome.reports
            if r.outcome != "changed"
        )
        lines.append(
            f"  strict:    NOT on {tool}"
            + (f": {why}" if why else ": the relay changed no request")
        )
    valid = False
    if not outcome.tool_inputs:
        lines.append("  arguments: the model made no call to the tool")
    else:
        problems = []
        for arguments in outcome.tool_inputs:
            found = jsonschema.exceptions.best_match(
                jsonschema.Draft202012Validator(schema).iter_errors(arguments)
            )
            if found is not None:
                problems.append(f"{json.dumps(arguments)}: {found.message}")
        valid = not problems
        if valid:
            lines.append(
                f"  arguments: valid against the schema "
                f"({json.dumps(outcome.tool_inputs[0], ensure_ascii=False)})"
            )
        else:
            lines.append(f"  arguments: INVALID: {'; '.join(problems)}")
    ok = accepted and bool(changed) and valid
    failed = [
        name
        for name, passed in (
            ("request refused", accepted),
            ("strict not on the request", bool(changed)),
            ("arguments not shown valid", valid),
        )
        if not passed
    ]
    lines.append("verdict: PASS" if ok else f"verdict: FAIL ({'; '.join(failed)})")
    return lines, ok


# --------------------------------------------------------------------------
# The turn
# --------------------------------------------------------------------------


async def live_turn(
    cli: str | None, env: Mapping[str, str], cwd: Path | None = None
) -> Outcome:
    """One strict turn through the relay; ``env`` is given to Claude Code on
    top of this process's environment (``ClaudeAgentOptions.env``)."""
    import anyio

    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKError,
        ToolFieldsReport,
        query,
    )
    from tests.lib.cases import SEARCH, SERVER, STRICT_FIELDS, LegalServer
    from tests.lib.cli_harness import cli_version

    merged = {**os.environ, **env}
    reports: list[ToolFieldsReport] = []
    outcome = Outcome(
        platform_name(merged), cli_version(cli) if cli else "(on PATH)", reports
    )
    with tempfile.TemporaryDirectory(prefix="claude-live-") as tmp:
        options = ClaudeAgentOptions(
            cli_path=cli,
            cwd=str(cwd or tmp),
            mcp_servers={SERVER: LegalServer(STRICT_FIELDS).config},
            allowed_tools=[SEARCH],
            max_turns=3,
            tool_fields_relay=True,
            tool_fields_report=reports.append,
            env={
                # Tool search off unless you chose: the tool is then in the
                # first request (with it on, after the model searched).
                "ENABLE_TOOL_SEARCH": merged.get("ENABLE_TOOL_SEARCH", "false"),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                **env,
            },
        )
        api_errors: list[str] = []
        with anyio.fail_after(TURN_TIMEOUT_S):
            try:
                await _read(query(prompt=PROMPT, options=options), outcome, api_errors)
            except ClaudeSDKError as error:  # a ResultError names the API's answer
                api_errors.append(str(error))
    if api_errors:
        outcome.error = api_errors[0]
    return outcome


async def _read(messages: Any, outcome: Outcome, api_errors: list[str]) -> None:
    from claude_agent_sdk import (
        AssistantMessage,
        ResultMessage,
        TextBlock,
        ToolUseBlock,
    )
    from tests.lib.cases import SEARCH

    async for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock) and block.name == SEARCH:
                    outcome.tool_inputs.append(dict(block.input))
                elif isinstance(block, TextBlock) and (
                    block.text.startswith("API Error") or message.error is not None
                ):
                    api_errors.append(block.text)
        elif isinstance(message, ResultMessage) and message.is_error:
            api_errors.append(
                message.result or f"the turn ended in error ({message.subtype})"
            )


def main(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        epilog=(__doc__ or "").split("\n\n", 2)[2] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cli", help="the Claude Code executable (default: on PATH)")
    args = parser.parse_args(argv)
    extra = dict(env or {})
    missing = needs({**os.environ, **extra})
    if missing is not None:
        print(missing)
        return 0
    import anyio

    from tests.lib.cases import CASE_SCHEMA, SEARCH

    outcome = anyio.run(live_turn, args.cli, extra)
    lines, ok = verdict(outcome, SEARCH, CASE_SCHEMA)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
