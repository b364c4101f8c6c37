"""A tool's ``output_schema`` and its results' ``structuredContent``: anything
wrong with such a result is an error result naming the tool (on mcp 1.x a
value mcp cannot serialize would end the server for the session)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
from mcp.types import CallToolResult


def check_output_schema(tool_name: str, schema: Any) -> dict[str, Any] | None:
    """A JSON copy of a tool's ``output_schema`` (what is listed is what results
    are checked against), or TypeError/ValueError naming the tool and field."""
    if schema is None:
        return None
    where = f"Tool '{tool_name}': output_schema"
    if not isinstance(schema, dict):
        raise TypeError(
            f"{where} must be a dict (a JSON Schema), got {type(schema).__name__}"
        )
    try:  # no NaN, infinity, set, non-str key, ...
        copy: dict[str, Any] = json.loads(json.dumps(schema, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise type(e)(f"{where} is not JSON: {e}") from None
    if copy.get("type") != "object":
        raise ValueError(
            f'{where} must have "type": "object" (MCP requires a tool\'s '
            f"structured output to be a JSON object), got {copy.get('type')!r}"
        )
    try:
        output_validator(copy).check_schema(copy)
    except jsonschema.SchemaError as e:
        at = "".join(f"[{part!r}]" for part in e.path)
        raise ValueError(
            f"{where}{at} is not a valid JSON Schema: {e.message}"
        ) from None
    for at, ref in _outside_references(copy):
        raise ValueError(
            f"{where}{at} refers to another document ({ref!r}), which would be "
            "fetched on every call; copy it into $defs and refer to it as "
            "'#/$defs/...'"
        )
    return copy


def _outside_references(value: Any, at: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _outside_references(item, f"{at}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in ("$ref", "$dynamicRef") and isinstance(item, str):
                if not item.startswith("#"):
                    yield f"{at}[{key!r}]", item
            elif key not in ("const", "default", "enum", "examples"):  # data
                yield from _outside_references(item, f"{at}[{key!r}]")


def output_validator(output_schema: dict[str, Any] | None) -> Any:
    """The validator of a checked ``output_schema``, or None without one."""
    if output_schema is None:
        return None
    return jsonschema.validators.validator_for(
        output_schema, default=jsonschema.Draft202012Validator
    )(output_schema)


def tool_result(
    tool_name: str,
    result: dict[str, Any],
    validator: Any,
    convert: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
) -> CallToolResult:
    """The result of a tool with an output schema: ``result``'s content
    (``convert``-ed, as every tool's is), ``is_error`` and structured
    content, checked with ``validator`` unless it is an error result, as in
    MCP; else ``ValueError`` naming the tool and the problem."""
    is_error = result.get("is_error", result.get("isError", False))
    payload = {"content": convert(result.get("content", [])), "isError": is_error}
    structured = result.get("structuredContent")
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
    returned = f"Tool '{tool_name}' returned"
    if structured is not None:
        if not isinstance(structured, dict):
            return (
                f"{returned} structuredContent that is not a JSON object "
                f"(got {type(structured).__name__})"
            )
        try:  # NaN would be written as null; a cycle or bytes fail in mcp
            json.dumps(structured, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as e:
            return f"{returned} structuredContent that is not JSON: {e}"
    if payload.get("isError"):
        return None
    if structured is None:
        return f"{returned} no structuredContent, which its output_schema requires"
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(structured))
    except Exception as e:  # a local $ref to nothing, say
        return f"Tool '{tool_name}': its output_schema cannot be checked: {e}"
    if error is None:
        return None
    return (
        f"{returned} structuredContent that does not match its output_schema: "
        f"{error.message} (at {error.json_path})"
    )
