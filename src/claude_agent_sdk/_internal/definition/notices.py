"""Notices: hazards in a tool definition that the SDK reports without refusing it.

Each is a WARNING log record under ``claude_agent_sdk``, never a Python
warning (no warnings filter turns it into a refusal), logged once per
process and cause; docs/differences.md says how to show or silence them.
"""

from __future__ import annotations

import logging
import threading

# Bounded, so a process that builds tools without end does not grow it.
_MAX_REMEMBERED = 4096


class _OncePerMessage(logging.Filter):
    """Let each (logger, message) through once."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.getMessage())
        with self._lock:
            if key in self._seen:
                return False
            if len(self._seen) >= _MAX_REMEMBERED:
                self._seen.clear()
            self._seen.add(key)
        return True

    def forget(self) -> None:
        with self._lock:
            self._seen.clear()


_ONCE = _OncePerMessage()


def notice_logger(name: str) -> logging.Logger:
    """The logger ``name``, logging each notice once."""
    logger = logging.getLogger(name)
    if _ONCE not in logger.filters:
        logger.addFilter(_ONCE)
    return logger


def forget_notices() -> None:
    """Log every notice again from now on (for tests)."""
    _ONCE.forget()


# json_schema_dicts logs its notice (a top-level type other than "object")
# on its module's logger.
notice_logger("claude_agent_sdk._internal.json_schema_dicts")
