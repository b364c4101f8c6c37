"""Checks of the fork's layout (stdlib only): ``python tools/house.py [check ...]``.

- ``hooks``: lines (added plus removed) the fork-track patches change in
  upstream's files (present in pristine: created by no patch) and in the
  upstream track's modules (created by upstream-track patches), under
  ``src/``; at most ``HOOK_LINES`` in all.
- ``packages``: each ``src/`` file a fork-track patch creates lives in one of
  ``FORK_PACKAGES``; each one an upstream-track patch creates lives outside
  them.
- ``circles``: no import circle among the fork's modules (the fork packages,
  and every module a patch creates), imports read with ``ast``: absolute and
  relative, at any depth (inside functions and ``if TYPE_CHECKING:`` too).

Each prints what it measured and exits non-zero on a breach. The series is
read with ``forktool``'s functions (``series``, ``patch_track``, ...); the
modules from ``src/`` (pristine plus the series).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: tools/ is not a package then
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools import forktool

HOOK_LINES = 56
"""The ceiling on fork-track lines in upstream's files and upstream-track
modules, lowered as they leave (issue 44 set 60)."""
SRC_PREFIX = f"src/{forktool.PACKAGE}/"
# The fork track's packages, relative to the package (one list, used by
# ``packages`` and ``circles``).
FORK_PACKAGES = ("_internal/definition/", "_internal/strict/", "_internal/relay/")


# ---------------------------------------------------------------------------
# Reading patches


@dataclass
class FileDiff:
    """What one patch does to one file."""

    path: str
    created: bool = False
    deleted: bool = False
    renamed_from: str | None = None
    added: int = 0
    removed: int = 0

    @property
    def changed(self) -> int:
        return self.added + self.removed


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def file_diffs(patch: Path) -> list[FileDiff]:
    """Each file ``patch`` touches, with its added and removed lines (what
    ``git apply --numstat`` counts: hunks are read by their line counts, so a
    removed line that starts with ``--`` is a line, not a header)."""
    diffs: list[FileDiff] = []
    lines = forktool._diff_lines(patch)
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith("diff --git "):
            diffs.append(FileDiff(line.split()[3].removeprefix("b/")))
            continue
        if not diffs:
            continue
        current = diffs[-1]
        if line.startswith("new file mode"):
            current.created = True
        elif line.startswith("deleted file mode"):
            current.deleted = True
        elif line.startswith("rename from "):
            current.renamed_from = line.removeprefix("rename from ")
        else:
            match = _HUNK.match(line)
            if match is None:
                continue
            old = int(match.group(1) or "1")
            new = int(match.group(2) or "1")
            while (old > 0 or new > 0) and index < len(lines):
                body = lines[index]
                index += 1
                if body.startswith("\\"):  # "\ No newline at end of file"
                    continue
                if body.startswith("-"):
                    current.removed += 1
                    old -= 1
                elif body.startswith("+"):
                    current.added += 1
                    new -= 1
                else:
                    old -= 1
                    new -= 1
    return diffs


def _patches(patches: Iterable[Path] | None) -> list[Path]:
    return list(forktool.series() if patches is None else patches)


def created_by(patches: Iterable[Path] | None = None) -> dict[str, Path]:
    """Each file a patch creates (or renames into place) -> that patch."""
    found: dict[str, Path] = {}
    for patch in _patches(patches):
        for diff in file_diffs(patch):
            if diff.created or diff.renamed_from is not None:
                found.setdefault(diff.path, patch)
    return found


def _name(patch: Path) -> str:
    return patch.name.removesuffix(".patch")


# ---------------------------------------------------------------------------
# hooks


@dataclass
class HooksReport:
    limit: int
    by_file: dict[str, int] = field(default_factory=dict)
    by_patch: dict[str, int] = field(default_factory=dict)
    # (patch, file, added, removed), in series order
    rows: list[tuple[str, str, int, int]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.by_file.values())

    @property
    def ok(self) -> bool:
        return self.total <= self.limit

    def lines(self) -> list[str]:
        out = [
            f"hooks: {self.total} fork-track lines in upstream's files and the "
            f"upstream track's modules (limit {self.limit})"
        ]
        out.append("  per file:")
        out += [f"    {n:5d}  {path}" for path, n in sorted(self.by_file.items())]
        out.append("  per patch:")
        out += [f"    {n:5d}  {name}" for name, n in self.by_patch.items()]
        out.append("  per patch and file (+added -removed):")
        out += [f"    {p}  {f}  +{a} -{r}" for p, f, a, r in self.rows]
        return out


def hooks(
    patches: Iterable[Path] | None = None, limit: int | None = None
) -> HooksReport:
    """The fork track's lines in files it does not own (under ``src/``)."""
    series = _patches(patches)
    created = created_by(series)
    report = HooksReport(HOOK_LINES if limit is None else limit)
    for patch in series:
        if forktool.patch_track(patch) != "fork":
            continue
        for diff in file_diffs(patch):
            if not diff.path.startswith(SRC_PREFIX) or not diff.changed:
                continue
            owner = created.get(diff.renamed_from or diff.path)
            if owner is not None and forktool.patch_track(owner) == "fork":
                continue  # the fork track's own module
            report.by_file[diff.path] = report.by_file.get(diff.path, 0) + diff.changed
            report.by_patch[_name(patch)] = (
                report.by_patch.get(_name(patch), 0) + diff.changed
            )
            report.rows.append((_name(patch), diff.path, diff.added, diff.removed))
    return report


# ---------------------------------------------------------------------------
# packages


def in_fork_package(path: str) -> bool:
    """Whether ``src/...`` path ``path`` lies in one of ``FORK_PACKAGES``."""
    inner = path.removeprefix(SRC_PREFIX)
    return path.startswith(SRC_PREFIX) and inner.startswith(FORK_PACKAGES)


@dataclass
class PackagesReport:
    # (file, creating patch, track) for each src/ file a patch creates
    files: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def misplaced(self) -> list[tuple[str, str, str]]:
        return [
            row for row in self.files if in_fork_package(row[0]) != (row[2] == "fork")
        ]

    @property
    def ok(self) -> bool:
        return not self.misplaced

    def lines(self) -> list[str]:
        fork = [row for row in self.files if row[2] == "fork"]
        upstream = [row for row in self.files if row[2] != "fork"]
        out = [
            f"packages: {len(self.misplaced)} misplaced of {len(self.files)} src/ "
            f"files the series creates ({len(fork)} fork track, {len(upstream)} "
            f"upstream track); fork packages: {', '.join(FORK_PACKAGES)}"
        ]
        for path, patch, track in self.files:
            where = "in a fork package" if in_fork_package(path) else "outside"
            mark = "MISPLACED" if (path, patch, track) in self.misplaced else "ok"
            out.append(f"    {mark:9s}  {track:8s}  {where:17s}  {path}  ({patch})")
        return out


def packages(patches: Iterable[Path] | None = None) -> PackagesReport:
    """Which package each ``src/`` file the series creates lives in."""
    report = PackagesReport()
    for path, patch in sorted(created_by(patches).items()):
        if path.startswith(SRC_PREFIX):
            report.files.append((path, _name(patch), forktool.patch_track(patch)))
    return report


# ---------------------------------------------------------------------------
# circles


def module_name(src: Path, path: Path) -> str:
    """``src/a/b/c.py`` -> ``a.b.c``; ``src/a/b/__init__.py`` -> ``a.b``."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(src: Path, name: str) -> bool:
    return (src.joinpath(*name.split(".")) / "__init__.py").is_file()


def _exists(src: Path, name: str) -> bool:
    base = src.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(src: Path, path: Path) -> dict[str, list[str]]:
    """Module ``path`` -> each module (under ``src``) it imports -> the names
    it takes from it (a module imported whole is named as written)."""
    name = module_name(src, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    taken: dict[str, list[str]] = {}

    def take(target: str, what: str) -> None:
        if _exists(src, target) and target != name:
            names = taken.setdefault(target, [])
            if what not in names:
                names.append(what)

    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                take(alias.name, alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base_parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _is_package(src, base) and _exists(src, sub):
                    take(sub, alias.name)  # ``from pkg import module``
                else:
                    take(base, alias.name)
    return taken


def fork_modules(src: Path, patches: Iterable[Path] | None = None) -> list[Path]:
    """The fork's modules: every ``.py`` file in ``FORK_PACKAGES`` and every
    one a patch creates under ``src/``."""
    root = src / forktool.PACKAGE
    found = {
        path
        for package in FORK_PACKAGES
        if (root / package).is_dir()
        for path in (root / package).rglob("*.py")
    }
    for created in created_by(patches):
        path = src.parent / created
        if created.startswith(SRC_PREFIX) and path.suffix == ".py" and path.is_file():
            found.add(path)
    return sorted(found)


@dataclass
class Circle:
    modules: list[str]  # a strongly connected set of modules
    cycle: list[str]  # one shortest circle through them, first module repeated
    # (importer, imported, names) for every import inside the set
    edges: list[tuple[str, str, list[str]]]


@dataclass
class CirclesReport:
    modules: list[str]
    edges: int
    circles: list[Circle]

    @property
    def ok(self) -> bool:
        return not self.circles

    def lines(self) -> list[str]:
        out = [
            f"circles: {len(self.circles)} import circle(s) among {len(self.modules)} "
            f"fork modules ({self.edges} imports between them)"
        ]
        for circle in self.circles:
            out.append(
                f"  circle of {len(circle.modules)}: {' -> '.join(circle.cycle)}"
            )
            for importer, imported, names in circle.edges:
                out.append(f"    {importer} -> {imported}: {', '.join(names)}")
        return out


def _short(name: str) -> str:
    return name.removeprefix(f"{forktool.PACKAGE}.")


def _shortest_cycle(
    start: str, graph: dict[str, set[str]], inside: set[str]
) -> list[str]:
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & inside):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    return [start]


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                target = pending.pop(0)
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, sorted(graph[target])))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                found.append(component)
    return found


def circles(src: Path, modules: Iterable[Path]) -> CirclesReport:
    """Import circles among ``modules`` (files under ``src``)."""
    paths = list(modules)
    names = {module_name(src, path): path for path in paths}
    taken = {name: imports_of(src, path) for name, path in names.items()}
    graph = {name: {t for t in taken[name] if t in names} for name in names}
    found = []
    for component in _strongly_connected(graph):
        first = min(component)
        if len(component) == 1 and first not in graph[first]:
            continue
        edges = [
            (_short(a), _short(b), taken[a][b])
            for a in sorted(component)
            for b in sorted(graph[a] & component)
        ]
        cycle = [_short(n) for n in _shortest_cycle(first, graph, component)]
        found.append(Circle(sorted(_short(n) for n in component), cycle, edges))
    return CirclesReport(
        sorted(_short(n) for n in names),
        sum(len(targets) for targets in graph.values()),
        sorted(found, key=lambda circle: circle.modules),
    )


def repository_circles() -> CirclesReport:
    src = forktool.ROOT / "src"
    return circles(src, fork_modules(src))


# ---------------------------------------------------------------------------

CHECKS = ("hooks", "packages", "circles")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checks", nargs="*", metavar="check", help=", ".join(CHECKS))
    args = parser.parse_args(argv)
    unknown = [check for check in args.checks if check not in CHECKS]
    if unknown:
        parser.error(f"unknown check(s): {', '.join(unknown)}")
    failed = []
    for check in args.checks or CHECKS:
        report: HooksReport | PackagesReport | CirclesReport
        if check == "hooks":
            report = hooks()
        elif check == "packages":
            report = packages()
        else:
            report = repository_circles()
        print("\n".join(report.lines()))
        if not report.ok:
            failed.append(check)
    if failed:
        print(f"house: FAILED: {', '.join(failed)}")
        return 1
    print("house: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
