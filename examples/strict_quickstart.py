"""Strict tool use through the relay: export ANTHROPIC_API_KEY, then run
python examples/strict_quickstart.py"""

import logging

import anyio

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ToolFieldsReport,
    create_sdk_mcp_server,
    query,
    tool,
)

schema = {
    "type": "object",
    "properties": {
        "jurisdiction": {"type": "string", "enum": ["se", "no", "dk"]},
        "terms": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["jurisdiction", "terms"],
    "additionalProperties": False,
}


@tool("search", "Search case law", schema, strict=True)
async def search(args):
    return {"content": [{"type": "text", "text": f"3 cases for {args['terms']}"}]}


reports: list[ToolFieldsReport] = []
options = ClaudeAgentOptions(
    mcp_servers={"legal": create_sdk_mcp_server("legal", tools=[search])},
    allowed_tools=["mcp__legal__search"],
    tool_fields_relay=True,  # Claude Code drops strict; the relay puts it back
    tool_fields_report=reports.append,  # what reached each API request
)


async def main():
    async for message in query(prompt="Find Swedish payout cases", options=options):
        print(message)
    strict = [r for r in reports if "mcp__legal__search" in r.strict_tools]
    print(f"strict on {len(strict)} of {len(reports)} API requests")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)  # the relay's INFO record per request
    anyio.run(main)
