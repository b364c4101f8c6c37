"""Install the Claude Code CLI into a project-local cache and print its path.

Stdlib only, so it runs before anything else is installed::

    python tools/claude_cli.py                    # the version the base release bundles
    python tools/claude_cli.py --cli-version 2.1.340

The version defaults to ``__cli_version__`` in
``src/claude_agent_sdk/_cli_version.py`` (read as text, never imported: the
package may not be installed in the interpreter running this). The CLI goes to
``.cache/claude-code/<version>/`` under the repository with
``npm install --prefix`` -- never a global install -- and only once: a cached
copy whose binary answers ``--version`` with the right version is reused.

``@anthropic-ai/claude-code`` is a thin npm package whose ``bin`` entry
(``bin/claude.exe``) is a placeholder that its postinstall script replaces with
the native binary from the matching platform package, an optional dependency
(``@anthropic-ai/claude-code-linux-x64`` and so on, ~170 MB). When npm skipped
the postinstall (``ignore-scripts``, or an npm that wants scripts approved) the
platform package's binary is used directly; when npm skipped the optional
dependency, that is reported as the error it is.

Exit status 0 prints the CLI's absolute path on stdout (progress goes to
stderr); any failure exits 2 with a message saying what is missing.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
VERSION_FILE = Path("src") / "claude_agent_sdk" / "_cli_version.py"
NPM_PACKAGE = "@anthropic-ai/claude-code"
CACHE_SUBDIR = Path(".cache") / "claude-code"
VERSION_CHECK_TIMEOUT_S = 60
NPM_TIMEOUT_S = 900


class CLIInstallError(RuntimeError):
    """The CLI could not be installed or does not run; the message says why."""


def _log(message: str) -> None:
    print(f"[claude_cli] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Which version
# --------------------------------------------------------------------------


def bundled_cli_version(version_file: Path) -> str:
    """``__cli_version__`` from an ``_cli_version.py``, parsed, not imported."""
    try:
        source = version_file.read_text("utf-8")
    except OSError as error:
        raise CLIInstallError(
            f"cannot read the bundled CLI version from {version_file}: {error}"
        ) from error
    for node in ast.walk(ast.parse(source, filename=str(version_file))):
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if "__cli_version__" in targets and isinstance(node.value, ast.Constant):
                value = node.value.value
                if isinstance(value, str) and value:
                    return value
    raise CLIInstallError(f"no __cli_version__ = '<version>' in {version_file}")


# --------------------------------------------------------------------------
# Where it is, and whether it runs
# --------------------------------------------------------------------------


def cache_dir(version: str, root: Path = REPO_ROOT) -> Path:
    return root / CACHE_SUBDIR / version


def _package_dir(prefix: Path) -> Path:
    return prefix / "node_modules" / Path(*NPM_PACKAGE.split("/"))


def _platform_key() -> str:
    """The suffix of the platform package, named as the package's install.cjs names it."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(
        sys.platform, sys.platform
    )
    machine = platform.machine().lower()
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    key = f"{system}-{cpu}"
    if system == "linux" and platform.libc_ver()[0] != "glibc":
        key += "-musl"
    return key


def _bin_entry(package_dir: Path) -> Path:
    """The path the package's ``bin`` entry for ``claude`` points to."""
    manifest = json.loads((package_dir / "package.json").read_text("utf-8"))
    bin_field = manifest.get("bin")
    if isinstance(bin_field, str):
        relative = bin_field
    elif isinstance(bin_field, dict) and bin_field:
        relative = bin_field.get("claude") or next(iter(bin_field.values()))
    else:
        raise CLIInstallError(f"{package_dir}/package.json has no bin entry")
    return package_dir / relative


def _platform_binary(prefix: Path) -> Path:
    key = _platform_key()
    package_dir = prefix / "node_modules" / "@anthropic-ai" / f"claude-code-{key}"
    name = "claude.exe" if sys.platform == "win32" else "claude"
    return package_dir / name


def reported_version(cli: Path) -> str | None:
    """What ``cli --version`` says (its first word), or None if it does not run."""
    env = dict(os.environ)
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    try:
        completed = subprocess.run(
            [str(cli), "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_CHECK_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = completed.stdout.split()
    if completed.returncode != 0 or not words:
        return None
    return words[0]


def runnable_cli(prefix: Path, version: str) -> Path | None:
    """The runnable CLI in an install prefix, if it is there and is ``version``."""
    package_dir = _package_dir(prefix)
    if not (package_dir / "package.json").is_file():
        return None
    candidates = [_bin_entry(package_dir), _platform_binary(prefix)]
    for candidate in candidates:
        if candidate.is_file() and reported_version(candidate) == version:
            return candidate.resolve()
    return None


def _diagnose_not_runnable(prefix: Path, version: str) -> str:
    package_dir = _package_dir(prefix)
    platform_binary = _platform_binary(prefix)
    if not platform_binary.parent.is_dir():
        return (
            f"npm installed {NPM_PACKAGE}@{version} but not its platform package "
            f"{platform_binary.parent.name!r} (an optional dependency): check that npm "
            "is not configured to omit optional dependencies, and that this "
            f"version ships a binary for {_platform_key()}"
        )
    entry = _bin_entry(package_dir)
    return (
        f"neither {entry} nor {platform_binary} runs `--version` and reports {version}"
    )


# --------------------------------------------------------------------------
# Installing
# --------------------------------------------------------------------------


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise CLIInstallError(
            "npm is not on PATH: the Claude Code CLI is installed from the npm "
            "registry, so Node.js and npm are needed (e.g. `apt-get install nodejs "
            "npm`, or any Node.js >= 18 distribution)"
        )
    return npm


def _registry(npm: str) -> str:
    try:
        completed = subprocess.run(
            [npm, "config", "get", "registry"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return completed.stdout.strip() or "the npm registry"
    except (OSError, subprocess.TimeoutExpired):
        return "the npm registry"


_NETWORK_MARKERS = (
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "network",
    "proxy",
    "certificate",
)


def _explain_npm_failure(output: str, version: str, registry: str) -> str:
    tail = "\n".join(output.strip().splitlines()[-15:])
    if "E404" in output or "ETARGET" in output or "No matching version" in output:
        return (
            f"{NPM_PACKAGE}@{version} is not on {registry} (npm: not found); "
            f"pick an existing version with --cli-version\n{tail}"
        )
    if any(marker in output for marker in _NETWORK_MARKERS):
        return (
            f"cannot reach {registry} to download {NPM_PACKAGE}@{version}: "
            f"registry access is needed the first time (later runs use the "
            f"cache)\n{tail}"
        )
    return f"npm install of {NPM_PACKAGE}@{version} failed\n{tail}"


def install(version: str, root: Path = REPO_ROOT) -> Path:
    """Make ``version`` of the CLI available under ``root``; return its path."""
    prefix = cache_dir(version, root)
    cached = runnable_cli(prefix, version)
    if cached is not None:
        _log(f"Claude Code {version}: cached at {cached}")
        return cached

    npm = _npm()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    # Install into a fresh sibling directory and rename it into place, so an
    # interrupted download never leaves a half-installed cache behind.
    staging = Path(tempfile.mkdtemp(prefix=f"{version}.partial-", dir=prefix.parent))
    command = [
        npm,
        "install",
        "--prefix",
        str(staging),
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--include=optional",
        f"{NPM_PACKAGE}@{version}",
    ]
    _log(f"installing {NPM_PACKAGE}@{version} into {prefix} (about 170 MB) ...")
    try:
        try:
            completed = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise CLIInstallError(
                f"npm install of {NPM_PACKAGE}@{version} did not finish within "
                f"{NPM_TIMEOUT_S} s: is {_registry(npm)} reachable?"
            ) from error
        if completed.returncode != 0:
            raise CLIInstallError(
                _explain_npm_failure(
                    completed.stdout + completed.stderr, version, _registry(npm)
                )
            )
        if runnable_cli(staging, version) is None:
            raise CLIInstallError(_diagnose_not_runnable(staging, version))
        if prefix.exists():  # a stale or broken copy
            shutil.rmtree(prefix)
        staging.rename(prefix)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)

    installed = runnable_cli(prefix, version)
    if installed is None:  # pragma: no cover - the staging check passed
        raise CLIInstallError(_diagnose_not_runnable(prefix, version))
    _log(f"Claude Code {version}: installed at {installed}")
    return installed


def resolve_version(
    cli_version: str | None, root: Path = REPO_ROOT, version_file: Path | None = None
) -> str:
    """An explicit version, else the one ``_cli_version.py`` names."""
    if cli_version:
        return cli_version
    return bundled_cli_version(version_file or root / VERSION_FILE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(
            "Install @anthropic-ai/claude-code into <root>/.cache/claude-code/<version> "
            "(once) and print the path of the runnable CLI."
        )
    )
    parser.add_argument(
        "--cli-version",
        help="CLI version to install (default: __cli_version__ of the vendored SDK)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=REPO_ROOT,
        help="repository root holding .cache/ and src/ (default: %(default)s)",
    )
    parser.add_argument(
        "--version-file",
        type=Path,
        help=f"where to read __cli_version__ (default: <root>/{VERSION_FILE})",
    )
    parser.add_argument(
        "--print-version",
        action="store_true",
        help="print the version that would be installed, and exit",
    )
    args = parser.parse_args(argv)
    try:
        version = resolve_version(args.cli_version, args.root, args.version_file)
        if args.print_version:
            print(version)
            return 0
        print(install(version, args.root))
    except CLIInstallError as error:
        print(f"claude_cli: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
