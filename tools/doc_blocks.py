"""The generated blocks in the docs.

A block is the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``
in a Markdown file; the benches and the refused-definitions table write
theirs here, and the tests read them back, so the markers have one spelling.
"""

from __future__ import annotations

from pathlib import Path


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def _span(text: str, name: str, path: Path) -> tuple[int, int]:
    start, end = markers(name)
    first, last = text.find(start), text.find(end)
    if first < 0 or last < first:
        raise SystemExit(f"{path} has no {start} … {end} markers")
    return first + len(start), last


def read_block(path: Path, name: str) -> str:
    """The block's text, without the newlines that frame it."""
    text = path.read_text("utf-8")
    first, last = _span(text, name, path)
    return text[first:last].strip("\n")


def write_block(path: Path, name: str, content: str) -> None:
    """Replace the block's text with ``content``."""
    text = path.read_text("utf-8")
    first, last = _span(text, name, path)
    block = "\n" + content.strip("\n") + "\n"
    path.write_text(text[:first] + block + text[last:], "utf-8")
