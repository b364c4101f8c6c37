"""Validate SDK tool arguments with a validator built once per tool.

``jsonschema.validate`` checks the schema against its metaschema before it
looks at the instance. That check is most of the cost of an in-process tool
call, and its answer never changes for a given tool, so the validator is
built (and the schema checked) once, on the tool's first call, and kept.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from referencing import Registry
from referencing.exceptions import NoSuchResource


def _refuse_retrieval(uri: str) -> Any:
    # jsonschema would otherwise fetch a remote ``$ref`` with a blocking
    # request on every call, inside the event loop. A tool's schema has to
    # be self-contained; a reference outside it fails the call instead.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs field


_OFFLINE_REGISTRY: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def compile_validator(schema: dict[str, Any]) -> Any:
    """Build the validator ``jsonschema.validate`` would build for ``schema``.

    Same dialect choice and the same metaschema check, so a broken schema
    raises ``jsonschema.SchemaError`` exactly as ``jsonschema.validate``
    would; but references are only resolved within the schema itself.
    """
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, registry=_OFFLINE_REGISTRY)


def argument_error(validator: Any, arguments: dict[str, Any]) -> str | None:
    """The message ``jsonschema.validate`` would raise for ``arguments``, if any."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    return None if error is None else str(error.message)
