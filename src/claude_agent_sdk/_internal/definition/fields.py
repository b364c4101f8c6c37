"""Checks for an SDK tool's ``strict``, ``input_examples`` and ``extra_fields``.

They are run when the tool is defined, so a mistake is an error naming the
tool and the field there, instead of a listing the CLI refuses or an API
error on some later turn. Values are kept as plain-JSON copies: what is
served is exactly what was given, and nothing is coerced or dropped.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema
import pydantic
from mcp.types import Tool

from ..argument_validation import argument_error, compile_validator
from .notices import notice_logger
from .pydantic_models import example_to_json, is_model_class

if sys.version_info >= (3, 11):
    from typing import is_typeddict
else:  # 3.10's does not recognize typing_extensions.TypedDict
    from typing_extensions import is_typeddict

# Top-level fields of a tools/list entry the SDK builds, and how to set each.
SDK_BUILT_TOOL_FIELDS = {
    "name": "the name argument",
    "description": "the description argument",
    "inputSchema": "the input_schema argument",
    "annotations": "the annotations argument",
    "_meta": "ToolAnnotations(maxResultSizeChars=...) or strict",
    "strict": "the strict argument",
    "input_examples": "the input_examples argument",
    "outputSchema": "the output_schema argument",
}

# Wire names of the fields the installed mcp's Tool model defines.
_MCP_TOOL_FIELDS = frozenset(
    field.alias or name for name, field in Tool.model_fields.items()
)

# Deeper values are refused with a message, before Python's recursion limit
# could turn the walk (or jsonschema's) into a bare RecursionError.
MAX_DEPTH = 64

_JSON_TYPES = "dict with str keys, list, str, int, float, bool or None"


def json_snapshot(value: Any, path: str, depth: int = 0) -> Any:
    """A plain-JSON copy of ``value``, or TypeError/ValueError naming ``path``.

    Only what JSON itself carries is accepted, so nothing is served as some
    encoder would coerce it: tuples, sets, NaN and infinities, non-str keys
    and other objects are refused. Subclasses of str, int and float (enums)
    are copied as the base type, as ``json.dumps`` writes them.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} is {value!r}, which JSON cannot represent")
        return float.__float__(value)
    if not isinstance(value, (dict, list)):
        raise TypeError(
            f"{path} must be JSON ({_JSON_TYPES}), got {type(value).__name__}"
        )
    if depth >= MAX_DEPTH:
        # Also what ends a container that holds itself. Named by the field it
        # sits in, not by a path as deep as the nesting.
        field = re.match(r"\w+(\[[^\]]*\])?", path)
        where = field.group(0) if field else path
        raise ValueError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, list):
        return [
            json_snapshot(item, f"{path}[{index}]", depth + 1)
            for index, item in enumerate(value)
        ]
    copy: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{path} has the key {key!r}; JSON object keys are str")
        copy[str.__str__(key)] = json_snapshot(item, f"{path}[{key!r}]", depth + 1)
    return copy


def check_tool_fields(
    tool_def: Any, input_schema: Callable[[], dict[str, Any]] | None
) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """Check ``tool_def``'s new fields; return copies of its examples and extra fields.

    ``input_schema`` builds the tool's served input schema, which is only
    needed (and only built) when there are examples to check against it;
    None when it cannot be built yet (``check_examples`` runs later).
    """
    strict = tool_def.strict
    if strict is not None and not isinstance(strict, bool):
        raise TypeError(
            f"Tool '{tool_def.name}': strict must be a bool or None, "
            f"got {type(strict).__name__}"
        )
    examples = tool_def.input_examples
    if isinstance(examples, list) and is_model_class(tool_def.input_schema):
        # Examples of a pydantic-model tool may be instances or dicts; each
        # is validated by the model and kept as the JSON it dumps to.
        examples = [
            example_to_json(
                tool_def.input_schema, example, tool_name=tool_def.name, index=index
            )
            for index, example in enumerate(examples)
        ]
    examples = _check_input_examples(tool_def.name, examples)
    if examples and input_schema is not None:
        _check_examples_match(tool_def.name, examples, input_schema())
    return examples, _check_extra_fields(tool_def.name, tool_def.extra_fields)


def check_examples(tool_def: Any, schema: dict[str, Any]) -> None:
    """Check ``tool_def``'s examples against its served input ``schema``."""
    _check_examples_match(tool_def.name, tool_def.input_examples, schema)


def _check_input_examples(name: str, examples: Any) -> list[dict[str, Any]] | None:
    if examples is None:
        return None
    where = f"Tool '{name}': input_examples"
    if not isinstance(examples, list):
        raise TypeError(
            f"{where} must be a list of JSON objects, got {type(examples).__name__}"
        )
    copies = []
    for index, example in enumerate(examples):
        if not isinstance(example, dict):
            raise TypeError(
                f"{where}[{index}] must be a JSON object (dict), "
                f"got {type(example).__name__}"
            )
        try:
            copies.append(json_snapshot(example, f"input_examples[{index}]"))
        except (TypeError, ValueError) as e:
            raise type(e)(f"Tool '{name}': {e}") from None
    return copies


def _check_examples_match(
    name: str, examples: list[dict[str, Any]], schema: dict[str, Any]
) -> None:
    where = f"Tool '{name}': input_examples"
    try:
        validator = compile_validator(name, schema)
    except jsonschema.SchemaError as e:
        raise ValueError(
            f"{where} cannot be checked: the input schema is not a valid "
            f"JSON Schema: {e.message}"
        ) from None
    for index, example in enumerate(examples):
        try:
            error = argument_error(validator, example)
        except Exception as e:  # an unresolvable $ref, say
            raise ValueError(f"{where}[{index}] cannot be checked: {e}") from None
        if error is not None:
            raise ValueError(
                f"{where}[{index}] does not match the input schema: {error}"
            )


def _check_extra_fields(name: str, fields: Any) -> dict[str, Any] | None:
    if fields is None:
        return None
    where = f"Tool '{name}': extra_fields"
    if not isinstance(fields, Mapping):
        raise TypeError(f"{where} must be a mapping, got {type(fields).__name__}")
    copies: dict[str, Any] = {}
    for key, value in fields.items():
        if not isinstance(key, str):
            raise TypeError(f"{where} keys must be str, got {key!r}")
        if key in SDK_BUILT_TOOL_FIELDS:
            raise ValueError(
                f"{where}[{key!r}] would replace a field the SDK builds; "
                f"use {SDK_BUILT_TOOL_FIELDS[key]} instead"
            )
        try:
            copies[str.__str__(key)] = json_snapshot(value, f"extra_fields[{key!r}]")
        except (TypeError, ValueError) as e:
            raise type(e)(f"Tool '{name}': {e}") from None
    _check_mcp_tool_fields(where, copies)
    return copies


def _check_mcp_tool_fields(where: str, fields: dict[str, Any]) -> None:
    """Hold the standard MCP Tool fields among ``fields`` to mcp's ``Tool``."""
    for key in sorted(fields.keys() & _MCP_TOOL_FIELDS):
        if fields[key] is None:
            # mcp leaves unset fields out; MCP clients refuse a null.
            raise ValueError(f"{where}[{key!r}] is None; leave the key out instead")
    try:
        # By wire name only: mcp 2.x also takes snake_case field names, which
        # would be served as unknown keys rather than as those fields.
        Tool.model_validate(
            {"name": "tool", "inputSchema": {"type": "object"}, **fields},
            by_name=False,
        )
    except pydantic.ValidationError as e:
        error = e.errors()[0]
        path = "".join(f"[{part!r}]" for part in error["loc"])
        raise ValueError(
            f"{where}{path} is not valid for the MCP Tool model: {error['msg']}"
        ) from None


def opted_in(tool_def: Any) -> bool:
    """Whether ``tool_def`` asked for checks (``strict=True`` or examples)."""
    return tool_def.strict is True or tool_def.input_examples is not None


def schema_from_types(declared: Any) -> bool:
    """Whether the SDK builds the schema of ``declared`` from Python types:
    a ``{name: type}`` dict (some value not JSON) or a TypedDict, a JSON type
    per parameter, which no schema check could find fault with."""
    if isinstance(declared, dict):
        return not all(
            isinstance(value, (str, int, float, bool, dict, list)) or value is None
            for value in declared.values()
        )
    return is_typeddict(declared)


logger = notice_logger(__name__)


def warn_duplicate_names(server_name: str, tools: list[Any]) -> None:
    """Log a warning once per name when two differing tools of a server share it.

    Both are listed and a call by that name reaches the last one's handler,
    as always; Claude Code offers the model one definition (the first), so
    when the two differ the model may be shown one tool and run another.
    """
    first: dict[str, Any] = {}
    warned: set[str] = set()
    for tool_def in tools:
        earlier = first.setdefault(tool_def.name, tool_def)
        if earlier is tool_def or tool_def.name in warned:
            continue
        differing = [
            field
            for field in (
                "description", "input_schema", "handler", "annotations",
                "strict", "input_examples", "extra_fields",
            )
            if not _same(getattr(earlier, field), getattr(tool_def, field))
        ]  # fmt: skip
        if differing:
            warned.add(tool_def.name)
            # A log record, never a warning (see notices.py).
            logger.warning(
                "SDK MCP server '%s' has two tools named '%s' that differ in "
                "%s: both are listed and calls reach the last one's handler, "
                "while Claude Code shows the model the first one's definition",
                server_name,
                tool_def.name,
                ", ".join(differing),
            )


def _same(a: Any, b: Any) -> bool:
    # Compared only to decide on a warning, which a value whose == fails
    # must not turn into an error.
    try:
        return a is b or bool(a == b)
    except Exception:
        return False
