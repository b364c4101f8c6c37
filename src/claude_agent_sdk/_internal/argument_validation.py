"""Validate SDK tool arguments with a validator kept per tool.

``jsonschema.validate`` checks the schema against its metaschema before it
looks at the instance. That check is most of the cost of an in-process tool
call, and its answer only changes when the schema does, so each tool's
validator is built (and the schema checked) on its first call and kept while
the schema compares equal to a copy taken then: a schema dict changed in
place is checked and enforced as changed on the next call, as it would be
by ``jsonschema.validate``.

``jsonschema.validate`` fetches a ``$ref`` to another document with a
blocking request inside the event loop, on every call. Here a local
``file:`` document is read once, on the first call that reaches it, and
enforced as ``jsonschema.validate`` enforced it; any other document
(``https:``, a relative URI) is never fetched: the part of the arguments it
governs is accepted unchecked, and a warning is logged once per tool and
reference.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

logger = logging.getLogger(__name__)


class _Unfetched(dict[str, Any]):
    """Stands in for a document outside the tool's schema: every part of it
    (any JSON Pointer into it) accepts any value, as an empty schema does."""

    def __missing__(self, key: str) -> _Unfetched:
        return _Unfetched()


class ToolValidator:
    """The validator ``jsonschema.validate`` would build for a tool's schema.

    Same dialect choice and the same metaschema check, so a broken schema
    raises ``jsonschema.SchemaError`` exactly as ``jsonschema.validate``
    would; rebuilt when the schema no longer equals the copy it was built
    from.
    """

    def __init__(self, tool_name: str, schema: dict[str, Any]) -> None:
        self._tool_name = tool_name
        self._schema = schema
        self._not_fetched: set[str] = set()
        self._files: dict[str, Resource[Any] | None] = {}  # None: unreadable
        self._registry: Registry[Any] = Registry(retrieve=self._retrieve)  # type: ignore[call-arg]
        self._snapshot: Any = None
        self._validator: Any = None
        self._build()

    def _build(self) -> None:
        snapshot: Any
        try:
            snapshot = copy.deepcopy(self._schema)
        except Exception:  # not copyable: rebuilt on every call, as before
            snapshot = object()
        validator_class = jsonschema.validators.validator_for(self._schema)
        validator_class.check_schema(self._schema)
        self._validator = validator_class(self._schema, registry=self._registry)
        self._snapshot = snapshot

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        try:
            unchanged = bool(self._schema == self._snapshot)
        except Exception:
            unchanged = False
        if not unchanged:
            self._build()
        errors: Iterator[Any] = self._validator.iter_errors(instance)
        return errors

    def _retrieve(self, uri: str) -> Resource[Any]:
        parts = urlsplit(uri)
        if parts.scheme == "file" and parts.netloc in ("", "localhost"):
            return self._read(uri, url2pathname(parts.path))
        if uri not in self._not_fetched:
            self._not_fetched.add(uri)
            logger.warning(
                "Tool '%s': $ref %r names another document, which is not "
                "fetched; the arguments it governs are not checked",
                self._tool_name,
                uri,
            )
        return DRAFT202012.create_resource(_Unfetched())

    def _read(self, uri: str, path: str) -> Resource[Any]:
        """A local file's schema, read once (``jsonschema.validate`` read it
        on every call); one that cannot be read fails each call that
        reaches it, as it did there."""
        if uri not in self._files:
            self._files[uri] = None
            with Path(path).open("rb") as file:
                self._files[uri] = Resource.from_contents(
                    json.load(file), default_specification=DRAFT202012
                )
        resource = self._files[uri]
        if resource is None:
            raise LookupError(f"{uri} could not be read")
        return resource


def compile_validator(tool_name: str, schema: dict[str, Any]) -> ToolValidator:
    """The validator of ``tool_name``'s ``schema`` (``SchemaError`` if broken)."""
    return ToolValidator(tool_name, schema)


def argument_error(validator: ToolValidator, arguments: dict[str, Any]) -> str | None:
    """The message ``jsonschema.validate`` would raise for ``arguments``, if any."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    return None if error is None else str(error.message)
