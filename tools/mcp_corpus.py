"""A corpus of real tool input schemas, listed from published MCP servers.

``tests/data/mcp_corpus.json`` holds what each server in ``SERVERS`` (below)
answers to ``tools/list``: every tool exactly as the server sent it (name,
description, inputSchema and any other top-level field, such as annotations,
outputSchema or title), so that the fork's schema handling can be tested on
shapes that real servers publish rather than on shapes we invent.

    python tools/mcp_corpus.py --write            # collect every server
    python tools/mcp_corpus.py --write --only git # refresh one entry
    python tools/mcp_corpus.py --check            # the checked-in file, offline

``--write`` installs each pinned server into ``.cache/mcp-corpus/<name>-<version>/``
(npm: ``npm install --prefix``; PyPI: a virtualenv of its own), one at a time,
starts it over stdio with the ``mcp`` client (initialize, then ``tools/list``
with every page), and writes the file with sorted keys and tools sorted by
name, so that two runs differ only in ``collected``. The tools are the raw
JSON-RPC result the server sent (read off the transport before the client's
models parse it), not the client's re-serialisation, so that no field is
lost to a model that does not know it. A server that fails makes the run fail
and nothing is written. Servers run with the ``mcp`` client's minimal
environment plus the dummy values named in ``SERVERS``: never real
credentials.

``--check`` needs neither the network nor ``mcp``: it validates the checked-in
file's shape, that it lists exactly the pinned servers, and that it is in the
canonical form ``--write`` produces.

Run time: the standard library, plus ``mcp`` (1.x or 2.x) for ``--write``;
``npm`` and this Python's ``venv`` to install the servers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "mcp_corpus.json"
CACHE = ROOT / ".cache" / "mcp-corpus"

Registry = Literal["npm", "pypi"]
REGISTRIES: tuple[Registry, ...] = ("npm", "pypi")

# A dummy credential: present, so that a server which checks for its token at
# start-up starts, and obviously not a real one.
DUMMY = "dummy-not-a-real-token"


@dataclass(frozen=True)
class Server:
    """One published MCP server, pinned exactly.

    ``command`` is the executable the package installs (npm: a name in
    ``node_modules/.bin``; PyPI: a console script in the virtualenv's
    ``bin``). ``{work}`` in ``args`` is an empty scratch directory of the
    server's own, for servers that want a path (a root, a database file).
    """

    name: str
    registry: Registry
    package: str
    version: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    install_env: Mapping[str, str] = field(default_factory=dict)
    # PyPI: requirements installed with the package, for a server whose own
    # dependencies are unpinned and have since broken it.
    extra_requirements: tuple[str, ...] = ()
    timeout: float = 60.0

    @property
    def spec(self) -> str:
        sep = "@" if self.registry == "npm" else "=="
        return f"{self.package}{sep}{self.version}"

    @property
    def directory(self) -> Path:
        return CACHE / f"{self.name}-{self.version}"


# The pinned list: the newest version of each package when it was collected
# (``npm view PKG version`` / ``pip index versions PKG``). Keep it sorted by
# name; the corpus lists the servers in this order.
SERVERS: tuple[Server, ...] = (
    # Archived upstream (modelcontextprotocol/servers-archived) but published.
    Server(
        "brave-search",
        "npm",
        "@modelcontextprotocol/server-brave-search",
        "0.6.2",
        "mcp-server-brave-search",
        env={"BRAVE_API_KEY": DUMMY},
    ),
    Server(
        "context7",
        "npm",
        "@upstash/context7-mcp",
        "4.1.1",
        "context7-mcp",
    ),
    # Archived upstream but published.
    Server(
        "everart",
        "npm",
        "@modelcontextprotocol/server-everart",
        "0.6.2",
        "mcp-server-everart",
        env={"EVERART_API_KEY": DUMMY},
    ),
    Server(
        "everything",
        "npm",
        "@modelcontextprotocol/server-everything",
        "2026.8.31",
        "mcp-server-everything",
        args=("stdio",),
    ),
    Server("fetch", "pypi", "mcp-server-fetch", "2026.10.24", "mcp-server-fetch"),
    Server(
        "filesystem",
        "npm",
        "@modelcontextprotocol/server-filesystem",
        "2026.8.31",
        "mcp-server-filesystem",
        args=("{work}",),
    ),
    Server(
        "git",
        "pypi",
        "mcp-server-git",
        "2026.10.19",
        "mcp-server-git",
    ),
    Server(
        "github",
        "npm",
        "@modelcontextprotocol/server-github",
        "2025.4.8",
        "mcp-server-github",
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": DUMMY},
    ),
    Server(
        "gitlab",
        "npm",
        "@modelcontextprotocol/server-gitlab",
        "2025.4.25",
        "mcp-server-gitlab",
        env={"GITLAB_PERSONAL_ACCESS_TOKEN": DUMMY},
    ),
    # Archived upstream but published.
    Server(
        "google-maps",
        "npm",
        "@modelcontextprotocol/server-google-maps",
        "0.6.2",
        "mcp-server-google-maps",
        env={"GOOGLE_MAPS_API_KEY": DUMMY},
    ),
    Server(
        "memory",
        "npm",
        "@modelcontextprotocol/server-memory",
        "2026.8.31",
        "mcp-server-memory",
        env={"MEMORY_FILE_PATH": "{work}/memory.jsonl"},
    ),
    Server(
        "notion",
        "npm",
        "@notionhq/notion-mcp-server",
        "2.5.2",
        "notion-mcp-server",
        env={"NOTION_TOKEN": DUMMY},
    ),
    Server(
        "playwright",
        "npm",
        "@playwright/mcp",
        "0.0.83",
        "playwright-mcp",
        # The browser is only launched by a tool call; none is downloaded.
        install_env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
    ),
    Server(
        "postgres",
        "npm",
        "@modelcontextprotocol/server-postgres",
        "0.6.2",
        "mcp-server-postgres",
        # The pool connects on the first query; listing tools makes none.
        args=("postgresql://corpus@127.0.0.1:1/corpus",),
    ),
    Server(
        "puppeteer",
        "npm",
        "@modelcontextprotocol/server-puppeteer",
        "2025.5.12",
        "mcp-server-puppeteer",
        # Chrome is only launched by a tool call; none is downloaded.
        install_env={"PUPPETEER_SKIP_DOWNLOAD": "1"},
    ),
    # Archived upstream but published.
    Server(
        "sentry",
        "pypi",
        "mcp-server-sentry",
        "2025.1.14",
        "mcp-server-sentry",
        args=("--auth-token", DUMMY),
        # It imports httpx without requiring it, and requires only mcp>=1.0.0:
        # mcp 1.30.0 brings httpx and keeps the 1.x API it was written for.
        extra_requirements=("mcp==1.30.0",),
    ),
    Server(
        "sequential-thinking",
        "npm",
        "@modelcontextprotocol/server-sequential-thinking",
        "2026.8.31",
        "mcp-server-sequential-thinking",
    ),
    Server(
        "slack",
        "npm",
        "@modelcontextprotocol/server-slack",
        "2025.4.25",
        "mcp-server-slack",
        env={"SLACK_BOT_TOKEN": DUMMY, "SLACK_TEAM_ID": "T00000000"},
    ),
    Server(
        "sqlite",
        "pypi",
        "mcp-server-sqlite",
        "2025.4.25",
        "mcp-server-sqlite",
        args=("--db-path", "{work}/corpus.db"),
        # It requires mcp>=1.0.0 and uses the low-level Server API that 2.x
        # removed (Server.list_resources): the last 1.x release.
        extra_requirements=("mcp==1.30.0",),
    ),
    Server(
        "time",
        "pypi",
        "mcp-server-time",
        "2026.10.19",
        "mcp-server-time",
        # The tools' descriptions name the local zone: pin it, for stable output.
        args=("--local-timezone", "UTC"),
    ),
)
# Left out:
#   redis (npm @modelcontextprotocol/server-redis 2025.4.25): connects to its
#     Redis URL before it serves stdio and exits when it cannot (no Redis
#     server here, and only the npm registry and PyPI are reachable).

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SERVER_KEYS = frozenset({"name", "registry", "package", "version", "tools"})


# ---------------------------------------------------------------------------
# Installing


def _run(argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
    merged = {**os.environ, **(env or {})}
    proc = subprocess.run(
        list(argv), env=merged, capture_output=True, text=True, timeout=900
    )
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-20:]
        raise RuntimeError(
            f"{' '.join(argv)} exited {proc.returncode}:\n  " + "\n  ".join(tail)
        )


def install(server: Server) -> Path:
    """Installs ``server`` once into its cache directory; its executable."""
    directory = server.directory
    marker = directory / "installed"
    wanted = " ".join([server.spec, *server.extra_requirements])
    if server.registry == "npm":
        executable = directory / "node_modules" / ".bin" / server.command
    else:
        executable = directory / "venv" / "bin" / server.command
    if marker.is_file() and marker.read_text() == wanted and executable.exists():
        return executable
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    if server.registry == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is not on PATH")
        _run(
            [
                npm,
                "install",
                "--prefix",
                str(directory),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                server.spec,
            ],
            server.install_env,
        )
    else:
        venv = directory / "venv"
        _run([sys.executable, "-m", "venv", str(venv)])
        _run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                server.spec,
                *server.extra_requirements,
            ],
            server.install_env,
        )
    if not executable.exists():
        raise RuntimeError(f"{server.spec} installed no {executable}")
    marker.write_text(wanted)
    return executable


# ---------------------------------------------------------------------------
# Listing


async def _tap(
    source: AsyncIterable[SessionMessage | Exception],
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    pages: list[dict[str, Any]],
) -> None:
    """Forwards the transport's messages to the session, keeping the raw
    result of every ``tools/list`` response on the way."""
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCResponse

    async with sink:
        async for item in source:
            if isinstance(item, SessionMessage):
                # mcp 1.x wraps the envelope in a RootModel; 2.x does not.
                message: object = getattr(item.message, "root", item.message)
                if isinstance(message, JSONRPCResponse) and isinstance(
                    message.result.get("tools"), list
                ):
                    pages.append(json.loads(json.dumps(message.result)))
            await sink.send(item)


async def _list_tools(server: Server, executable: Path) -> list[dict[str, Any]]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.message import SessionMessage
    from mcp.types import PaginatedRequestParams

    work = server.directory / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()

    def expand(value: str) -> str:
        return value.replace("{work}", str(work))

    params = StdioServerParameters(
        command=str(executable),
        args=[expand(arg) for arg in server.args],
        env={key: expand(value) for key, value in server.env.items()},
        cwd=str(work),
    )
    pages: list[dict[str, Any]] = []
    with (
        (server.directory / "stderr.log").open("w") as errlog,
        anyio.fail_after(server.timeout),
    ):
        async with stdio_client(params, errlog=errlog) as (read, write):
            send, receive = anyio.create_memory_object_stream[
                SessionMessage | Exception
            ](16)
            async with anyio.create_task_group() as group:
                group.start_soon(_tap, read, send, pages)
                async with ClientSession(receive, write) as session:
                    await session.initialize()
                    cursor: str | None = None
                    while True:
                        before = len(pages)
                        try:
                            await session.list_tools(
                                params=PaginatedRequestParams(cursor=cursor)
                            )
                        except Exception:
                            # The client's models may reject a page that the
                            # server did send (mcp 2.x requires "type" at an
                            # inputSchema's root): the raw page is the data.
                            if len(pages) == before:
                                raise
                        next_cursor = pages[-1].get("nextCursor") if pages else None
                        if not isinstance(next_cursor, str) or not next_cursor:
                            break
                        cursor = next_cursor
                group.cancel_scope.cancel()
    tools: list[dict[str, Any]] = []
    for page in pages:
        tools.extend(page["tools"])
    # The scratch directory is machine-specific: a server that echoes it (a
    # root, a file path) gets a stable stand-in.
    text = json.dumps(tools).replace(str(work), "/tmp/mcp-corpus-work")
    listed: list[dict[str, Any]] = json.loads(text)
    return sorted(listed, key=lambda tool: str(tool.get("name")))


def collect(server: Server) -> dict[str, Any]:
    import anyio

    executable = install(server)
    tools = anyio.run(_list_tools, server, executable)
    return {
        "name": server.name,
        "registry": server.registry,
        "package": server.package,
        "version": server.version,
        "tools": tools,
    }


# ---------------------------------------------------------------------------
# The file


def dumps(corpus: Mapping[str, Any]) -> str:
    """The canonical text of the corpus: what ``--write`` writes."""
    return json.dumps(corpus, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def problems(corpus: object, text: str | None = None) -> list[str]:
    """Everything wrong with a corpus (an empty list: nothing)."""
    found: list[str] = []
    if not isinstance(corpus, dict):
        return ["the corpus is not a JSON object"]
    if set(corpus) != {"collected", "servers"}:
        found.append(f"top-level keys are {sorted(corpus)}, not collected/servers")
    collected = corpus.get("collected")
    if not isinstance(collected, str) or not _DATE.match(collected):
        found.append(f"collected is {collected!r}, not a YYYY-MM-DD date")
    servers = corpus.get("servers")
    if not isinstance(servers, list):
        return [*found, "servers is not a list"]
    if [s.name for s in SERVERS] != sorted(s.name for s in SERVERS):
        found.append("SERVERS in tools/mcp_corpus.py is not sorted by name")
    pinned = [(s.name, s.registry, s.package, s.version) for s in SERVERS]
    listed = [
        tuple(entry.get(key) for key in ("name", "registry", "package", "version"))
        if isinstance(entry, dict)
        else None
        for entry in servers
    ]
    if listed != pinned:
        found.append(
            "servers do not match SERVERS in tools/mcp_corpus.py (same names, "
            "packages and versions, same order): run it with --write"
        )
    for index, entry in enumerate(servers):
        found.extend(_server_problems(index, entry))
    if text is not None and not found and text != dumps(corpus):
        found.append("the file is not in canonical form: run --write")
    return found


def _server_problems(index: int, entry: object) -> Iterable[str]:
    if not isinstance(entry, dict):
        yield f"servers[{index}] is not an object"
        return
    where = f"server {entry.get('name', index)!r}"
    if set(entry) != _SERVER_KEYS:
        yield f"{where}: keys are {sorted(entry)}, not {sorted(_SERVER_KEYS)}"
    for key in ("name", "package", "version"):
        if not isinstance(entry.get(key), str) or not entry.get(key):
            yield f"{where}: {key} is not a non-empty string"
    if entry.get("registry") not in REGISTRIES:
        yield f"{where}: registry {entry.get('registry')!r} is not npm or pypi"
    tools = entry.get("tools")
    if not isinstance(tools, list) or not tools:
        yield f"{where}: tools is not a non-empty list"
        return
    names: list[str] = []
    for position, tool in enumerate(tools):
        if not isinstance(tool, dict):
            yield f"{where}: tools[{position}] is not an object"
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            yield f"{where}: tools[{position}] has no name"
            continue
        names.append(name)
        # A JSON object, as the server sent it: not necessarily with
        # "type": "object" at its root (gitlab's are not).
        if not isinstance(tool.get("inputSchema"), dict):
            yield f"{where}: tool {name!r}: inputSchema is not a JSON object"
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            yield f"{where}: tool {name!r}: description is not a string"
    if len(set(names)) != len(names):
        yield f"{where}: tool names are not unique"
    if names != sorted(names):
        yield f"{where}: tools are not sorted by name"


def check(path: Path = CORPUS) -> list[str]:
    try:
        text = path.read_text("utf-8")
    except OSError as error:
        return [f"cannot read {path}: {error}"]
    try:
        corpus = json.loads(text)
    except ValueError as error:
        return [f"{path} is not JSON: {error}"]
    return problems(corpus, text)


def _reasons(error: BaseException) -> list[str]:
    """One line per leaf of an exception (group)."""
    nested: object = getattr(error, "exceptions", None)
    if isinstance(nested, tuple) and nested:
        return [line for inner in nested for line in _reasons(inner)]
    text = str(error).strip().splitlines()
    return [f"{type(error).__name__}: {text[0] if text else ''}"]


def write(only: Sequence[str], path: Path = CORPUS) -> int:
    chosen = [s for s in SERVERS if not only or s.name in only]
    unknown = sorted(set(only) - {s.name for s in SERVERS})
    if unknown:
        print(f"unknown server(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    previous: dict[str, Any] = {}
    if only:
        if not path.is_file():
            print(f"--only needs an existing {path}", file=sys.stderr)
            return 2
        old = json.loads(path.read_text("utf-8"))
        previous = {entry["name"]: entry for entry in old.get("servers", [])}
    failed: list[str] = []
    for server in chosen:
        print(f"{server.name}: {server.spec} ...", flush=True)
        try:
            entry = collect(server)
        except Exception as error:  # one line per failure, then go on
            failed.append(server.name)
            detail = "; ".join(_reasons(error))
            log = server.directory / "stderr.log"
            print(f"  FAILED: {detail} (server stderr: {log})", file=sys.stderr)
            continue
        previous[server.name] = entry
        print(f"  {len(entry['tools'])} tools")
    if failed:
        print(f"not written: {', '.join(failed)} failed", file=sys.stderr)
        return 1
    missing = [s.name for s in SERVERS if s.name not in previous]
    if missing:
        print(f"not written: no entry for {', '.join(missing)}", file=sys.stderr)
        return 1
    corpus = {
        "collected": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "servers": [previous[s.name] for s in SERVERS],
    }
    wrong = problems(corpus)
    if wrong:
        print("not written:\n  " + "\n  ".join(wrong), file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(corpus), "utf-8")
    total = sum(len(entry["tools"]) for entry in corpus["servers"])
    print(f"wrote {path}: {len(SERVERS)} servers, {total} tools")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Collect or check tests/data/mcp_corpus.json."
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--write", action="store_true", help="install, list and write the corpus"
    )
    mode.add_argument(
        "--check", action="store_true", help="validate the checked-in corpus, offline"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="with --write: collect only this server (repeatable), keep the rest",
    )
    args = parser.parse_args(argv)
    if args.check:
        if args.only:
            parser.error("--only goes with --write")
        found = check()
        for problem in found:
            print(problem, file=sys.stderr)
        if not found:
            print(f"{CORPUS.relative_to(ROOT)}: ok")
        return 1 if found else 0
    return write(args.only)


if __name__ == "__main__":
    sys.exit(main())
