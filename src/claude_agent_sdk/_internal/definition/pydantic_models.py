"""Pydantic models as SDK tool input schemas.

The schema a model's tool is listed with (``model_input_schema``), each
call validated by the model (``validate_arguments``), the instance for a
handler that asks for it (``handler_takes_model``) and examples as JSON
(``example_to_json``). Usage: docs/pydantic.md; design: docs/internals.md.
"""

from __future__ import annotations

import inspect
import json
import typing
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, TypeVar, cast, overload

import pydantic
import pydantic_core
import typing_extensions
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

from .notices import notice_logger

if TYPE_CHECKING:
    from mcp.types import ToolAnnotations

    from ... import SdkMcpTool

logger = notice_logger(__name__)

ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)

# Where ``_EnforcedConstraints`` notes, inside a generated schema, which of
# its keywords pydantic derived from constraints the model validates. Removed
# from every schema before it is served.
_ENFORCED = "x-claude-agent-sdk-enforced"

# Schema keywords whose values are data, never schemas; not walked.
_DATA_KEYWORDS = frozenset({"default", "enum", "const", "examples", "example"})

# How much of a rejected input an error message quotes.
_INPUT_PREVIEW_CHARS = 60


_Model = TypeVar("_Model", bound=pydantic.BaseModel)
_Result = Awaitable[dict[str, Any]]


class TypedTool(Protocol):
    """``tool()``'s signature: a pydantic model as ``input_schema`` types the
    handler's argument and the examples (``claude_agent_sdk.tool``)."""

    @overload
    def __call__(
        self,
        name: str,
        description: str,
        input_schema: type[_Model],
        annotations: ToolAnnotations | None = None,
        *,
        strict: bool | None = None,
        input_examples: (
            list[dict[str, Any]] | list[_Model] | list[dict[str, Any] | _Model] | None
        ) = None,
        extra_fields: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> Callable[
        [Callable[[_Model], _Result] | Callable[[dict[str, Any]], _Result]],
        SdkMcpTool[_Model],
    ]: ...

    @overload
    def __call__(
        self,
        name: str,
        description: str,
        input_schema: type | dict[str, Any],
        annotations: ToolAnnotations | None = None,
        *,
        strict: bool | None = None,
        input_examples: list[dict[str, Any]] | None = None,
        extra_fields: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> Callable[
        # The same form as the overload above, so that an input_schema typed
        # Any (matching both) keeps the decorator typed.
        [Callable[[Any], _Result] | Callable[[dict[str, Any]], _Result]],
        SdkMcpTool[Any],
    ]: ...


def typed_tool(tool: Callable[..., Any]) -> TypedTool:
    """``tool`` itself, typed as ``TypedTool`` (a decorator on ``tool()``)."""
    return cast("TypedTool", tool)


class ToolArgumentsError(ValueError):
    """A tool call's arguments that the tool's pydantic model rejects.

    The message lists every failing field, by its path in the arguments, with
    pydantic's message for it, so the model that made the call can correct
    all of them at once instead of one per retry.
    """

    def __init__(
        self, tool_name: str, model: type[pydantic.BaseModel], errors: list[str]
    ):
        self.tool_name = tool_name
        self.model = model
        self.errors = errors
        count = len(errors)
        super().__init__(
            f"Input validation error: the arguments of tool '{tool_name}' do not "
            f"match {model.__name__} ({count} error{'s' if count != 1 else ''}):\n"
            + "\n".join(f"  - {error}" for error in errors)
        )


def is_model_class(obj: object) -> TypeGuard[type[pydantic.BaseModel]]:
    """Whether ``obj`` is a pydantic (v2) model class, not an instance.

    ``pydantic.v1`` models and pydantic dataclasses are not ``BaseModel``
    subclasses and are not taken here.
    """
    return isinstance(obj, type) and issubclass(obj, pydantic.BaseModel)


def handler_takes_model(handler: Callable[..., Any], model: type[Any]) -> bool:
    """Whether ``handler`` asked for the model instance rather than the dict.

    It did when its first parameter is annotated with ``model`` (or a model
    class ``model`` derives from), also as a string (``from __future__
    import annotations``). Any other handler (unannotated, ``dict``,
    ``Any``) gets the arguments dict, as upstream passed it.
    """
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    if not parameters:
        return False
    annotation = parameters[0].annotation
    if isinstance(annotation, str):
        try:
            target = handler if inspect.isroutine(handler) else type(handler).__call__
            annotation = typing.get_type_hints(target).get(
                parameters[0].name, annotation
            )
        except Exception:  # an unresolvable name: compare the text
            pass
    if isinstance(annotation, str):
        return annotation.strip("'\"") in (model.__name__, model.__qualname__)
    return (
        isinstance(annotation, type)
        and issubclass(annotation, pydantic.BaseModel)
        and issubclass(model, annotation)
    )


def warn_unknown_schema_class(tool_name: str, declared: object) -> None:
    """Log that ``declared`` is listed, as it always was, as an object
    without properties: the model is told of no parameter, and any
    arguments reach the handler. A log record, never a warning (see
    ``notices``)."""
    if typing_extensions.is_typeddict(declared):
        what = (
            "a typing_extensions TypedDict, which this Python's "
            "typing.is_typeddict does not recognize (define it with "
            "typing.TypedDict to have its fields listed)"
        )
    else:
        what = "neither a dict, a TypedDict nor a pydantic model"
    logger.warning(
        "Tool '%s': input_schema %r is %s; it is served as an object without "
        "properties, which accepts any arguments",
        tool_name,
        declared,
        what,
    )


def model_input_schema(
    model: type[pydantic.BaseModel], *, tool_name: str, strict: bool
) -> dict[str, Any]:
    """The input schema a tool whose ``input_schema`` is ``model`` is listed with.

    Without ``strict`` this is ``model.model_json_schema()`` (validation mode,
    aliases as keys), every keyword kept. With ``strict`` the constraints the
    model enforces and strict mode cannot compile are moved into descriptions
    (see the module docstring); closing objects and refusing the rest is
    ``strict.transform.make_strict``'s work, which runs on the result.

    Raises TypeError naming the tool when the model has no JSON Schema (a
    field type pydantic cannot describe, a forward reference that was never
    resolved) or does not describe a JSON object (a ``RootModel``), and
    ValueError when its schema holds a value JSON cannot represent.
    """
    where = f"Cannot build the input schema of tool {tool_name!r}"
    if issubclass(model, pydantic.RootModel):
        raise TypeError(
            f"{where}: {model.__name__} is a RootModel, but a tool's input is a "
            "JSON object of named arguments; use a BaseModel with fields"
        )
    generator = _EnforcedConstraints if strict else GenerateJsonSchema
    try:
        # What pydantic warns of (a default JSON cannot hold, left out of the
        # schema) is logged: under -W error it would refuse the tool.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            schema = model.model_json_schema(schema_generator=generator)
        for warning in caught:
            logger.warning("Tool '%s': %s", tool_name, warning.message)
    except pydantic.PydanticUserError as e:
        # PydanticInvalidForJsonSchema (a field of a type JSON Schema has no
        # form for) and "not fully defined" (an unresolved forward reference)
        # both land here; their messages say what to change, but not where.
        raise TypeError(
            f"{where} from {model.__name__}{_failing_field(model)}: {e.message}"
        ) from None
    schema = _inline_root_ref(schema)
    if schema.get("type") != "object":
        raise TypeError(
            f"{where}: the JSON Schema of {model.__name__} does not describe a "
            f"JSON object (its type is {schema.get('type')!r}); MCP requires a "
            "tool's input schema to be one"
        )
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{where}: the JSON Schema of {model.__name__} holds a value JSON "
            f"cannot represent ({e})"
        ) from None
    if strict:
        _describe_enforced_constraints(schema)
    return schema


def validate_arguments(
    model: type[ModelT], arguments: Any, *, tool_name: str
) -> ModelT:
    """Validate a tool call's arguments with the tool's model.

    The arguments arrived as JSON, so they are validated as JSON: a model
    with ``strict=True`` in its config then accepts an ISO string for a
    ``datetime`` and an array for a tuple, as its JSON Schema promises, which
    validating the parsed Python values would refuse.

    Raises ToolArgumentsError listing every failing field.
    """
    try:
        return model.model_validate_json(json.dumps(arguments))
    except pydantic.ValidationError as e:
        raise ToolArgumentsError(tool_name, model, _describe_errors(e)) from None


async def call_with_model(tool_def: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run ``tool_def``'s handler on a call its pydantic model validates: the
    handler gets the instance if its parameter is annotated with the model,
    else the arguments dict, as upstream passed."""
    model = tool_def.input_schema
    instance = validate_arguments(model, arguments, tool_name=tool_def.name)
    takes_model = handler_takes_model(tool_def.handler, model)
    return await tool_def.handler(  # type: ignore[no-any-return]
        instance if takes_model else arguments
    )


def example_to_json(
    model: type[pydantic.BaseModel], example: Any, *, tool_name: str, index: int
) -> dict[str, Any]:
    """The JSON object served for ``input_examples[index]`` of a model's tool.

    An instance of ``model`` is dumped as JSON with only the fields that were
    set, so the example shows what its author wrote rather than every
    default, each under the key the model validates (its validation alias,
    the first of ``AliasChoices``, else its alias or name; never a
    serialization alias), which is the key the listed schema names; a dict
    is taken as written. Either way the result is then
    validated by ``model``, so every served example is an input the tool
    accepts (an instance built with ``model_construct`` is not checked when
    it is built). The SDK goes on to check it against the served schema.

    Raises ValueError naming the tool and ``input_examples[index]``.
    """
    where = f"Tool '{tool_name}': input_examples[{index}]"
    if isinstance(example, model):
        try:
            data: Any = _validation_keyed(
                example,
                example.model_dump(mode="json", by_alias=False, exclude_unset=True),
            )
        except pydantic_core.PydanticSerializationError as e:
            raise ValueError(f"{where} cannot be written as JSON: {e}") from None
    elif isinstance(example, dict):
        data = example
    else:
        raise ValueError(
            f"{where} must be a {model.__name__} instance or a JSON object "
            f"(dict), got {type(example).__name__}"
        )
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where} is not JSON: {e}") from None
    try:
        model.model_validate_json(text)
    except pydantic.ValidationError as e:
        errors = _describe_errors(e)
        raise ValueError(
            f"{where} does not match the model {model.__name__} ({len(errors)} "
            f"error{'s' if len(errors) != 1 else ''}):\n"
            + "\n".join(f"  - {error}" for error in errors)
        ) from None
    result: dict[str, Any] = data
    return result


def _validation_keyed(value: Any, dumped: Any) -> Any:
    """``dumped`` (a dump by field name) with each model's fields renamed to
    the keys the model validates, walking ``value`` (what was dumped) beside
    it so that nested models, lists of them and unions are each keyed by
    their own class."""
    if isinstance(value, pydantic.BaseModel) and isinstance(dumped, dict):
        fields = type(value).model_fields
        return {
            _validation_key(key, fields[key]) if key in fields else key: (
                _validation_keyed(getattr(value, key, None), item)
            )
            for key, item in dumped.items()
        }
    sized = isinstance(value, (list, tuple, dict)) and isinstance(dumped, (list, dict))
    same_length = sized and len(value) == len(dumped)
    if same_length and isinstance(value, (list, tuple)) and isinstance(dumped, list):
        return [_validation_keyed(v, d) for v, d in zip(value, dumped, strict=True)]
    if same_length and isinstance(value, dict) and isinstance(dumped, dict):
        pairs = zip(value.values(), dumped.items(), strict=True)
        return {key: _validation_keyed(v, item) for v, (key, item) in pairs}
    return dumped


def _validation_key(name: str, field: pydantic.fields.FieldInfo) -> str:
    """The key under which the model validates field ``name`` (and which its
    validation-mode JSON Schema names)."""
    alias = field.validation_alias
    if isinstance(alias, pydantic.AliasChoices):
        alias = alias.choices[0] if alias.choices else None
    if isinstance(alias, pydantic.AliasPath):
        first = alias.path[0] if len(alias.path) == 1 else None
        alias = first if isinstance(first, str) else None
    if isinstance(alias, str):
        return alias
    return field.alias or name


def _failing_field(model: type[pydantic.BaseModel]) -> str:
    """`` (field 'name')`` for the first field with no JSON Schema, if one is found."""
    for name, field in model.model_fields.items():
        if field.annotation is None:
            continue
        try:
            pydantic.TypeAdapter(field.annotation).json_schema()
        except pydantic.PydanticUserError:
            return f" (field {name!r}: {field.annotation!r})"
        except Exception:  # only a hint for the message; never fail here
            continue
    return ""


def _inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema of a self-referencing model with its root written out.

    Pydantic describes a model that refers to itself (``children:
    list["Node"]``) as ``{"$ref": "#/$defs/Node", "$defs": {...}}``. MCP
    needs ``"type": "object"`` at the root of an ``inputSchema``, so the
    root takes the referenced definition's keywords, and ``$defs`` stays
    whole so the references inside it still resolve.
    """
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    prefix = "#/$defs/"
    if not (isinstance(ref, str) and ref.startswith(prefix) and isinstance(defs, dict)):
        return schema
    target = defs.get(ref[len(prefix) :])
    if not isinstance(target, dict):
        return schema
    rest = {key: value for key, value in schema.items() if key not in ("$ref", "$defs")}
    return {**target, **rest, "$defs": defs}


class _EnforcedConstraints(GenerateJsonSchema):
    """Pydantic's schema generator, noting which keywords the model enforces.

    ``update_with_validations`` is the one place where pydantic turns the
    constraints of its core schema (``ge``, ``max_length``, ``pattern``, ...)
    into JSON Schema keywords, and pydantic-core validates exactly those
    constraints. A keyword written there is therefore enforced by the model
    with the value written; the same keyword added by ``json_schema_extra``
    or a custom ``__get_pydantic_json_schema__`` is not, and is not noted.
    A set's ``uniqueItems`` is noted too: the instance holds a set, so it
    has unique items by construction.
    """

    def update_with_validations(
        self,
        json_schema: JsonSchemaValue,
        core_schema: Any,
        mapping: dict[str, str],
    ) -> None:
        super().update_with_validations(json_schema, core_schema, mapping)
        _note(json_schema, *mapping.values())

    def set_schema(self, schema: Any) -> JsonSchemaValue:
        json_schema = super().set_schema(schema)
        _note(json_schema, "uniqueItems")
        return json_schema

    def frozenset_schema(self, schema: Any) -> JsonSchemaValue:
        json_schema = super().frozenset_schema(schema)
        _note(json_schema, "uniqueItems")
        return json_schema


def _note(json_schema: JsonSchemaValue, *keywords: str) -> None:
    """Note ``keywords`` of ``json_schema``, with their values, as enforced.

    The note is a tuple of ``(keyword, value)`` pairs, not a dict: pydantic
    puts schema values in sets (to drop infinite bounds), so it must be
    hashable.
    """
    written = tuple((key, json_schema[key]) for key in keywords if key in json_schema)
    if written:
        json_schema[_ENFORCED] = (*json_schema.get(_ENFORCED, ()), *written)


def _describe_enforced_constraints(schema: dict[str, Any]) -> None:
    """Move noted, enforced constraints that strict mode rejects into descriptions.

    A keyword moves only if it still has the value pydantic derived from the
    model (a ``json_schema_extra`` that overrode it is not what the model
    enforces). It is appended to the description of the schema that held it,
    as ``{maximum: 50}`` after a blank line, the form ``transform_schema``
    uses (``strict.transform.describe_constraints``, shared with JSON Schema
    tools), and only if strict mode's rule for it says a model enforces it
    (``strict.transform.RULES``, ``pydantic_enforces``). The notes themselves
    are removed everywhere.
    """
    # Strict mode's modules are loaded with the first strict tool only.
    from ..strict.transform import PYDANTIC_DESCRIBED_KEYWORDS, describe_constraints

    for node in _schema_nodes(schema):
        notes = node.pop(_ENFORCED, None)
        if not isinstance(notes, tuple):
            continue
        noted = dict(notes)
        describe_constraints(
            node,
            {
                key
                for key, value in noted.items()
                if key in PYDANTIC_DESCRIBED_KEYWORDS
                and key in node
                and _same_json(node[key], value)
            },
        )


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _schema_nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every dict in ``schema`` outside data keywords, parents first."""
    stack: list[Any] = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            yield value
            stack.extend(v for k, v in value.items() if k not in _DATA_KEYWORDS)
        elif isinstance(value, list):
            stack.extend(value)


def _describe_errors(error: pydantic.ValidationError) -> list[str]:
    """One line per failing field: ``path: message (got <input>)``."""
    lines = []
    for item in error.errors(include_url=False):
        loc = item["loc"]
        path = _path(loc) if loc else "(the arguments as a whole)"
        line = f"{path}: {item['msg']}"
        if loc and item["type"] != "missing" and "input" in item:
            line += f" (got {_preview(item['input'])})"
        lines.append(line)
    return lines


def _path(loc: tuple[int | str, ...]) -> str:
    """``("filters", "terms", 2)`` -> ``filters.terms[2]``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _preview(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _INPUT_PREVIEW_CHARS:
        text = text[: _INPUT_PREVIEW_CHARS - 3] + "..."
    return text
