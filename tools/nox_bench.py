"""Nox session for the side-by-side benchmark of the fork and upstream.

Imported by the repository's noxfile (every ``tools/nox_*.py`` is).

    nox -s bench                      measure, write .cache/bench/bench-results.json
                                      and the README table between its markers
    nox -s bench -- --quick           a short run, to try the bench out
    nox -s bench -- --out FILE        write the results somewhere else
    nox -s bench -- --render-only .cache/bench/bench-results.json
                                      regenerate the table without measuring

All options are ``tools/bench.py``'s (``python tools/bench.py --help``). The
session needs no venv of its own: the bench builds its four (fork and
upstream, each on mcp 1.30.0 and 2.3.0) under ``.cache/bench/venvs`` from one
interpreter, the one nox runs on unless ``--python`` names another.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent.parent


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Fork vs. pristine upstream: tools/list, tools/call, definition, import."""
    session.run(
        sys.executable,
        str(ROOT / "tools" / "bench.py"),
        *session.posargs,
        external=True,
    )
