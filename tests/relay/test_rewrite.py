"""Unit tests of the relay's request rewrite (patch ``relay-request-rewrite``).

What ``rewrite_body`` adds to a Messages API body, the caps it counts and the
beta header; the running relay is tested in ``test_relay.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.relay.cases import EXAMPLES, FIELDS, PLAIN, SCHEMA, STRICT, messages_body

try:
    from claude_agent_sdk._internal.relay.rewrite import (
        ADVANCED_TOOL_USE_BETA,
        rewrite_body,
        with_beta,
    )
except ImportError:  # a tree without the patch: these tests must fail
    ADVANCED_TOOL_USE_BETA = "advanced-tool-use-2025-11-20"
    rewrite_body = None  # type: ignore[assignment]
    with_beta = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("relay-request-rewrite")


def test_rewrite_adds_fields_to_declared_tools_only() -> None:
    body = json.dumps(messages_body(PLAIN, STRICT, "Bash")).encode()
    rewrite = rewrite_body(body, FIELDS)
    tools = {t["name"]: t for t in json.loads(rewrite.body)["tools"]}
    assert tools[STRICT]["strict"] is True
    assert tools[STRICT]["input_examples"] == EXAMPLES
    assert set(tools[PLAIN]) == {"name", "description", "input_schema"}
    assert set(tools["Bash"]) == {"name", "description", "input_schema"}
    assert rewrite.modified_tools == [STRICT]
    assert rewrite.added_examples and not rewrite.exceeded
    # Everything outside the tools entries is as it was.
    original = json.loads(body)
    rewritten = json.loads(rewrite.body)
    rewritten["tools"][1].pop("strict")
    rewritten["tools"][1].pop("input_examples")
    assert rewritten == original


def test_rewrite_with_deferred_entries_keeps_defer_loading() -> None:
    body = messages_body(STRICT)
    body["tools"][0]["defer_loading"] = True
    entry = json.loads(rewrite_body(json.dumps(body).encode(), FIELDS).body)["tools"][0]
    assert entry["defer_loading"] is True and entry["strict"] is True


@pytest.mark.parametrize(
    "body",
    [
        json.dumps(messages_body(PLAIN, "Bash")).encode(),  # no declared tool
        b"not json mcp__docs__search",
        json.dumps(["mcp__docs__search"]).encode(),
        json.dumps({"tools": "mcp__docs__search"}).encode(),
        '{"tools": [{"name": "mcp__docs__search", "strict": true, "input_examples": [{"q": "payout"}]}], "x": "ü"}'.encode(),
    ],
)
def test_rewrite_returns_the_same_bytes_when_nothing_is_added(body: bytes) -> None:
    rewrite = rewrite_body(body, FIELDS)
    assert rewrite.body is body and not rewrite.modified_tools


def test_rewrite_strict_only_tool_adds_no_examples() -> None:
    body = json.dumps(messages_body(STRICT)).encode()
    rewrite = rewrite_body(body, {STRICT: {"strict": True}})
    entry = json.loads(rewrite.body)["tools"][0]
    assert entry["strict"] is True and "input_examples" not in entry
    assert not rewrite.added_examples


def test_rewrite_keeps_non_ascii_text_and_numbers() -> None:
    body = messages_body(STRICT, temperature=0.7, max_tokens=32000)
    body["messages"][0]["content"] = "Sök rättsfall 📚"
    rewritten = json.loads(rewrite_body(json.dumps(body).encode(), FIELDS).body)
    assert rewritten["messages"] == body["messages"]
    assert rewritten["temperature"] == 0.7 and rewritten["max_tokens"] == 32000


@pytest.mark.parametrize(
    ("schema", "count", "cap"),
    [
        (SCHEMA, 21, "strict tools"),
        (
            {
                "type": "object",
                "properties": {f"p{i}": {"type": "string"} for i in range(5)},
                "additionalProperties": False,
            },
            5,
            "optional parameters",
        ),
        (
            {
                "type": "object",
                "properties": {f"u{i}": {"type": ["string", "null"]} for i in range(4)},
                "required": [f"u{i}" for i in range(4)],
                "additionalProperties": False,
            },
            5,
            "union-typed parameters",
        ),
    ],
)
def test_caps_are_counted_on_the_request(
    schema: dict[str, Any], count: int, cap: str
) -> None:
    names = [f"mcp__docs__t{i}" for i in range(count)]
    body = messages_body()
    body["tools"] = [{"name": n, "input_schema": schema} for n in names]
    rewrite = rewrite_body(
        json.dumps(body).encode(), dict.fromkeys(names, {"strict": True})
    )
    # Degraded, not refused (issue 31.2): the last tools go without strict.
    assert rewrite.exceeded == []
    assert [limit.limit for limit in rewrite.caps] == [cap]
    assert all(name in str(rewrite.caps[0]) for name in names)
    assert rewrite.over_caps and rewrite.over_caps == names[-len(rewrite.over_caps) :]
    sent = json.loads(rewrite.body)["tools"]
    assert [t.get("strict") is True for t in sent] == [
        n not in rewrite.over_caps for n in names
    ]


def test_a_tool_already_strict_in_the_request_counts_too() -> None:
    body = messages_body(*[f"t{i}" for i in range(20)], STRICT)
    for entry in body["tools"][:20]:
        entry["strict"] = True
    rewrite = rewrite_body(json.dumps(body).encode(), FIELDS)
    assert rewrite.caps and rewrite.caps[0].count == 21
    assert rewrite.over_caps == [STRICT] and rewrite.exceeded == []


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ([], [(b"anthropic-beta", ADVANCED_TOOL_USE_BETA.encode())]),
        (
            [(b"anthropic-beta", b"claude-code-20250219,effort-2025-11-24")],
            [
                (
                    b"anthropic-beta",
                    b"claude-code-20250219,effort-2025-11-24,"
                    + ADVANCED_TOOL_USE_BETA.encode(),
                )
            ],
        ),
        (
            [(b"Anthropic-Beta", b"a, " + ADVANCED_TOOL_USE_BETA.encode())],
            [(b"Anthropic-Beta", b"a, " + ADVANCED_TOOL_USE_BETA.encode())],
        ),
    ],
)
def test_beta_header(
    given: list[tuple[bytes, bytes]], expected: list[tuple[bytes, bytes]]
) -> None:
    assert with_beta(given) == expected


# -- betas as Claude Code uses them ---------------------------------------------

STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-12-15"


@pytest.mark.parametrize(
    ("declared", "betas"),
    [
        ({"strict": True}, [STRUCTURED_OUTPUTS_BETA]),
        ({"input_examples": EXAMPLES}, [ADVANCED_TOOL_USE_BETA]),
        (
            {"strict": True, "input_examples": EXAMPLES},
            [STRUCTURED_OUTPUTS_BETA, ADVANCED_TOOL_USE_BETA],
        ),
    ],
)
def test_each_added_field_names_its_beta(
    declared: dict[str, Any], betas: list[str]
) -> None:
    # Claude Code sends strict on its own tools only with the
    # structured-outputs beta; input_examples needs advanced-tool-use.
    body = json.dumps(messages_body(STRICT)).encode()
    assert rewrite_body(body, {STRICT: declared}).betas == betas


def test_a_field_already_in_the_request_names_no_beta() -> None:
    request = messages_body(STRICT)
    request["tools"][0]["strict"] = True
    body = json.dumps(request).encode()
    rewrite = rewrite_body(body, {STRICT: {"strict": True, "input_examples": EXAMPLES}})
    assert rewrite.betas == [ADVANCED_TOOL_USE_BETA]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ([], [(b"anthropic-beta", b"s,a")]),
        ([(b"anthropic-beta", b"x,y")], [(b"anthropic-beta", b"x,y,s,a")]),
        # Once, where it already is; the rest appended in order.
        ([(b"anthropic-beta", b"a,x")], [(b"anthropic-beta", b"a,x,s")]),
        ([(b"anthropic-beta", b"x, s ,a")], [(b"anthropic-beta", b"x, s ,a")]),
        # Two lines: appended to the last, so the order of what was sent stays.
        (
            [(b"anthropic-beta", b"x"), (b"x-other", b"1"), (b"anthropic-beta", b"s")],
            [
                (b"anthropic-beta", b"x"),
                (b"x-other", b"1"),
                (b"anthropic-beta", b"s,a"),
            ],
        ),
        ([(b"anthropic-beta", b"")], [(b"anthropic-beta", b"s,a")]),
    ],
)
def test_betas_are_added_once_in_order(
    given: list[tuple[bytes, bytes]], expected: list[tuple[bytes, bytes]]
) -> None:
    from claude_agent_sdk._internal.relay.rewrite import with_betas

    assert with_betas(given, ["s", "a", "s"]) == expected
