"""``tools/strict_report.py``: the corpus figures in docs/strict-mode.md.

The SDK's figure is recomputed here (the peers are not installed in the test
environment, so their columns are checked only by ``--write`` in the report
session), and the report's own counting is tried on small corpora.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools import strict_report
from tools.doc_blocks import read_block

strict_patch = pytest.mark.requires_patch("strict-schema-checks")


def _corpus(tmp_path: Path, schemas: dict[str, dict[str, Any]]) -> Path:
    path = tmp_path / "corpus.json"
    path.write_text(
        json.dumps(
            {
                "collected": "2026-12-01",
                "servers": [
                    {
                        "name": "demo",
                        "package": "demo",
                        "registry": "npm",
                        "version": "1.0.0",
                        "tools": [
                            {"name": name, "inputSchema": schema}
                            for name, schema in schemas.items()
                        ],
                    }
                ],
            }
        ),
        "utf-8",
    )
    return path


@strict_patch
def test_the_docs_carry_the_current_sdk_figure() -> None:
    assert strict_report.main(["--check"]) == 0
    block = read_block(strict_report.DOC, strict_report.BLOCK)
    figures = strict_report.measure(strict_report.load_corpus())
    assert strict_report.sdk_line(figures) in block.splitlines()
    assert f"({len(figures.tools)} tools from 20 published MCP servers)" in block


@strict_patch
def test_the_sdk_column_counts_what_tool_strict_true_serves(tmp_path: Path) -> None:
    corpus = _corpus(
        tmp_path,
        {
            "ranged": {
                "type": "object",
                "properties": {"page": {"type": "integer", "minimum": 1}},
            },
            "no_args": {"type": "object"},
            "open": {"type": "object", "additionalProperties": True},
            "map": {
                "type": "object",
                "properties": {"m": {"type": "object"}},
            },
        },
    )
    tools = strict_report.load_corpus(corpus)
    outcomes = [strict_report.sdk_outcome(entry) for entry in tools]
    assert [outcome.strict for outcome in outcomes] == [True, True, False, False]
    assert outcomes[2].reason.startswith("#/additionalProperties: ")
    assert outcomes[3].reason.startswith("#/properties/m: object declares no")
    assert strict_report.open_object(tools[2].schema)
    assert not strict_report.open_object(tools[0].schema)


@strict_patch
def test_missing_peers_read_not_installed_and_write_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path, {"t": {"type": "object", "properties": {}}})
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- strict-corpus:start -->\n<!-- strict-corpus:end -->\n")
    monkeypatch.setattr(strict_report, "peer", lambda name: None)
    figures = strict_report.measure(strict_report.load_corpus(corpus))
    block = strict_report.render(figures)
    assert (
        "| SDK (`strict=True`, JSON Schema dict) | 1 of 1 | 1 of 1 (100%) | "
        "**1 of 1** | 0 |"
    ) in block
    assert (
        "| not installed of 1 | not installed | not installed of 1 | not installed |"
    ) in block
    assert "| demo 1.0.0 | 1 | 1 | not installed | not installed |" in block
    args = ["--corpus", str(corpus), "--doc", str(doc)]
    assert strict_report.main([*args, "--write"]) == 1
    assert strict_report.main([*args, "--check"]) == 1  # the block is empty


def test_refusal_reasons_are_counted_without_their_pointer() -> None:
    assert (
        strict_report._kind(
            "#/properties/m/additionalProperties: additionalProperties must be false "
            "in strict mode (found true); strict mode has no open objects"
        )
        == "additionalProperties must be false in strict mode"
    )
    assert (
        strict_report._kind(
            "#/properties/m: object declares no properties: strict mode requires"
        )
        == "object declares no properties: strict mode requires"
    )
