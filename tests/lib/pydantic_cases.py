"""Pydantic models the pydantic-input-models tests, the typing check and
docs/pydantic.md share: a nested case-law search."""

from __future__ import annotations

from datetime import date
from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field


class Jurisdiction(str, Enum):
    SE = "se"
    NO = "no"
    DK = "dk"


class DateRange(BaseModel):
    """Decision dates, inclusive."""

    start: date = Field(description="First day")
    end: date | None = Field(
        default=None, description="Last day; open-ended when left out"
    )


class SearchArgs(BaseModel):
    """Search case law."""

    query: str = Field(description="Free-text query", min_length=1)
    jurisdiction: Jurisdiction = Field(description="Court system")
    court: Literal["supreme", "appeal"] = "supreme"
    limit: int = Field(default=10, ge=1, le=50, description="Most results to return")
    decided: DateRange | None = Field(
        default=None, description="Only decisions in this range"
    )
