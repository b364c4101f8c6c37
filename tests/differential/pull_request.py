"""One upstream-track pull request against pristine + its dependencies.

Run by ``nox -s pull_requests``, which runs ``runner.py`` on the same cases
with the pull request's tree (pristine + its ``depends-on`` + it) and with its
baseline (pristine + its ``depends-on``)::

    python -m tests.differential.pull_request CASES BASELINE CANDIDATE SLUG

Only plain tools are compared: a case whose tools use a new argument
(``strict``, ``input_examples``, ``extra_fields``, ``output_schema``) opted
into a change. Every difference must be accounted for by a row of
``differences.ROWS`` that belongs to the pull request's patch (or that any
patch may show). Prints a JSON summary; exits 1 on a difference no such row
accounts for.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.differential import differences


def _plain(case_out: dict[str, Any]) -> bool:
    return not any(t.get("opted_in") for t in case_out.get("tools") or [])


def compare(
    cases: list[dict[str, Any]],
    baseline: list[dict[str, Any]],
    candidate: list[dict[str, Any]],
    slug: str,
) -> dict[str, Any]:
    rows = differences.pull_request_rows(slug)
    compared, found, unexplained = 0, 0, []
    by_row: Counter[str] = Counter()
    for case, base, pr in zip(cases, baseline, candidate, strict=True):
        assert case["id"] == base["id"] == pr["id"]
        if not _plain(pr):
            continue
        compared += 1
        for difference in differences.compare(case, base, pr):
            found += 1
            row = differences.explain(difference, rows)
            if row is None:
                unexplained.append(difference.describe())
            else:
                by_row[row.key] += 1
    return {
        "cases": len(cases),
        "compared": compared,
        "differences": found,
        "by_row": dict(sorted(by_row.items())),
        "unexplained": unexplained,
    }


def main(argv: list[str]) -> int:
    cases_path, baseline_path, candidate_path, slug = argv
    summary = compare(
        json.loads(Path(cases_path).read_text("utf-8")),
        json.loads(Path(baseline_path).read_text("utf-8")),
        json.loads(Path(candidate_path).read_text("utf-8")),
        slug,
    )
    print(json.dumps(summary))
    return 1 if summary["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
