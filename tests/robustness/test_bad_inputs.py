"""Each refused definition raises its error, naming the tool and the field,
and docs/refused-definitions.md shows exactly these errors; two tools with
one name, no longer refused, are served as upstream serves them, with a
warning."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve
from tests.robustness.bad_inputs import (
    CASES,
    Case,
    error_of,
    readme_section,
    render_table,
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, id=case.id, marks=pytest.mark.requires_patch(case.patch))
        for case in CASES
    ],
)
def test_definition_is_refused(case: Case) -> None:
    error = error_of(case)
    assert isinstance(error, case.error), error
    message = str(error)
    if case.id.startswith("cap-"):
        assert "20" in message and "21" in message, message
    else:
        assert "'search'" in message, message


@pytest.mark.requires_patch("strict-schema-checks")
def test_readme_table_is_generated_from_these_cases() -> None:
    assert readme_section() == render_table(), (
        "docs/refused-definitions.md is stale: run tools/nox -s docs"
    )


@pytest.mark.requires_patch("tool-field-checks")
async def test_two_tools_with_one_name_are_served_as_upstream_with_a_log_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Not refused (upstream serves both): one log record naming what differs,
    # never a warning (a suite run with filterwarnings=error stays green).
    async def first(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "first"}]}

    async def last(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "last"}]}

    tools = [tool("search", "One", {"q": str})(first)]
    tools.append(tool("search", "Other", {"q": str})(last))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = create_sdk_mcp_server("srv", tools=tools)
    [record] = [r for r in caplog.records if "two tools named" in r.getMessage()]
    assert record.levelname == "WARNING" and record.name.startswith("claude_agent_sdk")
    assert record.getMessage().startswith(
        "SDK MCP server 'srv' has two tools named 'search' that differ in "
        "description, handler: "
    ), record.getMessage()
    listed, [result] = await serve(config, [("search", {"q": "x"})])
    assert [entry["description"] for entry in listed] == ["One", "Other"]
    assert result["content"] == [{"type": "text", "text": "last"}]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same tool twice: nothing differs
        create_sdk_mcp_server("srv", tools=[tools[0], tools[0]])
