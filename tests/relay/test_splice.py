"""Property tests of the relay's splice (patch ``relay-request-rewrite``).

Claude Code writes its request bodies with JavaScript's ``JSON.stringify``:
numbers in any spelling JSON allows (``1e-7``, ``1e+21``, ``-0``, integers
beyond 2**53), lone UTF-16 surrogates as ``\\ud800`` escapes, escapes or raw
text for the rest, and strings that contain ``"tools"`` or a tool's name.
Whatever it sends, the relay must only insert the declared fields into the
declared entries, leave every other byte as sent, and never fail: a body it
cannot change safely goes out unchanged, with the tools that lost their
fields named.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.lib.examples import examples
from tests.relay.cases import EXAMPLES, FIELDS, PLAIN, STRICT

try:
    from claude_agent_sdk._internal.relay.rewrite import rewrite_body
except ImportError:  # a tree without the patch: these tests must fail
    rewrite_body = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("relay-request-rewrite")

SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
INSERTED = (
    ',"strict":true,"input_examples":' + json.dumps(EXAMPLES, separators=(",", ":"))
).encode()

# -- JavaScript-style JSON, as (text, value) pairs -----------------------------

_NUMBER_SPELLINGS = [
    "0",
    "-0",
    "-0.0",
    "1e-6",
    "1e-7",
    "1E-7",
    "1e+21",
    "1e21",
    "1.5e+300",
    "-2.5e-308",
    "5e-324",
    "1.7976931348623157e+308",
    "9007199254740993",
    "12345678901234567890123456789",
    "-12345678901234567890",
    "0.1",
    "123.456e2",
]
numbers = st.one_of(
    st.sampled_from(_NUMBER_SPELLINGS),
    st.from_regex(
        r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,17})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
    ),
).map(lambda text: (text, json.loads(text)))

_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"]
_TRICKY = [
    '"tools"',
    '"tools":[',
    STRICT,
    PLAIN,
    f'{{"name":"{STRICT}"}}',
    "\\",
    '"',
    "\u2028",
    "\u2029",
    "\x00",
    "\x1f",
    "\x7f",
    "/",
    "</script>",
    "é",
    "📚",
]
characters = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(_SURROGATES),
    st.sampled_from(list("\b\f\n\r\t")),
)
python_strings = st.one_of(
    st.lists(st.one_of(characters, st.sampled_from(_TRICKY)), max_size=12).map("".join),
    st.sampled_from(_TRICKY),
)


@st.composite
def js_strings(draw: st.DrawFn, value: str | None = None) -> tuple[str, str]:
    """A JSON string literal for ``value`` (drawn if None), each character
    escaped or raw as a JSON writer may choose, lone surrogates escaped."""
    text = draw(python_strings) if value is None else value
    out = ['"']
    short = {
        '"': '\\"',
        "\\": "\\\\",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
    }
    for char in text:
        code = ord(char)
        if char in short:
            out.append(short[char])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        elif value is None and draw(st.integers(0, 5)) == 0:  # escape it anyway
            if code > 0xFFFF:
                high, low = divmod(code - 0x10000, 0x400)
                out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04X}")
            else:
                out.append(f"\\u{code:04X}" if code % 2 else f"\\u{code:04x}")
        elif char == "/" and value is None and draw(st.booleans()):
            out.append("\\/")
        else:
            out.append(char)
    out.append('"')
    return "".join(out), text


separators = st.sampled_from(["", "", "", " ", "\n  ", "\t"])
scalars = st.one_of(
    numbers,
    js_strings(),
    st.sampled_from([("true", True), ("false", False), ("null", None)]),
)


def _join(items: list[tuple[str, Any]], ws: str, open_: str, close: str) -> str:
    return open_ + ws + ("," + ws).join(text for text, _ in items) + ws + close


@st.composite
def _member(
    draw: st.DrawFn, values: st.SearchStrategy[tuple[str, Any]]
) -> tuple[str, Any]:
    key_text, key = draw(js_strings())
    ws = draw(separators)
    value_text, value = draw(values)
    return f"{key_text}{ws}:{ws}{value_text}", (key, value)


def _objects(
    values: st.SearchStrategy[tuple[str, Any]],
) -> st.SearchStrategy[tuple[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> tuple[str, Any]:
        members = draw(
            st.lists(_member(values), max_size=4, unique_by=lambda m: m[1][0])
        )
        ws = draw(separators)
        return _join([(t, None) for t, _ in members], ws, "{", "}"), {
            k: v for _, (k, v) in members
        }

    return build()


def _arrays(
    values: st.SearchStrategy[tuple[str, Any]],
) -> st.SearchStrategy[tuple[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> tuple[str, Any]:
        items = draw(st.lists(values, max_size=4))
        return _join(items, draw(separators), "[", "]"), [v for _, v in items]

    return build()


json_values = st.recursive(
    scalars, lambda inner: st.one_of(_objects(inner), _arrays(inner)), max_leaves=12
)


@st.composite
def tool_entries(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from([STRICT, STRICT, PLAIN, "Bash", "ToolSearch"]))
    members: list[tuple[str, tuple[str, Any]]] = [
        (f'"name":{draw(js_strings(name))[0]}', ("name", name))
    ]
    description_text, description = draw(js_strings())
    members.append((f'"description":{description_text}', ("description", description)))
    schema_text, schema = draw(_objects(json_values))
    members.append((f'"input_schema":{schema_text}', ("input_schema", schema)))
    if draw(st.booleans()):
        members.append(('"defer_loading":true', ("defer_loading", True)))
    order = draw(st.permutations(range(len(members))))
    chosen = [members[i] for i in order]
    ws = draw(separators)
    return _join([(t, None) for t, _ in chosen], ws, "{", "}"), dict(
        v for _, v in chosen
    )


@st.composite
def request_bodies(draw: st.DrawFn) -> tuple[bytes, dict[str, Any]]:
    """A JavaScript-style Messages API body and its value."""
    tools = draw(st.lists(tool_entries(), min_size=1, max_size=5))
    ws = draw(separators)
    tools_text = _join(tools, ws, "[", "]")
    others = draw(
        st.lists(
            _member(json_values).filter(lambda m: m[1][0] != "tools"),
            max_size=4,
            unique_by=lambda m: m[1][0],
        )
    )
    content_text, content = draw(js_strings())
    members = [
        (
            f'"messages":[{{"role":"user","content":{content_text}}}]',
            ("messages", [{"role": "user", "content": content}]),
        ),
        (f'"tools"{ws}:{ws}{tools_text}', ("tools", [v for _, v in tools])),
        *[(t, kv) for t, kv in others if kv[0] != "messages"],
    ]
    order = draw(st.permutations(range(len(members))))
    chosen = [members[i] for i in order]
    text = _join([(t, None) for t, _ in chosen], draw(separators), "{", "}")
    return text.encode("utf-8"), dict(kv for _, kv in chosen)


# -- the properties -----------------------------------------------------------


@SETTINGS
@given(request_bodies())
def test_only_the_declared_fields_are_inserted_and_every_other_byte_kept(
    drawn: tuple[bytes, dict[str, Any]],
) -> None:
    body, _ = drawn
    # (The drawn value, read as JSON reads it: adjacent lone surrogates pair.)
    value = json.loads(body)
    rewrite = rewrite_body(body, FIELDS)
    declared = [t for t in value["tools"] if t["name"] == STRICT]
    assert rewrite.unchanged_because is None
    assert rewrite.modified_tools == [STRICT] * len(declared)
    # Byte for byte: the result is the body with the members inserted.
    assert rewrite.body.count(INSERTED) == len(declared)
    assert rewrite.body.replace(INSERTED, b"") == body
    # And as JSON: the same request, the fields added to the declared entries.
    for entry in declared:
        entry.update(strict=True, input_examples=EXAMPLES)
    assert json.loads(rewrite.body) == value
    if declared:
        assert rewrite.added_strict and rewrite.added_examples


@SETTINGS
@given(request_bodies(), st.data())
def test_a_body_that_is_not_json_goes_out_unchanged_and_names_the_tools(
    drawn: tuple[bytes, dict[str, Any]], data: st.DataObject
) -> None:
    body, _ = drawn
    cut = data.draw(st.integers(1, len(body) - 1))
    broken = data.draw(
        st.sampled_from(
            [body[:cut], body[:cut] + b"}" + body[cut:], body + b"x", b"\xff" + body]
        )
    )
    try:
        json.loads(broken)
    except ValueError:
        pass
    else:  # still JSON: not this property's case
        return
    rewrite = rewrite_body(broken, FIELDS)
    tools_key = [m.start() for m in re.finditer(rb'"tools"\s*:', body)][-1]
    if rewrite.modified_tools:
        # The relay does not read the conversation before the top-level
        # tools key (issue 27: cost proportional to the tools): a body broken
        # there only, still broken, gets the members inserted and nothing
        # else changed; the API refuses it as it would have anyway.
        assert broken[:-1] != body and cut <= tools_key
        assert rewrite.body.replace(INSERTED, b"") == broken
        return
    assert rewrite.body is broken
    if STRICT.encode() in broken and cut > tools_key:
        assert rewrite.unchanged_because and rewrite.lost_tools == [STRICT]


def test_the_reported_bodies_are_spliced_not_failed() -> None:
    # The adversarial findings: a float JavaScript spells unlike Python and
    # a lone surrogate in the conversation made the old full re-serialization
    # fail (a 500), on every later turn too.
    body = (
        '{"model":"claude-x","temperature":1e-6,"max_tokens":1e+21,'
        '"messages":[{"role":"user","content":"broken \\ud800 pair \\udc00!"}],'
        f'"tools":[{{"name":"{STRICT}","description":"x","input_schema":'
        '{"type":"object","properties":{"n":{"type":"number","default":-0}}}}],'
        '"stream":true}'
    ).encode()
    rewrite = rewrite_body(body, FIELDS)
    assert rewrite.modified_tools == [STRICT]
    assert rewrite.body.replace(INSERTED, b"") == body


def test_of_two_tools_keys_the_last_one_gets_the_fields() -> None:
    # JSON.stringify never writes a key twice; a body that has two "tools"
    # keys gets the fields in the last, the one JSON.parse keeps. The first
    # is not looked for: finding it would mean reading the conversation
    # before the tools (issue 27: the cost follows the tools).
    first = f'{{"tools":[{{"name":"{STRICT}"}}],'.encode()
    body = first + f'"tools":[{{"name":"{STRICT}"}}]}}'.encode()
    rewrite = rewrite_body(body, FIELDS)
    assert rewrite.modified_tools == [STRICT]
    assert rewrite.body.startswith(first)
    assert rewrite.body.replace(INSERTED, b"") == body
    assert json.loads(rewrite.body)["tools"][0]["strict"] is True


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (f'{{"tools":[{{"name":"{STRICT}","name":"{PLAIN}"}}]}}', "more than one tool"),
        (f'{{"tools":[{{"name":"{STRICT}"}}]', "not valid JSON"),
    ],
)
def test_an_ambiguous_body_goes_out_unchanged(body: str, why: str) -> None:
    encoded = body.encode()
    rewrite = rewrite_body(encoded, FIELDS)
    assert rewrite.body is encoded and not rewrite.modified_tools
    assert rewrite.unchanged_because is not None and why in rewrite.unchanged_because
    assert rewrite.lost_tools == [STRICT]


def test_a_declared_value_with_a_lone_surrogate_is_written_escaped() -> None:
    body = json.dumps({"tools": [{"name": STRICT}]}).encode()
    rewrite = rewrite_body(body, {STRICT: {"input_examples": [{"q": "\ud800é"}]}})
    assert b'"input_examples":[{"q":"\\ud800\\u00e9"}]' in rewrite.body
    assert json.loads(rewrite.body)["tools"][0]["input_examples"] == [{"q": "\ud800é"}]


def test_a_field_already_there_with_another_value_is_replaced_in_place() -> None:
    body = f'{{"tools":[{{"name":"{STRICT}","strict":false,"x":1e-7}}]}}'.encode()
    rewrite = rewrite_body(body, {STRICT: {"strict": True}})
    assert (
        rewrite.body
        == f'{{"tools":[{{"name":"{STRICT}","strict":true,"x":1e-7}}]}}'.encode()
    )
    # 1 is not true in JSON, though it is in Python.
    one = f'{{"tools":[{{"name":"{STRICT}","strict":1}}]}}'.encode()
    assert rewrite_body(one, {STRICT: {"strict": True}}).modified_tools == [STRICT]
