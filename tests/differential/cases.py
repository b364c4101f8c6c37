"""The differential cases: tools written the way upstream's users write them.

Three sources, each case a dict ``{"id", "tags", "source", "calls"}`` (see
``runner.py`` for what ``source`` defines):

- ``generated_cases()``: drawn by hypothesis (derandomized, so both venvs and
  every run get the same cases): shorthand dicts of every type upstream maps,
  TypedDicts (nested, ``NotRequired``, forward references, ``Annotated``
  descriptions, ``from __future__ import annotations``), JSON Schema dicts
  (combinators, ``$ref``/``$defs``, non-object tops, keyword-named
  properties, remote ``$ref``), valid and invalid arguments, and handler
  results of every shape (odd ``is_error``, ``structuredContent``, content
  items, exceptions, values JSON cannot carry);
- ``corpus_cases()``: every tool input schema of ``tests/data/mcp_corpus.json``
  (published MCP servers' ``tools/list``, each server named there), served
  as an SDK tool's JSON Schema dict;
- ``docs_cases()``: every Python example in README.md and docs/ that defines
  a tool.

``tags`` say what a case is made of; the differences table
(``differences.py``) reads them.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "mcp_corpus.json"

PRELUDE = """\
import datetime
import decimal
import enum
import uuid
import sys
from typing import Annotated, Any, Literal, Optional, Union

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:
    from typing_extensions import NotRequired, Required, TypedDict

from claude_agent_sdk import tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(TypedDict):
    x: int
    y: int
"""

# ---------------------------------------------------------------------------
# Python values as source text


def py(value: Any) -> str:
    """Python source for a JSON-like value (floats JSON cannot carry included)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py(k)}: {py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(py(v) for v in value) + "]"
    if isinstance(value, RaiseSpec):
        return f"Raise({value.message!r})"
    if isinstance(value, BytesSpec):
        return repr(value.data)
    return repr(value)


class RaiseSpec:
    def __init__(self, message: str) -> None:
        self.message = message


class BytesSpec:
    def __init__(self, data: bytes) -> None:
        self.data = data


# ---------------------------------------------------------------------------
# Python types: (source expression, instance strategy or None, tags)

_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12
)
_ints = st.integers(min_value=-(2**40), max_value=2**40)
_floats = st.floats(allow_nan=False, allow_infinity=False, width=32)

SCALAR_TYPES: list[tuple[str, Any, str]] = [
    ("str", _text, "type:str"),
    ("int", _ints, "type:int"),
    ("float", _floats, "type:float"),
    ("bool", st.booleans(), "type:bool"),
    ("list", st.lists(_ints, max_size=3), "type:list"),
    ("dict", st.dictionaries(_text, _ints, max_size=2), "type:dict"),
    ("list[str]", st.lists(_text, max_size=3), "type:list[str]"),
    ("list[int]", st.lists(_ints, max_size=3), "type:list[int]"),
    ("list[float]", st.lists(_floats, max_size=3), "type:list[float]"),
    (
        "list[list[int]]",
        st.lists(st.lists(_ints, max_size=2), max_size=2),
        "type:nested-list",
    ),
    ("dict[str, int]", st.dictionaries(_text, _ints, max_size=2), "type:dict[str,V]"),
    ("dict[str, str]", st.dictionaries(_text, _text, max_size=2), "type:dict[str,V]"),
    (
        "dict[int, str]",
        st.dictionaries(st.integers(0, 9).map(str), _text, max_size=2),
        "type:dict[int,V]",
    ),
    ("Optional[str]", st.one_of(st.none(), _text), "type:optional"),
    ("str | None", st.one_of(st.none(), _text), "type:optional"),
    ("Optional[int]", st.one_of(st.none(), _ints), "type:optional"),
    ("Union[int, str]", st.one_of(_ints, _text), "type:union"),
    ("int | str | None", st.one_of(st.none(), _ints, _text), "type:union-optional"),
    ("Literal['a', 'b']", st.sampled_from(["a", "b", "c"]), "type:literal"),
    ("Literal[1, 2]", st.sampled_from([1, 2, 3]), "type:literal"),
    ("Color", st.sampled_from(["red", "green", "blue"]), "type:enum"),
    ("datetime.date", st.sampled_from(["2024-01-31", "not a date"]), "type:date"),
    (
        "datetime.datetime",
        st.sampled_from(["2024-01-31T10:00:00Z", "yesterday"]),
        "type:datetime",
    ),
    (
        "uuid.UUID",
        st.sampled_from(["12345678-1234-5678-1234-567812345678", "nope"]),
        "type:uuid",
    ),
    ("decimal.Decimal", st.sampled_from(["1.5", 2]), "type:other"),
    ("bytes", st.sampled_from(["abc", 3]), "type:other"),
    ("tuple[int, int]", st.lists(_ints, min_size=2, max_size=2), "type:other"),
    ("set[str]", st.lists(_text, max_size=2), "type:other"),
    ("Any", st.one_of(_ints, _text, st.none()), "type:other"),
    ("Annotated[str, 'A description']", _text, "type:annotated"),
    ("Annotated[int, 'How many']", _ints, "type:annotated"),
    (
        "Annotated[Optional[int], 'Maybe a number']",
        st.one_of(st.none(), _ints),
        "type:annotated-optional",
    ),
    ("list[Annotated[str, 'An item']]", st.lists(_text, max_size=2), "type:annotated"),
    ("Point", st.fixed_dictionaries({"x": _ints, "y": _ints}), "type:typeddict"),
    (
        "list[Point]",
        st.lists(st.fixed_dictionaries({"x": _ints, "y": _ints}), max_size=2),
        "type:typeddict",
    ),
    (
        "Optional[Point]",
        st.one_of(st.none(), st.fixed_dictionaries({"x": _ints, "y": _ints})),
        "type:optional",
    ),
]

_NAMES = st.sampled_from(
    ["query", "limit", "path", "tags", "city", "page", "mode", "when", "id", "flag"]
)
# Property names that are also JSON Schema keywords: upstream reads a
# shorthand dict with "type" and "properties" keys as JSON Schema.
_KEYWORD_NAMES = st.sampled_from(["type", "properties", "required", "items", "enum"])


@st.composite
def _wrong(draw: Any, expected: Any) -> Any:
    """A value of another JSON type than ``draw(expected)`` tends to give."""
    return draw(st.sampled_from([None, "x", 7, 1.5, True, [1], {"k": 1}]))


# ---------------------------------------------------------------------------
# Handler results


_content_item = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.just({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
    st.just({"type": "resource_link", "uri": "file:///a", "name": "a"}),
    st.just({"type": "resource_link"}),
    st.just({"type": "resource", "resource": {"uri": "file:///t", "text": "hi"}}),
    st.just({"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk="}}),
    st.just({"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}),
    st.just({"type": "text", "text": "t", "annotations": {"priority": 1}}),
)

_IS_ERROR = [True, False, 0, 1, "false", "true", None, "yes", 2]


@st.composite
def _result(draw: Any) -> tuple[Any, list[str]]:
    kind = draw(
        st.sampled_from(
            ["content", "content", "is_error", "structured", "raise", "odd", "unjson"]
        )
    )
    content = draw(st.lists(_content_item, max_size=3))
    if kind == "content":
        return {"content": content}, ["result:content"]
    if kind == "is_error":
        value = draw(st.sampled_from(_IS_ERROR))
        tag = (
            "result:is_error-bool" if isinstance(value, bool) else "result:is_error-odd"
        )
        return {"content": content, "is_error": value}, [tag]
    if kind == "structured":
        structured = draw(
            st.dictionaries(st.sampled_from(["a", "b"]), _ints, max_size=2)
        )
        return (
            {"content": content, "structuredContent": structured},
            ["result:structured"],
        )
    if kind == "raise":
        return RaiseSpec(draw(st.sampled_from(["boom", "", "bad input: x"]))), [
            "result:raise"
        ]
    if kind == "odd":
        value = draw(
            st.sampled_from(
                [
                    {},
                    None,
                    "just text",
                    {"content": "text"},
                    {"content": [{"text": "no type"}]},
                    {"content": [{"type": "text"}]},
                    {"content": None},
                ]
            )
        )
        return value, ["result:odd"]
    value = draw(
        st.sampled_from(
            [
                {"content": [{"type": "text", "text": float("nan")}]},
                {"content": [{"type": "text", "text": BytesSpec(b"raw")}]},
                {
                    "content": [
                        {
                            "type": "image",
                            "data": BytesSpec(b"\x89PNG"),
                            "mimeType": "image/png",
                        }
                    ]
                },
                {
                    "content": [{"type": "text", "text": "ok"}],
                    "structuredContent": {"v": float("nan")},
                },
            ]
        )
    )
    return value, ["result:unjson"]


# ---------------------------------------------------------------------------
# Tools


class _Tool:
    def __init__(self, name: str, schema_src: str, tags: list[str]) -> None:
        self.name = name
        self.schema_src = schema_src
        self.tags = tags
        self.calls: list[Any] = []
        self.results: list[Any] = []


@st.composite
def _shorthand_tool(draw: Any, name: str) -> tuple[_Tool, list[str]]:
    fields = draw(
        st.lists(
            st.tuples(
                st.one_of(_NAMES, _KEYWORD_NAMES) if draw(st.booleans()) else _NAMES,
                st.sampled_from(SCALAR_TYPES),
            ),
            min_size=0,
            max_size=4,
            unique_by=lambda f: f[0],
        )
    )
    tags = ["schema:shorthand", *[t[2] for _, t in fields]]
    if any(n in ("type", "properties") for n, _ in fields):
        tags.append("schema:shorthand-keyword-names")
    src = "{" + ", ".join(f"{n!r}: {t[0]}" for n, t in fields) + "}"
    tool = _Tool(name, src, tags)
    valid = draw(st.fixed_dictionaries({n: t[1] for n, t in fields}))
    tool.calls.append(valid)
    if fields:
        (first, _), *_ = fields
        broken = dict(valid)
        broken[first] = draw(_wrong(None))
        tool.calls.append(broken)
        tool.calls.append({})
    tool.calls.append({**valid, "unexpected": 1})
    return tool, []


@st.composite
def _typeddict_tool(draw: Any, name: str, index: int) -> tuple[_Tool, list[str]]:
    cls = f"Args{index}"
    later = f"Later{index}"
    fields = draw(
        st.lists(
            st.tuples(
                _NAMES,
                st.sampled_from(SCALAR_TYPES),
                st.sampled_from(["", "NotRequired", "Required"]),
            ),
            min_size=1,
            max_size=4,
            unique_by=lambda f: f[0],
        )
    )
    total = draw(st.booleans())
    forward = draw(st.booleans())
    tags = ["schema:typeddict", *[t[2] for _, t, _ in fields]]
    lines = [f"class {cls}(TypedDict{'' if total else ', total=False'}):"]
    strategies: dict[str, Any] = {}
    for field, (type_src, strategy, _), wrapper in fields:
        annotation = f"{wrapper}[{type_src}]" if wrapper else type_src
        lines.append(f"    {field}: {annotation}")
        strategies[field] = strategy
        if wrapper:
            tags.append(f"typeddict:{wrapper}")
    if forward:
        # A field typed with a class defined after the tool, as a string.
        lines.append(f"    later: '{later}'")
        strategies["later"] = st.fixed_dictionaries({"z": _text})
        tags.append("typeddict:forward-ref")
    if draw(st.booleans()):
        lines.append(f"    described: Annotated[str, 'Described {index}']")
        strategies["described"] = _text
    before = "\n".join(lines) + "\n"
    after = f"class {later}(TypedDict):\n    z: str\n" if forward else ""
    tool = _Tool(name, cls, tags)
    valid = draw(st.fixed_dictionaries(strategies))
    tool.calls += [valid, {}, {**valid, list(strategies)[0]: draw(_wrong(None))}]
    return tool, [before, after]


# JSON Schema nodes: (schema, instance strategy)
def _leaf() -> Any:
    return st.one_of(
        st.just(({"type": "string"}, _text)),
        st.just(({"type": "string", "description": "Some text"}, _text)),
        st.just(
            ({"type": "string", "enum": ["a", "b"]}, st.sampled_from(["a", "b", "z"]))
        ),
        st.just(
            ({"type": "string", "format": "date"}, st.sampled_from(["2024-01-01", "x"]))
        ),
        st.just(
            ({"type": "string", "pattern": "^[a-z]+$"}, st.sampled_from(["abc", "A1"]))
        ),
        st.just(({"type": "string", "minLength": 2, "maxLength": 5}, _text)),
        st.just(({"type": "integer"}, _ints)),
        st.just(
            ({"type": "integer", "minimum": 1, "maximum": 50}, st.integers(-2, 60))
        ),
        st.just(({"type": "number"}, _floats)),
        st.just(({"type": "boolean"}, st.booleans())),
        st.just(({"type": "null"}, st.none())),
        st.just(({"type": ["string", "null"]}, st.one_of(st.none(), _text))),
        st.just(({"const": "fixed"}, st.sampled_from(["fixed", "other"]))),
        st.just(({}, st.one_of(_ints, _text))),
        st.just(({"type": "string", "default": "d"}, _text)),
    )


def _node(depth: int) -> Any:
    if depth <= 0:
        return _leaf()

    child = _node(depth - 1)

    @st.composite
    def array(draw: Any) -> tuple[dict[str, Any], Any]:
        item, strategy = draw(child)
        schema: dict[str, Any] = {"type": "array", "items": item}
        if draw(st.booleans()):
            schema["minItems"] = 1
        return schema, st.lists(strategy, max_size=2)

    @st.composite
    def obj(draw: Any) -> tuple[dict[str, Any], Any]:
        props = draw(
            st.lists(st.tuples(_NAMES, child), max_size=3, unique_by=lambda p: p[0])
        )
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {n: s for n, (s, _) in props},
        }
        if props and draw(st.booleans()):
            schema["required"] = [props[0][0]]
        extra = draw(st.sampled_from([None, False, True, {"type": "string"}]))
        if extra is not None:
            schema["additionalProperties"] = extra
        return schema, st.fixed_dictionaries({n: s for n, (_, s) in props})

    @st.composite
    def combo(draw: Any) -> tuple[dict[str, Any], Any]:
        keyword = draw(st.sampled_from(["anyOf", "oneOf", "allOf"]))
        options = draw(st.lists(child, min_size=1, max_size=3))
        return {keyword: [s for s, _ in options]}, st.one_of(*[s for _, s in options])

    return st.one_of(child, array(), obj(), combo())


@st.composite
def _json_schema_tool(draw: Any, name: str) -> tuple[_Tool, list[str]]:
    shape = draw(
        st.sampled_from(
            [
                "object", "object", "object", "no-properties", "properties-no-type",
                "non-object-top", "type-list-top", "ref-top", "defs", "keyword-names",
                "remote-ref", "combinator-top", "schema-keyword",
            ]
        )
    )  # fmt: skip
    props = draw(
        st.lists(st.tuples(_NAMES, _node(2)), max_size=4, unique_by=lambda p: p[0])
    )
    properties = {n: s for n, (s, _) in props}
    strategies = {n: s for n, (_, s) in props}
    required = [n for n, _ in props[: draw(st.integers(0, len(props)))]]
    schema: dict[str, Any]
    if shape in ("object", "schema-keyword"):
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        extra = draw(st.sampled_from([None, False, True]))
        if extra is not None:
            schema["additionalProperties"] = extra
        if shape == "schema-keyword":
            schema["$schema"] = draw(
                st.sampled_from(
                    [
                        "http://json-schema.org/draft-07/schema#",
                        "https://json-schema.org/draft/2020-12/schema",
                    ]
                )
            )
    elif shape == "no-properties":
        schema = draw(
            st.sampled_from(
                [
                    {"type": "object"},
                    {"type": "object", "additionalProperties": {"type": "string"}},
                    {"type": "object", "required": ["a"]},
                    {"type": "object", "additionalProperties": False},
                ]
            )
        )
        strategies = {"a": _text}
    elif shape == "properties-no-type":
        schema = {"properties": properties, "required": required}
    elif shape == "non-object-top":
        item, strategy = draw(_node(1))
        schema = draw(
            st.sampled_from(
                [
                    {"type": "array", "items": item},
                    {"type": "string"},
                    {"type": "array", "properties": properties},
                ]
            )
        )
    elif shape == "type-list-top":
        schema = {"type": ["object", "null"], "properties": properties}
    elif shape == "ref-top":
        schema = {
            "$ref": "#/$defs/Args",
            "$defs": {"Args": {"type": "object", "properties": properties}},
        }
    elif shape == "defs":
        schema = {
            "type": "object",
            "properties": {**properties, "point": {"$ref": "#/$defs/Point"}},
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}},
                    "required": ["x"],
                },
                "Unused": {"type": "object", "additionalProperties": True},
            },
        }
        strategies["point"] = st.sampled_from([{"x": 1}, {"x": "one"}, {}])
    elif shape == "keyword-names":
        schema = {
            "type": "object",
            "properties": {
                "type": {"type": "string"},
                "properties": {"type": "object"},
                **properties,
            },
            "required": ["type"],
        }
        strategies.update(type=_text, properties=st.just({"a": 1}))
    elif shape == "remote-ref":
        schema = {
            "type": "object",
            "properties": {
                **properties,
                "remote": {"$ref": "https://schemas.invalid/thing.json"},
            },
        }
        strategies["remote"] = _text
    elif shape == "combinator-top":
        schema = {
            "anyOf": [
                {"type": "object", "properties": properties},
                {"type": "object", "properties": {"alt": {"type": "string"}}},
            ]
        }
        strategies["alt"] = _text
    else:  # pragma: no cover - every shape is listed above
        raise AssertionError(shape)
    tool = _Tool(name, py(schema), ["schema:json", f"json:{shape}"])
    valid = draw(st.fixed_dictionaries(strategies))
    tool.calls += [valid, {}]
    if strategies:
        tool.calls.append({**valid, list(strategies)[0]: draw(_wrong(None))})
    tool.calls.append({**valid, "unexpected": "x"})
    return tool, []


# Shorthand whose values are strings (type names as text): upstream serves each
# as a required string parameter, whatever the name, keyword names included.
_STRING_SHORTHAND_NAMES = st.sampled_from(
    ["title", "body", "labels", "description", "required", "name", "type", "$ref"]
)


@st.composite
def _string_shorthand_tool(draw: Any, name: str) -> tuple[_Tool, list[str]]:
    fields = draw(
        st.lists(
            st.tuples(
                st.one_of(_STRING_SHORTHAND_NAMES, _NAMES),
                st.sampled_from(["str", "int", "bool", "list", "dict", "object"]),
            ),
            min_size=1,
            max_size=4,
            unique_by=lambda f: f[0],
        )
    )
    src = "{" + ", ".join(f"{n!r}: {t!r}" for n, t in fields) + "}"
    tool = _Tool(name, src, ["schema:shorthand", "schema:string-shorthand"])
    valid = {n: draw(st.text(max_size=5)) for n, _ in fields}
    tool.calls += [valid, {}]
    return tool, []


@st.composite
def generated_case(draw: Any) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    tools: list[_Tool] = []
    before: list[str] = []
    after: list[str] = []
    index = draw(st.integers(0, 10_000))
    for position in range(count):
        name = f"t{position}"
        kind = draw(
            st.sampled_from(["shorthand", "typeddict", "json", "json", "strings"])
        )
        if kind == "shorthand":
            tool, _ = draw(_shorthand_tool(name))
        elif kind == "strings":
            tool, _ = draw(_string_shorthand_tool(name))
        elif kind == "typeddict":
            tool, (b, a) = draw(_typeddict_tool(name, index * 10 + position))
            before.append(b)
            after.append(a)
        else:
            tool, _ = draw(_json_schema_tool(name))
        for _ in tool.calls:
            result, tags = draw(_result())
            tool.results.append(result)
            tool.tags += tags
        tools.append(tool)
    tags = sorted({t for tool in tools for t in tool.tags})
    future = draw(st.booleans())
    duplicate = count > 1 and draw(st.integers(0, 9)) == 9
    if duplicate:
        # A framework binding one tool twice: the same name on two tools.
        tools[-1].name = tools[0].name
        tags.append("server:duplicate-names")
    if future:
        tags.append("source:future-annotations")
    lines = ["from __future__ import annotations"] if future else []
    lines += [PRELUDE, *before]
    for position, tool in enumerate(tools):
        description = draw(st.sampled_from(["Does a thing", "", "Ünïcödé — tool"]))
        lines.append(
            f"@tool({tool.name!r}, {description!r}, {tool.schema_src})\n"
            f"async def handler_{position}(args):\n"
            f"    return await respond({tool.name!r}, args)\n"
        )
    lines += after
    lines.append(f"TOOLS = [{', '.join(f'handler_{i}' for i in range(len(tools)))}]")
    results = [result for tool in tools for result in tool.results]
    lines.append("RESULTS = " + py(results))
    calls = [
        {"name": tool.name, "arguments": arguments}
        for tool in tools
        for arguments in tool.calls
    ]
    calls.append({"name": "no_such_tool", "arguments": {}})
    return {"tags": tags, "source": "\n".join(lines) + "\n", "calls": calls}


def generated_cases(count: int) -> list[dict[str, Any]]:
    """``count`` cases, the same ones on every run (derandomized hypothesis)."""
    drawn: list[dict[str, Any]] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(generated_case())
    def collect(case: dict[str, Any]) -> None:
        drawn.append(case)

    collect()
    seen: set[str] = set()
    cases: list[dict[str, Any]] = []
    for case in drawn:
        key = json.dumps(case, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        cases.append({"id": f"generated-{len(cases):04d}", **case})
    return cases


# ---------------------------------------------------------------------------
# Published MCP servers' schemas and the docs' examples


def corpus_cases() -> list[dict[str, Any]]:
    if not CORPUS.exists():
        return []
    corpus = json.loads(CORPUS.read_text("utf-8"))
    cases = []
    for server in corpus["servers"]:
        for listed in server["tools"]:
            schema = listed.get("inputSchema")
            if not isinstance(schema, dict):
                continue
            source = (
                PRELUDE
                + f"@tool({listed['name']!r}, {listed.get('description') or ''!r}, {py(schema)})\n"
                "async def handler(args):\n"
                f"    return await respond({listed['name']!r}, args)\n"
                "TOOLS = [handler]\n"
                "RESULTS = []\n"
            )
            cases.append(
                {
                    "id": f"corpus-{server['name']}-{listed['name']}",
                    "tags": ["schema:json", "corpus"],
                    "source": source,
                    "calls": [
                        {"name": listed["name"], "arguments": {}},
                        {"name": listed["name"], "arguments": {"unexpected": 1}},
                    ],
                }
            )
    return cases


_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NEW_ARGUMENTS = (
    "strict=",
    "input_examples=",
    "extra_fields=",
    "output_schema=",
    "tool_fields_relay=",
    "tool_fields_report=",
)


def docs_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in DOC_FILES:
        for number, block in enumerate(_BLOCK.findall(path.read_text("utf-8"))):
            if "@tool(" not in block:
                continue
            tags = ["docs"]
            if any(arg in block for arg in NEW_ARGUMENTS) or "BaseModel" in block:
                tags.append("opt-in")
            source = (
                block + "\nfrom claude_agent_sdk import SdkMcpTool as _SdkMcpTool\n"
                "TOOLS = [v for v in list(globals().values())"
                " if isinstance(v, _SdkMcpTool)]\n"
            )
            cases.append(
                {
                    "id": f"docs-{path.stem}-{number}",
                    "tags": tags,
                    "source": source,
                    "calls": [],
                }
            )
    return cases


def _tool_case(
    key: str,
    tags: list[str],
    header: str,
    schema: str,
    calls: list[Any],
    footer: str = "",
) -> dict[str, Any]:
    source = (
        PRELUDE + header + f"@tool('t', 'A tool', {schema})\n"
        "async def handler(args):\n"
        "    return await respond('t', args)\n" + footer + "TOOLS = [handler]\n"
        "RESULTS = []\n"
    )
    return {
        "id": f"named-{key}",
        "tags": ["named", *tags],
        "source": source,
        "calls": [{"name": "t", "arguments": a} for a in calls],
    }


def named_cases() -> list[dict[str, Any]]:
    """One case for each class the generators draw only by chance."""
    return [
        _tool_case(
            "metaschema-failure",
            ["schema:json"],
            "",
            py({"type": "object", "properties": {"q": {"type": "strng"}}}),
            [{"q": "x"}],
        ),
        _tool_case(
            "misspelled-keyword",
            ["schema:json"],
            "",
            py(
                {
                    "type": "object",
                    "properties": {
                        "mode": {"type": "string", "enum": ["any", "all"]},
                        "terms": {"type": "array", "itmes": {"type": "string"}},
                    },
                    "requried": ["mode"],
                }
            ),
            [{"mode": "any", "terms": ["a", 1]}, {}],
        ),
        _tool_case(
            "uncompilable-pattern",
            ["schema:json"],
            "",
            py(
                {
                    "type": "object",
                    "properties": {"q": {"type": "string", "pattern": "^\\p{L}+$"}},
                }
            ),
            [{"q": "x"}],
        ),
        _tool_case(
            "local-ref-to-nothing",
            ["schema:json"],
            "",
            py({"type": "object", "properties": {"q": {"$ref": "#/$defs/nope"}}}),
            [{"q": "x"}, {}],
        ),
        _tool_case(
            "deep-nesting",
            ["schema:json"],
            "DEEP = {'type': 'string'}\nfor _ in range(200):\n"
            "    DEEP = {'type': 'object', 'properties': {'a': DEEP}}\n",
            "DEEP",
            [{}],
        ),
        _tool_case(
            "dataclass",
            ["schema:class"],
            "import dataclasses\n@dataclasses.dataclass\nclass Args:\n    q: str\n",
            "Args",
            [{"q": "x"}, {}],
        ),
        _tool_case(
            "typing-extensions-typeddict",
            ["schema:class"],
            "import typing_extensions\nclass Args(typing_extensions.TypedDict):\n    q: str\n",
            "Args",
            [{"q": "x"}, {}],
        ),
        _tool_case(
            "pydantic-model",
            ["schema:model", "opt-in"],
            "import pydantic\nclass Args(pydantic.BaseModel):\n    q: str\n",
            "Args",
            [{"q": "x"}, {}],
        ),
        _tool_case(
            "optional-and-literal",
            ["schema:shorthand"],
            "",
            "{'q': Optional[str], 'mode': Literal['a', 'b'], 'on': datetime.date}",
            [
                {"q": None, "mode": "c", "on": "x"},
                {"q": "x", "mode": "a", "on": "2024-01-01"},
            ],
        ),
        _tool_case(
            # A $ref to a file jsonschema.validate can read: upstream reads
            # and enforces it on every call (warning that remote retrieval
            # is deprecated, an error result under -W error), the fork reads
            # it once and enforces it the same way.
            "file-ref",
            ["schema:json"],
            "import json, pathlib, tempfile\n"
            "COUNT = pathlib.Path(tempfile.gettempdir()) / 'differential-count.json'\n"
            "COUNT.write_text(json.dumps({'type': 'integer', 'minimum': 1}))\n",
            "{'type': 'object', 'properties': {'n': {'$ref': COUNT.as_uri()}}}",
            [{"n": "x"}, {"n": 0}, {"n": 2}],
        ),
        _tool_case(
            # The schema dict changed in place after the first call: upstream
            # validates every call against it as it is then.
            "mutated-schema",
            ["schema:json"],
            "SCHEMA = {'type': 'object', 'properties': {'n': {'type': 'integer'}}}\n",
            "SCHEMA",
            [{"n": 9}, {"n": 9}, {"n": 1}],
            footer="_respond = respond\n"
            "async def respond(tool_name, args):\n"
            "    SCHEMA['properties']['n']['maximum'] = 5\n"
            "    return await _respond(tool_name, args)\n",
        ),
        _tool_case(
            # A handler that reports failure in MCP's spelling, isError:
            # upstream answers it as a success.
            "is-error-wire-name",
            ["schema:shorthand", "result:isError"],
            "",
            "{'fail': bool}",
            [{"fail": True}, {"fail": False}],
            footer="_respond = respond\n"
            "async def respond(tool_name, args):\n"
            "    await _respond(tool_name, args)\n"
            "    text = [{'type': 'text', 'text': 'no such page'}]\n"
            "    return {'content': text, 'isError': args['fail']}\n",
        ),
        _tool_case(
            "forward-reference",
            ["schema:typeddict", "typeddict:forward-ref"],
            "class Args(TypedDict):\n    later: 'Later'\n",
            "Args",
            [{"later": {"z": "x"}}, {}],
            footer="class Later(TypedDict):\n    z: str\n",
        ),
    ]


def all_cases(generated: int) -> list[dict[str, Any]]:
    return [*generated_cases(generated), *named_cases(), *corpus_cases(), *docs_cases()]


def main(argv: list[str]) -> int:
    """``python -m tests.differential.cases OUT GENERATED [--no-corpus]``:
    write the cases (``GENERATED`` of them drawn, then the named, corpus and
    docs cases)."""
    out, generated, *options = argv
    cases = all_cases(int(generated))
    if "--no-corpus" in options:
        cases = [c for c in cases if not c["id"].startswith("corpus-")]
    Path(out).write_text(json.dumps(cases), "utf-8")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
