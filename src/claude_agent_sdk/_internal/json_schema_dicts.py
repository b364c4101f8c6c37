"""Tell a JSON Schema dict from the ``{name: type}`` shorthand of ``tool()``.

Both are plain dicts. Requiring ``type`` and ``properties`` at the top level,
as the SDK used to, misreads common schemas as shorthand: ``{"type":
"object"}`` (a tool without arguments) became a tool requiring a string
parameter named ``type``, and a top-level ``anyOf`` or ``$ref`` became
parameters named after those keywords. Shorthand maps names to Python
types, while a schema's values are JSON, so the values tell them apart.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

# JSON Schema 2020-12 keywords (and draft-07's ``definitions``) that can
# stand at the top of a tool's input schema.
_SCHEMA_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$defs", "definitions", "$anchor",
        "$dynamicRef", "$dynamicAnchor", "$comment", "type", "properties",
        "required", "additionalProperties", "patternProperties",
        "propertyNames", "minProperties", "maxProperties",
        "unevaluatedProperties", "dependentRequired", "dependentSchemas",
        "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "enum",
        "const", "title", "description", "default", "examples",
    }
)  # fmt: skip

_JSON_VALUE_TYPES = (str, int, float, bool, type(None), dict, list)


def is_json_schema(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` is a JSON Schema rather than ``{name: type}`` shorthand.

    It is one when it names a JSON Schema keyword, every value is JSON and
    its top-level ``type``, if any, is ``"object"``. Shorthand values are
    types (``str``, ``list[int]``, ``Annotated[...]``), never JSON values, so
    a parameter that happens to be called ``type`` or ``required`` still
    reads as shorthand. The old test (``type`` and ``properties`` present) is
    kept, so no schema it accepted changes. A dict whose ``type`` is not an
    object is read as before (see ``warn_non_object``): a tool's input is
    always an object, and mcp 2.x refuses to list any other input schema.
    """
    if isinstance(schema.get("type"), str) and "properties" in schema:
        return True
    return (
        schema.get("type", "object") == "object"
        and bool(_SCHEMA_KEYWORDS.intersection(schema))
        and _all_json(schema)
    )


def _all_json(schema: dict[str, Any]) -> bool:
    return all(isinstance(value, _JSON_VALUE_TYPES) for value in schema.values())


def warn_non_object(tool_name: str, schema: dict[str, Any]) -> None:
    """Log a warning about a JSON Schema dict whose top-level ``type`` is
    not ``"object"``.

    Such a dict is served as the SDK always served it (as written when it
    has ``properties``, else read as shorthand), and that is never what its
    author meant, so the record says what the tool became. A log record,
    not ``warnings.warn``: a definition that worked before must keep
    working under any warnings filter (``-W error`` included).
    """
    kind = schema.get("type", "object")
    if kind == "object" or not _all_json(schema):
        return
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
