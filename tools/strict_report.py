"""How many real MCP tool schemas become strict, with the SDK and with peers.

Over ``tests/data/mcp_corpus.json`` (tool input schemas listed from published
MCP servers, see ``tools/mcp_corpus.py``), each tool is tried three ways:

- **SDK**: ``tool(name, description, inputSchema, strict=True)``, the path an
  SDK tool written as a JSON Schema dict takes. It is *served* when the
  definition is accepted (not refused with a ``ValueError``/``TypeError``).
- **Anthropic SDK**: ``anthropic.lib._parse._transform.transform_schema``
  (what ``messages.parse()`` uses), as a peer.
- **OpenAI Agents SDK**: ``agents.strict_schema.ensure_strict_json_schema``,
  as a peer (it targets OpenAI's strict mode, whose rules differ).

A peer's result is served when the peer does not raise. Every served schema
is judged against strict mode's documented subset
(``strict_schema.find_strict_violations``: the keywords, formats, regex
features and closed objects Anthropic's "Structured outputs" page lists);
one that obeys it counts as *made strict*. A made-strict result is also
counted as *lossy* when the author's schema has an open object the root can
reach (``additionalProperties`` true or a schema, an object without
properties below the root, or ``unevaluatedProperties`` other than false):
the result must have closed it, so it refuses inputs the author's schema
accepts. The SDK refuses those instead (its figure is never lossy), and
serves nothing outside the subset (its compliance is 100%, or this report
says otherwise).

    python -m tools.strict_report            # print the figures
    python -m tools.strict_report --write    # write them into docs/strict-mode.md
    python -m tools.strict_report --check    # the SDK column of the docs is current

The peers are not runtime dependencies of the SDK: install them only in the
venv that runs this report (``pip install anthropic openai-agents``). Without
them, their columns read "not installed", and ``--write`` refuses.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import importlib.metadata
import json
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.doc_blocks import read_block, write_block

ROOT = Path(__file__).resolve().parents[1]

CORPUS = ROOT / "tests" / "data" / "mcp_corpus.json"
DOC = ROOT / "docs" / "strict-mode.md"
BLOCK = "strict-corpus"

PEERS = {
    "anthropic": ("anthropic", "Anthropic SDK `transform_schema`"),
    "openai": ("openai-agents", "OpenAI Agents SDK `ensure_strict_json_schema`"),
}

# Substrings of the strict checks' rules that mean "an open object".
_OPEN_OBJECT_RULES = (
    "additionalProperties must be false",
    "object declares no properties",
    "unevaluatedProperties leaves the object open",
)


@dataclass(frozen=True)
class CorpusTool:
    server: str
    version: str
    name: str
    schema: dict[str, Any]


@dataclass
class Outcome:
    strict: bool
    """Served, and inside the documented subset."""
    reason: str = ""
    """Why not: the first violation, or the exception."""
    lossy: bool = False
    served: bool = True
    """A schema came out (the definition was accepted, the peer did not raise)."""


@dataclass
class Figures:
    tools: list[CorpusTool]
    outcomes: dict[str, list[Outcome | None]] = field(default_factory=dict)
    """Per way ("sdk", "anthropic", "openai"): one outcome per tool, None
    when that way is not installed."""

    def count(self, way: str, tools: Iterable[int] | None = None) -> int | None:
        outcomes = self.outcomes[way]
        chosen = range(len(outcomes)) if tools is None else tools
        picked = [outcomes[i] for i in chosen]
        if any(outcome is None for outcome in picked):
            return None
        return sum(1 for outcome in picked if outcome is not None and outcome.strict)

    def served(self, way: str) -> int | None:
        outcomes = self.outcomes[way]
        if any(outcome is None for outcome in outcomes):
            return None
        return sum(1 for o in outcomes if o is not None and o.served)

    def lossy(self, way: str) -> int | None:
        outcomes = self.outcomes[way]
        if any(outcome is None for outcome in outcomes):
            return None
        return sum(1 for o in outcomes if o is not None and o.strict and o.lossy)


def load_corpus(path: Path = CORPUS) -> list[CorpusTool]:
    data = json.loads(path.read_text("utf-8"))
    return [
        CorpusTool(
            server["name"], server["version"], entry["name"], entry["inputSchema"]
        )
        for server in data["servers"]
        for entry in server["tools"]
    ]


def _violations(schema: Any) -> list[Any]:
    from claude_agent_sdk._internal.strict.transform import find_strict_violations

    return find_strict_violations(schema)


def open_object(schema: dict[str, Any]) -> bool:
    """Whether the root of ``schema`` reaches an open object (see the module doc)."""
    from claude_agent_sdk._internal.strict.transform import make_strict

    _, violations = make_strict(schema)
    return any(
        any(words in violation.rule for words in _OPEN_OBJECT_RULES)
        for violation in violations
    )


async def _noop(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


def sdk_outcome(entry: CorpusTool) -> Outcome:
    """The SDK's path: ``tool(..., strict=True)`` with the schema as a dict."""
    from claude_agent_sdk import _build_input_schema, tool
    from claude_agent_sdk._internal.definition.schema_checks import served_input_schema

    schema = copy.deepcopy(entry.schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            defined = tool(entry.name, "d", schema, strict=True)(_noop)
            served = served_input_schema(defined, _build_input_schema(defined))
        except (ValueError, TypeError) as e:
            lines = str(e).splitlines()
            return Outcome(
                False,
                lines[1].strip("- ").strip() if len(lines) > 1 else lines[0],
                served=False,
            )
    problems = _violations(served)
    if problems:
        return Outcome(False, f"served schema breaks a rule: {problems[0]}")
    return Outcome(True)


def _peer_outcome(
    transform: Callable[[dict[str, Any]], dict[str, Any]], entry: CorpusTool
) -> Outcome:
    schema = copy.deepcopy(entry.schema)
    try:
        result = transform(schema)
    except Exception as e:  # each peer raises its own kinds
        return Outcome(False, f"{type(e).__name__}: {e}".splitlines()[0], served=False)
    problems = _violations(result)
    if problems:
        return Outcome(False, f"result breaks a rule: {problems[0]}")
    return Outcome(True, lossy=open_object(entry.schema))


# Where each peer's transform lives; imported by name, so that neither is
# needed (nor type-checked) outside the report's venv.
_TRANSFORMS = {
    "anthropic": ("anthropic.lib._parse._transform", "transform_schema"),
    "openai": ("agents.strict_schema", "ensure_strict_json_schema"),
}


def peer(name: str) -> Callable[[CorpusTool], Outcome] | None:
    """The outcome function of peer ``name``, or None if it is not installed."""
    module_name, function = _TRANSFORMS[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    transform: Callable[[dict[str, Any]], dict[str, Any]] = getattr(module, function)

    def outcome(entry: CorpusTool) -> Outcome:
        return _peer_outcome(transform, entry)

    return outcome


TIMING_ROUNDS = 15


def _sdk_transform(schema: dict[str, Any]) -> Any:
    from claude_agent_sdk._internal.strict.transform import strict_schemas

    return strict_schemas(schema, describe=True)


def timings(tools: Sequence[CorpusTool]) -> dict[str, list[float]] | None:
    """Seconds per schema of the SDK's strict transform (``strict_schemas``:
    the JSON copy, the graph, closing, descriptions and every rule) and of
    the Anthropic SDK's ``transform_schema``, side by side: each round times
    every schema with both, the first alternating, and each schema keeps its
    fastest round. None without the peer."""
    import time

    module_name, function = _TRANSFORMS["anthropic"]
    try:
        peer_transform = getattr(importlib.import_module(module_name), function)
    except ImportError:
        return None
    ways: dict[str, Callable[[dict[str, Any]], Any]] = {
        "sdk": _sdk_transform,
        "anthropic": peer_transform,
    }
    best = {way: [float("inf")] * len(tools) for way in ways}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for round_ in range(TIMING_ROUNDS):
            order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
            for index, entry in enumerate(tools):
                for way in order:
                    schema = copy.deepcopy(entry.schema)
                    start = time.perf_counter()
                    # A peer's refusal still took its time.
                    with contextlib.suppress(Exception):
                        ways[way](schema)
                    elapsed = time.perf_counter() - start
                    best[way][index] = min(best[way][index], elapsed)
    return best


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def timing_lines(
    tools: Sequence[CorpusTool], best: dict[str, list[float]]
) -> list[str]:
    sdk, peer_times = best["sdk"], best["anthropic"]
    slowest = max(range(len(tools)), key=lambda i: sdk[i])
    ratio = _median(sdk) / _median(peer_times)
    return [
        "",
        f"Time per schema, side by side in one run (fastest of {TIMING_ROUNDS} "
        "rounds per schema, then the median over the corpus): the SDK's strict "
        f"transform (`strict_schemas`) {_median(sdk) * 1e6:.0f} µs, the "
        f"Anthropic SDK's `transform_schema` {_median(peer_times) * 1e6:.0f} µs: "
        f"**{ratio:.1f}×**. Slowest schema with the SDK: "
        f"{sdk[slowest] * 1e6:.0f} µs ({tools[slowest].server} "
        f"`{tools[slowest].name}`); schemas over 1 ms: "
        f"{sum(1 for t in sdk if t > 1e-3)}. Timings vary with the machine; "
        "they are reported, never asserted.",
    ]


def measure(tools: Sequence[CorpusTool]) -> Figures:
    figures = Figures(list(tools))
    figures.outcomes["sdk"] = [sdk_outcome(entry) for entry in tools]
    for name in PEERS:
        outcome = peer(name)
        figures.outcomes[name] = [
            None if outcome is None else outcome(entry) for entry in tools
        ]
    return figures


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cell(value: int | None) -> str:
    return "not installed" if value is None else str(value)


def render(figures: Figures) -> str:
    """The Markdown block written into docs/strict-mode.md."""
    tools = figures.tools
    total = len(tools)
    servers: dict[str, list[int]] = {}
    for index, entry in enumerate(tools):
        servers.setdefault(f"{entry.server} {entry.version}", []).append(index)
    lines = [
        f"Measured by `tools/strict_report.py` over `tests/data/mcp_corpus.json` "
        f"({total} tools from {len(servers)} published MCP servers); peers: "
        + ", ".join(
            f"`{distribution}` {_version(distribution)}"
            for distribution, _ in PEERS.values()
        )
        + ".",
        "",
        "| | tools served | inside the documented subset (compliance) | "
        "made strict | of which close an open object (lossy) |",
        "|---|---|---|---|---|",
        f"| SDK (`strict=True`, JSON Schema dict) | {figures.served('sdk')} of "
        f"{total} | {_compliance(figures, 'sdk')} | **{figures.count('sdk')} of "
        f"{total}** | {figures.lossy('sdk')} |",
    ]
    for name, (_, title) in PEERS.items():
        lines.append(
            f"| {title} | {_cell(figures.served(name))} of {total} | "
            f"{_compliance(figures, name)} | {_cell(figures.count(name))} of "
            f"{total} | {_cell(figures.lossy(name))} |"
        )
    lines += [
        "",
        "| server | tools | SDK | Anthropic SDK | OpenAI Agents SDK |",
        "|---|---|---|---|---|",
    ]
    for server, indices in servers.items():
        lines.append(
            f"| {server} | {len(indices)} | {_cell(figures.count('sdk', indices))} | "
            f"{_cell(figures.count('anthropic', indices))} | "
            f"{_cell(figures.count('openai', indices))} |"
        )
    reasons = Counter(
        _kind(outcome.reason)
        for outcome in figures.outcomes["sdk"]
        if outcome is not None and not outcome.strict
    )
    if reasons:
        lines += [
            "",
            "Why the SDK refuses the others (first violation of each tool):",
            "",
        ]
        lines += [f"- {kind}: {n}" for kind, n in reasons.most_common()]
    return "\n".join(lines)


def _compliance(figures: Figures, way: str) -> str:
    served, strict = figures.served(way), figures.count(way)
    if served is None or strict is None:
        return "not installed"
    share = 100 * strict / served if served else 100
    return f"{strict} of {served} ({share:.0f}%)"


def _kind(reason: str) -> str:
    """A refusal reason without its JSON Pointer, for counting."""
    _, _, rule = reason.partition(": ")
    rule = rule or reason
    for sep in (" (found", "; ", " ('"):
        rule = rule.split(sep)[0]
    return rule


def sdk_line(figures: Figures) -> str:
    return render(figures).splitlines()[4]


def compliance_problems(figures: Figures) -> list[str]:
    """The SDK's served schemas outside the documented subset (none, or the
    transform has a bug)."""
    return [
        f"{entry.server} {entry.name}: {outcome.reason}"
        for entry, outcome in zip(figures.tools, figures.outcomes["sdk"], strict=True)
        if outcome is not None and outcome.served and not outcome.strict
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write docs/strict-mode.md")
    group.add_argument(
        "--check", action="store_true", help="the docs' SDK figure is current"
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--doc", type=Path, default=DOC)
    args = parser.parse_args(argv)
    corpus = load_corpus(args.corpus)
    figures = measure(corpus)
    outside = compliance_problems(figures)
    if outside:
        print(
            "the SDK served schemas outside strict mode's documented subset:\n"
            + "\n".join(f"  - {problem}" for problem in outside),
            file=sys.stderr,
        )
        return 1
    block = render(figures)
    best = None if args.check else timings(corpus)
    if best is not None:
        block += "\n" + "\n".join(timing_lines(corpus, best))
    if args.check:
        written = read_block(args.doc, BLOCK)
        line = sdk_line(figures)
        if line not in written.splitlines():
            print(
                f"{args.doc} is stale: expected {line!r}; run --write", file=sys.stderr
            )
            return 1
        return 0
    if args.write:
        if any(outcome is None for way in PEERS for outcome in figures.outcomes[way]):
            print(
                "--write needs the peers installed: pip install anthropic "
                "openai-agents",
                file=sys.stderr,
            )
            return 1
        write_block(args.doc, BLOCK, block)
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
