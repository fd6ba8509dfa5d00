"""A value the library refuses, in a string the cell passes it, and the value its message names instead:
"'M' is no longer supported for offsets. Please use 'ME' instead." (pandas' frequency aliases),
"Invalid frequency: H. Did you mean h?", "KeyError('A'). Did you mean Y?".

The library's own words give both the refused value and its replacement; the edit changes the cell's
string literals that are that value, or that value after a count and before a suffix ("4H" -> "4h",
"A-DEC" -> "Y-DEC"), and nothing else (names, comments and f-strings are left alone). As every candidate,
it is offered only after a trial ran the edited cell to its end.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Iterable, Iterator

from .edits import Pick, apply, diff_title, first_changed, tokens
from .proposal import Candidate, Crash

_VALUE = r"[A-Za-z][\w-]*"
_PAIRS = [
    re.compile(
        rf"'(?P<old>{_VALUE})' is no longer supported[^.]*\.\s*[Pp]lease use '(?P<new>{_VALUE})' instead"
    ),
    re.compile(rf"[Ii]nvalid \w+: (?P<old>{_VALUE})\.\s*[Dd]id you mean (?P<new>{_VALUE})\?"),
    re.compile(rf"KeyError\('(?P<old>{_VALUE})'\)\.\s*[Dd]id you mean (?P<new>{_VALUE})\?"),
]


def pairs(message: str) -> list[tuple[str, str]]:
    """(refused, replacement) pairs the message names, in order, without repeats."""
    found = [(m["old"], m["new"]) for pattern in _PAIRS for m in pattern.finditer(message)]
    return [p for p in dict.fromkeys(found) if p[0] != p[1]]


def _replaced(value: str, old: str, new: str) -> str | None:
    """`value` with the refused part replaced: the whole value, after a count, before a '-' suffix."""
    match = re.fullmatch(rf"(\d*){re.escape(old)}(-\w+)?", value)
    if match is None:
        return None
    suffix = match.group(2) or ""
    # "KeyError('A'). Did you mean Y-DEC?": the replacement may name the suffix already
    return f"{match.group(1)}{new}{'' if new.endswith(suffix) else suffix}"


def values(cell: str, crashes: Iterable[Crash]) -> Iterator[Candidate]:
    """One candidate per crash: every string literal of the cell the message's pairs apply to."""
    toks = tokens(cell)
    if toks is None:
        return
    for crash in crashes:
        found = pairs(crash.message)
        if not found:
            continue
        picks: list[Pick] = []
        for tok in toks:
            if tok.type != tokenize.STRING or tok.string[:1] not in "'\"":
                continue  # prefixed strings (f, b, r) are left alone
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue
            if not isinstance(value, str):
                continue
            for old, new in found:
                replaced = _replaced(value, old, new)
                if replaced is not None:
                    quote = tok.string[0]
                    picks.append((tok, f"{quote}{replaced}{quote}"))
                    break
        edited = apply(cell, picks) if picks else None
        if edited is not None:
            source = edited[0]
            yield Candidate(diff_title(cell, source), source, "message", first_changed(cell, source))
