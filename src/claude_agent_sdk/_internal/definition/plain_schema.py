"""The one-walk check that most tool schemas pass, without loading the rest.

``plainly_valid`` answers, in one walk over a schema's keywords, whether it
surely passes its metaschema (and, with ``clean``, whether
``schema_checks.find_schema_problems`` would find nothing). It imports no
more than ``math``, so a server of plain tools whose schemas it vouches for
answers its first ``tools/list`` without loading ``schema_checks``,
``schema_graph`` or ``referencing`` (``hooks.first_use_schema_checks``).
"""

from __future__ import annotations

import math
from typing import Any

MAX_SCHEMA_DEPTH = 128
"""Deepest JSON nesting (objects and arrays) accepted in a tool's schema.

jsonschema checks a schema against its metaschema recursively, spending
several Python frames per level; at the default recursion limit it fails
between 160 and 200 levels. 128 leaves room for the caller's own stack.
"""

# Dialects in which, without an "$id" or anchor, references are plain JSON
# Pointers and the common keywords take the values draft 2020-12 gives them.
PLAIN_DIALECTS = frozenset(
    {
        f"{scheme}://json-schema.org/{draft}{tail}"
        for scheme in ("http", "https")
        for draft in ("draft-06/schema", "draft-07/schema", "draft/2019-09/schema",
                      "draft/2020-12/schema")
        for tail in ("", "#")
    }
)  # fmt: skip


# Every keyword a JSON Schema 2020-12 vocabulary defines (core, applicator,
# unevaluated, validation, meta-data, format annotation, content), and those
# of earlier drafts strict mode's rules name. With the ``x-`` extensions (the
# annotations the SDK documents, docs/strict-mode.md), nothing else is a
# keyword: in a strict schema another key is refused as a likely typo.
JSON_SCHEMA_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor",
        "$vocabulary", "$comment", "$defs", "prefixItems", "items", "contains",
        "additionalProperties", "properties", "patternProperties",
        "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf",
        "oneOf", "not", "unevaluatedItems", "unevaluatedProperties", "type",
        "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
        "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties",
        "minProperties", "required", "dependentRequired", "title", "description",
        "default", "deprecated", "readOnly", "writeOnly", "examples", "format",
        "contentEncoding", "contentMediaType", "contentSchema", "definitions",
        "dependencies", "additionalItems", "$recursiveRef", "$recursiveAnchor",
    }
)  # fmt: skip
EXTENSION_PREFIX = "x-"
"""Keys starting with it are annotations (OpenAPI's vendor extensions)."""


def known_keyword(key: Any) -> bool:
    """Whether ``key`` is a JSON Schema keyword or an ``x-`` extension."""
    return key in JSON_SCHEMA_KEYWORDS or (
        isinstance(key, str) and key.startswith(EXTENSION_PREFIX)
    )


def _distance(a: str, b: str, limit: int) -> int:
    """Edits (insertion, deletion, substitution, swap of neighbours) from
    ``a`` to ``b``, or ``limit + 1`` when there are more than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], previous2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        previous2, previous = previous, row
    return previous[-1]


def nearest_keyword(key: Any) -> str | None:
    """The known keyword ``key`` is one or two edits from (one for a key of
    four characters or fewer, so that short names are not all "typos"),
    the first in alphabetical order among the nearest; None if none is."""
    if not isinstance(key, str) or known_keyword(key) or not key:
        return None
    limit = 1 if len(key) <= 4 else 2
    best: tuple[int, str] | None = None
    for keyword in JSON_SCHEMA_KEYWORDS:
        found = _distance(key, keyword, limit)
        if found <= limit and (best is None or (found, keyword) < best):
            best = (found, keyword)
    if best is None:  # a case slip: "AnyOf", "maxlength"
        folded = key.casefold()
        for keyword in sorted(JSON_SCHEMA_KEYWORDS):
            if keyword.casefold() == folded:
                return keyword
    return None if best is None else best[1]


_SIMPLE_TYPES = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)

# What each keyword the walk knows takes, so that a key costs one lookup.
(_SUBSCHEMA, _SCHEMA_MAP, _SCHEMA_LIST, _PREFIX_ITEMS, _TYPE, _REQUIRED, _COUNT,
 _NUMBER, _MULTIPLE_OF, _STRING, _UNCLEAN_STRING, _BOOLEAN, _DIALECT, _FULL_CHECK,
 _DATA_LIST) = range(15)  # fmt: skip
_KINDS: dict[str, int] = {
    **dict.fromkeys(
        ["additionalProperties", "items", "not", "if", "then", "else", "contains",
         "propertyNames", "unevaluatedItems", "unevaluatedProperties",
         "contentSchema"],
        _SUBSCHEMA,
    ),
    **dict.fromkeys(
        ["properties", "patternProperties", "$defs", "definitions",
         "dependentSchemas"],
        _SCHEMA_MAP,
    ),
    **dict.fromkeys(["allOf", "anyOf", "oneOf"], _SCHEMA_LIST),  # non-empty
    "prefixItems": _PREFIX_ITEMS,
    "type": _TYPE,
    "required": _REQUIRED,
    **dict.fromkeys(
        ["minLength", "maxLength", "minItems", "maxItems", "minProperties",
         "maxProperties", "minContains", "maxContains"],
        _COUNT,
    ),
    **dict.fromkeys(
        ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], _NUMBER
    ),
    "multipleOf": _MULTIPLE_OF,
    **dict.fromkeys(
        ["title", "description", "format", "$comment", "contentMediaType",
         "contentEncoding"],
        _STRING,
    ),
    **dict.fromkeys(["pattern", "$ref"], _UNCLEAN_STRING),  # checked in full
    **dict.fromkeys(["uniqueItems", "deprecated", "readOnly", "writeOnly"], _BOOLEAN),
    "$schema": _DIALECT,
    **dict.fromkeys(["dependencies", "dependentRequired"], _FULL_CHECK),
    **dict.fromkeys(["enum", "examples"], _DATA_LIST),
}  # fmt: skip
# Anything else is an annotation (any value) or, starting with "$", left to
# the full check; "default" and "const" are data.


def plainly_valid(schema: Any, *, clean: bool = False) -> bool:
    """Whether ``schema`` surely passes the draft 2020-12 metaschema.

    One walk over the keywords most schemas use, each value of the type its
    keyword takes; anything else (``$schema``, ``$id``, ``items`` as a list,
    a count written as ``1.0``, ...) answers False and gets the full
    metaschema check, which is what keeps this conservative. Keywords the
    metaschema does not name are annotations it accepts with any value. A
    root ``$schema`` must be one of ``PLAIN_DIALECTS``, whose metaschemas
    accept at least what this walk does.

    With ``clean``, also whether ``find_schema_problems`` would find
    nothing: no reference, no ``pattern``, nothing nested deeper than half
    ``MAX_SCHEMA_DEPTH``, no non-finite number (data under ``enum``,
    ``const``, ``default``, ``examples`` and unknown keywords included). Most
    schemas are, and are then checked in this one walk.
    """
    stack: list[tuple[Any, int]] = [(schema, 0)]
    deepest = MAX_SCHEMA_DEPTH // 2
    kinds = _KINDS
    while stack:
        value, depth = stack.pop()
        if isinstance(value, bool):
            continue
        if not isinstance(value, dict) or depth > deepest:
            return False
        inner = depth + 1
        for key, item in value.items():
            kind = kinds.get(key)  # the common keywords first
            if kind is None:
                if key.startswith("$"):
                    return False  # the full check decides
                if clean and key not in JSON_SCHEMA_KEYWORDS and nearest_keyword(key):
                    return False  # a likely typo: the full check notices it
                if clean and not _plain_data(item, inner, deepest):
                    return False  # default, const, annotations
            elif kind == _SCHEMA_MAP:
                if not isinstance(item, dict) or (clean and key == "patternProperties"):
                    return False
                below = inner + 1
                for sub in item.values():
                    stack.append((sub, below))
            elif kind == _TYPE:
                if isinstance(item, str):
                    if item not in _SIMPLE_TYPES:
                        return False
                elif not (
                    isinstance(item, list)
                    and item
                    and all(isinstance(t, str) and t in _SIMPLE_TYPES for t in item)
                    and len(set(item)) == len(item)
                ):
                    return False
            elif kind == _STRING:
                if not isinstance(item, str):
                    return False
            elif kind == _REQUIRED:
                if not (
                    isinstance(item, list)
                    and all(isinstance(name, str) for name in item)
                    and len(set(item)) == len(item)
                ):
                    return False
            elif kind == _SUBSCHEMA:
                stack.append((item, inner))
            elif kind in (_NUMBER, _MULTIPLE_OF):
                if (
                    isinstance(item, bool)
                    or not isinstance(item, int | float)
                    or (clean and not math.isfinite(item))
                    or (kind == _MULTIPLE_OF and not item > 0)
                ):
                    return False
            elif kind == _COUNT:
                if not (type(item) is int and item >= 0):
                    return False
            elif kind in (_SCHEMA_LIST, _PREFIX_ITEMS):
                if not isinstance(item, list) or (not item and kind == _SCHEMA_LIST):
                    return False
                below = inner + 1
                for sub in item:
                    stack.append((sub, below))
            elif kind == _DATA_LIST:
                if not isinstance(item, list) or (
                    clean and not _plain_data(item, inner, deepest)
                ):
                    return False
            elif kind == _UNCLEAN_STRING:
                if clean or not isinstance(item, str):
                    return False
            elif kind == _BOOLEAN:
                if not isinstance(item, bool):
                    return False
            elif kind == _DIALECT:
                if depth or not (isinstance(item, str) and item in PLAIN_DIALECTS):
                    return False  # a nested "$schema": the full check decides
            else:  # _FULL_CHECK
                return False
    return True


def _plain_data(value: Any, depth: int, deepest: int) -> bool:
    """Whether JSON data holds only finite numbers, within ``deepest`` levels."""
    if isinstance(value, str | bool | int) or value is None:
        return True
    stack = [(value, depth)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                return False
        elif isinstance(value, dict | list):
            if depth > deepest:
                return False
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return True
