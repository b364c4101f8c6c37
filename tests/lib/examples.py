"""How many examples a property test draws in this run.

The property tests draw derandomized examples: every cell of the Python x mcp
matrix draws the same ones. The default run draws them all in one cell
(``noxfile.py``'s ``tests`` session sets ``FORK_PROPERTY_EXAMPLES=sample`` in
the others, which then draw the first fifth, at least 10); the full run's
cells and a run by hand draw them all.
"""

from __future__ import annotations

import os

ALL = os.environ.get("FORK_PROPERTY_EXAMPLES", "all") != "sample"


def examples(count: int) -> int:
    """``count``, or a fifth of it (at least 10) in a sampling cell."""
    return count if ALL else max(10, count // 5)
