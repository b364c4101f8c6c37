"""A team pins the fork with zero changes (issue 29, items 1, 3 and 5).

- Its ``filterwarnings = error`` suite stays green: what the fork notices
  about a tool that did not opt in is a log record on the SDK's logger, once
  per tool and cause, never a warning.
- A handler written for upstream's dict keeps working when its
  ``input_schema`` is a pydantic model: the model's schema is served and
  validates each call, and the handler gets the arguments dict unless its
  parameter is annotated with the model.
- Two tools with one name, one of them strict: each entry lists only its own
  definition's fields, and a ``_meta`` strict hint only ever sits beside a
  schema strict mode checked.

Every test here is marked with the patch it needs and fails without it.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from pydantic import BaseModel, Field

from claude_agent_sdk import create_sdk_mcp_server, tool
from tests.lib.cli_peer import serve
from tests.lib.notices import logged_notices

SCHEMA_A = {"type": "object", "properties": {"a": {"type": "string"}}}
SCHEMA_B = {
    "type": "object",
    "properties": {"b": {"type": "integer"}},
    "required": ["b"],
}


async def _ok(args: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


# --- 1. notices never refuse --------------------------------------------------


@pytest.mark.requires_patch("tool-field-checks")
async def test_the_duplicate_name_notice_is_a_log_record_under_w_error() -> None:
    # langchain's test_bind_tool_pydantic shape: one name bound twice with
    # differing definitions, in a suite with filterwarnings = error.
    first = tool("lookup", "One", SCHEMA_A)(_ok)
    second = tool("lookup", "Two", SCHEMA_A)(_ok)

    with logged_notices(match=r"two tools named 'lookup'") as notices:
        config = create_sdk_mcp_server("srv", tools=[first, second])
        create_sdk_mcp_server("srv", tools=[first, second])  # once per cause

    assert len(notices) == 1
    assert notices[0].logger.startswith("claude_agent_sdk.")
    assert notices[0].level == 30  # logging.WARNING
    tools, [result] = await serve(config, [("lookup", {"a": "x"})])
    assert [t["description"] for t in tools] == ["One", "Two"]
    assert result["isError"] is False


@pytest.mark.requires_patch("schema-checks")
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"q": {"$ref": "https://x.invalid/q"}}},
        {"type": "object", "properties": {"q": {"type": "strng"}}},
    ],
    ids=["remote-ref", "fails-every-call"],
)
async def test_a_schema_notice_is_a_log_record_under_w_error(
    schema: dict[str, Any],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = create_sdk_mcp_server("srv", tools=[tool("q", "d", schema)(_ok)])
    with logged_notices(match=r"^Tool 'q': input_schema "):
        tools, _ = await serve(config)  # checked at the first tools/list
    assert tools[0]["inputSchema"] == schema  # served as upstream serves it


@pytest.mark.requires_patch("pydantic-input-models")
def test_an_unknown_schema_class_notice_is_a_log_record_under_w_error() -> None:
    class NotASchema:
        pass

    with logged_notices(match=r"is neither a dict, a TypedDict nor a pydantic"):
        create_sdk_mcp_server("srv", tools=[tool("t", "d", NotASchema)(_ok)])


# --- 3. handlers keep their calling convention --------------------------------


class Query(BaseModel):
    query: str = Field(description="What to look for")
    limit: int = Field(default=10, ge=1, le=50)


@pytest.mark.requires_patch("pydantic-input-models")
async def test_a_handler_written_for_upstream_gets_the_arguments_dict() -> None:
    received: list[Any] = []

    @tool("find", "Find", Query)
    async def find(args: dict[str, Any]) -> dict[str, Any]:
        received.append(args)
        return {"content": [{"type": "text", "text": args["query"]}]}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = create_sdk_mcp_server("srv", tools=[find])
    tools, [ok, refused] = await serve(
        config, [("find", {"query": "payout"}), ("find", {"query": "x", "limit": 80})]
    )

    assert tools[0]["inputSchema"] == Query.model_json_schema()  # the repair
    assert ok == {"content": [{"type": "text", "text": "payout"}], "isError": False}
    assert received == [{"query": "payout"}]  # the dict upstream passed
    assert refused["isError"] is True  # validated by the model
    assert "limit: Input should be less than or equal to 50" in str(refused)


@pytest.mark.requires_patch("pydantic-input-models")
async def test_a_handler_annotated_with_the_model_gets_the_instance() -> None:
    received: list[Any] = []

    @tool("find", "Find", Query)
    async def find(args: Query) -> dict[str, Any]:
        received.append(args)
        return {"content": [{"type": "text", "text": args.query}]}

    _, [result] = await serve(
        create_sdk_mcp_server("srv", tools=[find]), [("find", {"query": "p"})]
    )

    assert result["isError"] is False
    assert received == [Query(query="p")]


# --- 5. duplicates never mix opted-in fields ----------------------------------


@pytest.mark.requires_patch("strict-meta-hint")
@pytest.mark.parametrize("strict_first", [True, False], ids=["strict-first", "last"])
async def test_two_tools_with_one_name_never_mix_their_fields(
    strict_first: bool,
) -> None:
    strict = tool("search", "Strict", SCHEMA_B, strict=True)(_ok)
    plain = tool("search", "Plain", SCHEMA_A, extra_fields={"title": "P"})(_ok)
    order = [strict, plain] if strict_first else [plain, strict]

    tools, _ = await serve(create_sdk_mcp_server("srv", tools=order))

    by_description = {entry["description"]: entry for entry in tools}
    strict_entry, plain_entry = by_description["Strict"], by_description["Plain"]
    # The strict entry: its own (checked, closed) schema beside its hint.
    assert strict_entry["strict"] is True
    assert strict_entry["_meta"] == {"anthropic/strict": True}
    assert set(strict_entry["inputSchema"]["properties"]) == {"b"}
    assert strict_entry["inputSchema"]["additionalProperties"] is False
    assert "title" not in strict_entry
    # The plain entry: nothing of the strict definition.
    assert plain_entry["inputSchema"] == SCHEMA_A
    assert plain_entry["title"] == "P"
    assert "strict" not in plain_entry and "_meta" not in plain_entry
