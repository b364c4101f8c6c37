"""Hatchling metadata hook: the distribution version comes from [tool.fork].

The version is ``<upstream-version>+<local-label>.<release>`` (a PEP 440 local
version), so ``claude-agent-sdk>=0.2.100`` style requirements are satisfied by
the fork while the installed metadata still says which fork release it is.
``claude_agent_sdk.__version__`` stays upstream's string: it is what the CLI is
told.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

if sys.version_info >= (3, 11):
    import tomllib
else:  # hatchling itself depends on tomli below 3.11
    import tomli as tomllib


def fork_version(root: Path) -> str:
    fork = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["tool"]["fork"]
    return f"{fork['upstream-version']}+{fork['local-label']}.{fork['release']}"


class ForkVersionHook(MetadataHookInterface):
    PLUGIN_NAME = "custom"

    def update(self, metadata: dict[str, Any]) -> None:
        metadata["version"] = fork_version(Path(self.root))
