"""The faithful schema of Python types the one converter has no branch for.

``claude_agent_sdk._python_type_to_json_schema(py_type, faithful=True)`` (a
tool with ``strict=True`` or ``input_examples``) calls into this module for
what it would otherwise serve as ``{"type": "string"}``, and for each
TypedDict field, so that its messages name the tool and the parameter.
Every type is served the way the handler receives it: the CLI sends JSON, so
a tuple or set arrives as a list and a dict's keys as strings. A type with
no JSON Schema equivalent is served as ``{"type": "string"}``, as it always
has been, with a ``UserWarning`` naming it, so no definition that worked
before is refused.
"""

from __future__ import annotations

import collections.abc as abc
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, get_args, get_origin

if sys.version_info >= (3, 11):
    from typing import get_type_hints
else:  # 3.10's does not strip NotRequired markers
    from typing_extensions import get_type_hints

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
    """The faithful JSON Schema of ``py_type``, by the one converter.

    ``tool_name`` and ``parameter`` only name the type in warnings and errors.
    A type nested deeper than Python's recursion limit allows (about 980
    levels) raises a ``TypeError`` naming them rather than a bare
    ``RecursionError``; upstream's converter failed at the same depth.
    """
    from ... import _python_type_to_json_schema  # the package imports this module

    token = _WHERE.set((tool_name, parameter, ()))
    try:
        return _python_type_to_json_schema(py_type, faithful=True)
    except RecursionError:
        raise _too_deep(tool_name, parameter) from None
    finally:
        _WHERE.reset(token)


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
