"""Strict mode for SDK MCP tools: the schema graph, strict mode's rules and
the transform to the served and enforced schemas (docs/strict-mode.md).
"""
