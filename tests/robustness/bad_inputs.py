"""Every tool definition the fork refuses, and the exact error a user sees.

The cases are data: ``test_bad_inputs.py`` checks each one, and running this
file renders them into docs/refused-definitions.md's table, so the table
is generated from what the tests check and cannot drift (a test compares the
two). Regenerate with ``tools/nox -s docs``.
"""

from __future__ import annotations

import html
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    SdkMcpTool,
    create_sdk_mcp_server,
    tool,
)
from tools.doc_blocks import read_block, write_block

README = Path(__file__).resolve().parents[2] / "docs" / "refused-definitions.md"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"terms": {"type": "array", "items": {"type": "string"}}},
    "required": ["terms"],
    "additionalProperties": False,
}


async def _handler(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


def define(schema: Any = SCHEMA, **kwargs: Any) -> Callable[[], SdkMcpTool[Any]]:
    return lambda: tool("search", "Search", schema, **kwargs)(_handler)


def strict_schema(**property_schema: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"q": {"type": "string", **property_schema}},
        "required": ["q"],
        "additionalProperties": False,
    }


def many_strict_tools(count: int) -> Callable[[], object]:
    def build() -> object:
        tools = [
            tool(f"t{i}", "t", {"type": "object", "properties": {}}, strict=True)(
                _handler
            )
            for i in range(count)
        ]
        return create_sdk_mcp_server("srv", tools=tools)

    return build


def servers_over_the_cap() -> object:
    from claude_agent_sdk._internal.strict.transform import check_request_limits

    def server(name: str, count: int) -> Any:
        tools = [
            tool(f"t{i}", "t", {"type": "object", "properties": {}}, strict=True)(
                _handler
            )
            for i in range(count)
        ]
        return create_sdk_mcp_server(name, tools=tools)

    options = ClaudeAgentOptions(
        mcp_servers={"a": server("a", 11), "b": server("b", 10)}
    )
    check_request_limits(options.mcp_servers)
    return options


def deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def deep_value(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


@dataclass(frozen=True)
class Case:
    id: str
    patch: str
    what: str
    build: Callable[[], object]
    error: type[Exception]


SERVED = "serve-extra-tool-fields"
FIELDS = "tool-field-checks"
RESULTS = "tool-results"
SCHEMAS = "schema-checks"
STRICT = "strict-schema-checks"
CASES = [
    Case("strict-int", SERVED, "`strict=1`", define(strict=1), TypeError),
    Case("strict-str", SERVED, '`strict="yes"`', define(strict="yes"), TypeError),
    Case(
        "examples-not-list",
        SERVED,
        "`input_examples` is a dict",
        define(input_examples={"terms": []}),
        TypeError,
    ),
    Case(
        "example-not-object",
        SERVED,
        "an example that is not an object",
        define(input_examples=[{"terms": ["a"]}, ["a"]]),
        TypeError,
    ),
    Case(
        "example-invalid",
        SERVED,
        "an example the input schema rejects",
        define(input_examples=[{"terms": ["a"]}, {"terms": "a b"}]),
        ValueError,
    ),
    Case(
        "example-nan",
        SERVED,
        "NaN inside an example",
        define(
            {**SCHEMA, "properties": {**SCHEMA["properties"], "x": {"type": "number"}}},
            input_examples=[{"terms": ["a"], "x": math.nan}],
        ),
        ValueError,
    ),
    Case(
        "extra-not-mapping",
        SERVED,
        "`extra_fields` is a list",
        define(extra_fields=[("title", "T")]),
        TypeError,
    ),
    Case(
        "extra-key-not-str",
        SERVED,
        "a non-str key",
        define(extra_fields={1: "one"}),
        TypeError,
    ),
    Case(
        "extra-reserved-name",
        SERVED,
        "a field the SDK builds (`name`)",
        define(extra_fields={"name": "other"}),
        ValueError,
    ),
    Case(
        "extra-reserved-strict",
        SERVED,
        "`strict` through `extra_fields`",
        define(extra_fields={"strict": True}),
        ValueError,
    ),
    Case(
        "extra-reserved-meta",
        SERVED,
        "`_meta` through `extra_fields`",
        define(extra_fields={"_meta": {"anthropic/alwaysLoad": True}}),
        ValueError,
    ),
    Case(
        "extra-tuple",
        FIELDS,
        "a tuple value",
        define(extra_fields={"x-acme": ("a", "b")}),
        TypeError,
    ),
    Case(
        "extra-set",
        SERVED,
        "a set nested in a list",
        define(extra_fields={"x-acme": [1, 2, {"tags": {"a"}}]}),
        TypeError,
    ),
    Case(
        "extra-infinity",
        SERVED,
        "infinity",
        define(extra_fields={"x-limit": math.inf}),
        ValueError,
    ),
    Case(
        "extra-object",
        SERVED,
        "an arbitrary object",
        define(extra_fields={"x-acme": Opaque()}),
        TypeError,
    ),
    Case(
        "extra-title-type",
        SERVED,
        "`title` that is not a string",
        define(extra_fields={"title": 5}),
        ValueError,
    ),
    Case(
        "output-schema-type",
        RESULTS,
        '`output_schema` without `"type": "object"`',
        define(output_schema={"type": "array"}),
        ValueError,
    ),
    Case(
        "output-schema-in-extra-fields",
        RESULTS,
        "`outputSchema` through `extra_fields`",
        define(extra_fields={"outputSchema": {"type": "object"}}),
        ValueError,
    ),
    Case(
        "strict-free-form-map",
        STRICT,
        'strict tool with a free-form object parameter (`{"type": "object"}`, a `dict`)',
        define(
            {
                "type": "object",
                "properties": {"filters": {"type": "object"}},
                "required": ["filters"],
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-map-of-values",
        STRICT,
        "strict tool with an `additionalProperties` schema (a `dict[str, X]`)",
        define(
            {
                "type": "object",
                "properties": {
                    "labels": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                    }
                },
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-array-root",
        STRICT,
        "strict tool whose schema's root is an array",
        define({"type": "array", "items": {"type": "string"}}, strict=True),
        ValueError,
    ),
    Case(
        "strict-misspelled-keyword",
        STRICT,
        "strict tool with a misspelled keyword (`itmes`)",
        define(
            {
                "type": "object",
                "properties": {"terms": {"type": "array", "itmes": {"type": "string"}}},
                "required": ["terms"],
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-shorthand-json-values",
        "json-schema-from-types",
        "strict tool whose dict is JSON Schema with a typo (`proprties`), read "
        "as shorthand",
        define(
            {
                "type": "object",
                "proprties": {"q": {"type": "string"}},
                "required": ["q"],
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-untyped",
        STRICT,
        "strict tool with a property that accepts any value (`{}`)",
        define(
            {"type": "object", "properties": {"q": {"description": "anything"}}},
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-required-undeclared",
        STRICT,
        "strict tool whose `required` lists a name `properties` does not declare",
        define(
            {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q", "page"],
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-untyped-enum",
        STRICT,
        "strict tool with a property typed only by an `enum` of objects or "
        'arrays (`{"enum": [{"k": 1}, "b"]}`)',
        define(
            {"type": "object", "properties": {"q": {"enum": [{"k": 1}, "b"]}}},
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-open-object",
        STRICT,
        "strict tool with `additionalProperties: true`",
        define({**strict_schema(), "additionalProperties": True}, strict=True),
        ValueError,
    ),
    Case(
        "strict-recursive",
        STRICT,
        "strict tool with a recursive `$ref`",
        define(
            {
                "type": "object",
                "properties": {"node": {"$ref": "#/$defs/node"}},
                "required": ["node"],
                "additionalProperties": False,
                "$defs": {
                    "node": {
                        "type": "object",
                        "properties": {"child": {"$ref": "#/$defs/node"}},
                        "additionalProperties": False,
                    }
                },
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "strict-example-open",
        STRICT,
        "strict tool whose example has a key the closed schema refuses",
        define(
            {"type": "object", "properties": {"q": {"type": "string"}}},
            strict=True,
            input_examples=[{"q": "x", "extra": 1}],
        ),
        ValueError,
    ),
    Case(
        "cap-server",
        STRICT,
        "21 strict tools on one server",
        many_strict_tools(21),
        ValueError,
    ),
    Case(
        "cap-query",
        STRICT,
        "21 strict tools across the servers of one query",
        servers_over_the_cap,
        ValueError,
    ),
    Case(
        "extra-fields-too-deep",
        FIELDS,
        "`extra_fields` nested 1,000 levels",
        define(extra_fields={"x-deep": deep_value(1000)}),
        ValueError,
    ),
    Case(
        "external-ref",
        SCHEMAS,
        "strict tool with a `$ref` outside the schema",
        define(
            {
                "type": "object",
                "properties": {"q": {"$ref": "https://x.test/q"}},
                "required": ["q"],
                "additionalProperties": False,
            },
            strict=True,
        ),
        ValueError,
    ),
    Case(
        "schema-too-deep",
        SCHEMAS,
        "strict tool with an input schema nested 1,000 levels",
        define(deep_schema(1000), strict=True),
        ValueError,
    ),
    Case(
        "ecma-pattern-strict",
        SCHEMAS,
        "strict tool whose `pattern` Python cannot compile (`\\p{L}`)",
        define(strict_schema(pattern="^\\p{L}+$"), strict=True),
        ValueError,
    ),
    Case(
        "nan-in-strict-schema",
        SCHEMAS,
        "strict tool with NaN in its schema",
        define(strict_schema(enum=["a", float("nan")]), strict=True),
        ValueError,
    ),
    Case(
        "unevaluated-properties-strict",
        STRICT,
        "strict tool with `unevaluatedProperties: true`",
        define(
            {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "unevaluatedProperties": True,
            },
            strict=True,
        ),
        ValueError,
    ),
]


def error_of(case: Case) -> Exception | None:
    try:
        case.build()
    except Exception as e:
        return e
    return None


def render_table() -> str:
    rows = [
        "| definition | error |",
        "|---|---|",
    ]
    for case in CASES:
        error = error_of(case)
        shown = "(accepted)" if error is None else f"{type(error).__name__}: {error}"
        # One table cell, exactly the message: HTML keeps its line breaks
        # and pipes from being read as Markdown.
        cell = (
            html.escape(shown, quote=False).replace("|", "&#124;").replace("\n", "<br>")
        )
        rows.append(f"| {case.what} | <code>{cell}</code> |")
    return "\n".join(rows)


def readme_section() -> str:
    return read_block(README, "bad-inputs")


def write_readme() -> None:
    write_block(README, "bad-inputs", render_table())


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_readme()
    else:
        print(render_table())
