"""Validate SDK tool arguments with a validator built once per tool.

``jsonschema.validate`` checks the schema against its metaschema before it
looks at the instance. That check is most of the cost of an in-process tool
call, and its answer never changes for a given tool, so the validator is
built (and the schema checked) once, on the tool's first call, and kept.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012


class _Unfetched(dict[str, Any]):
    """Stands in for a document outside the tool's schema: it is never
    fetched, and every part of it (any JSON Pointer into it) accepts any
    value, as an empty schema does."""

    def __missing__(self, key: str) -> _Unfetched:
        return _Unfetched()


def _unfetched(uri: str) -> Resource[Any]:
    # jsonschema would otherwise fetch a remote ``$ref`` with a blocking
    # request on every call, inside the event loop (and fail the call when
    # it cannot). The tool keeps working; what the reference names is not
    # checked.
    return DRAFT202012.create_resource(_Unfetched())


OFFLINE_REGISTRY: Registry[Any] = Registry(retrieve=_unfetched)  # type: ignore[call-arg]
"""The SDK's one reference registry: it never fetches a document.

Every validator the SDK builds uses it, and so does the definition-time
reference walk (``schema_graph.SchemaGraph``), which reports a reference
that lands in a stand-in document as external.
"""


def compile_validator(schema: dict[str, Any]) -> Any:
    """Build the validator ``jsonschema.validate`` would build for ``schema``.

    Same dialect choice and the same metaschema check, so a broken schema
    raises ``jsonschema.SchemaError`` exactly as ``jsonschema.validate``
    would; but references are only resolved within the schema itself, and
    one to another document accepts any value there.
    """
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, registry=OFFLINE_REGISTRY)


def argument_error(validator: Any, arguments: dict[str, Any]) -> str | None:
    """The message ``jsonschema.validate`` would raise for ``arguments``, if any."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    return None if error is None else str(error.message)
