"""Each refused definition raises its error, naming the tool and the field,
and docs/refused-definitions.md shows exactly these errors."""

from __future__ import annotations

import pytest

from tests.robustness.bad_inputs import (
    CASES,
    Case,
    error_of,
    readme_section,
    render_table,
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, id=case.id, marks=pytest.mark.requires_patch(case.patch))
        for case in CASES
    ],
)
def test_definition_is_refused(case: Case) -> None:
    error = error_of(case)
    assert isinstance(error, case.error), error
    message = str(error)
    if case.id.startswith("cap-"):
        assert "20" in message and "21" in message, message
    else:
        assert "'search'" in message, message


@pytest.mark.requires_patch("strict-schema-checks")
def test_readme_table_is_generated_from_these_cases() -> None:
    assert readme_section() == render_table(), (
        "docs/refused-definitions.md is stale: run tools/nox -s docs"
    )
