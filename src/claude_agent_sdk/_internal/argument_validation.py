"""Validate SDK tool arguments as ``jsonschema.validate`` does, minus the
metaschema check on every call: it runs on a tool's first call and again
only when the schema has changed (``ToolValidator``). A ``$ref`` to another
document is never fetched: a local ``file:`` document is read once, and a
call that reaches any other is refused, naming the tool and the reference.
"""

from __future__ import annotations

import contextlib
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
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

logger = logging.getLogger(__name__)

_NOT_CHECKED = object()


class _NotFetchedError(Exception):
    """A reference to a document that is not fetched."""


def _same(a: Any, b: Any) -> bool:
    """``a == b`` with the same types throughout (``True`` is not ``1`` here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            _same(k, k2) and _same(v, v2)
            for (k, v), (k2, v2) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


class ToolValidator:
    """Validates one tool's arguments; raises ``jsonschema.SchemaError``, as
    ``jsonschema.validate`` does, while the schema is invalid. Each call gets
    a new validator of the same class and the same ``best_match`` error."""

    def __init__(self, tool_name: str, schema: dict[str, Any]) -> None:
        self.tool_name = tool_name
        self.schema = schema
        self._checked: Any = _NOT_CHECKED  # the schema as it last passed
        self._files: dict[str, Resource[Any]] = {}
        self._logged: set[str] = set()
        self._registry: Registry[Any] = Registry(retrieve=self._retrieve)  # type: ignore[call-arg]
        self._validator_class()

    def _validator_class(self) -> Any:
        cls = jsonschema.validators.validator_for(self.schema)
        try:
            unchanged = _same(self.schema, self._checked)
        except Exception:  # not comparable: checked on every call
            unchanged = False
        if not unchanged:
            self._checked = _NOT_CHECKED
            cls.check_schema(self.schema)
            with contextlib.suppress(Exception):  # not copyable: checked each call
                self._checked = copy.deepcopy(self.schema)
        return cls

    def iter_errors(self, instance: Any) -> Iterator[jsonschema.ValidationError]:
        cls = self._validator_class()
        return self._refusing(cls(self.schema, registry=self._registry), instance)

    def _refusing(self, validator: Any, instance: Any) -> Iterator[Any]:
        try:
            yield from validator.iter_errors(instance)
        except Unresolvable as e:
            cause: BaseException | None = e
            while cause is not None and not isinstance(cause, _NotFetchedError):
                cause = cause.__cause__
            if cause is None:
                raise
            raise ValueError(
                f"Tool '{self.tool_name}': these arguments cannot be checked: "
                f"$ref {cause.args[0]!r} names another document, which is "
                "not fetched"
            ) from None

    def _retrieve(self, uri: str) -> Resource[Any]:
        parts = urlsplit(uri)
        if parts.scheme == "file" and parts.netloc in ("", "localhost"):
            if uri not in self._files:  # read once; unreadable: each call fails
                with Path(url2pathname(parts.path)).open("rb") as file:
                    self._files[uri] = Resource.from_contents(
                        json.load(file), default_specification=DRAFT202012
                    )
            return self._files[uri]
        if uri not in self._logged:
            self._logged.add(uri)
            logger.warning(
                "Tool '%s': $ref %r names another document, which is not "
                "fetched; calls whose arguments it governs are refused (copy "
                "it into $defs and refer to it as '#/$defs/...')",
                self.tool_name,
                uri,
            )
        raise _NotFetchedError(uri)


def compile_validator(tool_name: str, schema: dict[str, Any]) -> ToolValidator:
    """The validator of ``tool_name``'s ``schema`` (``SchemaError`` if invalid)."""
    return ToolValidator(tool_name, schema)


def argument_error(validator: ToolValidator, arguments: dict[str, Any]) -> str | None:
    """The message ``jsonschema.validate`` would raise for ``arguments``, if any."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    return None if error is None else str(error.message)
