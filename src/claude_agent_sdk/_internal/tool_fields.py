"""Definition-time checks of a tool's new fields, naming the tool and the field."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema
from mcp.types import Tool

# Top-level fields of a tools/list entry the SDK builds, and how to set each.
SDK_BUILT_TOOL_FIELDS = {
    "name": "the name argument",
    "description": "the description argument",
    "inputSchema": "the input_schema argument",
    "annotations": "the annotations argument",
    "_meta": "ToolAnnotations(maxResultSizeChars=...)",
    "strict": "the strict argument",
    "input_examples": "the input_examples argument",
    "outputSchema": "the output_schema argument",
}
_TOOL_FIELDS = {f.alias or n for n, f in Tool.model_fields.items()}  # mcp's own


def _json(value: Any, where: str) -> Any:  # no NaN, infinity, set, ...
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise type(e)(f"{where} is not JSON: {e}") from None


def check_tool_fields(
    tool_def: Any, input_schema: Callable[[], dict[str, Any]]
) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """Check ``tool_def``'s new fields; return JSON copies of its examples and
    extra fields."""
    name, strict, examples = tool_def.name, tool_def.strict, tool_def.input_examples
    if strict is not None and not isinstance(strict, bool):
        got = type(strict).__name__
        raise TypeError(f"Tool '{name}': strict must be a bool or None, got {got}")
    where = f"Tool '{name}': input_examples"
    if examples is not None and not isinstance(examples, list):
        got = type(examples).__name__
        raise TypeError(f"{where} must be a list of JSON objects, got {got}")
    copies = []
    for index, example in enumerate(examples or ()):
        if not isinstance(example, dict):
            got = type(example).__name__
            raise TypeError(f"{where}[{index}] must be a JSON object (dict), got {got}")
        try:  # no NaN, infinity, set, ...
            copies.append(json.loads(json.dumps(example, allow_nan=False)))
        except (TypeError, ValueError) as e:
            raise type(e)(f"{where}[{index}] is not JSON: {e}") from None
    if copies:  # checked as tools/call checks arguments, but offline
        schema = input_schema()
        try:
            if refs := re.findall(r'"\$ref": "([^#"][^"]*)"', json.dumps(schema)):
                raise ValueError(f"$ref {refs[0]!r} names a document not fetched")
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            errors = [cls(schema).iter_errors(example) for example in copies]
            found = [jsonschema.exceptions.best_match(e) for e in errors]
        except Exception as e:  # an invalid schema, an unknown type, ...
            raise ValueError(f"{where} cannot be checked: {e}") from None
        for index, error in enumerate(found):
            if error is not None:
                problem = f"does not match the input schema: {error.message}"
                raise ValueError(f"{where}[{index}] {problem}")
    fields, where = tool_def.extra_fields, f"Tool '{name}': extra_fields"
    if not isinstance(fields, (Mapping, type(None))):
        raise TypeError(f"{where} must be a mapping, got {type(fields).__name__}")
    for key, value in (fields or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"{where} keys must be str, got {key!r}")
        if key in SDK_BUILT_TOOL_FIELDS:
            raise ValueError(
                f"{where}[{key!r}] would replace a field the SDK builds; "
                f"use {SDK_BUILT_TOOL_FIELDS[key]} instead"
            )
        if value is None:  # MCP clients refuse a null Tool field
            raise ValueError(f"{where}[{key!r}] is None; leave the key out instead")
    if fields is not None:
        fields = {k: _json(v, f"{where}[{k!r}]") for k, v in fields.items()}
        known = {k: fields[k] for k in fields.keys() & _TOOL_FIELDS}
        try:
            Tool.model_validate({"name": name, "inputSchema": {}, **known})
        except ValueError as e:  # pydantic's ValidationError
            error = e.errors()[0]  # type: ignore[attr-defined]
            field, problem = error["loc"][0], error["msg"]
            raise ValueError(
                f"{where}[{field!r}] is not valid for the MCP Tool model: {problem}"
            ) from None
    return None if examples is None else copies, fields
