"""What the fork did to each API request, for logs and for the caller's code
(``ToolFieldsReport``: ``relay_off``, ``changed``, ``unchanged``; never a
credential or a body), and the names every relay module shares
(``ToolFieldsRelayError``, ``normalize_mcp_name``, ``is_set``). Imported by
``claude_agent_sdk`` itself, so it stays light: nothing else of the relay is
loaded until a relay runs."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..._cli_version import __cli_version__

if TYPE_CHECKING:
    from .rewrite import Rewrite, StrictServers

logger = logging.getLogger(__name__)

CLI_VERSION_DROPPING = __cli_version__
"""The Claude Code version measured to drop ``strict``/``input_examples``
(the one this SDK bundles)."""

_PLATFORM_SETTINGS = (
    ("CLAUDE_CODE_USE_BEDROCK", "bedrock"),
    ("CLAUDE_CODE_USE_VERTEX", "vertex"),
    ("CLAUDE_CODE_USE_FOUNDRY", "foundry"),
)


class ToolFieldsRelayError(ValueError):
    """``tool_fields_relay=True`` cannot work with this configuration.

    Defined here, a module ``claude_agent_sdk`` imports anyway, so that it
    can be exported without loading the relay.
    """


def normalize_mcp_name(name: str) -> str:
    """A server or tool name as Claude Code spells it in ``mcp__<server>__<tool>``.

    Claude Code replaces each UTF-16 code unit outside ``[A-Za-z0-9_-]`` with
    an underscore, so a character beyond the BMP (an emoji) becomes two
    (server ``"lagrum-ö📚"`` is ``lagrum-___``, tool
    ``"find.v1"`` is ``find_v1``; see ``tests/e2e/test_e2e_relay.py``).
    """
    return "".join(
        c
        if c.isascii() and (c.isalnum() or c in "_-")
        else "__"
        if ord(c) > 0xFFFF
        else "_"
        for c in name
    )


def is_set(value: str | None) -> bool:
    """Whether an environment setting is on, as the relay reads the CLI's
    ``CLAUDE_CODE_USE_*`` and the like."""
    # What counts as "set" is deliberately broad: the relay refuses rather
    # than let a CLI that reads the value as true bypass it unnoticed.
    return value is not None and value.strip().lower() not in _UNSET_VALUES


_UNSET_VALUES = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True)
class ToolFieldsReport:
    """What reached one API request of a query (or, relay off, what could not).

    Given to ``ClaudeAgentOptions.tool_fields_report``:

    - ``outcome == "relay_off"``: once per query, when SDK tools declare
      ``strict`` or ``input_examples`` and ``tool_fields_relay`` is off;
      ``dropped_tools`` names them. Nothing reaches the API.
    - ``outcome == "changed"``: once per API request the relay changed;
      ``strict_tools`` were sent with ``strict: true``, ``example_tools``
      with ``input_examples``, and ``betas`` are on the request.
    - ``outcome == "unchanged"``: once per API request that carried such
      tools and went out without their fields; ``reason`` says why and
      ``dropped_tools`` names them.

    A team asserts strict reached the API with, for example,
    ``report.outcome == "changed" and "mcp__legal__search" in
    report.strict_tools``. Tool names are as the API sees them:
    ``mcp__<server>__<tool>``.
    """

    outcome: Literal["changed", "unchanged", "relay_off"]
    platform: Literal["anthropic", "bedrock", "vertex", "foundry"]
    """Which Messages API: the Claude API (``anthropic``), Amazon Bedrock,
    Vertex AI or Microsoft Foundry."""
    mode: Literal["proxy", "base_url"] | None
    """How Claude Code reaches the relay: as its HTTPS proxy (``proxy``,
    Claude Code stays first-party) or as its base URL (``base_url``, for a
    gateway of yours); None with the relay off."""
    route: str | None = None
    """The request's path after the API's base (``/v1/messages``, ...)."""
    strict_tools: tuple[str, ...] = ()
    """Tools the relay sent with ``strict: true``."""
    example_tools: tuple[str, ...] = ()
    """Tools the relay sent with their ``input_examples``."""
    betas: tuple[str, ...] = ()
    """Betas the additions need, on the request (added when missing)."""
    not_strict: tuple[tuple[str, str], ...] = ()
    """Tools meant to be strict and sent without it, each with why (over
    strict mode's per-request caps, or no strict form of its schema)."""
    dropped_tools: tuple[str, ...] = ()
    """Tools whose fields did not reach the request (``unchanged``,
    ``relay_off``)."""
    reason: str | None = None
    """Why the fields did not reach the request (``unchanged``,
    ``relay_off``)."""

    def describe(self) -> str:
        """The report as one line of text (the log record's)."""
        where = (
            self.platform
            if self.mode is None
            else f"{self.platform}, {_MODES[self.mode]}"
        )
        if self.route:
            where = f"{self.route}, {where}"
        if self.outcome == "relay_off":
            verb = "declares" if len(self.dropped_tools) == 1 else "declare"
            return (
                f"tool_fields_relay is off: {', '.join(self.dropped_tools)} {verb} "
                f"strict/input_examples, which Claude Code {CLI_VERSION_DROPPING} "
                "drops from MCP tools, so they do not reach the API; pass "
                "ClaudeAgentOptions(tool_fields_relay=True) to send them"
            )
        if self.outcome == "unchanged":
            return (
                f"tool_fields_relay could not change a request ({where}) because "
                f"{self.reason}: {', '.join(self.dropped_tools)} went without their "
                "strict/input_examples" + _not_strict_text(self.not_strict)
            )
        parts = [f"tool_fields_relay changed a request ({where})"]
        if self.strict_tools:
            parts.append(f"strict on {', '.join(self.strict_tools)}")
        if self.example_tools:
            parts.append(f"input_examples on {', '.join(self.example_tools)}")
        if self.betas:
            parts.append(f"betas {', '.join(self.betas)}")
        return "; ".join(parts) + _not_strict_text(self.not_strict)


_MODES = {"proxy": "proxy mode", "base_url": "base-URL mode"}


def _not_strict_text(not_strict: Iterable[tuple[str, str]]) -> str:
    items = [f"{tool} ({why})" for tool, why in not_strict]
    return f"; sent without strict: {', '.join(items)}" if items else ""


ReportSink = Callable[[ToolFieldsReport], object]


def deliver(sink: ReportSink | None, report: ToolFieldsReport) -> None:
    """Give ``report`` to the caller's ``sink``; its failure is logged, never
    raised into the query or the relay."""
    if sink is None:
        return
    try:
        sink(report)
    except Exception as error:  # noqa: BLE001 - the caller's code, not ours
        logger.warning(
            "tool_fields_report raised %s; the query goes on", type(error).__name__
        )


# --------------------------------------------------------------------------
# Relay off: one notice per query
# --------------------------------------------------------------------------


def listed_fields(server: Any) -> dict[str, dict[str, Any]]:
    """The fields ``server``'s tools list beyond ``Tool``, by tool name (of
    two tools with one name, the first's: the definition Claude Code shows)."""
    from .._mcp_compat import _listed_fields

    by_name: dict[str, dict[str, Any]] = {}
    for name, fields in _listed_fields.get(server, ()):
        by_name.setdefault(name, fields)
    return by_name


def declared_tools(mcp_servers: object) -> list[str]:
    """API names of the SDK tools of ``mcp_servers`` that declare ``strict``
    (true) or ``input_examples``, as the relay would send them."""
    if not isinstance(mcp_servers, Mapping):
        return []
    if not any(
        isinstance(c, Mapping) and c.get("type") == "sdk" for c in mcp_servers.values()
    ):
        return []
    names: list[str] = []
    for server_name, config in mcp_servers.items():
        if not (isinstance(config, Mapping) and config.get("type") == "sdk"):
            continue
        instance = config.get("instance")
        if instance is None:
            continue
        try:
            listed = listed_fields(instance)
        except TypeError:  # not a server the SDK built
            continue
        for tool_name, fields in listed.items():
            if fields.get("strict") is True or "input_examples" in fields:
                names.append(_api_name(str(server_name), tool_name))
    return names


def _api_name(server: str, tool: str) -> str:
    return f"mcp__{normalize_mcp_name(server)}__{normalize_mcp_name(tool)}"


def platform_of(
    env: Mapping[str, str],
) -> Literal["anthropic", "bedrock", "vertex", "foundry"]:
    """The platform ``env`` sends Claude Code to (by its ``CLAUDE_CODE_USE_*``)."""
    for name, platform in _PLATFORM_SETTINGS:
        if is_set(env.get(name)):
            return platform  # type: ignore[return-value]
    return "anthropic"


def relay_off_notice(
    mcp_servers: object,
    sink: ReportSink | None,
    env: Mapping[str, str] | None = None,
) -> ToolFieldsReport | None:
    """With the relay off: one WARNING (and one report) when SDK tools declare
    fields Claude Code drops; None, and nothing logged, when none do."""
    tools = declared_tools(mcp_servers)
    if not tools:
        return None
    report = ToolFieldsReport(
        outcome="relay_off",
        platform=platform_of(os.environ if env is None else env),
        mode=None,
        dropped_tools=tuple(tools),
        reason=(
            f"Claude Code {CLI_VERSION_DROPPING} drops strict and input_examples "
            "from MCP tools; tool_fields_relay=True sends them"
        ),
    )
    logger.warning("%s", report.describe())
    deliver(sink, report)
    return report


# --------------------------------------------------------------------------
# Relay on: one record per request it changed or could not change
# --------------------------------------------------------------------------


class RequestEvidence:
    """One relay's record keeper: a forwarder calls ``record`` per request.

    Holds no state that grows: each request's report is made, logged, given
    to ``sink`` and dropped.
    """

    def __init__(
        self,
        fields_by_name: Mapping[str, Mapping[str, Any]],
        strict_servers: StrictServers | None,
        mode: Literal["proxy", "base_url"],
    ) -> None:
        self._fields_by_name = fields_by_name
        self._strict_servers = strict_servers
        self.mode: Literal["proxy", "base_url"] = mode
        self.platform: Literal["anthropic", "bedrock", "vertex", "foundry"] = (
            "anthropic"
        )
        self.sink: ReportSink | None = None

    def record(self, route: str, rewrite: Rewrite, betas: Sequence[str]) -> None:
        """Log and deliver what ``rewrite`` did to the request to ``route``
        (``betas``: those the request was sent with for the additions)."""
        report = self.report(route, rewrite, betas)
        if report is None:
            return
        if report.outcome == "changed" or rewrite.unchanged_because is None:
            # A body left unchanged because it could not be changed safely
            # has its WARNING from the forwarder already: that is its record.
            logger.info("%s", report.describe())
        deliver(self.sink, report)

    def report(
        self, route: str, rewrite: Rewrite, betas: Sequence[str]
    ) -> ToolFieldsReport | None:
        """``rewrite`` as a report, or None when the request held nothing the
        relay meant to change."""
        not_strict = [
            *rewrite.not_strict,
            *(
                (tool, _caps_reason(rewrite.caps))
                for tool in rewrite.over_caps
                if tool not in {t for t, _ in rewrite.not_strict}
            ),
        ]
        if rewrite.modified_tools:
            strict, examples = self._split(rewrite.modified_tools, rewrite.over_caps)
            return ToolFieldsReport(
                outcome="changed",
                platform=self.platform,
                mode=self.mode,
                route=route,
                strict_tools=tuple(strict),
                example_tools=tuple(examples),
                betas=tuple(betas),
                not_strict=tuple(not_strict),
            )
        if rewrite.unchanged_because is None and not not_strict:
            return None
        if rewrite.unchanged_because is not None:
            reason = rewrite.unchanged_because
            dropped = tuple(rewrite.lost_tools)
        else:
            reason = "no tool could be sent strict"
            dropped = tuple(tool for tool, _ in not_strict)
        return ToolFieldsReport(
            outcome="unchanged",
            platform=self.platform,
            mode=self.mode,
            route=route,
            not_strict=tuple(not_strict),
            dropped_tools=dropped,
            reason=reason,
        )

    def _split(
        self, modified: Iterable[str], over_caps: Collection[str]
    ) -> tuple[list[str], list[str]]:
        """Of the tools the relay changed: those it made strict, those it
        gave examples."""
        wants: Callable[[str], bool] | None = None
        strict: list[str] = []
        examples: list[str] = []
        for tool in modified:
            declared = self._fields_by_name.get(tool, {})
            if "input_examples" in declared:
                examples.append(tool)
            if tool in over_caps:
                continue
            if declared.get("strict") is True or tool not in self._fields_by_name:
                strict.append(tool)
            elif self._strict_servers is not None:
                if wants is None:
                    wants = self._strict_servers.matcher()
                if wants(tool):
                    strict.append(tool)
        return strict, examples


def _caps_reason(caps: Iterable[object]) -> str:
    limits = "; ".join(str(limit) for limit in caps)
    return "over strict mode's per-request caps" + (f": {limits}" if limits else "")
