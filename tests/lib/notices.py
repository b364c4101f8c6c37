"""``logged_notices``: ``pytest.warns`` for the SDK's notices, which are log records.

A notice about a tool that did not opt in (a schema that refers outside
itself, two tools with one name, ...) is a log record at WARNING on a logger
under ``claude_agent_sdk``, never a warning, so that a suite run with
``filterwarnings = error`` behaves as with upstream. Inside
``logged_notices()`` warnings are errors, and each record logged is caught
as an object with the record's text as ``message`` (as ``pytest.warns``
gives ``WarningMessage``s).
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Notice:
    message: str
    logger: str
    level: int


class _Catch(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.caught: list[Notice] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.caught.append(Notice(record.getMessage(), record.name, record.levelno))


@contextmanager
def logged_notices(match: str | None = None) -> Iterator[list[Notice]]:
    """The notices logged inside the block; fails if none (or none matching
    ``match``, a regex searched in each) was logged."""
    handler = _Catch()
    logger = logging.getLogger("claude_agent_sdk")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a notice must never be a warning
            yield handler.caught
    finally:
        logger.removeHandler(handler)
    assert handler.caught, "no notice was logged"
    if match is not None:
        assert any(re.search(match, n.message) for n in handler.caught), (
            f"no notice matches {match!r}: {[n.message for n in handler.caught]}"
        )
