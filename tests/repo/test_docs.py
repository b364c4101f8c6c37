"""The documentation's links lead somewhere, and its install lines can be copied.

Two promises the README makes to a newcomer: every relative link in README.md,
CONTRIBUTING.md and docs/*.md opens an existing file (and, with a ``#part``,
an existing heading in it), and every git ref an install line pins (a tag or a
commit sha after ``@`` in a ``git+...`` URL) exists in this repository, so
copying the line does not fail. Placeholders such as ``<commit-sha>`` or a
shell substitution such as ``$(git rev-parse HEAD)`` are not refs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]
)

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:, ...
_GIT_URL = re.compile(r"git\+[a-z]+://[^\s\"'`<>]*(?:<[^>\s]*>[^\s\"'`<>]*)*", re.I)


def _prose(text: str) -> str:
    """Markdown without code blocks and code spans, where links are not links."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: text only, lower case, punctuation
    dropped (``_`` and ``-`` kept), each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in _HEADING.finditer(_FENCE.sub("", path.read_text("utf-8"))):
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    problems = []
    for match in _LINK.finditer(_prose(path.read_text("utf-8"))):
        target = match.group(1)
        if _EXTERNAL.match(target):
            continue
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(f"{target}: {dest.name} has no heading #{fragment}")
        elif fragment and dest.suffix != ".md":
            problems.append(f"{target}: an anchor into a file that is not Markdown")
    return problems


def install_refs(text: str) -> list[tuple[str, str | None]]:
    """Each ``git+`` URL in ``text`` with the ref it pins (None when unpinned)."""
    found: list[tuple[str, str | None]] = []
    for match in _GIT_URL.finditer(text):
        url = match.group(0).split("#", 1)[0]
        after_host = url.split("://", 1)[1]
        _, at, ref = after_host.rpartition("@")
        found.append((url, ref if at and ref else None))
    return found


def is_placeholder(ref: str) -> bool:
    """``<commit-sha>``, ``v<version>``, ``$(git rev-parse HEAD)``, ``${REF}``."""
    return "<" in ref or ">" in ref or ref.startswith("$") or "{" in ref


def missing_refs(text: str, repo: Path = ROOT) -> list[str]:
    """Concrete refs pinned in ``text`` that ``repo`` has no commit for."""
    missing = []
    for url, ref in install_refs(text):
        if ref is None or is_placeholder(ref):
            continue
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            missing.append(f"{url} pins {ref!r}, which this repository does not have")
    return missing


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_existing_files_and_headings(path: Path) -> None:
    assert broken_links(path) == []


def test_every_ref_the_readme_installs_exists() -> None:
    for path in DOCS:
        text = path.read_text("utf-8")
        assert missing_refs(text) == [], path.name


def test_readme_install_lines_are_pinned() -> None:
    urls = install_refs((ROOT / "README.md").read_text("utf-8"))
    assert urls, "README.md shows no git+ install line"
    unpinned = [url for url, ref in urls if ref is None]
    assert unpinned == [], "install lines must pin a commit or a tag"


def test_a_concrete_ref_that_does_not_exist_is_reported() -> None:
    text = (
        'pip install "claude-agent-sdk @ '
        'git+https://github.com/o/r@v0.0.0+never.0"\n'
        "pip install git+file:///x@0000000000000000000000000000000000000000\n"
    )
    assert len(missing_refs(text)) == 2


def test_placeholders_are_not_refs_and_a_real_commit_is_found() -> None:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    text = (
        "claude-agent-sdk @ git+https://github.com/<owner>/<repo>@<commit-sha>\n"
        'pip install "git+file://$PWD@$(git rev-parse HEAD)"\n'
        "claude-agent-sdk @ git+https://github.com/<owner>/<repo>@v<version>\n"
        f"claude-agent-sdk @ git+https://github.com/o/r@{head}\n"
    )
    refs = [ref for _, ref in install_refs(text)]
    assert refs == ["<commit-sha>", "$(git", "v<version>", head]
    assert missing_refs(text) == []


def test_broken_links_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n## With `strict=True`\n", "utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#with-stricttrue) [gone](missing.md) [bad](a.md#nowhere) "
        "[web](https://example.com/x.md) `[code](missing.md)`\n",
        "utf-8",
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "a.md#nowhere: a.md has no heading #nowhere",
    ]


QUICKSTART = ROOT / "examples" / "strict_quickstart.py"


@pytest.mark.requires_patch("tool-fields-relay")
def test_the_quickstart_defines_what_the_readme_shows() -> None:
    # The README's runnable example is this file: a strict tool with an enum
    # beside an array of strings, the relay on, its reports collected, and
    # anyio.run(main) when run as a script (not here: it needs the CLI).
    import asyncio
    import runpy

    source = QUICKSTART.read_text("utf-8")
    assert 'if __name__ == "__main__":' in source and "anyio.run(main)" in source
    example = runpy.run_path(str(QUICKSTART), run_name="quickstart")
    search, options = example["search"], example["options"]
    assert search.strict is True
    properties = search.input_schema["properties"]
    assert properties["jurisdiction"]["enum"] and "enum" in properties["jurisdiction"]
    assert properties["terms"] == {"type": "array", "items": {"type": "string"}}
    assert options.tool_fields_relay is True
    assert options.tool_fields_report == example["reports"].append
    assert asyncio.iscoroutinefunction(example["main"])
