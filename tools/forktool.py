"""Vendoring and patch-series machinery of the fork (stdlib only).

The package in ``src/claude_agent_sdk/`` must always equal upstream's PyPI sdist
plus ``patches/series`` applied in order with ``git am``. This module is the
only code that knows how to produce that tree; ``noxfile.py`` wraps it in
sessions (vendor, patch_check, export, rebase, ...) and it can also be run
directly: ``python tools/forktool.py --help``.

Layout it relies on:

- ``pyproject.toml`` ``[tool.fork]``: upstream version and sdist sha256 (the
  single place that names the base).
- ``.cache/sdist/``: downloaded sdists (hash-checked before use).
- ``.work/upstream/``: the developer's work repository, a git repo whose first
  commit is the pristine sdist and whose following commits are the patches.
  ``export`` writes patches from it.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "claude_agent_sdk"
DIST = "claude-agent-sdk"
PATCHES = ROOT / "patches"
SERIES = PATCHES / "series"
CACHE = ROOT / ".cache"
WORK = ROOT / ".work" / "upstream"
SRC = ROOT / "src" / PACKAGE
UPSTREAM_LICENSE = ROOT / "LICENSE.upstream"

# A fixed identity and dates make the work repository's commits, and so the
# exported patches, independent of who runs the tooling.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Seed b7a4e48c maintainers",
    "GIT_AUTHOR_EMAIL": "maintainers@users.noreply.a-seed-b7a4e48c.example",
    "GIT_COMMITTER_NAME": "Seed b7a4e48c maintainers",
    "GIT_COMMITTER_EMAIL": "maintainers@users.noreply.a-seed-b7a4e48c.example",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}
PRISTINE_TAG = "pristine"
IGNORED_NAMES = {"__pycache__", ".DS_Store"}


class ForkError(Exception):
    """A failure the user has to act on; the message says how."""


def fork_config() -> dict[str, object]:
    # Imported here: the fork's tests import this module for the series on
    # every Python they run on, and 3.10 has no tomllib.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the tooling runs on 3.11+
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    config: dict[str, object] = data["tool"]["fork"]
    return config


def base_version() -> str:
    return str(fork_config()["upstream-version"])


def distribution_version() -> str:
    cfg = fork_config()
    return f"{cfg['upstream-version']}+{cfg['local-label']}.{cfg['release']}"


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=check, text=True, capture_output=True
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------------------
# The sdist


def sdist(version: str | None = None, expected_sha256: str | None = None) -> Path:
    """Return the cached, hash-checked sdist of ``version``, downloading it once.

    The pinned base is always checked against ``[tool.fork]``. Another
    version (a rebase trial) has no pinned hash; its hash is printed so it
    can be pinned when the fork moves to it.
    """
    cfg = fork_config()
    if version is None or version == cfg["upstream-version"]:
        version = str(cfg["upstream-version"])
        expected_sha256 = expected_sha256 or str(cfg["upstream-sdist-sha256"])
    target_dir = CACHE / "sdist"
    target = target_dir / f"claude_agent_sdk-{version}.tar.gz"
    if not target.exists():
        target_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            fetched = _fetch_sdist(version, Path(tmp)) or _pip_download(
                version, Path(tmp)
            )
            # Into place in one step: two sessions running side by side
            # (tools/lanes.py) may both fetch it, and neither may read half.
            part = target_dir / f".{target.name}.{os.getpid()}.part"
            shutil.move(str(fetched), part)
            part.replace(target)
    actual = sha256_of(target)
    if expected_sha256 is not None and actual != expected_sha256:
        target.unlink()
        raise ForkError(
            f"sha256 mismatch for {target.name}:\n"
            f"  expected {expected_sha256} (pyproject.toml [tool.fork])\n"
            f"  actual   {actual}\n"
            "The download was deleted. Refusing to vendor an unverified sdist."
        )
    if expected_sha256 is None:
        print(f"note: {target.name} is not pinned; its sha256 is {actual}")
    return target


SIMPLE_INDEX = "https://pypi.org/simple"


def _fetch_sdist(version: str, dest: Path) -> Path | None:
    """The sdist from the index's JSON simple API (PEP 691), or None.

    A second or so, where ``pip download --no-binary :all:`` builds the
    sdist's build backend from source first (tens of seconds on a fresh
    machine). The caller checks the hash either way.
    """
    index = os.environ.get("PIP_INDEX_URL", SIMPLE_INDEX).rstrip("/")
    name = f"claude_agent_sdk-{version}.tar.gz"
    try:
        request = urllib.request.Request(
            f"{index}/{DIST}/",
            headers={"Accept": "application/vnd.pypi.simple.v1+json"},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            files = json.load(answer)["files"]
        (url,) = [f["url"] for f in files if f["filename"] == name]
        target = dest / name
        with urllib.request.urlopen(url, timeout=180) as answer, target.open("wb") as f:
            shutil.copyfileobj(answer, f)
        return target
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"note: {index} did not serve {name} ({error}); trying pip download")
        return None


def _pip_download(version: str, dest: Path) -> Path:
    cmd = [
        sys.executable, "-m", "pip", "download", "--quiet",
        "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check",
        "--dest", str(dest), f"{DIST}=={version}",
    ]  # fmt: skip
    done = subprocess.run(cmd, text=True, capture_output=True)
    files = list(dest.glob("*.tar.gz"))
    if done.returncode != 0 or len(files) != 1:
        raise ForkError(
            f"could not download the {DIST} {version} sdist from PyPI "
            f"(pip exit {done.returncode}):\n{done.stderr.strip()}"
        )
    return files[0]


def extract_sdist(archive: Path, dest: Path) -> None:
    """Extract an sdist's single top-level directory into ``dest``."""
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(archive) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(tmp, filter="data")
        else:  # pragma: no cover
            tar.extractall(tmp)  # noqa: S202 - hash-checked archive
        (top,) = Path(tmp).iterdir()
        shutil.copytree(top, dest, dirs_exist_ok=True)


# ---------------------------------------------------------------------------
# The series


def series() -> list[Path]:
    """Patch files named by ``patches/series``, in order."""
    if not SERIES.exists():
        return []
    names = [
        line.strip()
        for line in SERIES.read_text("utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    missing = [n for n in names if not (PATCHES / n).is_file()]
    if missing:
        raise ForkError(f"patches/series names missing files: {', '.join(missing)}")
    return [PATCHES / n for n in names]


# What the tooling needs to know of a patch lives in ``patches/series``, in
# comment lines right under the patch's name, never in its message (which is
# the pull request's text):
#
#     0004-tool-results.patch
#     #   depends-on: serve-extra-tool-fields, json-schema-dicts
#     #   pin: test_name[param]
#     #   src-lines: 91
#     #   note: free text for the reader, kept as written
#
# ``depends-on`` names (by slug) the earlier patches it needs besides
# pristine; ``pin``, one per line, a test it adds that passes without it too
# (it guards behaviour the patch must keep): a test function's name (all its
# parameters), or ``name[id]``, or ``Class::name``; ``src-lines`` is written
# by export (``src_lines_changed``), so a reader of the series sees each pull
# request's size; ``note`` says why, where a dependency or a size needs it.
# Annotations are kept by slug from one export to the next.
ANNOTATION_KEYS = ("depends-on", "pin", "src-lines", "note")
_ANNOTATION = re.compile(r"#\s+(" + "|".join(ANNOTATION_KEYS) + r"):\s*(.*?)\s*$")


def series_annotations() -> dict[str, dict[str, list[str]]]:
    """Slug -> annotation key -> values, from ``patches/series``."""
    found: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    if not SERIES.exists():
        return found
    for line in SERIES.read_text("utf-8").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            current = found.setdefault(patch_slug(Path(stripped)), {})
            continue
        match = _ANNOTATION.match(stripped)
        if match and current is not None:
            key, value = match.groups()
            values = (
                [v.strip() for v in value.split(",")]
                if key == "depends-on"
                else [value]
            )
            current.setdefault(key, []).extend(v for v in values if v)
        elif stripped.startswith("#") and stripped != "#":
            current = None  # a track header or other comment ends the block
    return found


def _annotation(patch: Path, key: str) -> list[str]:
    return series_annotations().get(patch_slug(patch), {}).get(key, [])


def patch_slug(patch: Path) -> str:
    """``0002-strict-schema-checks.patch`` -> ``strict-schema-checks``."""
    stem = patch.name.removesuffix(".patch")
    number, _, slug = stem.partition("-")
    return slug if number.isdigit() else stem


def patch_message(patch: Path) -> str:
    """The commit message of a ``git format-patch`` file: subject, blank line, body."""
    head = patch.read_text("utf-8").split("\n---\n", 1)[0]
    lines = head.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Subject: "))
    subject = [lines[start].removeprefix("Subject: ").removeprefix("[PATCH] ")]
    index = start + 1
    while index < len(lines) and lines[index].startswith(" "):
        subject.append(lines[index].strip())  # a folded Subject: header
        index += 1
    while index < len(lines) and lines[index]:
        index += 1  # mail headers after it (MIME-Version: ... for non-ASCII text)
    return " ".join(subject) + "\n" + "\n".join(lines[index:]).rstrip() + "\n"


def patch_dependencies(patch: Path) -> list[str]:
    """The slugs ``patches/series`` says ``patch`` depends on (empty: applies alone)."""
    return list(_annotation(patch, "depends-on"))


def pinned_tests(patch: Path) -> list[str]:
    """The tests ``patches/series`` declares as pinning existing behaviour for
    ``patch`` (the pull_requests session holds each upstream-track patch to
    it on both mcp majors)."""
    return list(_annotation(patch, "pin"))


def pin_matches(pin: str, test_id: str) -> bool:
    """Whether ``pin`` (as ``pinned_tests`` gives it) names ``test_id``
    (``module.path[.Class]::name[params]``, as pytest's JUnit report has it).
    ``name[a]`` names every parametrization of ``name`` whose id has ``a``
    among its dash-separated parts (``name[asyncio-a]`` too)."""
    where, _, name = test_id.rpartition("::")
    owner = where.rsplit(".", 1)[-1]
    function, _, params = name.partition("[")
    pin_owner, _, pin_name = pin.rpartition("::")
    if pin_owner and pin_owner != owner:
        return False
    pin_function, _, pin_params = pin_name.partition("[")
    if pin_function != function:
        return False
    wanted = set(pin_params.rstrip("]").split("-")) - {""}
    return wanted <= set(params.rstrip("]").split("-"))


def declared_dependencies(pyproject: Path) -> list[str]:
    """The normalized distribution names ``[project].dependencies`` lists."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the tooling runs on 3.11+
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

    project = tomllib.loads(pyproject.read_text("utf-8"))["project"]
    names = []
    for requirement in project.get("dependencies", []):
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        if name:
            names.append(re.sub(r"[-_.]+", "-", name.group(0)).lower())
    return names


def third_party_imports(package: Path) -> dict[str, list[str]]:
    """Top-level modules ``package``'s files import that are neither the
    standard library nor the package itself -> the files importing each."""
    import ast

    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".", 1)[0]
                if top in sys.stdlib_module_names or top == package.name:
                    continue
                files = found.setdefault(top, [])
                rel = path.relative_to(package.parent).as_posix()
                if rel not in files:
                    files.append(rel)
    return found


def src_lines_changed(patch: Path) -> int:
    """Lines added plus lines removed under ``src/`` (what the 0001 budget counts)."""
    changed, in_src = 0, False
    for line in _diff_lines(patch):
        if line.startswith("diff --git "):
            in_src = line.split()[2].startswith("a/src/")
        elif in_src and line[:1] in "+-" and not line.startswith(("+++", "---")):
            changed += 1
    return changed


def _diff_lines(patch: Path) -> list[str]:
    """The lines of a ``git format-patch`` file after its message."""
    return patch.read_text("utf-8").split("\n---\n", 1)[1].splitlines()


def check_dependencies() -> list[str]:
    """Problems with patches that do not apply on pristine plus their dependencies.

    Every patch must apply alone to pristine upstream, or on pristine plus
    exactly the patches its ``depends-on`` annotation in ``patches/series``
    names (applied in series order), so each one can be proposed upstream as its own pull request.
    """
    patches = series()
    by_slug = {patch_slug(p): p for p in patches}
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, patch in enumerate(patches):
            deps = patch_dependencies(patch)
            unknown = [d for d in deps if d not in by_slug]
            later = [d for d in deps if patches.index(by_slug.get(d, patch)) >= index]
            if unknown or later:
                problems.append(
                    f"{patch.name}: depends-on names "
                    f"{', '.join(unknown + later)}, not an earlier patch of the series"
                )
                continue
            chosen = [p for p in patches[:index] if patch_slug(p) in deps] + [patch]
            tree = build_tree(Path(tmp) / f"alone-{index}", patches=chosen)
            failed = [r for r in tree.results if not r.applied]
            if failed:
                on = " + ".join(["pristine", *deps])
                problems.append(
                    f"{patch.name} does not apply on {on}: "
                    f"{failed[0].patch.name}: {failed[0].message}"
                )
    return problems


def write_pull_requests(dest: Path) -> list[Path]:
    """Write each upstream-track patch's pull-request body (``NNNN.md``) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for old in dest.glob("*.md"):
        old.unlink()
    for patch in tracks()["upstream"]:
        subject, _, body = patch_message(patch).partition("\n")
        target = dest / f"{patch.name.split('-', 1)[0]}.md"
        target.write_text(f"# {subject}\n\n{body.strip()}\n", "utf-8")
        written.append(target)
    return written


@dataclass
class PatchResult:
    patch: Path
    applied: bool
    rejected_hunks: str = ""
    message: str = ""


@dataclass
class Tree:
    path: Path
    version: str
    results: list[PatchResult] = field(default_factory=list)

    @property
    def all_applied(self) -> bool:
        return all(r.applied for r in self.results)


def init_pristine_repo(version: str, dest: Path) -> None:
    """Make ``dest`` a git repo whose one commit is the pristine sdist."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    extract_sdist(sdist(version), dest)
    git("init", "-q", "-b", "main", cwd=dest)
    git("config", "core.autocrlf", "false", cwd=dest)
    # -f: the sdist carries upstream's .gitignore, which must not hide any of
    # the sdist's own files from the pristine commit.
    git("add", "-A", "-f", ".", cwd=dest)
    git("commit", "-q", "-m", f"{DIST} {version} (PyPI sdist, pristine)", cwd=dest)
    git("tag", PRISTINE_TAG, cwd=dest)


def apply_series(
    tree: Tree, patches: list[Path], keep_going: bool = False
) -> list[PatchResult]:
    """``git am`` each patch in order (no fuzz: git applies exact context only).

    With ``keep_going`` a patch that does not apply is recorded with its
    rejected hunks and skipped, so a rebase trial reports every patch.
    """
    results: list[PatchResult] = []
    for patch in patches:
        done = git("am", "--keep-cr", "-q", str(patch), cwd=tree.path, check=False)
        if done.returncode == 0:
            results.append(PatchResult(patch, True))
            continue
        git("am", "--abort", cwd=tree.path, check=False)
        rejected = git(
            "apply", "--reject", "--verbose", str(patch), cwd=tree.path, check=False
        )
        hunks = []
        for rej in sorted(tree.path.rglob("*.rej")):
            hunks.append(f"--- {rej.relative_to(tree.path)}\n{rej.read_text('utf-8')}")
        git("reset", "-q", "--hard", cwd=tree.path)
        git("clean", "-qfd", cwd=tree.path)
        results.append(
            PatchResult(
                patch,
                False,
                rejected_hunks="\n".join(hunks) or rejected.stderr,
                message=(done.stderr or done.stdout).strip(),
            )
        )
        if not keep_going:
            break
    tree.results = results
    return results


def build_tree(
    dest: Path,
    version: str | None = None,
    patches: list[Path] | None = None,
    keep_going: bool = False,
) -> Tree:
    """Pristine ``version`` plus ``patches`` (default: the whole series) at ``dest``."""
    version = version or base_version()
    patches = series() if patches is None else patches
    init_pristine_repo(version, dest)
    tree = Tree(dest, version)
    apply_series(tree, patches, keep_going=keep_going)
    return tree


def require_applied(tree: Tree) -> None:
    failed = [r for r in tree.results if not r.applied]
    if failed:
        first = failed[0]
        raise ForkError(
            f"{first.patch.name} does not apply to {DIST} {tree.version}:\n"
            f"{first.message}\n{first.rejected_hunks}"
        )


# ---------------------------------------------------------------------------
# Comparing and copying package trees


def package_files(root: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    if not root.exists():
        return files
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part in IGNORED_NAMES for part in rel.parts) or path.suffix == ".pyc":
            continue
        if path.is_file():
            files[rel.as_posix()] = path
    return files


def tree_differences(expected: Path, actual: Path) -> list[str]:
    """Byte-for-byte differences between two package directories."""
    want, have = package_files(expected), package_files(actual)
    problems = []
    for rel in sorted(want.keys() | have.keys()):
        if rel not in have:
            problems.append(f"missing in src/: {rel}")
        elif rel not in want:
            problems.append(f"not produced by pristine + series: {rel}")
        elif not filecmp.cmp(want[rel], have[rel], shallow=False):
            problems.append(f"differs: {rel}")
    return problems


def mirror(source: Path, dest: Path) -> None:
    """Make ``dest`` hold exactly the package files of ``source``."""
    want = package_files(source)
    have = package_files(dest)
    for rel in have.keys() - want.keys():
        have[rel].unlink()
    for rel, path in want.items():
        target = dest / rel
        if rel in have and filecmp.cmp(path, target, shallow=False):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    # Directories left empty by deletions.
    if dest.exists():
        for directory in sorted(dest.rglob("*"), reverse=True):
            if (
                directory.is_dir()
                and directory.name not in IGNORED_NAMES
                and not any(directory.iterdir())
            ):
                directory.rmdir()


# ---------------------------------------------------------------------------
# Commands


def vendor() -> Tree:
    """Write ``src/claude_agent_sdk/`` (and LICENSE.upstream) from pristine + series.

    Idempotent: files already equal are not touched; nothing outside those
    two paths is written (besides the download cache).
    """
    with tempfile.TemporaryDirectory() as tmp:
        tree = build_tree(Path(tmp) / "tree")
        require_applied(tree)
        _vendor_from(tree)
        return tree


def _vendor_from(tree: Tree) -> None:
    """Copy a built pristine + series tree's package and licence into place."""
    mirror(tree.path / "src" / PACKAGE, SRC)
    license_text = (tree.path / "LICENSE").read_bytes()
    if not UPSTREAM_LICENSE.exists() or UPSTREAM_LICENSE.read_bytes() != license_text:
        UPSTREAM_LICENSE.write_bytes(license_text)
    print(f"vendored {DIST} {tree.version} + {len(tree.results)} patch(es) into {SRC}")


def check() -> list[str]:
    """Differences between ``src/`` and pristine + series (empty when in sync)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = build_tree(Path(tmp) / "tree")
        require_applied(tree)
        problems = tree_differences(tree.path / "src" / PACKAGE, SRC)
        upstream_license = tree.path / "LICENSE"
        if not UPSTREAM_LICENSE.exists() or not filecmp.cmp(
            upstream_license, UPSTREAM_LICENSE, shallow=False
        ):
            problems.append("differs: LICENSE.upstream (must be upstream's LICENSE)")
        return problems


CHECK_HELP = """\
src/claude_agent_sdk/ is not pristine {dist} {version} + patches/series.
How to fix:
  - you meant to change the package: turn the edit into a patch with
      nox -s export -- --into NNNN        (fold it into an existing patch)
      nox -s export -- --new "Subject"    (a new patch at the end)
  - the edit was an accident, or patches/ changed: re-vendor with
      nox -s vendor
"""


def ensure_work_repo() -> Path:
    """The developer's work repository, created from pristine + series if absent."""
    if not (WORK / ".git").exists():
        tree = build_tree(WORK)
        require_applied(tree)
        print(f"created work repository {WORK.relative_to(ROOT)}")
    return WORK


def export(
    into: str | None = None,
    new: str | None = None,
    body: str = "",
    slugs: list[str] | None = None,
) -> None:
    """Turn the work repository (plus edits made in src/) into patches/.

    Edits made in ``src/claude_agent_sdk/`` are copied into the work
    repository first. Uncommitted changes there must say where they go:
    ``into`` (a patch number or slug to fold them into) or ``new`` (the
    subject of a new patch at the end of the series).
    """
    # Edits made in src/ (src/ no longer equals pristine + series) are carried
    # into the work repository; otherwise the work repository is the source.
    src_edited = bool(check())
    work = ensure_work_repo()
    if src_edited:
        mirror(SRC, work / "src" / PACKAGE)
    status = git("status", "--porcelain", cwd=work).stdout.strip()
    if status:
        if into is None and new is None:
            raise ForkError(
                "uncommitted changes in the work repository (.work/upstream):\n"
                f"{status}\n"
                'say where they go: --into NNNN|slug, or --new "Subject"'
            )
        git("add", "-A", cwd=work)
        if new is not None:
            git("commit", "-q", "-m", f"{new}\n\n{body}".strip() + "\n", cwd=work)
        else:
            assert into is not None
            target = _commit_for(work, into)
            git("commit", "-q", "--fixup", target, cwd=work)
            env_editor = {"GIT_SEQUENCE_EDITOR": "true"}
            done = subprocess.run(
                ["git", "rebase", "-q", "-i", "--autosquash", PRISTINE_TAG],
                cwd=work,
                env={**os.environ, **GIT_ENV, **env_editor},
                text=True,
                capture_output=True,
            )
            if done.returncode != 0:
                raise ForkError(
                    "folding the change into the patch conflicted with a later "
                    "patch; resolve it in .work/upstream (git rebase --continue), "
                    f"then run export again.\n{done.stderr}"
                )
    if new is not None and not slugs:
        slugs = [new.lower().replace(" ", "-")[:40].strip("-")]
    write_patches(work, slugs)
    # The exported series must reproduce the work repository's package (which
    # holds any edits carried over from src/) before it replaces src/.
    with tempfile.TemporaryDirectory() as tmp:
        tree = build_tree(Path(tmp) / "tree")
        require_applied(tree)
        problems = tree_differences(work / "src" / PACKAGE, tree.path / "src" / PACKAGE)
        if problems:
            raise ForkError(
                "the exported series does not reproduce .work/upstream:\n"
                + "\n".join(problems)
            )
        _vendor_from(tree)
    print(f"exported {len(series())} patch(es) to patches/")
    # Each patch's pull-request body, ready to propose upstream in one step.
    pr_dir = CACHE / "pr"
    write_pull_requests(pr_dir)
    print(f"pull-request bodies in {pr_dir.relative_to(ROOT)}/NNNN.md")


def _commit_for(work: Path, which: str) -> str:
    commits = git(
        "rev-list", "--reverse", f"{PRISTINE_TAG}..HEAD", cwd=work
    ).stdout.split()
    patches = series()
    for index, patch in enumerate(patches):
        number = patch.name.split("-", 1)[0]
        if which in (number, number.lstrip("0"), patch_slug(patch), patch.name):
            return commits[index]
    raise ForkError(f"no patch in the series matches {which!r}")


def write_patches(work: Path, slugs: list[str] | None = None) -> None:
    """``git format-patch`` the work repository's commits into patches/.

    A patch keeps its slug (``NNNN-<slug>.patch``) from one export to the
    next, matched by subject, since tests name patches by slug; its number is
    its place in the series. A patch new to the series is named from
    ``slugs`` in order, or else from its subject as git would.
    """
    old_slugs = {_subject(p): patch_slug(p) for p in series()}
    new_slugs = list(slugs or [])
    with tempfile.TemporaryDirectory() as tmp:
        git(
            "format-patch", "-q", "--zero-commit", "--full-index", "--no-signature",
            "-N", "-o", tmp, f"{PRISTINE_TAG}..HEAD",
            cwd=work,
        )  # fmt: skip
        produced = sorted(Path(tmp).glob("*.patch"))
        names = []
        for index, patch in enumerate(produced):
            slug = old_slugs.get(_subject(patch))
            if slug is None and new_slugs:
                slug = new_slugs.pop(0)
            if slug is None:
                slug = patch_slug(patch).removesuffix(".patch")
            names.append(f"{index + 1:04d}-{slug}.patch")
        PATCHES.mkdir(exist_ok=True)
        for old in PATCHES.glob("*.patch"):
            old.unlink()
        for patch, name in zip(produced, names, strict=True):
            shutil.copy2(patch, PATCHES / name)
        SERIES.write_text(series_text(names), "utf-8")


SERIES_HEADER = """\
# Applied in order with `git am` to upstream's PyPI sdist (see README).
# Each patch applies alone to pristine upstream, or on pristine plus the
# patches its `depends-on:` comment names (forktool depends checks it).
# Comment lines under a patch's name are for the tooling (forktool.py,
# ANNOTATION_KEYS): `depends-on`, `pin` (a test it adds that passes without
# it too), `src-lines` (written by export), `note`.
"""
TRACK_HEADERS = {
    "upstream": (
        "# == upstream track: pull requests for anthropics/claude-agent-sdk-python,\n"
        "# each mergeable unchanged; each depends on upstream-track patches only.\n"
    ),
    "fork": (
        "# == fork track: kept in this fork, not proposed upstream (each message\n"
        "# says `Track: fork`); may depend on any earlier patch.\n"
    ),
}


def series_text(names: list[str]) -> str:
    """``patches/series`` for ``names``: the upstream track, then the fork
    track, each patch with its annotations (kept by slug)."""
    annotations = series_annotations()
    lines, current = [SERIES_HEADER], None
    for name in names:
        track = patch_track(PATCHES / name)
        if track != current:
            lines.append(TRACK_HEADERS[track])
            current = track
        lines.append(f"{name}\n")
        kept = annotations.get(patch_slug(Path(name)), {})
        if kept.get("depends-on"):
            lines.append(f"#   depends-on: {', '.join(kept['depends-on'])}\n")
        lines.extend(f"#   pin: {pin}\n" for pin in kept.get("pin", []))
        lines.extend(f"#   note: {note}\n" for note in kept.get("note", []))
        if track == "upstream":
            lines.append(f"#   src-lines: {src_lines_changed(PATCHES / name)}\n")
    return "".join(lines)


def patch_track(patch: Path) -> str:
    """``"fork"`` for a patch whose message says ``Track: fork``, else ``"upstream"``."""
    message = patch_message(patch)
    return "fork" if "\nTrack: fork\n" in f"\n{message}" else "upstream"


def tracks() -> dict[str, list[Path]]:
    """The series split into its two tracks, in order."""
    split: dict[str, list[Path]] = {"upstream": [], "fork": []}
    for patch in series():
        split[patch_track(patch)].append(patch)
    return split


def patch_files(patch: Path) -> list[str]:
    """The paths a patch changes (in the upstream tree: ``src/...``, ``tests/...``)."""
    files = []
    for line in _diff_lines(patch):
        if line.startswith("diff --git "):
            files.append(line.split()[3].removeprefix("b/"))
    return files


def owners() -> list[tuple[str, list[str], str]]:
    """Each file the series changes -> the patches that change it -> its track.

    A file's track is ``fork`` when only fork-track patches change it,
    ``upstream`` when only upstream-track ones do, else ``both``.
    """
    by_file: dict[str, list[Path]] = {}
    for patch in series():
        for path in patch_files(patch):
            by_file.setdefault(path, []).append(patch)
    rows = []
    for path in sorted(by_file):
        patches = by_file[path]
        kinds = {patch_track(p) for p in patches}
        track = kinds.pop() if len(kinds) == 1 else "both"
        rows.append((path, [p.name.removesuffix(".patch") for p in patches], track))
    return rows


def owners_table() -> str:
    """The owners map as the Markdown table CONTRIBUTING.md carries."""
    lines = [
        "| file | patches (in series order) | track |",
        "|---|---|---|",
    ]
    for path, patches, track in owners():
        lines.append(f"| `{path}` | {', '.join(patches)} | {track} |")
    return "\n".join(lines)


def _subject(patch: Path) -> str:
    return patch_message(patch).split("\n", 1)[0]


def rebase_trial(version: str, dest: Path) -> Tree:
    """Apply the series to another upstream release and report per patch."""
    tree = build_tree(dest, version=version, keep_going=True)
    print(f"rebase trial: {DIST} {version} in {dest}")
    for result in tree.results:
        state = "applied" if result.applied else "CONFLICTED"
        print(f"  {result.patch.name}: {state}")
        if not result.applied:
            print(result.message)
            print(result.rejected_hunks)
    if not tree.results:
        print("  (the series is empty)")
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("vendor", help="write src/ from pristine + series")
    sub.add_parser("check", help="prove src/ equals pristine + series")
    exp = sub.add_parser("export", help="write patches/ from .work/upstream and src/")
    exp.add_argument("--into", help="fold uncommitted changes into this patch")
    exp.add_argument("--new", help="subject of a new patch for uncommitted changes")
    exp.add_argument("--body", default="", help="body of the new patch's message")
    exp.add_argument(
        "--slug",
        action="append",
        dest="slugs",
        help="file-name slug of a patch new to the series (repeat, in order)",
    )
    reb = sub.add_parser("rebase", help="apply the series to another upstream release")
    reb.add_argument("version")
    reb.add_argument("--dest", type=Path)
    sub.add_parser("version", help="print the distribution version")
    sub.add_parser(
        "depends", help="prove each patch applies on pristine + its depends-on"
    )
    own = sub.add_parser("owners", help="print file -> patch -> track")
    own.add_argument(
        "--write", action="store_true", help="rewrite CONTRIBUTING.md's owners map"
    )
    prs = sub.add_parser(
        "pr", help="write each upstream-track patch's PR body to .cache/pr/"
    )
    prs.add_argument("--dest", type=Path, default=CACHE / "pr")
    args = parser.parse_args(argv)
    try:
        if args.command == "vendor":
            vendor()
        elif args.command == "check":
            problems = check()
            if problems:
                print("\n".join(problems), file=sys.stderr)
                print(
                    CHECK_HELP.format(dist=DIST, version=base_version()),
                    file=sys.stderr,
                )
                return 1
            print(
                f"src/ == pristine {DIST} {base_version()} + {len(series())} patch(es)"
            )
        elif args.command == "export":
            export(args.into, args.new, args.body, args.slugs)
        elif args.command == "rebase":
            dest = args.dest or CACHE / "rebase" / args.version
            tree = rebase_trial(args.version, dest)
            return 0 if tree.all_applied else 1
        elif args.command == "version":
            print(distribution_version())
        elif args.command == "depends":
            problems = check_dependencies()
            for problem in problems:
                print(problem, file=sys.stderr)
            if problems:
                return 1
            for patch in series():
                deps = patch_dependencies(patch)
                print(f"{patch.name}: applies on pristine + {deps or 'nothing'}")
        elif args.command == "owners":
            if args.write:
                if __package__:  # python -m tools.forktool, or imported
                    from tools.doc_blocks import write_block
                else:  # python tools/forktool.py: tools/ is the script's directory
                    from doc_blocks import write_block  # type: ignore[import-not-found, no-redef]

                write_block(ROOT / "CONTRIBUTING.md", "owners", owners_table())
            for name, owning, track in owners():
                print(f"{name}\t{', '.join(owning)}\t{track}")
        elif args.command == "pr":
            for path in write_pull_requests(args.dest):
                print(path)
    except ForkError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
