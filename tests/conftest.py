"""Shared pytest wiring for the fork's tests.

Tests that exercise a patch's feature carry ``@pytest.mark.requires_patch(slug)``
(slug: the patch file name without its number, e.g. ``serve-extra-tool-fields``).
``nox -s prove`` uses the options below to run exactly those tests on a tree
without that patch, where every one of them must fail.

Code the tests share lives in the ``tests.lib`` package (``tests/lib/``):
imported as ``from tests.lib.cli_peer import ...``, with the repository root on
``sys.path`` through ``pythonpath`` in pyproject.toml's pytest table.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import forktool


def _known_slugs() -> set[str]:
    # The series and its slugs are forktool's to parse (one implementation).
    return {forktool.patch_slug(patch) for patch in forktool.series()}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fork")
    group.addoption(
        "--only-patch",
        metavar="SLUG",
        help="run only the tests marked requires_patch(SLUG)",
    )
    group.addoption(
        "--without-patches",
        action="store_true",
        help="deselect every test marked requires_patch (for pristine upstream)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # ``nox -s prove`` runs each patch's tests on a tree of its own through
    # PYTHONPATH, and names the tree here: the run must import its package.
    expected = os.environ.get("FORK_EXPECT_PACKAGE_UNDER")
    if expected:
        import claude_agent_sdk

        where = Path(claude_agent_sdk.__file__).resolve()
        if not where.is_relative_to(Path(expected).resolve()):
            raise pytest.UsageError(
                f"claude_agent_sdk was imported from {where}, not from {expected}"
            )


def _slug_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("requires_patch")
    if marker is None:
        return None
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{item.nodeid}: requires_patch takes one slug")
    return marker.args[0]


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    known = _known_slugs()
    draft = os.environ.get("FORK_DRAFT_PATCH")
    only = config.getoption("--only-patch")
    without = config.getoption("--without-patches")
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        slug = _slug_of(item)
        # FORK_DRAFT_PATCH=<slug> lets a patch's tests run while it is still
        # being written, before it is exported into patches/series.
        if slug is not None and slug not in known and slug != draft:
            raise pytest.UsageError(
                f"{item.nodeid}: requires_patch({slug!r}) names no patch in "
                f"patches/series ({', '.join(sorted(known)) or 'empty'})"
            )
        if only is not None:
            (keep if slug == only else drop).append(item)
        elif without:
            (drop if slug is not None else keep).append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(autouse=True)
def _notices_logged_afresh() -> None:
    """Each test sees every notice the SDK logs (the fork logs each once per
    process); a tree without the notices module has none to forget."""
    try:
        from claude_agent_sdk._internal.definition.notices import forget_notices
    except ImportError:
        return
    forget_notices()
