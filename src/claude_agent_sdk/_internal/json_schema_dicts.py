"""Tell a JSON Schema dict from the ``{name: type}`` shorthand of ``tool()``.

A dict is read as JSON Schema only when reading it as shorthand would make
the tool uncallable as its author wrote it, and it is a valid schema;
otherwise it is read as before (``{"title": "str"}`` stays one parameter).
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

_SCHEMA = (dict, bool)  # a subschema
_TEXT = (str,)
# JSON Schema 2020-12 keywords (and draft-07's ``definitions``) that can stand
# at the top of a tool's input schema, with the JSON types each one takes.
_KEYWORDS: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(["$schema", "$id", "$ref", "$anchor", "$comment"], _TEXT),
    **dict.fromkeys(["$dynamicRef", "$dynamicAnchor", "title"], _TEXT),
    **dict.fromkeys(["description"], _TEXT),
    **dict.fromkeys(["$defs", "definitions", "properties"], (dict,)),
    **dict.fromkeys(["patternProperties", "dependentRequired"], (dict,)),
    **dict.fromkeys(["dependentSchemas"], (dict,)),
    **dict.fromkeys(["additionalProperties", "unevaluatedProperties"], _SCHEMA),
    **dict.fromkeys(["propertyNames", "not", "if", "then", "else"], _SCHEMA),
    **dict.fromkeys(["required", "anyOf", "oneOf", "allOf", "enum"], (list,)),
    **dict.fromkeys(["examples"], (list,)),
    **dict.fromkeys(["minProperties", "maxProperties"], (int,)),
    **dict.fromkeys(["type", "const", "default"], (object,)),
}
_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def _valid(keyword: str, value: Any) -> bool:
    """Whether ``value`` is of the type ``keyword`` takes."""
    takes = _KEYWORDS.get(keyword)
    if takes is None or not any(isinstance(value, t) for t in takes):
        return False
    if keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        return bool(kinds) and all(k in _JSON_TYPES for k in kinds)
    if keyword == "required":
        return all(isinstance(name, str) for name in value)
    if keyword in ("anyOf", "oneOf", "allOf"):
        return bool(value) and all(isinstance(s, _SCHEMA) for s in value)
    return not (
        keyword in ("minProperties", "maxProperties") and isinstance(value, bool)
    )


def is_json_schema(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` is read as JSON Schema rather than shorthand.

    The old test (``type`` and ``properties`` present) is kept, so no schema
    it accepted changes. Otherwise the dict must be a valid schema whose
    shorthand reading could not be what its author meant (see the module
    docstring), with a top-level ``type``, if any, of ``"object"``: a tool's
    input is always an object, and mcp 2.x refuses to list anything else.
    """
    if isinstance(schema.get("type"), str) and "properties" in schema:
        return True
    return (
        schema.get("type", "object") == "object"
        and bool(schema)
        and schema.keys() <= _KEYWORDS.keys()  # shorthand names rarely are
        and all(_valid(key, value) for key, value in schema.items())
        and any(
            not isinstance(v, str) or k == "type" or (k == "$schema" and "://" in v)
            for k, v in schema.items()
        )
        and _is_json(schema)  # a Python type anywhere: shorthand, as before
    )


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


# Schemas already logged, kept so that no later dict can reuse one's id while
# its entry lasts; the oldest go first, so a process defining tools without
# end holds at most this many (one may then be logged again).
_WARNED_MAX = 256
_warned: dict[tuple[str, int], dict[str, Any]] = {}


def warn_non_object(tool_name: str, schema: dict[str, Any]) -> None:
    """Log, once per tool, a JSON Schema dict whose top-level ``type`` is
    not ``"object"``: it is served as the SDK always served it (as written
    with ``properties``, else as shorthand), never what its author meant."""
    kind = schema.get("type", "object")
    if kind == "object" or not _valid("type", kind):
        return
    if (tool_name, id(schema)) in _warned:
        return
    _warned[tool_name, id(schema)] = schema
    if len(_warned) > _WARNED_MAX:
        del _warned[next(iter(_warned))]
    if is_json_schema(schema):
        became = "it is served as written, and mcp 2.x refuses to list it"
    else:
        became = "it is read as {name: type} shorthand, with the parameters " + (
            ", ".join(map(repr, schema))
        )
    logger.warning(
        "Tool '%s': input_schema has the top-level type %r, but a tool's input "
        "is a JSON object; %s",
        tool_name,
        kind,
        became,
    )


def object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as a tool's input schema, which MCP requires to be an object.

    A schema without a top-level ``type`` (a bare ``$ref`` or ``anyOf``)
    gets ``"type": "object"``: tool arguments are always an object, and mcp
    2.x refuses a ``Tool`` whose input schema does not say so.
    """
    if "type" in schema:
        return schema
    return {"type": "object", **schema}
