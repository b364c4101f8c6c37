"""mypy check (not a pytest module): a pydantic model types the tool's handler.

Checked with the repository's mypy configuration (strict, and
``warn_unused_ignores``, so each ``type: ignore`` below must be needed)::

    mypy tests/pydantic/typing_check.py

Without the pydantic-input-models patch ``tool()`` returns ``SdkMcpTool[Any]``
whatever the schema: the ``assert_type`` lines fail and the ignores are unused.
"""

from typing import Any

from typing_extensions import assert_type

from claude_agent_sdk import SdkMcpTool, tool
from tests.lib.pydantic_cases import Jurisdiction, SearchArgs


@tool("search", "Search case law", SearchArgs, strict=True)
async def search(args: SearchArgs) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": args.query}]}


assert_type(search, SdkMcpTool[SearchArgs])
typed: SdkMcpTool[SearchArgs] = search


async def call(args: SearchArgs) -> None:
    await typed.handler(args)
    await typed.handler({"query": "x"})  # type: ignore[arg-type]


# A handler written for upstream's dict arguments still type-checks (and
# gets the dict at run time).
@tool("search", "Search case law", SearchArgs)
async def old_style(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": args["query"]}]}


assert_type(old_style, SdkMcpTool[SearchArgs])


# Examples may be instances or dicts. (A list literal mixing both is
# inferred as list[object]; annotate it, as here.)
examples: list[SearchArgs | dict[str, Any]] = [
    SearchArgs(query="x", jurisdiction=Jurisdiction.SE),
    {"query": "y", "jurisdiction": "no"},
]


@tool("search", "Search case law", SearchArgs, input_examples=examples)
async def with_examples(args: SearchArgs) -> dict[str, Any]:
    return {"content": []}


@tool(
    "search",
    "Search case law",
    SearchArgs,
    input_examples=[SearchArgs(query="x", jurisdiction=Jurisdiction.SE)],
)
async def with_instances(args: SearchArgs) -> dict[str, Any]:
    return {"content": []}


# Built directly, the dataclass infers the same from its input_schema.
direct = SdkMcpTool(
    name="search",
    description="Search case law",
    input_schema=SearchArgs,
    handler=search.handler,
)
assert_type(direct, SdkMcpTool[SearchArgs])


# dict and TypedDict schemas keep taking dict handlers, as before.
@tool("greet", "Greet", {"name": str})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


assert_type(greet, SdkMcpTool[Any])
