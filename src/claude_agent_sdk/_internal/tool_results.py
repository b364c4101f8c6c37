"""Turn an SDK tool handler's result dict into a ``CallToolResult`` safely.

A handler may return ``structuredContent`` (``structured_content`` works
too), and a tool that declares an ``outputSchema`` must, per MCP, return
matching structured content on every non-error result; Claude Code fails
the whole call otherwise. Anything wrong with a result becomes an error
result for that call, naming the tool, so the model reads what went wrong.
Nothing a handler returns may reach mcp's serializer unchecked: on mcp 1.x
a value it cannot serialize ends the server for the rest of the session.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from mcp.types import CallToolResult

from .argument_validation import compile_validator


def output_validator(output_schema: Any) -> Any:
    """The validator for a tool's ``outputSchema``, or None without one."""
    if output_schema is None:
        return None
    return compile_validator(output_schema)


def tool_result(
    tool_name: str,
    payload: dict[str, Any],
    result: dict[str, Any],
    validator: Any,
) -> CallToolResult:
    """``payload`` (content and isError) plus ``result``'s structured content.

    ``validator`` checks the tool's ``outputSchema``; None for a tool
    without one. Error results are not checked, as in MCP. A result that
    fails a check raises ``ValueError`` naming the tool and the problem, for
    the caller to answer as an error result.
    """
    structured = result.get("structuredContent", result.get("structured_content"))
    if structured is not None:
        payload["structuredContent"] = structured
    problem = _problem(tool_name, payload, validator)
    if problem is None:
        try:
            return CallToolResult.model_validate(payload, strict=True)
        except Exception as e:
            problem = f"Tool '{tool_name}' returned a result MCP cannot carry: {e}"
    raise ValueError(problem)


def _problem(tool_name: str, payload: dict[str, Any], validator: Any) -> str | None:
    structured = payload.get("structuredContent")
    if structured is not None:
        if not isinstance(structured, dict):
            return (
                f"Tool '{tool_name}' returned structuredContent that is not a "
                f"JSON object (got {type(structured).__name__})"
            )
        try:
            # Strict JSON: NaN would be written as null, a cycle or bytes
            # would fail inside mcp's serializer.
            json.dumps(structured, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as e:
            return (
                f"Tool '{tool_name}' returned structuredContent that is not JSON: {e}"
            )
    if validator is None or payload.get("isError"):
        return None
    if structured is None:
        return (
            f"Tool '{tool_name}' declares an outputSchema but returned no "
            "structuredContent"
        )
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(structured))
    except Exception as e:  # an unresolvable $ref, say
        return f"Tool '{tool_name}': its outputSchema cannot be checked: {e}"
    if error is None:
        return None
    return (
        f"Tool '{tool_name}' returned structuredContent that does not match its "
        f"outputSchema: {error.message} (at {error.json_path})"
    )
