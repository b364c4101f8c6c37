"""The tools and request bodies the relay's tests send."""

from __future__ import annotations

from typing import Any

STRICT = "mcp__docs__search"
PLAIN = "mcp__docs__lookup"
EXAMPLES = [{"q": "payout"}]
FIELDS = {STRICT: {"strict": True, "input_examples": EXAMPLES}}
SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
    "additionalProperties": False,
}


def messages_body(*names: str, **extra: Any) -> dict[str, Any]:
    """A Messages API body with one tool entry per name, as the CLI sends."""
    return {
        "model": "claude-x",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"name": name, "description": name, "input_schema": SCHEMA}
            for name in names
        ],
        **extra,
    }
