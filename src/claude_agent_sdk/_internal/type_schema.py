"""JSON Schema (2020-12) for the Python types in a ``@tool`` input schema.

Every type is served the way the handler receives it: the CLI sends JSON, so
a tuple or set arrives as a list, an Enum as its member's value, a date or a
UUID as a string, and a dict's keys as strings. A type with no JSON Schema
equivalent is served as ``{"type": "string"}``, as it always has been, with a
``UserWarning`` naming it, so no definition that worked before is refused.
"""

import collections.abc as abc
import datetime
import enum
import math
import sys
import types
import uuid
import warnings
from typing import Annotated, Any, Literal, Union, get_args, get_origin

if sys.version_info >= (3, 11):
    from typing import get_type_hints, is_typeddict
else:
    # On 3.10, stdlib is_typeddict doesn't recognize typing_extensions.TypedDict
    # subclasses, and stdlib get_type_hints doesn't strip NotRequired markers.
    from typing_extensions import get_type_hints, is_typeddict

_FORMATS: dict[Any, str] = {
    datetime.datetime: "date-time",  # before date: a datetime is a date
    datetime.date: "date",
    datetime.time: "time",
    uuid.UUID: "uuid",
}
_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number"}
_SIMPLE.update({bool: "boolean", types.NoneType: "null", None: "null"})
_CONTAINERS: dict[Any, str] = {
    **dict.fromkeys((dict, abc.Mapping, abc.MutableMapping), "object"),
    **dict.fromkeys((list, tuple, abc.Sequence, abc.MutableSequence), "array"),
    **dict.fromkeys((abc.Iterable, abc.Collection), "array"),
    **dict.fromkeys((set, frozenset, abc.Set, abc.MutableSet), "set"),  # arrays
}


def type_to_schema(
    py_type: Any, *, tool_name: str | None = None, parameter: str | None = None
) -> dict[str, Any]:
    """Convert a Python type annotation to the JSON Schema of its values.

    ``tool_name`` and ``parameter`` only name the type in warnings and errors.
    A type nested deeper than Python's recursion limit allows (about 980
    levels) raises a ``TypeError`` naming them rather than a bare
    ``RecursionError``; upstream's converter failed at the same depth.
    """
    try:
        return _convert(py_type, (), tool_name, parameter)
    except RecursionError:
        raise _too_deep(tool_name, parameter) from None


def typeddict_to_schema(
    td_class: type, *, tool_name: str | None = None
) -> dict[str, Any]:
    """Convert a TypedDict class to the JSON Schema of an object; its keys
    are the tool's parameters. A TypedDict that contains itself raises a
    ``TypeError`` naming it: its schema has no finite form without
    ``$defs``/``$ref``, which an author can write as a JSON Schema dict."""
    return type_to_schema(td_class, tool_name=tool_name)


def _where(tool_name: str | None, parameter: str | None) -> str:
    """``Tool 'x': parameter 'y'``, for the start of a message."""
    tool = f"Tool {tool_name!r}" if tool_name else ""
    if not parameter:
        return tool or "A parameter"
    return f"{tool}: parameter {parameter!r}" if tool else f"Parameter {parameter!r}"


def _too_deep(
    tool_name: str | None, parameter: str | None, what: str = "a type"
) -> TypeError:
    return TypeError(
        f"{_where(tool_name, parameter)} has {what} nested too deeply to "
        "convert to JSON Schema (Python's recursion limit was reached)"
    )


def _name(py_type: Any) -> str:
    if isinstance(py_type, type) and not get_args(py_type):
        return py_type.__name__
    return repr(py_type)


def _fallback(py_type: Any, tool: str | None, param: str | None) -> dict[str, Any]:
    """Upstream's schema for a type it does not know, now with a warning: the
    handler gets a string (or validation refuses the call), not that type."""
    warnings.warn(
        f"{_where(tool, param)} has type {_name(py_type)}, which has no JSON Schema "
        "equivalent; it is served as a string",
        UserWarning,
        stacklevel=2,
    )
    return {"type": "string"}


def _lookup(table: dict[Any, str], py_type: Any) -> str | None:
    """``table[py_type]`` by identity: a type may be unhashable or deep."""
    return next((v for k, v in table.items() if k is py_type), None)


def _enum(values: Any) -> dict[str, Any] | None:
    """``enum`` of JSON scalars, typed when uniform; ``None`` if a value is
    not JSON (bytes, inf, a tuple), which keeps upstream's string schema."""
    kinds: set[str] = set()
    out: list[Any] = []
    for value in values:
        value = value.value if isinstance(value, enum.Enum) else value
        kind = _lookup(_SIMPLE, type(value))
        if kind is None or (kind == "number" and not math.isfinite(value)):
            return None
        kinds.add(kind)
        out.append(value)
    if not out:
        return None
    kinds = {"number"} if kinds == {"integer", "number"} else kinds
    return {"type": kinds.pop(), "enum": out} if len(kinds) == 1 else {"enum": out}


def _convert(
    py_type: Any, within: tuple[type, ...], tool: str | None, param: str | None
) -> dict[str, Any]:
    origin, args = get_origin(py_type), get_args(py_type)
    # NotRequired/Required/ReadOnly survive include_extras=True; unwrap them
    if getattr(origin, "_name", None) in ("NotRequired", "Required", "ReadOnly"):
        return _convert(args[0], within, tool, param)
    if origin is Annotated:  # the first string in the metadata describes it
        described = _convert(args[0], within, tool, param)
        for meta in args[1:]:
            if isinstance(meta, str):
                described["description"] = meta
                break
        return described
    if (json_type := _lookup(_SIMPLE, py_type)) is not None:
        return {"type": json_type}
    if (string_format := _lookup(_FORMATS, py_type)) is not None:
        return {"type": "string", "format": string_format}
    if py_type is Any:
        return {}
    if hasattr(py_type, "__supertype__"):  # NewType
        return _convert(py_type.__supertype__, within, tool, param)
    if origin is Union or isinstance(py_type, types.UnionType):
        return {"anyOf": [_convert(a, within, tool, param) for a in args]}
    # A Flag's combined values are no enum of its members: upstream's string
    if origin is Literal or (
        isinstance(py_type, enum.EnumMeta) and not issubclass(py_type, enum.Flag)
    ):
        return _enum(args if origin is Literal else py_type) or _fallback(
            py_type, tool, param
        )
    container = origin or py_type
    kind = _lookup(_CONTAINERS, container)
    if kind == "object":
        schema: dict[str, Any] = {"type": "object"}
        if args:  # JSON keys are strings whatever K is; the handler gets str
            values = _convert(args[-1], within, tool, param)
            schema.update({"additionalProperties": values} if values else {})
        return schema
    if kind is not None:  # an array
        schema = {"type": "array"}
        if container is tuple and hasattr(py_type, "__args__"):
            if args in ((), ((),)):  # tuple[()]; typing.Tuple[()] on 3.10
                return {"type": "array", "maxItems": 0}
            if not (len(args) == 2 and args[1] is Ellipsis):  # fixed length
                items = [_convert(a, within, tool, param) for a in args]
                return {
                    **schema,
                    "prefixItems": items,
                    "items": False,
                    "minItems": len(items),
                    "maxItems": len(items),
                }
        item = _convert(args[0], within, tool, param) if args else {}
        schema.update({"items": item} if item else {})
        if kind == "set":
            schema["uniqueItems"] = True
        return schema
    if is_typeddict(py_type):
        return _typeddict(py_type, within, tool, param)
    return _fallback(py_type, tool, param)  # str/ForwardRef too, as upstream


def _typeddict(
    td_class: type, within: tuple[type, ...], tool: str | None, param: str | None
) -> dict[str, Any]:
    if td_class in within:
        raise TypeError(
            f"{_where(tool, param)} has type {td_class.__name__}, a TypedDict "
            "that contains itself, which has no finite schema (pass a JSON "
            "Schema dict with $defs/$ref instead)"
        )
    try:  # get_type_hints walks each annotation as deep as it goes
        hints = get_type_hints(td_class, include_extras=True)
    except RecursionError:
        what = f"TypedDict {td_class.__name__} with a field"
        raise _too_deep(tool, param, what) from None
    properties: dict[str, Any] = {}
    for field, field_type in hints.items():
        path = f"{param}.{field}" if param else field
        try:
            properties[field] = _convert(field_type, (*within, td_class), tool, path)
        except RecursionError:
            raise _too_deep(tool, path) from None
    required = getattr(td_class, "__required_keys__", set(properties))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(required)
    return schema
