"""docs/strict-mode.md's rules table is the one strict.transform.RULES renders.

The SDK holds strict mode's rules as one table, read by the checks, the
description transform and the pydantic path; the doc's table is generated
from it (tools/strict_rules_doc.py), so a rule changed in the code without
``tools/nox -s docs`` fails here.
"""

from __future__ import annotations

from claude_agent_sdk._internal.strict.transform import (
    DESCRIBED_KEYWORDS,
    DOCUMENTED,
    JUDGEMENT,
    RULES,
    Served,
    make_strict,
)
from tools import strict_rules_doc
from tools.doc_blocks import read_block


def test_the_doc_table_is_generated_from_the_rules() -> None:
    assert read_block(strict_rules_doc.DOC, strict_rules_doc.BLOCK) == (
        strict_rules_doc.render_table()
    ), "docs/strict-mode.md is stale: run tools/nox -s docs"


def test_every_described_keyword_has_a_row_and_is_served_in_words() -> None:
    table = strict_rules_doc.render_table()
    for keyword in DESCRIBED_KEYWORDS:
        assert f"`{keyword}" in table
    served, violations = make_strict(
        {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}},
        describe=True,
    )
    assert violations == []
    assert served["properties"]["n"]["description"] == "{maximum: 5}"


def test_every_rule_that_can_be_broken_has_a_message() -> None:
    for rule in RULES:
        breakable = rule.served_as is Served.REFUSED or (
            rule.keywords and rule.served_as is not Served.KEPT
        )
        if breakable:
            assert rule.message, rule


def test_every_row_says_whether_it_is_documented_and_why() -> None:
    for rule in RULES:
        if rule.label:
            assert rule.source in (DOCUMENTED, JUDGEMENT), rule
            assert rule.why, rule
            if rule.source == DOCUMENTED:
                assert '"' in rule.why, rule  # it quotes the page
