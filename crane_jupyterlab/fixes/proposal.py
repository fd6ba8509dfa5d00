"""What a source of fixes is given (the crash, as its message and line) and what it proposes (an edit of
the whole cell, offered only after a trial ran it: server/service.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import FixOrigin


@dataclass(frozen=True)
class Crash:
    """A crash of the cell as observed in a trial or found certain by a check: its message
    ("KeyError: 'Agee'") and the cell's line it raised at, when known."""

    message: str
    line: int | None = None


@dataclass(frozen=True)
class Candidate:
    """One proposed edit of the whole cell."""

    title: str  # the change in a few characters: "df['Agee'] → df['Age']"
    source: str  # the whole new cell
    origin: FixOrigin
    line: int | None = None  # the first line changed
