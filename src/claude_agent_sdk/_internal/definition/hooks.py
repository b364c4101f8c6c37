"""The door from upstream's code into the fork track's definition pipeline.

``claude_agent_sdk/__init__.py`` calls into this module, once per place the
fork acts on an SDK MCP tool: its definition (``define``), its input schema
(``input_schema``), its ``_meta`` (``meta``), and its server's listing and
calls (``ToolServer``); upstream's MCP bridge, as it awaits a server's
answer (``answered``). Each returns what upstream's code then uses as its
own; a tool that uses none of the fork's arguments gets upstream's result.
"""

from __future__ import annotations

import contextlib
import sys
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..argument_validation import argument_error, compile_validator
from ..json_schema_dicts import is_json_schema, object_schema, warn_non_object
from ..relay.meta_strict import note_listed_tools
from ..tool_results import check_output_schema
from .fields import (
    check_examples,
    check_tool_fields,
    opted_in,
    schema_from_types,
    warn_duplicate_names,
)
from .pydantic_models import (
    call_with_model,
    is_model_class,
    model_input_schema,
    warn_unknown_schema_class,
)
from .pydantic_models import (
    typed_tool as typed_tool,  # claude_agent_sdk.tool's decorator
)
from .type_schema import (
    refuse_json_values_in_shorthand,
    type_to_schema,
    typeddict_to_schema,
)

if sys.version_info >= (3, 11):
    from typing import is_typeddict
else:  # 3.10's does not recognize typing_extensions.TypedDict
    from typing_extensions import is_typeddict

BuildSchema = Callable[[Any], dict[str, Any]]
"""``claude_agent_sdk._build_input_schema``: a tool's declared input schema
as JSON Schema (upstream's conversion, or ``input_schema``'s)."""


def define(tool_def: Any, build_input_schema: BuildSchema) -> bool:
    """Check ``tool_def``'s new fields where it is defined, naming the tool and
    the field; it keeps plain-JSON copies of what it was given. The input
    schema of a tool that opted in to checks is built and checked here too,
    unless it names a type defined later; any other tool's is built with its
    server, as it always was. Returns True: these checks replace upstream's.
    """
    if (
        tool_def.strict is None
        and tool_def.input_examples is None
        and tool_def.extra_fields is None
        and tool_def.output_schema is None
    ):
        return True  # none of the new fields: nothing to check or copy
    schema: dict[str, Any] | None = None
    if opted_in(tool_def):
        # Loaded with the first tool that opted in: a plain tool's start-up
        # never imports the schema checks.
        from .schema_checks import served_input_schema

        try:
            schema = served_input_schema(tool_def, build_input_schema(tool_def))
        except NameError:
            pass  # checked when its server is built
        else:
            tool_def._served = (tool_def.input_schema, schema)
    tool_def.input_examples, tool_def.extra_fields = check_tool_fields(
        tool_def,
        None if schema is None else (lambda: enforced_input_schema(tool_def, schema)),
    )
    tool_def.output_schema = check_output_schema(tool_def.name, tool_def.output_schema)
    if tool_def.output_schema is not None:  # every result is checked against it
        from .schema_checks import check_input_schema

        check_input_schema(
            tool_def.name, tool_def.output_schema, opted_in=True, field="output_schema"
        )
    return True


def input_schema(tool_def: Any) -> dict[str, Any] | None:
    """The JSON Schema of ``tool_def``'s declared input schema, or None for
    upstream's. A tool that asks for strict mode or examples gets a schema
    that keeps what its Python types say (enum, null, formats, map values);
    any other tool is listed exactly as before. A pydantic model is listed
    with the model's JSON Schema.
    """
    declared, name = tool_def.input_schema, tool_def.name
    if not opted_in(tool_def):
        if is_model_class(declared):
            return model_input_schema(declared, tool_name=name, strict=False)
        if not isinstance(declared, dict) and not is_typeddict(declared):
            warn_unknown_schema_class(name, declared)
        return None
    if isinstance(declared, dict):
        kind = declared.get("type", "object")
        # (A strict tool's root is held to strict mode's rules instead.)
        examples_only = tool_def.strict is not True
        if examples_only and isinstance(kind, (str, list)) and kind != "object":
            raise ValueError(
                f"Tool '{name}': input_schema has the top-level type "
                f"{kind!r}; a tool with input_examples needs an object schema, "
                "as a tool's input is a JSON object"
            )
        warn_non_object(name, declared)
        if is_json_schema(declared):
            return object_schema(declared)
        if tool_def.strict is True:
            refuse_json_values_in_shorthand(name, declared)
        properties = {
            param_name: type_to_schema(param_type, tool_name=name, parameter=param_name)
            for param_name, param_type in declared.items()
        }
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties.keys()),
        }
    if is_typeddict(declared):
        return typeddict_to_schema(declared, tool_name=name)
    if is_model_class(declared):
        return model_input_schema(
            declared, tool_name=name, strict=tool_def.strict is True
        )
    warn_unknown_schema_class(name, declared)
    return None


def meta(tool_def: Any) -> dict[str, Any] | None:
    """The ``_meta`` of ``tool_def``'s ``tools/list`` entry when it sets
    ``strict``, or None for upstream's: ``anthropic/strict``, the key proposed
    to Claude Code for strict MCP tools, next to the top-level field, so a
    client may read either."""
    if tool_def.strict is None:
        return None
    max_size = getattr(tool_def.annotations, "maxResultSizeChars", None)
    listed: dict[str, Any] = {}
    if max_size is not None:
        listed["anthropic/maxResultSizeChars"] = max_size
    listed["anthropic/strict"] = tool_def.strict
    return listed


def _new_fields(tool_def: Any) -> bool:
    """Whether ``tool_def`` uses ``strict``, ``input_examples`` or ``extra_fields``."""
    return (
        tool_def.strict is not None
        or tool_def.input_examples is not None
        or tool_def.extra_fields is not None
    )


def enforced_input_schema(tool_def: Any, served: dict[str, Any]) -> dict[str, Any]:
    """The schema ``tool_def``'s calls are validated against: ``served``, or
    for a strict tool the author's schema with every constraint (strict
    mode's modules are loaded with the first strict tool)."""
    if tool_def.strict is not True:
        return served
    from ..strict.transform import enforced_input_schema as strict_enforced

    return strict_enforced(tool_def, served)


def _own_schema(tool_def: Any, build_input_schema: BuildSchema) -> dict[str, Any]:
    """The input schema ``tool_def`` is listed with, checked once if it opted
    in; any other tool's checks wait for its server's first use
    (``first_use_schema_checks``)."""
    served = getattr(tool_def, "_served", None)
    if served is not None and served[0] is tool_def.input_schema:
        return served[1]  # type: ignore[no-any-return]
    if not opted_in(tool_def):
        return build_input_schema(tool_def)
    from .schema_checks import served_input_schema

    schema = served_input_schema(tool_def, build_input_schema(tool_def))
    if tool_def.input_examples:
        check_examples(tool_def, enforced_input_schema(tool_def, schema))
    return schema


def first_use_schema_checks(
    tools: list[Any], schemas: list[dict[str, Any]]
) -> Callable[[], None]:
    """The input-schema checks of the ``tools`` that did not opt in, run once.

    For such a tool the checks only log notices (``schema_checks``), so a
    server's start-up does not pay for them: the returned function is called
    before each ``tools/call`` runs (``ToolServer.call``) and before each
    ``tools/list`` answer is awaited in the SDK's MCP bridge (``answered``),
    and the first call checks each tool's schema (``schemas[i]`` is
    ``tools[i]``'s) while later ones return at once. A tool that opted in
    was checked when it was defined; a schema built from Python types has
    nothing to check, so a server of such tools never loads the checks.
    """
    pending = [list(zip(tools, schemas, strict=True))]

    def check_once() -> None:
        if not pending:
            return
        try:
            unchecked = pending.pop()
        except IndexError:  # taken by a call on another thread
            return
        unchecked = [
            (tool_def, schema)
            for tool_def, schema in unchecked
            if not (opted_in(tool_def) or schema_from_types(tool_def.input_schema))
        ]
        if not unchecked:
            return
        from .plain_schema import plainly_valid

        for tool_def, schema in unchecked:
            if plainly_valid(schema, clean=True):
                continue  # nothing the checks could find: they stay unloaded
            from .schema_checks import served_input_schema

            served_input_schema(tool_def, schema)

    return check_once


class ToolServer:
    """The fork's part of one ``create_sdk_mcp_server`` call: each tool's own
    schema, built once, and what the server's listing and calls add."""

    def __init__(
        self, name: str, tools: list[Any], build_input_schema: BuildSchema
    ) -> None:
        self.name, self.tools = name, tools
        if len({tool_def.name for tool_def in tools}) < len(tools):
            warn_duplicate_names(name, tools)
        own = [_own_schema(tool_def, build_input_schema) for tool_def in tools]
        # By name, as upstream keeps them: of two tools with one name, the last's.
        self.schemas = dict(
            zip([tool_def.name for tool_def in tools], own, strict=True)
        )
        # Two tools with one name are listed with the last one's schema, as
        # upstream lists them, unless one uses a new field: then each entry
        # lists its own, so none carries the other's schema (nor a _meta
        # strict hint beside a schema strict mode never checked).
        self._own: dict[int, dict[str, Any]] = {
            id(tool_def): schema
            for tool_def, schema in zip(tools, own, strict=True)
            if _new_fields(tool_def)
        }
        # What the schema checks notice about a tool that did not opt in
        # (they cannot refuse it) is logged at the server's first tools/list
        # or tools/call, not paid for at start-up.
        self.check_once = first_use_schema_checks(tools, own)

    def listed_schema(self, tool_def: Any) -> dict[str, Any]:
        """The input schema ``tool_def``'s ``tools/list`` entry carries."""
        own = self._own.get(id(tool_def))
        return self.schemas[tool_def.name] if own is None else own

    async def call(
        self, tool_def: Any, arguments: dict[str, Any], validators: dict[str, Any]
    ) -> dict[str, Any]:
        """Validate a call's ``arguments`` and run ``tool_def``'s handler, the
        server's first-use checks first; an invalid call raises the error the
        server returns to the model."""
        self.check_once()
        name = tool_def.name
        validator = validators.get(name)
        if validator is None and not is_model_class(tool_def.input_schema):
            # A strict tool's calls are checked against the author's
            # constraints, also those served only in its description.
            schema = enforced_input_schema(tool_def, self.schemas[name])
            validator = validators[name] = compile_validator(name, schema)
        if validator is None:  # a pydantic model validates the call
            return await call_with_model(tool_def, arguments)
        if tool_def.strict is True:
            from ..strict.transform import strict_argument_error

            error = strict_argument_error(validator, arguments)
        else:
            error = argument_error(validator, arguments)
        if error is not None:
            raise ToolInputError(f"Input validation error: {error}")
        return await tool_def.handler(arguments)  # type: ignore[no-any-return]

    def finish(self, server: object) -> None:
        """Note the built ``server`` (its first ``tools/list`` runs the checks),
        and hold its strict tools to strict mode's per-request caps."""
        with contextlib.suppress(TypeError):  # not weakly referenceable
            _first_use[server] = self.check_once
        if any(tool_def.strict is True for tool_def in self.tools):
            from ..strict.transform import check_server_limits

            check_server_limits(self.name, server, self.tools, self.schemas)


class ToolInputError(ValueError):
    """A call's arguments do not match its tool's input schema (returned to
    the model as an error result)."""


# Each SDK server's first-use schema checks (``ToolServer.check_once``).
_first_use: weakref.WeakKeyDictionary[Any, Callable[[], None]] = (
    weakref.WeakKeyDictionary()
)

_Response = TypeVar("_Response")


async def answered(
    server: Any, message: dict[str, Any], response: Awaitable[_Response]
) -> _Response:
    """The ``response`` of SDK MCP ``server`` to ``message``, as upstream's MCP
    bridge awaits it for the CLI: a ``tools/list`` first runs the server's
    first-use schema checks, so their notices are logged even when the
    listing then fails, and its answer tells the relay which tools the
    server marks strict (``relay.meta_strict``)."""
    if message.get("method") == "tools/list":
        try:
            check_once = _first_use.get(server)
        except TypeError:  # not weakly referenceable: not built by the SDK
            check_once = None
        if check_once is not None:
            check_once()
    return note_listed_tools(server, message, await response)


def check_strict_tool_limits(mcp_servers: object) -> None:
    """Refuse SDK servers whose strict tools together go over strict mode's
    per-request caps (``strict.transform.check_request_limits``).

    Strict tools are remembered by strict mode's module, which only a strict
    tool loads: without it there is nothing to check, and it is not loaded
    for a query of tools that never asked for strict mode.
    """
    transform = sys.modules.get(f"{__name__.rsplit('.', 2)[0]}.strict.transform")
    if transform is not None:
        transform.check_request_limits(mcp_servers)


def before_query(options: Any) -> None:
    """What ``query()`` and ``ClaudeSDKClient.connect`` refuse before the CLI
    starts: strict tools that together exceed strict mode's caps, and
    ``strict_mcp_servers`` the session cannot serve."""
    check_strict_tool_limits(options.mcp_servers)
    if options.strict_mcp_servers:
        from ..relay.lifecycle import check_strict_mcp_servers

        check_strict_mcp_servers(
            options.strict_mcp_servers,
            options.mcp_servers,
            options.tool_fields_relay,
        )


# The fork's public names, read on first use: SchemaCheckError's module is
# loaded only when a tool needs the checks (tests/dropin/test_start_up.py).
_PUBLIC_NAMES = {
    "SchemaCheckError": f"{__package__}.schema_checks",
    "ToolFieldsRelayError": f"{__name__.rsplit('.', 2)[0]}.relay.evidence",
    "ToolFieldsReport": f"{__name__.rsplit('.', 2)[0]}.relay.evidence",
}


def public_name(name: str) -> Any:
    """``claude_agent_sdk.<name>`` for the fork's exports (the package's
    module ``__getattr__``)."""
    if name in _PUBLIC_NAMES:
        import importlib

        return getattr(importlib.import_module(_PUBLIC_NAMES[name]), name)
    package = __name__.split(".", 1)[0]
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
