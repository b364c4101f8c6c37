"""Claude SDK for Python."""

import logging
import math
import sys
import types as builtin_types
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum, Flag
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Generic,
    Literal,
    NewType,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

if sys.version_info >= (3, 11):
    from typing import get_type_hints as _get_type_hints
    from typing import is_typeddict
else:
    # On 3.10, stdlib is_typeddict doesn't recognize typing_extensions.TypedDict
    # subclasses, and stdlib get_type_hints doesn't strip NotRequired markers.
    from typing_extensions import get_type_hints as _get_type_hints
    from typing_extensions import is_typeddict

import jsonschema
import pydantic
from mcp.types import CallToolResult, Tool
from mcp.types import ToolAnnotations as _McpToolAnnotations

from ._errors import (
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    ProcessError,
    ResultError,
)
from ._internal._mcp_compat import build_tool_server
from ._internal.session_import import import_session_to_store
from ._internal.session_mutations import (
    ForkSessionResult,
    delete_session,
    delete_session_via_store,
    fork_session,
    fork_session_via_store,
    rename_session,
    rename_session_via_store,
    tag_session,
    tag_session_via_store,
)
from ._internal.session_store import InMemorySessionStore, project_key_for_directory
from ._internal.session_summary import fold_session_summary
from ._internal.sessions import (
    get_session_info,
    get_session_info_from_store,
    get_session_messages,
    get_session_messages_from_store,
    get_subagent_messages,
    get_subagent_messages_from_store,
    list_sessions,
    list_sessions_from_store,
    list_subagents,
    list_subagents_from_store,
)
from ._internal.strict_schema import (
    find_limit_violations,
    format_limits,
    format_violations,
    make_strict,
    remember_strict_tools,
)
from ._internal.transport import Transport
from ._version import __version__
from .client import ClaudeSDKClient
from .query import query
from .types import (
    TERMINAL_TASK_STATUSES,
    AgentDefinition,
    AssistantMessage,
    BackgroundTaskSummary,
    BaseHookInput,
    CanUseTool,
    CanUseToolShadowedWarning,
    ClaudeAgentOptions,
    ContentBlock,
    ContextUsageCategory,
    ContextUsageResponse,
    ConversationResetMessage,
    CwdChangedHookSpecificOutput,
    DeferredToolUse,
    EffortLevel,
    ElicitationHookSpecificOutput,
    ElicitationResultHookSpecificOutput,
    FastModeDisabledReason,
    FastModeState,
    FileChangedHookSpecificOutput,
    HookCallback,
    HookContext,
    HookEffort,
    HookEventMessage,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    McpSdkServerConfig,
    McpServerConfig,
    McpServerConnectionStatus,
    McpServerInfo,
    McpServerStatus,
    McpServerStatusConfig,
    McpStatusResponse,
    McpToolAnnotations,
    McpToolInfo,
    Message,
    MessageDisplayHookSpecificOutput,
    MessageOrigin,
    MessageOriginKind,
    MirrorErrorMessage,
    ModelUsage,
    NotificationHookInput,
    NotificationHookSpecificOutput,
    PermissionDeniedHookSpecificOutput,
    PermissionMode,
    PermissionRequestHookInput,
    PermissionRequestHookSpecificOutput,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    PostModelSwitchHookSpecificOutput,
    PostToolBatchHookSpecificOutput,
    PostToolUseFailureHookInput,
    PostToolUseFailureHookSpecificOutput,
    PostToolUseHookInput,
    PostToolUseHookSpecificOutput,
    PreCompactHookInput,
    PreModelSwitchHookSpecificOutput,
    PreToolUseHookInput,
    PreToolUseHookSpecificOutput,
    RateLimitEvent,
    RateLimitInfo,
    RateLimitStatus,
    RateLimitType,
    ResultMessage,
    SandboxIgnoreViolations,
    SandboxNetworkConfig,
    SandboxSettings,
    SdkBeta,
    SdkPluginConfig,
    SDKSessionInfo,
    ServerToolName,
    ServerToolResultBlock,
    ServerToolUseBlock,
    SessionCronSummary,
    SessionKey,
    SessionListSubkeysKey,
    SessionMessage,
    SessionStartHookSpecificOutput,
    SessionStore,
    SessionStoreEntry,
    SessionStoreFlushMode,
    SessionStoreListEntry,
    SessionSummaryEntry,
    SettingSource,
    StopHookInput,
    StopHookSpecificOutput,
    StreamEvent,
    SubagentStartHookInput,
    SubagentStartHookSpecificOutput,
    SubagentStopHookInput,
    SubagentStopHookSpecificOutput,
    SystemInitData,
    SystemInitMcpServer,
    SystemInitPlugin,
    SystemInitPluginError,
    SystemMessage,
    TaskBudget,
    TaskNotificationMessage,
    TaskNotificationOriginSubkind,
    TaskNotificationStatus,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TaskUpdatedStatus,
    TaskUsage,
    TextBlock,
    ThinkingBlock,
    ThinkingConfig,
    ThinkingConfigAdaptive,
    ThinkingConfigDisabled,
    ThinkingConfigEnabled,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    UserPromptExpansionHookSpecificOutput,
    UserPromptSubmitHookInput,
    UserPromptSubmitHookSpecificOutput,
    WorktreeCreateHookSpecificOutput,
)

# MCP Server Support

logger = logging.getLogger(__name__)

T = TypeVar("T")


# The snake_case spelling of each hint, mapped to its wire (camelCase) name.
_HINT_WIRE_NAMES = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
    "max_result_size_chars": "maxResultSizeChars",
}


class ToolAnnotations(_McpToolAnnotations, extra="allow"):
    """Hints about a tool's behavior, plus ``maxResultSizeChars``.

    A ``mcp.types.ToolAnnotations`` that takes every hint in either spelling
    on every supported mcp version: ``ToolAnnotations(readOnlyHint=True)``
    and ``ToolAnnotations(read_only_hint=True)`` are the same thing, and both
    type-check. (mcp's own class differs between majors here: 1.x only knows
    the camelCase names and 2.x prefers snake_case.) Attribute access follows
    the installed mcp: ``.readOnlyHint`` on 1.x, ``.read_only_hint`` on 2.x.

    ``maxResultSizeChars`` (``max_result_size_chars``) is not an MCP hint but
    a Claude Code one: the size, in characters, up to which Claude Code keeps
    this tool's result inline instead of persisting it to a file and showing
    a preview. It travels to the CLI in the tool's ``_meta``.

    Either this class or a plain ``mcp.types.ToolAnnotations`` is accepted
    wherever the SDK takes annotations.
    """

    maxResultSizeChars: int | None = None  # noqa: N815 - the wire spelling

    if TYPE_CHECKING:

        def __init__(  # both spellings, deliberately
            self,
            *,
            title: str | None = None,
            readOnlyHint: bool | None = None,  # noqa: N803
            read_only_hint: bool | None = None,
            destructiveHint: bool | None = None,  # noqa: N803
            destructive_hint: bool | None = None,
            idempotentHint: bool | None = None,  # noqa: N803
            idempotent_hint: bool | None = None,
            openWorldHint: bool | None = None,  # noqa: N803
            open_world_hint: bool | None = None,
            maxResultSizeChars: int | None = None,  # noqa: N803
            max_result_size_chars: int | None = None,
            **extra: Any,
        ) -> None: ...

    else:

        def __init__(self, **data: Any) -> None:
            # Fold the snake_case spellings into the wire names, which every
            # mcp version accepts (as field names on 1.x, as aliases on 2.x).
            # Given both, the wire name wins.
            for snake, wire in _HINT_WIRE_NAMES.items():
                if snake in data:
                    value = data.pop(snake)
                    data.setdefault(wire, value)
            super().__init__(**data)


@dataclass
class SdkMcpTool(Generic[T]):
    """Definition for an SDK MCP tool.

    ``strict``, ``input_examples`` and ``extra_fields`` become top-level
    fields of the tool's ``tools/list`` entry (see ``tool()``). They are
    checked when the tool is defined, however it is built, and kept as plain
    JSON copies, so changing the caller's lists and dicts afterwards does not
    change what is served.
    """

    name: str
    description: str
    input_schema: type[T] | dict[str, Any]
    handler: Callable[[T], Awaitable[dict[str, Any]]]
    annotations: _McpToolAnnotations | None = None
    strict: bool | None = None
    input_examples: list[dict[str, Any]] | None = None
    extra_fields: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.input_examples, self.extra_fields = _check_listed_fields(self)


def tool(
    name: str,
    description: str,
    input_schema: type | dict[str, Any],
    annotations: _McpToolAnnotations | None = None,
    *,
    strict: bool | None = None,
    input_examples: list[dict[str, Any]] | None = None,
    extra_fields: dict[str, Any] | None = None,
) -> Callable[[Callable[[Any], Awaitable[dict[str, Any]]]], SdkMcpTool[Any]]:
    """Decorator for defining MCP tools with type safety.

    Creates a tool that can be used with SDK MCP servers. The tool runs
    in-process within your Python application, providing better performance
    than external MCP servers.

    Args:
        name: Unique identifier for the tool. This is what Claude will use
            to reference the tool in function calls.
        description: Human-readable description of what the tool does.
            This helps Claude understand when to use the tool.
        input_schema: Schema defining the tool's input parameters.
            Can be either:
            - A dictionary mapping parameter names to types (e.g., {"text": str})
            - A TypedDict class for more complex schemas
            - A JSON Schema dictionary for full validation
            Use ``Annotated[type, "description"]`` to add a description to a
            parameter in either dict-style or TypedDict schemas.
            Parameter types become JSON Schema 2020-12: str, int, float,
            bool, None, Any, ``Literal`` and ``Enum`` subclasses (an
            ``enum``), list, ``tuple[A, B]`` (an array of exactly those
            items) and ``tuple[A, ...]``, set and frozenset (arrays of unique
            items), ``dict[str, A]``, nested TypedDicts, ``NewType`` and
            unions of these. ``X | None`` admits ``null``, except on a
            TypedDict key that is not required, where leaving the key out is
            how None is said. Any other type is a TypeError when the server
            is created. A JSON Schema dict is sent exactly as written, and
            arguments are validated in the dialect its ``$schema`` names
            (2020-12 when it names none).
        annotations: Optional MCP tool annotations (hints such as
            ``readOnlyHint`` or ``destructiveHint``) advertised to Claude.
            ``ToolAnnotations(maxResultSizeChars=N)`` additionally raises the
            size up to which Claude Code keeps this tool's result inline
            instead of persisting it to a file and showing a preview.
        strict: Optional. ``True`` asks for strict tool use, where the
            model's input is held to ``input_schema``; ``False`` says so
            explicitly. Served to Claude Code as the top-level ``strict``
            field of the tool's ``tools/list`` entry; left out when ``None``.
            Claude Code 2.1.332 does not yet copy ``strict`` from an MCP tool
            into its API request, so for now the CLI receives it but the
            model is not held to the schema.
            With ``True`` the schema must also keep strict mode's rules,
            checked when the tool is defined: no recursive schemas or
            external ``$ref``; no ``minimum``, ``maximum``,
            ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``,
            ``minLength`` or ``maxLength``; ``additionalProperties`` only
            ``false``; of the array constraints only ``minItems`` 0 or 1; no
            backreferences, lookaround or ``\\b`` in a ``pattern``. Every
            object that declares its properties is served closed
            (``additionalProperties: false`` is added where missing, also to
            the schemas generated from a dict or a TypedDict), and calls are
            validated against that served schema.
        input_examples: Optional list of example inputs, each a JSON object
            that must validate against ``input_schema`` (checked when the
            tool is defined). Served as the top-level ``input_examples``
            field, with the same caveat as ``strict``.
        extra_fields: Optional mapping of further top-level fields for the
            tool's ``tools/list`` entry, served exactly as given: standard
            MCP Tool fields the other arguments do not cover (``title``,
            ``outputSchema``, ``icons``, ...) and any other key. Values must
            be plain JSON (dict with str keys, list, str, int, finite float,
            bool, None); standard fields are checked against the installed
            mcp's ``Tool`` model. Fields the SDK builds itself (``name``,
            ``description``, ``inputSchema``, ``annotations``, ``_meta``,
            ``strict``, ``input_examples``) are refused here; use their own
            arguments. A tool that declares an ``outputSchema`` must return
            matching ``structuredContent`` (see Notes).

    Returns:
        A decorator function that wraps the tool implementation and returns
        an SdkMcpTool instance ready for use with create_sdk_mcp_server().

    Example:
        Basic tool with simple schema:
        >>> @tool("greet", "Greet a user", {"name": str})
        ... async def greet(args):
        ...     return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

        Tool with multiple parameters:
        >>> @tool("add", "Add two numbers", {"a": float, "b": float})
        ... async def add_numbers(args):
        ...     result = args["a"] + args["b"]
        ...     return {"content": [{"type": "text", "text": f"Result: {result}"}]}

        Tool with error handling:
        >>> @tool("divide", "Divide two numbers", {"a": float, "b": float})
        ... async def divide(args):
        ...     if args["b"] == 0:
        ...         return {"content": [{"type": "text", "text": "Error: Division by zero"}], "is_error": True}
        ...     return {"content": [{"type": "text", "text": f"Result: {args['a'] / args['b']}"}]}

        Read-only tool that may return a large result:
        >>> @tool(
        ...     "get_schema",
        ...     "Return the database schema",
        ...     {},
        ...     annotations=ToolAnnotations(readOnlyHint=True, maxResultSizeChars=500_000),
        ... )
        ... async def get_schema(args):
        ...     return {"content": [{"type": "text", "text": load_schema()}]}

        Strict tool with input examples and further Tool fields:
        >>> @tool(
        ...     "search",
        ...     "Search case law",
        ...     {"jurisdiction": str, "terms": list[str]},
        ...     annotations=ToolAnnotations(readOnlyHint=True),
        ...     strict=True,
        ...     input_examples=[{"jurisdiction": "se", "terms": ["payout"]}],
        ...     extra_fields={"title": "Case search", "x-acme-tier": 2},
        ... )
        ... async def search(args):
        ...     return {"content": [{"type": "text", "text": find(args["terms"])}]}

        Tool with structured output:
        >>> @tool(
        ...     "count_lines",
        ...     "Count the lines of a file",
        ...     {"path": str},
        ...     extra_fields={
        ...         "outputSchema": {
        ...             "type": "object",
        ...             "properties": {"lines": {"type": "integer"}},
        ...             "required": ["lines"],
        ...         }
        ...     },
        ... )
        ... async def count_lines(args):
        ...     n = len(Path(args["path"]).read_text().splitlines())
        ...     return {
        ...         "content": [{"type": "text", "text": f"{n} lines"}],
        ...         "structuredContent": {"lines": n},
        ...     }

    Raises:
        TypeError: ``strict`` is not a bool or None, ``extra_fields`` is not
            a mapping with str keys, or one of its values is not JSON.
        ValueError: an input example is not a JSON object or does not match
            the input schema, ``extra_fields`` names a field the SDK builds,
            holds a value JSON cannot represent, or gives a standard MCP Tool
            field a value the MCP ``Tool`` model refuses. Each message names
            the tool and the field. With ``strict=True``: the input schema
            breaks one of strict mode's rules; the message lists every
            violation with its JSON Pointer.

    Notes:
        - The tool function must be async (defined with async def)
        - The function receives a single dict argument with the input parameters
        - Arguments are validated against the input schema before the function
          is called; invalid input is reported back to Claude as an error result
        - The function should return a dict with a "content" key containing the response
        - Errors can be indicated by including "is_error": True in the response;
          an exception raised by the function is reported the same way
        - The response may carry a "structuredContent" dict (also accepted as
          "structured_content"; given both, "structuredContent" wins), which
          is passed on with the content. For a tool with an outputSchema it
          is required on every non-error result and must match the schema;
          otherwise the call is reported to Claude as an error naming the
          tool. MCP recommends also returning the same data as text content.
    """

    def decorator(
        handler: Callable[[Any], Awaitable[dict[str, Any]]],
    ) -> SdkMcpTool[Any]:
        return SdkMcpTool(
            name=name,
            description=description,
            input_schema=input_schema,
            handler=handler,
            annotations=annotations,
            strict=strict,
            input_examples=input_examples,
            extra_fields=extra_fields,
        )

    return decorator


# What an error about an unsupported parameter type offers instead.
_SUPPORTED_TYPES = (
    "str, int, float, bool, None, Any, Literal, Enum, list, tuple, set, "
    "frozenset, dict[str, ...], TypedDict, NewType, Annotated, and unions of "
    "these"
)


class _UnsupportedTypeError(TypeError):
    """A Python type that JSON Schema cannot describe faithfully."""


class _NotStrictExpressibleError(_UnsupportedTypeError):
    """A Python type whose JSON Schema strict mode cannot compile."""


def _describe_type(py_type: Any) -> str:
    """Name a type the way it is spelled in source, for error messages."""
    if isinstance(py_type, type) and get_origin(py_type) is None:
        if py_type.__module__ == "builtins":
            return py_type.__qualname__
        return f"{py_type.__module__}.{py_type.__qualname__}"
    return repr(py_type)


def _json_scalar(value: Any) -> tuple[str, Any]:
    """The JSON Schema type of a ``Literal`` or ``Enum`` value, and the value
    as plain JSON."""
    if isinstance(value, Enum):
        value = value.value
    # bool before int: True is an int in Python but a boolean in JSON, and
    # ``Literal[1, True]`` allows two different JSON values.
    if value is None:
        return "null", None
    if isinstance(value, bool):
        return "boolean", bool(value)
    if isinstance(value, int):
        return "integer", int(value)
    if isinstance(value, float) and math.isfinite(value):
        return "number", float(value)
    if isinstance(value, str):
        return "string", str(value)
    raise _UnsupportedTypeError(
        f"{value!r} is not a JSON value (str, int, float, bool or None)"
    )


def _enum_schema(values: Iterable[Any]) -> dict[str, Any]:
    """An ``enum`` of JSON values, with a ``type`` when they all share one."""
    typed_values: list[tuple[str, Any]] = []
    for value in values:
        typed_value = _json_scalar(value)
        if typed_value not in typed_values:
            typed_values.append(typed_value)
    kinds = {kind for kind, _ in typed_values}
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    schema: dict[str, Any] = {}
    if len(kinds) == 1:
        schema["type"] = kinds.pop()
    schema["enum"] = [value for _, value in typed_values]
    return schema


def _python_type_to_json_schema(
    py_type: Any,
    within: tuple[type, ...] = (),
    *,
    optional_key: bool = False,
    strict: bool = False,
) -> dict[str, Any]:
    """Convert a Python type annotation to the JSON Schema (2020-12) of its values.

    The schema describes the JSON the CLI sends, which is exactly what the
    handler receives: a tuple or set argument arrives as a list, an Enum
    argument as the member's value. ``None`` in a type is a value like any
    other and is admitted as ``null``, except in the one place where
    ``X | None`` has always meant "may be left out": the type of a TypedDict
    key that is not required (``optional_key``), whose schema lists only the
    other types.

    ``within`` holds the TypedDicts being converted around this type, so a
    TypedDict that contains itself is refused instead of recursing forever.

    With ``strict`` (the tool has ``strict=True``) a type whose schema needs
    what strict mode cannot compile is refused in the type's own terms,
    rather than left for the strict checks to report keywords the author
    never wrote: a set (``uniqueItems``) and a tuple of two or more items
    (``minItems`` above 1). A one-item tuple drops its ``maxItems``, which
    ``"items": false`` already implies. (A dict is an open object; the strict
    checks refuse that in terms that already fit.)

    Raises ``_UnsupportedTypeError`` (a ``TypeError``) for a type JSON Schema
    cannot describe, rather than guessing: a guessed schema makes the SDK's
    own validation reject the very arguments the handler was written for.
    """
    origin = get_origin(py_type)
    args = get_args(py_type)

    def convert(inner: Any, *, optional_key: bool = False) -> dict[str, Any]:
        return _python_type_to_json_schema(
            inner, within, optional_key=optional_key, strict=strict
        )

    def not_in_strict_mode(reason: str, instead: str) -> _NotStrictExpressibleError:
        return _NotStrictExpressibleError(
            f"{_describe_type(py_type)} {reason}, which strict mode cannot "
            f"express; use {instead}, or leave the tool non-strict"
        )

    # NotRequired/Required/ReadOnly survive include_extras=True; unwrap them
    if getattr(origin, "_name", None) in ("NotRequired", "Required", "ReadOnly"):
        return convert(args[0], optional_key=optional_key)

    if origin is Annotated:
        schema = convert(args[0], optional_key=optional_key)
        for meta in args[1:]:
            if isinstance(meta, str):
                schema["description"] = meta
                break
        return schema

    if py_type is Any:
        return {}
    if py_type is None or py_type is builtin_types.NoneType:
        return {"type": "null"}
    if py_type is str:
        return {"type": "string"}
    if py_type is int:
        return {"type": "integer"}
    if py_type is float:
        return {"type": "number"}
    if py_type is bool:
        return {"type": "boolean"}

    if isinstance(py_type, NewType):
        return convert(py_type.__supertype__)

    if origin is Literal:
        return _enum_schema(args)

    if isinstance(py_type, type) and issubclass(py_type, Enum):
        if issubclass(py_type, Flag):
            raise _UnsupportedTypeError(
                f"{_describe_type(py_type)} is a Flag, whose combined values "
                "an enum of its members cannot express"
            )
        if len(py_type) == 0:
            raise _UnsupportedTypeError(f"{_describe_type(py_type)} has no members")
        return _enum_schema(py_type)

    if origin is Union or isinstance(py_type, builtin_types.UnionType):
        if optional_key:
            args = tuple(a for a in args if a is not builtin_types.NoneType) or args
        if len(args) == 1:
            return convert(args[0])
        return {"anyOf": [convert(arg) for arg in args]}

    container = py_type if origin is None else origin

    if container in (set, frozenset) and strict:
        raise not_in_strict_mode(
            "needs unique items", "a list and drop duplicates in the handler"
        )
    if container in (list, set, frozenset):
        schema = {"type": "array"}
        items = convert(args[0]) if args else {}
        if items:
            schema["items"] = items
        if container is not list:
            schema["uniqueItems"] = True
        return schema

    if container is tuple:
        if not hasattr(py_type, "__args__"):  # tuple or typing.Tuple, unsubscripted
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            schema = {"type": "array"}
            items = convert(args[0])
            if items:
                schema["items"] = items
            return schema
        if args in ((), ((),)):  # tuple[()]; typing.Tuple[()] on 3.10
            return {"type": "array", "items": False}
        if strict and len(args) > 1:
            raise not_in_strict_mode(
                f"needs exactly {len(args)} items (minItems {len(args)})",
                "a TypedDict with named fields, or a list and check the length "
                "in the handler",
            )
        # 2020-12 spelling; draft-07's "items": [...] means nothing there.
        schema = {
            "type": "array",
            "prefixItems": [convert(arg) for arg in args],
            "items": False,
            "minItems": len(args),
            "maxItems": len(args),
        }
        if strict:
            del schema["maxItems"]  # implied by "items": false
        return schema

    if container is dict:
        if not args:
            return {"type": "object"}
        key_type, value_type = args
        if key_type is not str:
            raise _UnsupportedTypeError(
                f"{_describe_type(py_type)} has {_describe_type(key_type)} keys, "
                "but JSON object keys are strings: use dict[str, ...]"
            )
        schema = {"type": "object"}
        values = convert(value_type)
        if values:
            schema["additionalProperties"] = values
        return schema

    if is_typeddict(py_type):
        if py_type in within:
            raise _UnsupportedTypeError(
                f"{py_type.__name__} contains itself; recursive schemas are not "
                "supported (strict mode rejects them too)"
            )
        return _typeddict_to_json_schema(py_type, within, strict=strict)

    if isinstance(py_type, str) and within:
        # Python 3.10's get_type_hints leaves a string inside a builtin
        # generic (list["Node"]) unevaluated; 3.11+ evaluates it in the
        # TypedDict's module, as done here.
        module = within[-1].__module__
        try:
            resolved = eval(py_type, vars(sys.modules[module]))
        except Exception:
            raise _UnsupportedTypeError(
                f"forward reference {py_type!r} cannot be resolved in {module}"
            ) from None
        return convert(resolved)
    if isinstance(py_type, str):
        raise _UnsupportedTypeError(
            f"{py_type!r} is a string, not a type (a JSON Schema dict needs "
            'top-level "type" and "properties" keys)'
        )
    raise _UnsupportedTypeError(
        f"{_describe_type(py_type)} is not supported (supported: "
        f"{_SUPPORTED_TYPES}; for anything else pass a JSON Schema dict)"
    )


def _typeddict_to_json_schema(
    td_class: type, within: tuple[type, ...] = (), *, strict: bool = False
) -> dict[str, Any]:
    """Convert a TypedDict class to a JSON Schema dict."""
    try:
        hints = _get_type_hints(td_class, include_extras=True)
    except NameError as e:  # a forward reference that names nothing in scope
        raise _UnsupportedTypeError(
            f"{td_class.__name__} has an annotation that cannot be resolved: {e}"
        ) from None
    required_keys = getattr(td_class, "__required_keys__", set(hints))

    properties: dict[str, Any] = {}
    for field_name, field_type in hints.items():
        try:
            properties[field_name] = _python_type_to_json_schema(
                field_type,
                (*within, td_class),
                optional_key=field_name not in required_keys,
                strict=strict,
            )
        except _UnsupportedTypeError as e:
            raise type(e)(
                f"field {field_name!r} of {td_class.__name__} "
                f"({_describe_type(field_type)}): {e}"
            ) from None

    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
    }
    if required_keys:
        schema["required"] = sorted(required_keys)
    return schema


def _build_input_schema(tool_def: SdkMcpTool[Any]) -> dict[str, Any]:
    """Turn a tool's declared input_schema into the JSON Schema sent on the wire.

    A JSON Schema dict is sent exactly as written (``$schema``, ``$defs``,
    ``prefixItems`` and all); no ``$schema`` is added to a generated one,
    because MCP reads an ``inputSchema`` without it as JSON Schema 2020-12,
    the dialect generated here.

    Raises TypeError naming the tool and the parameter when a parameter's
    type has no JSON Schema form, and ValueError when the tool is strict and
    the type's form is one strict mode cannot compile.
    """
    input_schema = tool_def.input_schema
    strict = tool_def.strict is True
    try:
        if isinstance(input_schema, dict):
            if (
                "type" in input_schema
                and "properties" in input_schema
                and isinstance(input_schema["type"], str)
            ):
                return input_schema
            properties: dict[str, Any] = {}
            for param_name, param_type in input_schema.items():
                try:
                    properties[param_name] = _python_type_to_json_schema(
                        param_type, strict=strict
                    )
                except _UnsupportedTypeError as e:
                    raise type(e)(
                        f"parameter {param_name!r} ({_describe_type(param_type)}): {e}"
                    ) from None
            return {
                "type": "object",
                "properties": properties,
                "required": list(properties.keys()),
            }
        if is_typeddict(input_schema):
            return _typeddict_to_json_schema(input_schema, strict=strict)
    except _NotStrictExpressibleError as e:
        raise ValueError(
            f"Cannot build the strict input schema of tool {tool_def.name!r}: {e}"
        ) from None
    except _UnsupportedTypeError as e:
        raise TypeError(
            f"Cannot build the input schema of tool {tool_def.name!r}: {e}"
        ) from None
    return {"type": "object", "properties": {}}


def _served_input_schema(tool_def: SdkMcpTool[Any]) -> dict[str, Any]:
    """The input schema a tool is listed with and its calls are checked against.

    A non-strict tool's schema is served exactly as declared. A strict tool's
    is held to strict mode's rules here, on the SDK's side, because the API
    answers a strict schema it cannot compile with a 400 and Claude Code
    quietly sends such a tool as non-strict; either way the author would
    learn of it late. What is served is the normalized copy (objects closed),
    so the examples, the listing and every call agree on one schema.
    """
    schema = _build_input_schema(tool_def)
    if tool_def.strict is not True:
        return schema
    strict_schema, violations = make_strict(schema)
    if violations:
        raise ValueError(format_violations(tool_def.name, violations))
    served: dict[str, Any] = strict_schema
    return served


def _validator_class(schema: dict[str, Any]) -> Any:
    """The jsonschema validator class for a schema the SDK lists.

    MCP reads an ``inputSchema`` without ``$schema`` as JSON Schema 2020-12,
    and the schemas generated here use its keywords (``prefixItems``), so
    that is the dialect arguments are checked in. jsonschema's own default is
    "the latest draft it knows", which is 2020-12 today but would move with a
    jsonschema release; pinning it keeps what is listed and what is enforced
    the same. A schema that names its dialect is checked in that dialect.
    """
    return jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )


def _build_meta(tool_def: SdkMcpTool[Any]) -> dict[str, Any] | None:
    # Client-specific hints travel in _meta under namespaced keys because MCP
    # clients drop annotation fields they do not know. maxResultSizeChars is
    # the size up to which Claude Code keeps a tool result inline rather than
    # persisting it and showing a preview; it rides on the annotations object
    # as an extra (or subclass-declared) field.
    max_size = getattr(tool_def.annotations, "maxResultSizeChars", None)
    if max_size is None:
        return None
    return {"anthropic/maxResultSizeChars": max_size}


# Top-level fields of a tools/list entry that the SDK builds itself, each with
# the way to set it; extra_fields may not replace them.
_SDK_BUILT_TOOL_FIELDS = {
    "name": "the name argument",
    "description": "the description argument",
    "inputSchema": "the input_schema argument",
    "annotations": "the annotations argument",
    "_meta": "ToolAnnotations(maxResultSizeChars=...)",
    "strict": "the strict argument",
    "input_examples": "the input_examples argument",
}

# Wire names of the fields the installed mcp's Tool model defines.
_MCP_TOOL_FIELDS = frozenset(
    field.alias or name for name, field in Tool.model_fields.items()
)

_JSON_TYPES = "dict with str keys, list, str, int, float, bool or None"


def _json_snapshot(value: Any, path: str, open_containers: set[int]) -> Any:
    """Return a plain-JSON copy of ``value``, or raise naming ``path``.

    Only what JSON itself can carry is accepted, so a value is served exactly
    as given rather than as some encoder would coerce it: a tuple or a set,
    NaN, a non-str key or an arbitrary object is refused (TypeError for a
    wrong type, ValueError for a value JSON cannot represent). Subclasses of
    str, int and float (enums, say) are copied as the base type, which is
    what ``json.dumps`` writes for them.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} is {value!r}, which JSON cannot represent")
        return float.__float__(value)
    if not isinstance(value, (dict, list)):
        raise TypeError(
            f"{path} must be JSON ({_JSON_TYPES}), got {type(value).__name__}"
        )
    if id(value) in open_containers:
        raise ValueError(f"{path} contains itself")
    open_containers.add(id(value))
    try:
        if isinstance(value, list):
            return [
                _json_snapshot(item, f"{path}[{index}]", open_containers)
                for index, item in enumerate(value)
            ]
        copy: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"{path} has the key {key!r}; JSON object keys must be str"
                )
            copy[str.__str__(key)] = _json_snapshot(
                item, f"{path}[{key!r}]", open_containers
            )
        return copy
    finally:
        open_containers.discard(id(value))


def _check_listed_fields(
    tool_def: SdkMcpTool[Any], input_schema: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """Check a tool's ``strict``, ``input_examples`` and ``extra_fields``.

    Returns plain-JSON copies of the examples and the extra fields. Every
    problem is raised here, when the tool is defined, naming the tool and
    the field: nothing reaches the wire that the CLI would have to refuse,
    and nothing is dropped on the way. ``input_schema`` is the tool's built
    input schema when the caller already has it, so it is not built again.
    """
    strict = tool_def.strict
    if strict is not None and not isinstance(strict, bool):
        raise TypeError(
            f"Tool '{tool_def.name}': strict must be a bool or None, "
            f"got {type(strict).__name__}"
        )
    if strict and input_schema is None:
        # Building the served schema refuses what strict mode cannot compile.
        input_schema = _served_input_schema(tool_def)
    return (
        _check_input_examples(tool_def, input_schema),
        _check_extra_fields(tool_def),
    )


def _check_input_examples(
    tool_def: SdkMcpTool[Any], input_schema: dict[str, Any] | None
) -> list[dict[str, Any]] | None:
    examples = tool_def.input_examples
    if examples is None:
        return None
    where = f"Tool '{tool_def.name}': input_examples"
    if not isinstance(examples, list):
        raise ValueError(
            f"{where} must be a list of JSON objects, got {type(examples).__name__}"
        )
    copies: list[dict[str, Any]] = []
    for index, example in enumerate(examples):
        if not isinstance(example, dict):
            raise ValueError(
                f"{where}[{index}] must be a JSON object (dict), "
                f"got {type(example).__name__}"
            )
        try:
            copies.append(_json_snapshot(example, f"input_examples[{index}]", set()))
        except (TypeError, ValueError) as e:
            raise ValueError(f"Tool '{tool_def.name}': {e}") from None
    schema = _served_input_schema(tool_def) if input_schema is None else input_schema
    validator_class = _validator_class(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise ValueError(
            f"{where} cannot be checked: the input schema is not a valid "
            f"JSON Schema: {e.message}"
        ) from None
    validator = validator_class(schema)
    for index, example in enumerate(copies):
        error = jsonschema.exceptions.best_match(validator.iter_errors(example))
        if error is not None:
            raise ValueError(
                f"{where}[{index}] does not match the input schema: "
                f"{error.message} (at {error.json_path})"
            )
    return copies


def _check_extra_fields(tool_def: SdkMcpTool[Any]) -> dict[str, Any] | None:
    fields = tool_def.extra_fields
    if fields is None:
        return None
    where = f"Tool '{tool_def.name}': extra_fields"
    if not isinstance(fields, Mapping):
        raise TypeError(f"{where} must be a mapping, got {type(fields).__name__}")
    copies: dict[str, Any] = {}
    for key, value in fields.items():
        if not isinstance(key, str):
            raise TypeError(f"{where} keys must be str, got {key!r}")
        if key in _SDK_BUILT_TOOL_FIELDS:
            raise ValueError(
                f"{where}[{key!r}] would replace a field the SDK builds; "
                f"use {_SDK_BUILT_TOOL_FIELDS[key]} instead"
            )
        try:
            copies[str.__str__(key)] = _json_snapshot(
                value, f"extra_fields[{key!r}]", set()
            )
        except (TypeError, ValueError) as e:
            raise type(e)(f"Tool '{tool_def.name}': {e}") from None
    _check_mcp_tool_fields(tool_def.name, copies)
    return copies


def _check_mcp_tool_fields(tool_name: str, fields: dict[str, Any]) -> None:
    """Hold the standard MCP Tool fields among ``fields`` to the MCP schema."""
    where = f"Tool '{tool_name}': extra_fields"
    for key in fields.keys() & _MCP_TOOL_FIELDS:
        if fields[key] is None:
            # mcp leaves unset fields out; MCP clients refuse a null.
            raise ValueError(f"{where}[{key!r}] is None; leave the key out instead")
    try:
        # By wire name only: mcp 2.x's model also takes its snake_case field
        # names, which would be served as unknown keys, not as those fields.
        Tool.model_validate(
            {"name": "tool", "inputSchema": {"type": "object"}, **fields},
            by_name=False,
        )
    except pydantic.ValidationError as e:
        error = e.errors()[0]
        path = "".join(f"[{part!r}]" for part in error["loc"])
        raise ValueError(
            f"{where}{path} is not valid for the MCP Tool model: {error['msg']}"
        ) from None
    output_schema = fields.get("outputSchema")
    if output_schema is None:
        return
    if output_schema.get("type") != "object":
        raise ValueError(
            f"{where}['outputSchema'] must describe an object "
            '("type": "object"), as MCP requires of a tool\'s output schema'
        )
    try:
        _validator_class(output_schema).check_schema(output_schema)
    except jsonschema.SchemaError as e:
        raise ValueError(
            f"{where}['outputSchema'] is not a valid JSON Schema: {e.message}"
        ) from None


def _listed_fields(
    tool_def: SdkMcpTool[Any], input_schema: dict[str, Any]
) -> dict[str, Any]:
    """The fields a tool's tools/list entry carries beyond mcp's ``Tool``."""
    input_examples, extra_fields = _check_listed_fields(tool_def, input_schema)
    fields: dict[str, Any] = {}
    if tool_def.strict is not None:
        fields["strict"] = tool_def.strict
    if input_examples is not None:
        fields["input_examples"] = input_examples
    fields.update(extra_fields or {})
    return fields


def _structured_content_problem(
    tool_name: str, result: dict[str, Any], output_validator: Any
) -> str | None:
    """Say what is wrong with the structuredContent of a result, if anything.

    ``result`` is the result as it would go on the wire; ``output_validator``
    checks the tool's outputSchema, and is None for a tool without one.

    MCP clients refuse a non-error result of a tool that declares an
    outputSchema unless its structuredContent matches that schema; Claude
    Code's would fail the whole call. Caught here, the model gets an error
    result that says which tool broke its contract and how.
    """
    structured = result.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        return (
            f"Tool '{tool_name}' returned structuredContent that is not a JSON "
            f"object (got {type(structured).__name__})"
        )
    if output_validator is None or result.get("isError"):
        return None
    if structured is None:
        return (
            f"Tool '{tool_name}' declares an outputSchema but returned no "
            "structuredContent"
        )
    error = jsonschema.exceptions.best_match(output_validator.iter_errors(structured))
    if error is None:
        return None
    return (
        f"Tool '{tool_name}' returned structuredContent that does not match its "
        f"outputSchema: {error.message} (at {error.json_path})"
    )


def _compile_argument_validator(schema: dict[str, Any]) -> Any:
    """Build the validator ``jsonschema.validate`` would build for ``schema``.

    ``jsonschema.validate`` checks the schema against its metaschema before
    looking at the instance. That check is most of the cost of a tool call
    and its answer never changes for a given tool, so it is done once here,
    in the dialect the schema is listed in (``_validator_class``), and the
    resulting validator is kept for every later call. Raises
    ``jsonschema.SchemaError`` for a schema that fails the check, exactly as
    ``jsonschema.validate`` would.
    """
    validator_class = _validator_class(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _tool_error_result(message: str) -> CallToolResult:
    return CallToolResult.model_validate(
        {"content": [{"type": "text", "text": message}], "isError": True}
    )


def _convert_tool_content(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Map the content of a tool handler's result dict to MCP content blocks.

    Text and image blocks pass through. Resource links and text resources are
    flattened to text because that is what the CLI renders; binary resources
    and unknown block types are dropped with a warning.
    """
    content: list[dict[str, Any]] = []
    for item in items:
        item_type = item.get("type")
        if item_type == "text":
            content.append({"type": "text", "text": item["text"]})
        elif item_type == "image":
            content.append(
                {"type": "image", "data": item["data"], "mimeType": item["mimeType"]}
            )
        elif item_type == "resource_link":
            parts = [
                str(part)
                for part in (item.get("name"), item.get("uri"), item.get("description"))
                if part
            ]
            content.append(
                {"type": "text", "text": "\n".join(parts) if parts else "Resource link"}
            )
        elif item_type == "resource":
            resource = item.get("resource") or {}
            if "text" in resource:
                content.append({"type": "text", "text": resource["text"]})
            else:
                logger.warning(
                    "Binary embedded resource cannot be converted to text, skipping"
                )
        else:
            logger.warning(
                "Unsupported content type %r in tool result, skipping", item_type
            )
    return content


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: list[SdkMcpTool[Any]] | None = None
) -> McpSdkServerConfig:
    """Create an in-process MCP server that runs within your Python application.

    Unlike external MCP servers that run as separate processes, SDK MCP servers
    run directly in your application's process. This provides:
    - Better performance (no IPC overhead)
    - Simpler deployment (single process)
    - Easier debugging (same process)
    - Direct access to your application's state

    Args:
        name: Unique identifier for the server. This name is used to reference
            the server in the mcp_servers configuration.
        version: Server version string. Defaults to "1.0.0". This is for
            informational purposes and doesn't affect functionality.
        tools: List of SdkMcpTool instances created with the @tool decorator.
            These are the functions that Claude can call through this server.
            If None or empty, the server will have no tools (rarely useful).

    Returns:
        McpSdkServerConfig: A configuration object that can be passed to
        ClaudeAgentOptions.mcp_servers. Its ``instance`` is a regular
        ``mcp.server.Server`` that the SDK connects to Claude Code over an
        in-memory MCP transport.

    Example:
        Simple calculator server:
        >>> @tool("add", "Add numbers", {"a": float, "b": float})
        ... async def add(args):
        ...     return {"content": [{"type": "text", "text": f"Sum: {args['a'] + args['b']}"}]}
        >>>
        >>> @tool("multiply", "Multiply numbers", {"a": float, "b": float})
        ... async def multiply(args):
        ...     return {"content": [{"type": "text", "text": f"Product: {args['a'] * args['b']}"}]}
        >>>
        >>> calculator = create_sdk_mcp_server(
        ...     name="calculator",
        ...     version="2.0.0",
        ...     tools=[add, multiply]
        ... )
        >>>
        >>> # Use with Claude
        >>> options = ClaudeAgentOptions(
        ...     mcp_servers={"calc": calculator},
        ...     allowed_tools=["add", "multiply"]
        ... )

        Server with application state access:
        >>> class DataStore:
        ...     def __init__(self):
        ...         self.items = []
        ...
        >>> store = DataStore()
        >>>
        >>> @tool("add_item", "Add item to store", {"item": str})
        ... async def add_item(args):
        ...     store.items.append(args["item"])
        ...     return {"content": [{"type": "text", "text": f"Added: {args['item']}"}]}
        >>>
        >>> server = create_sdk_mcp_server("store", tools=[add_item])

        Bringing your own server: any ``mcp.server.Server`` built with the
        installed ``mcp`` package can be used in place of this helper, and
        the requests it handles (tools, resources, prompts, ...) are served.
        Requests and notifications the server sends to the client (sampling,
        elicitation, roots, logging, progress) are not forwarded yet:
        >>> from mcp.server import Server
        >>> my_server = Server("mine")  # register handlers with the mcp API
        >>> config = McpSdkServerConfig(type="sdk", name="mine", instance=my_server)

        Such a server's tools are listed as mcp serializes them. On mcp 1.x
        that includes fields its ``Tool`` model does not define (``strict``,
        ``input_examples``, vendor keys); mcp 2.x strips those from every
        ``tools/list`` result, so on 2.x they reach Claude Code only from
        tools made with ``tool()`` (``strict=``, ``input_examples=``,
        ``extra_fields=``) and served by this function.

    Notes:
        - The server runs in the same process as your Python application
        - Tools have direct access to your application's variables and state
        - No subprocess or IPC overhead for tool calls
        - Server lifecycle is managed automatically by the SDK
        - Tool arguments are validated against the tool's input schema, and
          unknown tools, invalid arguments and exceptions raised by a handler
          are all reported to Claude as error results rather than failing the
          request
        - Each tool's ``strict``, ``input_examples`` and ``extra_fields`` are
          served as top-level fields of its ``tools/list`` entry, the same way
          on mcp 1.x and 2.x; a tool that sets none of them lists as before
        - Works with both mcp 1.x and mcp 2.x
        - Strict tools (``strict=True``) are held to strict mode's per-request
          caps: at most 20 strict tools, 24 optional parameters across their
          schemas and 16 union-typed parameters (``anyOf``/``oneOf`` or a
          ``type`` array). A server over a cap raises ValueError naming the
          limit, the count and the tools; ``query()`` and
          ``ClaudeSDKClient`` check the same caps across all their SDK
          servers before starting Claude Code.

    See Also:
        - tool(): Decorator for creating tool functions
        - ClaudeAgentOptions: Configuration for using servers with query()
    """
    tools = tools or []
    tools_by_name = {tool_def.name: tool_def for tool_def in tools}
    schemas = {tool_def.name: _served_input_schema(tool_def) for tool_def in tools}
    # Strict mode's per-request caps, for this server alone; check_request_limits
    # applies them again across every server handed to one query.
    strict_tools = [
        (tool_name, schemas[tool_name])
        for tool_name, tool_def in tools_by_name.items()
        if tool_def.strict is True
    ]
    exceeded = find_limit_violations(strict_tools)
    if exceeded:
        raise ValueError(format_limits(f"SDK MCP server '{name}'", exceeded))
    listed_fields = {
        tool_def.name: _listed_fields(tool_def, schemas[tool_def.name])
        for tool_def in tools
    }
    output_validators = {
        tool_name: _validator_class(fields["outputSchema"])(fields["outputSchema"])
        for tool_name, fields in listed_fields.items()
        if "outputSchema" in fields
    }
    wire_tools = [
        Tool.model_validate(
            {
                "name": tool_def.name,
                "description": tool_def.description,
                "inputSchema": schemas[tool_def.name],
                "annotations": tool_def.annotations,
                "_meta": _build_meta(tool_def),
            }
        )
        for tool_def in tools
    ]

    # Built on a tool's first call rather than here: checking a schema takes
    # about a millisecond, a server may define many tools it never calls, and
    # a tool whose schema is broken must still be definable and fail at call
    # time the way it always has.
    validators: dict[str, Any] = {}

    async def run_tool(tool_name: str, arguments: dict[str, Any]) -> CallToolResult:
        # The SDK owns these semantics so a tool behaves the same on every
        # supported mcp version: unknown tools, invalid arguments and handler
        # failures all come back as isError results the model can read, never
        # as protocol errors.
        tool_def = tools_by_name.get(tool_name)
        if tool_def is None:
            return _tool_error_result(f"Tool '{tool_name}' not found")
        try:
            validator = validators.get(tool_name)
            if validator is None:
                # A schema that fails its check raises on every call and is
                # never kept, so the error result is the same each time.
                validator = _compile_argument_validator(schemas[tool_name])
                validators[tool_name] = validator
            # best_match picks the error jsonschema.validate would raise.
            error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
            if error is not None:
                return _tool_error_result(f"Input validation error: {error.message}")
            result = await tool_def.handler(arguments)
            payload: dict[str, Any] = {
                "content": _convert_tool_content(result.get("content", [])),
                "isError": result.get("is_error", False),
            }
            # The wire name wins over the snake_case spelling, as for hints.
            structured = result.get(
                "structuredContent", result.get("structured_content")
            )
            if structured is not None:
                payload["structuredContent"] = structured
            problem = _structured_content_problem(
                tool_name, payload, output_validators.get(tool_name)
            )
            if problem is not None:
                return _tool_error_result(problem)
            return CallToolResult.model_validate(payload)
        except Exception as e:
            return _tool_error_result(str(e))

    server = build_tool_server(name, version, wire_tools, run_tool, listed_fields)
    remember_strict_tools(server, strict_tools)

    return McpSdkServerConfig(type="sdk", name=name, instance=server)


__all__ = [
    # Main exports
    "query",
    "__version__",
    # Transport
    "Transport",
    "ClaudeSDKClient",
    # Types
    "PermissionMode",
    "EffortLevel",
    "McpServerConfig",
    "McpSdkServerConfig",
    "McpServerStatus",
    "McpServerStatusConfig",
    "McpServerConnectionStatus",
    "McpServerInfo",
    "McpStatusResponse",
    "McpToolAnnotations",
    "McpToolInfo",
    "UserMessage",
    "AssistantMessage",
    "SystemMessage",
    "SystemInitData",
    "SystemInitMcpServer",
    "SystemInitPlugin",
    "SystemInitPluginError",
    "FastModeState",
    "FastModeDisabledReason",
    "TaskStartedMessage",
    "TaskProgressMessage",
    "TaskUpdatedMessage",
    "TaskNotificationMessage",
    "TaskNotificationStatus",
    "TaskUpdatedStatus",
    "TERMINAL_TASK_STATUSES",
    "TaskUsage",
    "ResultMessage",
    "ModelUsage",
    "DeferredToolUse",
    "RateLimitEvent",
    "RateLimitInfo",
    "RateLimitStatus",
    "RateLimitType",
    "StreamEvent",
    "ConversationResetMessage",
    "Message",
    "MessageOrigin",
    "MessageOriginKind",
    "TaskNotificationOriginSubkind",
    "ClaudeAgentOptions",
    "TaskBudget",
    "TextBlock",
    "ThinkingBlock",
    "ThinkingConfig",
    "ThinkingConfigAdaptive",
    "ThinkingConfigEnabled",
    "ThinkingConfigDisabled",
    "ToolUseBlock",
    "ToolResultBlock",
    "ServerToolName",
    "ServerToolUseBlock",
    "ServerToolResultBlock",
    "ContentBlock",
    "ContextUsageCategory",
    "ContextUsageResponse",
    # Tool callbacks
    "CanUseTool",
    "CanUseToolShadowedWarning",
    "ToolPermissionContext",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionUpdate",
    # Hook support
    "HookCallback",
    "HookContext",
    "HookInput",
    "HookEventMessage",
    "BaseHookInput",
    "PreToolUseHookInput",
    "PostToolUseHookInput",
    "PostToolUseFailureHookInput",
    "PostToolUseFailureHookSpecificOutput",
    "UserPromptSubmitHookInput",
    "StopHookInput",
    "SubagentStopHookInput",
    "PreCompactHookInput",
    "NotificationHookInput",
    "SubagentStartHookInput",
    "PermissionRequestHookInput",
    "NotificationHookSpecificOutput",
    "SubagentStartHookSpecificOutput",
    "PermissionRequestHookSpecificOutput",
    "PreToolUseHookSpecificOutput",
    "PostToolUseHookSpecificOutput",
    "UserPromptSubmitHookSpecificOutput",
    "SessionStartHookSpecificOutput",
    "HookEffort",
    "BackgroundTaskSummary",
    "SessionCronSummary",
    "UserPromptExpansionHookSpecificOutput",
    "PostToolBatchHookSpecificOutput",
    "StopHookSpecificOutput",
    "SubagentStopHookSpecificOutput",
    "PermissionDeniedHookSpecificOutput",
    "PreModelSwitchHookSpecificOutput",
    "PostModelSwitchHookSpecificOutput",
    "ElicitationHookSpecificOutput",
    "ElicitationResultHookSpecificOutput",
    "CwdChangedHookSpecificOutput",
    "FileChangedHookSpecificOutput",
    "WorktreeCreateHookSpecificOutput",
    "MessageDisplayHookSpecificOutput",
    "HookJSONOutput",
    "HookMatcher",
    # Agent support
    "AgentDefinition",
    "SettingSource",
    # Plugin support
    "SdkPluginConfig",
    # Session listing
    "list_sessions",
    "get_session_info",
    "get_session_messages",
    "list_subagents",
    "get_subagent_messages",
    "SDKSessionInfo",
    "SessionMessage",
    # Session store
    "SessionKey",
    "SessionStore",
    "SessionStoreEntry",
    "SessionStoreFlushMode",
    "SessionStoreListEntry",
    "SessionSummaryEntry",
    "SessionListSubkeysKey",
    "InMemorySessionStore",
    "fold_session_summary",
    "MirrorErrorMessage",
    "project_key_for_directory",
    "import_session_to_store",
    # Session listing (SessionStore-backed async variants)
    "list_sessions_from_store",
    "get_session_info_from_store",
    "get_session_messages_from_store",
    "list_subagents_from_store",
    "get_subagent_messages_from_store",
    # Session mutations
    "rename_session",
    "tag_session",
    "delete_session",
    "fork_session",
    "ForkSessionResult",
    # Session mutations (SessionStore-backed async variants)
    "rename_session_via_store",
    "tag_session_via_store",
    "delete_session_via_store",
    "fork_session_via_store",
    # Beta support
    "SdkBeta",
    # Sandbox support
    "SandboxSettings",
    "SandboxNetworkConfig",
    "SandboxIgnoreViolations",
    # MCP Server Support
    "create_sdk_mcp_server",
    "tool",
    "SdkMcpTool",
    "ToolAnnotations",
    # Errors
    "ClaudeSDKError",
    "CLIConnectionError",
    "CLINotFoundError",
    "ProcessError",
    "ResultError",
    "CLIJSONDecodeError",
]
