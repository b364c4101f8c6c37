"""Run differential cases against whichever ``claude_agent_sdk`` is installed.

``python -m tests.differential.runner CASES.json OUT.json`` is run once in a
venv holding pristine upstream and once in a venv holding the fork (same
Python, same mcp); ``tests/differential/test_differential.py`` compares the
two outputs. Nothing here knows which of the two it runs in.

A case is Python source text that defines ``TOOLS`` (a list of ``@tool``
tools) and, for the handlers, ``RESULTS`` (the results its
calls return, one per call of the case in order; ``Raise("...")`` makes a
call raise). The runner
then calls ``create_sdk_mcp_server("srv", tools=TOOLS)`` and plays the CLI
against it through ``Query._handle_sdk_mcp_request``: ``initialize``,
``tools/list`` and each ``tools/call`` of the case. Recorded per case, as
JSON: what each phase raised, every warning and log record, every raw
JSON-RPC response, and the arguments each handler received.

With ``DIFFERENTIAL_WARNINGS=error`` every case runs with warnings as errors
(``python -W error``, pytest's ``filterwarnings = error``): a warning then
raises where it is issued, and what that changes is recorded like anything
else.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import types
import warnings
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import create_sdk_mcp_server
from tests.lib.cli_peer import CliPeer


class Raise(Exception):  # noqa: N818 - named for the cases' source text
    """A handler result that raises instead of returning."""


_counter = itertools.count()

# "always" records every warning; "error" raises each where it is issued.
WARNINGS_ACTION: Literal["always", "error"] = (
    "error" if os.environ.get("DIFFERENTIAL_WARNINGS") == "error" else "always"
)


def _received_text(value: Any) -> str:
    """How a handler's arguments are recorded: JSON, anything else by repr."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return f"<{type(value).__name__}> {value!r}"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")


def _warning_lines(caught: list[warnings.WarningMessage]) -> list[str]:
    return [f"{w.category.__name__}: {w.message}" for w in caught]


async def _drive(
    config: Any, calls: list[dict[str, Any]], received: list[str], current: list[int]
) -> dict[str, Any]:
    peer = CliPeer({"srv": config}, client_version="differential")
    out: dict[str, Any] = {}

    async def send(method: str, params: dict[str, Any]) -> Any:
        try:
            return await peer.send("srv", peer.message(method, params))
        except Exception as error:  # noqa: BLE001 - recorded, compared
            return {"raised": f"{type(error).__name__}: {error}"}

    try:
        out["initialize"] = await send("initialize", peer.hello())
        await peer.send(
            "srv", {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        out["list"] = await send("tools/list", {})
        out["calls"] = []
        for index, call in enumerate(calls):
            current[0] = index
            before = len(received)
            response = await send(
                "tools/call", {"name": call["name"], "arguments": call["arguments"]}
            )
            out["calls"].append({"response": response, "received": received[before:]})
    finally:
        await peer.aclose()
    return out


# The arguments a tool opts into new behaviour with (absent upstream).
NEW_ARGUMENTS = ("strict", "input_examples", "extra_fields", "output_schema")


def _declared(tool_def: Any) -> dict[str, Any]:
    """What a tool was defined with, as the differences table reads it."""
    declared = tool_def.input_schema
    entry: dict[str, Any] = {"name": tool_def.name, "kind": type(declared).__name__}
    # Pull requests are compared on plain tools only (tests/differential/
    # pull_request.py): a tool that uses a new argument opted into a change.
    entry["opted_in"] = any(
        getattr(tool_def, argument, None) is not None for argument in NEW_ARGUMENTS
    )
    if isinstance(declared, dict):
        try:
            entry["json"] = json.loads(json.dumps(declared, allow_nan=False))
        except (TypeError, ValueError):
            entry["kind"] = "shorthand"
    return entry


def _forget_notices() -> None:
    """Each case on its own: the fork logs each notice once per process, and
    a case must not depend on the ones before it (upstream has no notices)."""
    try:
        from claude_agent_sdk._internal.definition.notices import forget_notices
    except ImportError:
        return
    forget_notices()


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    _forget_notices()
    name = f"differential_case_{next(_counter)}"
    module = types.ModuleType(name)
    received: list[str] = []
    results: list[Any] = []
    current = [0]  # index of the call being made

    async def respond(tool_name: str, args: Any) -> Any:
        # The result of the call being made, whichever calls came before.
        received.append(_received_text(args))
        result = results[current[0]] if current[0] < len(results) else None
        if result is None:
            result = {"content": []}
        if isinstance(result, Raise):
            raise result
        return result

    module.__dict__.update(Raise=Raise, respond=respond)
    sys.modules[name] = module  # get_type_hints resolves names through it
    records = _Records()
    loggers = [logging.getLogger("claude_agent_sdk"), logging.getLogger("mcp")]
    for logger in loggers:
        logger.addHandler(records)
    out: dict[str, Any] = {"id": case["id"]}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(WARNINGS_ACTION)
            try:
                exec(
                    compile(case["source"], f"<{case['id']}>", "exec"), module.__dict__
                )
            except Exception as error:  # noqa: BLE001 - recorded, compared
                out["define_error"] = f"{type(error).__name__}: {error}"
            out["define_warnings"] = _warning_lines(caught)
        if "define_error" in out:
            return out
        results.extend(module.__dict__.get("RESULTS", []))
        out["tools"] = [_declared(tool_def) for tool_def in module.TOOLS]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(WARNINGS_ACTION)
            try:
                config = create_sdk_mcp_server("srv", tools=module.TOOLS)
            except Exception as error:  # noqa: BLE001 - recorded, compared
                out["server_error"] = f"{type(error).__name__}: {error}"
            out["server_warnings"] = _warning_lines(caught)
        if "server_error" in out:
            return out
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(WARNINGS_ACTION)
            out.update(asyncio.run(_drive(config, case["calls"], received, current)))
            out["serve_warnings"] = _warning_lines(caught)
    finally:
        for logger in loggers:
            logger.removeHandler(records)
        sys.modules.pop(name, None)
        out["logs"] = records.lines
    return out


def _sabotage(name: str) -> None:
    """Break one neutral behaviour on purpose (the tests that the comparison
    bites): serve every tool's Python types with the fork's faithful
    converter, as if every tool had opted in; or issue every notice as a
    ``UserWarning`` too, as the fork once did."""
    if name == "notices-as-warnings":
        from claude_agent_sdk._internal.definition import notices

        def warn_too(record: logging.LogRecord) -> bool:
            warnings.warn(record.getMessage(), UserWarning, stacklevel=2)
            return True

        notices._ONCE.filter = warn_too  # type: ignore[method-assign]
        return
    if name != "faithful-types-for-every-tool":
        raise SystemExit(f"unknown sabotage {name!r}")
    import claude_agent_sdk

    # Through a variable: a type checker need not see the monkeypatch. The
    # one converter's switch forced on, also where it recurses.
    package: Any = claude_agent_sdk
    types_of = package._python_type_to_json_schema
    typeddict_of = package._typeddict_to_json_schema

    def faithful_types(py_type: Any, faithful: bool = False) -> Any:
        return types_of(py_type, faithful=True)

    def faithful_typeddict(td_class: Any, faithful: bool = False) -> Any:
        return typeddict_of(td_class, faithful=True)

    package._python_type_to_json_schema = faithful_types
    package._typeddict_to_json_schema = faithful_typeddict


def main(argv: list[str]) -> int:
    cases_path, out_path = map(Path, argv)
    if os.environ.get("DIFFERENTIAL_SABOTAGE"):
        _sabotage(os.environ["DIFFERENTIAL_SABOTAGE"])
    cases = json.loads(cases_path.read_text("utf-8"))
    outputs = [run_case(case) for case in cases]
    out_path.write_text(json.dumps(outputs, sort_keys=True, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
