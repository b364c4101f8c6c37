"""Python types as faithful JSON Schema, for tools that opt in.

A tool with ``strict=True`` or ``input_examples`` gets what its types say
(``Literal``/``Enum`` as ``enum``, ``None`` as ``null``, formats, map values,
tuples, sets, ``NewType``); messages name the tool and the parameter. The
mappings are in docs/reference.md; a type with no JSON Schema equivalent is
served as a string with a ``UserWarning``, as upstream serves it.
"""

from __future__ import annotations

import collections.abc as abc
import sys
import types as builtin_types
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Union, get_args, get_origin

if sys.version_info >= (3, 11):
    from typing import get_type_hints, is_typeddict
else:  # 3.10's does not strip NotRequired markers
    from typing_extensions import get_type_hints, is_typeddict

Convert = Callable[[Any], dict[str, Any]]

_CONTAINERS: dict[Any, str] = {
    **dict.fromkeys((dict, abc.Mapping, abc.MutableMapping), "object"),
    **dict.fromkeys((list, tuple, abc.Sequence, abc.MutableSequence), "array"),
    **dict.fromkeys((abc.Iterable, abc.Collection), "array"),
    **dict.fromkeys((set, frozenset, abc.Set, abc.MutableSet), "set"),  # arrays
}

# (tool, parameter path, TypedDicts being converted) of the current conversion.
_WHERE: ContextVar[tuple[str | None, str | None, tuple[type, ...]]] = ContextVar(
    "type_schema_where", default=(None, None, ())
)


def type_to_schema(
    py_type: Any, *, tool_name: str | None = None, parameter: str | None = None
) -> dict[str, Any]:
    """The faithful JSON Schema of ``py_type``.

    ``tool_name`` and ``parameter`` only name the type in warnings and errors.
    A type nested deeper than Python's recursion limit allows (about 980
    levels) raises a ``TypeError`` naming them rather than a bare
    ``RecursionError``; upstream's converter failed at the same depth.
    """
    token = _WHERE.set((tool_name, parameter, ()))
    try:
        return faithful_schema(py_type)
    except RecursionError:
        raise _too_deep(tool_name, parameter) from None
    finally:
        _WHERE.reset(token)


def faithful_schema(py_type: Any) -> dict[str, Any]:
    """Upstream's converter with ``faithful=True`` (``claude_agent_sdk.
    _python_type_to_json_schema``), and every type it has no branch for
    (``more_schema``): what the handler receives, as JSON."""
    origin = get_origin(py_type)

    # NotRequired/Required/ReadOnly survive include_extras=True; unwrap them
    if getattr(origin, "_name", None) in ("NotRequired", "Required", "ReadOnly"):
        return faithful_schema(get_args(py_type)[0])

    if origin is Annotated:
        args = get_args(py_type)
        schema = faithful_schema(args[0])
        for meta in args[1:]:
            if isinstance(meta, str):
                schema["description"] = meta
                break
        return schema

    if py_type is str:
        return {"type": "string"}
    if py_type is int:
        return {"type": "integer"}
    if py_type is float:
        return {"type": "number"}
    if py_type is bool:
        return {"type": "boolean"}
    if (typed := _value_schema(py_type)) is not None:
        return typed

    origin = getattr(py_type, "__origin__", None)

    if origin is Union or isinstance(py_type, builtin_types.UnionType):
        args = py_type.__args__
        if len(args) == 1:
            return faithful_schema(args[0])
        return {"anyOf": [faithful_schema(a) for a in args]}

    if origin is list:
        item_args = getattr(py_type, "__args__", None)
        if item_args:
            items = faithful_schema(item_args[0])
            return {"type": "array", "items": items} if items else {"type": "array"}
        return {"type": "array"}
    if origin is dict:
        key_value: tuple[Any, ...] = getattr(py_type, "__args__", ())
        if len(key_value) == 2:  # JSON keys are str, whatever K is
            values = faithful_schema(key_value[1])
            if values:
                return {"type": "object", "additionalProperties": values}
        return {"type": "object"}

    if py_type is list:
        return {"type": "array"}
    if py_type is dict:
        return {"type": "object"}

    if is_typeddict(py_type):
        return _typeddict_schema(py_type)

    return more_schema(py_type, faithful_schema)  # tuples, sets, NewType, ...


def _typeddict_schema(td_class: type) -> dict[str, Any]:
    hints = typeddict_hints(td_class)  # named errors for self-containing, too deep
    properties = {
        field_name: field_schema(td_class, field_name, field_type, faithful_schema)
        for field_name, field_type in hints.items()
    }
    required_keys = getattr(td_class, "__required_keys__", set(properties.keys()))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required_keys:
        schema["required"] = sorted(required_keys)
    return schema


def _value_schema(py_type: Any) -> dict[str, Any] | None:
    """The schema of ``None``, ``Any``, a date, time or UUID, a ``Literal`` or
    an ``Enum`` (one of values JSON lacks stays a string: None): the upstream
    track's faithful mapping, which this converter extends."""
    from ... import _faithful_only_schema  # loaded: it is what imports us

    return _faithful_only_schema(py_type)


def typeddict_to_schema(
    td_class: type, *, tool_name: str | None = None
) -> dict[str, Any]:
    """The faithful schema of a TypedDict whose keys are the tool's parameters.
    A TypedDict that contains itself raises a ``TypeError`` naming it: its
    schema has no finite form without ``$defs``/``$ref``, which an author can
    write as a JSON Schema dict."""
    return type_to_schema(td_class, tool_name=tool_name)


def typeddict_hints(td_class: type) -> dict[str, Any]:
    """``td_class``'s field types, or a ``TypeError`` naming it when it
    contains itself or is nested too deeply."""
    tool, param, within = _WHERE.get()
    if td_class in within:
        raise TypeError(
            f"{_where(tool, param)} has type {td_class.__name__}, a TypedDict "
            "that contains itself, which has no finite schema (pass a JSON "
            "Schema dict with $defs/$ref instead)"
        )
    try:  # get_type_hints walks each annotation as deep as it goes
        return get_type_hints(td_class, include_extras=True)
    except RecursionError:
        what = f"TypedDict {td_class.__name__} with a field"
        raise _too_deep(tool, param, what) from None


def field_schema(
    td_class: type, field: str, field_type: Any, convert: Convert
) -> dict[str, Any]:
    """``convert(field_type)`` for ``field`` of ``td_class``, named by its path."""
    tool, param, within = _WHERE.get()
    path = f"{param}.{field}" if param else field
    with _within(tool, path, (*within, td_class)):
        try:
            return convert(field_type)
        except RecursionError:
            raise _too_deep(tool, path) from None


@contextmanager
def _within(
    tool: str | None, param: str | None, within: tuple[type, ...]
) -> Iterator[None]:
    token = _WHERE.set((tool, param, within))
    try:
        yield
    finally:
        _WHERE.reset(token)


def more_schema(py_type: Any, convert: Convert) -> dict[str, Any]:
    """The faithful schema of a type the converter has no branch for: a
    ``NewType`` as its supertype, tuples, sets and the abstract collections
    as arrays or objects; any other type a string, with a warning."""
    if hasattr(py_type, "__supertype__"):  # NewType
        return convert(py_type.__supertype__)
    origin, args = get_origin(py_type), get_args(py_type)
    container = origin or py_type
    kind = next((v for k, v in _CONTAINERS.items() if k is container), None)
    if kind == "object":
        schema: dict[str, Any] = {"type": "object"}
        if args:  # JSON keys are strings whatever K is; the handler gets str
            values = convert(args[-1])
            schema.update({"additionalProperties": values} if values else {})
        return schema
    if kind is None:
        return _fallback(py_type)
    schema = {"type": "array"}
    if container is tuple and hasattr(py_type, "__args__"):
        if args in ((), ((),)):  # tuple[()]; typing.Tuple[()] on 3.10
            return {"type": "array", "maxItems": 0}
        if not (len(args) == 2 and args[1] is Ellipsis):  # fixed length
            items = [convert(a) for a in args]
            return {
                **schema,
                "prefixItems": items,
                "items": False,
                "minItems": len(items),
                "maxItems": len(items),
            }
    item = convert(args[0]) if args else {}
    schema.update({"items": item} if item else {})
    if kind == "set":
        schema["uniqueItems"] = True
    return schema


def refuse_json_values_in_shorthand(tool_name: str, declared: dict[Any, Any]) -> None:
    """Refuse a strict tool's ``{name: type}`` shorthand holding a JSON value.

    Such a dict is read as shorthand because it is not JSON Schema (often a
    JSON Schema with a misspelled keyword: ``{"type": "object",
    "proprties": {...}}``), and each JSON value would be served as a string
    parameter (``type``, ``proprties``, ``required``) where the author meant
    a schema; strict mode would then hold the model to the wrong tool.
    """
    if declared.get("type", "object") != "object":
        return  # not an object: refused as a strict tool's root instead
    values = [
        (name, value)
        for name, value in declared.items()
        if value is None or isinstance(value, str | int | float | bool | dict | list)
    ]
    if not values:
        return
    listed = ", ".join(f"{name!r}: {_short(value)}" for name, value in values[:5])
    raise ValueError(
        f"Tool {tool_name!r} has strict=True but its input_schema is read as "
        "{name: type} shorthand, not as JSON Schema (a keyword in it is "
        "misspelled or misplaced, or a value is not what JSON Schema takes), "
        f"and gives parameters values that are not Python types ({listed}); "
        "each would be served as a string parameter. Give every parameter a "
        "Python type, or correct the JSON Schema"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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


def _fallback(py_type: Any) -> dict[str, Any]:
    """Upstream's schema for a type it does not know, now with a warning: the
    handler gets a string (or validation refuses the call), not that type."""
    tool, param, _ = _WHERE.get()
    warnings.warn(
        f"{_where(tool, param)} has type {_name(py_type)}, which has no JSON Schema "
        "equivalent; it is served as a string",
        UserWarning,
        stacklevel=2,
    )
    return {"type": "string"}
