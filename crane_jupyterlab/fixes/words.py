"""What a crash's message says about its cause, in the words Python and the libraries use, read into
clues a fix can be derived from:

- `Named`: the message names the replacement ("Use `np.nan` instead", "Did you mean 'x'?", "has been
  renamed to x", "in favor of `torch.linalg.lstsq`", "use `float` by itself");
- `Missing`: a module, an object or an import lacks a name ("module 'numpy' has no attribute 'float'",
  "'Series' object has no attribute 'iteritems'", "cannot import name 'X' from 'Y'", "No module named
  'sklearn.cross_validation'");
- `Keyword`: the callee refuses a keyword ("OneHotEncoder.__init__() got an unexpected keyword argument
  'sparse'", Keras' "Unrecognized keyword arguments passed to Dense: {'activaton': 'relu'}");
- `Positional`: more positional arguments than the callee takes ("DataFrame.drop() takes from 1 to 2
  positional arguments but 3 were given", `inspect`'s "too many positional arguments").

Only the wording is read here; whether an edit follows is decided where the cell and the library are
known (derived.py), and whether it is offered by a trial (server/service.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_Q = r"[`'\"]?"
# What may stand between the replacement and "instead": a word saying what kind of thing it is. Any other
# words ("the np.errstate context manager instead", "`np.asarray` with a proper dtype instead") mean the
# replacement is not a drop-in name.
_KIND = (
    r"(?:(?:function|method|attribute|class|builtin|module|property|alias|argument|parameter|keyword)\s+)?"
)
_CALLED = r"(?:\(\))?"  # "use `torch.linalg.matrix_rank()`": the name, called

_NEW_PATTERNS = [
    rf"\b[Uu]se\s+(?:the\s+)?{_Q}(?P<new>{_NAME}){_CALLED}{_Q}\s+{_KIND}instead\b",
    rf"\b[Uu]se\s+(?:the\s+)?{_Q}(?P<new>{_NAME}){_CALLED}{_Q}\s+or\s+{_Q}(?P<alt>{_NAME}){_CALLED}{_Q}"
    rf"\s+{_KIND}instead\b",
    rf"\b(?:[Cc]all|[Tt]ry|[Pp]ass|[Ii]mport)\s+{_Q}(?P<new>{_NAME}){_CALLED}{_Q}\s+{_KIND}instead\b",
    rf"\buse\s+{_Q}(?P<new>{_NAME}){_Q}\s+by itself",
    rf"\b[Dd]id you mean:?\s+{_Q}(?P<new>{_NAME}){_CALLED}{_Q}\s*\?",
    rf"\b(?:renamed|changed)\s+(?:to|as)\s+{_Q}(?P<new>{_NAME}){_CALLED}{_Q}",
    rf"\bin favou?r of\s+{_Q}(?P<new>{_NAME}){_CALLED}{_Q}",
    rf"\b[Pp]lease use\s+(?:the\s+)?{_Q}(?P<new>{_NAME}){_CALLED}{_Q}\s*{_KIND}(?:instead\b|[.,;]|$)",
    rf"\b(?:still|now)\s+available\s+(?:as|under)\s+{_Q}(?P<new>{_NAME}){_Q}",
    rf"\b(?:still|now)\s+available\s+from\s+{_Q}(?P<home>{_NAME}){_Q}",
]
_NEW = [re.compile(p) for p in _NEW_PATTERNS]
_GONE = r"\s+(?:was|is|has been)\s+(?:removed|deprecated|a deprecated)"
# What the message says is gone: a quoted name, or a dotted one ("This function was deprecated" names
# nothing), a missing attribute or import, a refused or renamed keyword.
_OLD = [
    re.compile(rf"[`'\"](?P<old>{_NAME}){_CALLED}[`'\"]{_GONE}"),
    re.compile(rf"\b(?P<old>\w+(?:\.\w+)+){_CALLED}{_GONE}"),
    re.compile(rf"has no attribute {_Q}(?P<old>\w+){_Q}"),
    re.compile(rf"cannot import name {_Q}(?P<old>\w+){_Q}"),
    re.compile(rf"unexpected keyword argument {_Q}(?P<old>\w+){_Q}"),
    re.compile(
        rf"\b(?:[Pp]arameter|[Aa]rgument|[Kk]eyword)\s+{_Q}(?P<old>\w+){_Q}\s+(?:was|is|has been)\s+renamed"
    ),
]
# The message warns that the replacement is not a drop-in one: arguments swapped, results different.
_CAVEAT = re.compile(
    r"revers|differen|does not return|no longer returns|rather than|instead of returning"
    r"|behaviou?r (?:has )?changed|semantics",
    re.IGNORECASE,
)

_VERSION = r"(?: [\w.+-]+)?"  # the checks write the library's version after the module's name
_MISSING = [
    (re.compile(rf"module {_Q}(?P<owner>[\w.]+){_Q}{_VERSION} has no attribute {_Q}(?P<name>\w+){_Q}"),
     "module"),
    (re.compile(rf"type object {_Q}(?P<owner>\w+){_Q} has no attribute {_Q}(?P<name>\w+){_Q}"), "object"),
    (re.compile(rf"{_Q}(?P<owner>\w+){_Q} object has no attribute {_Q}(?P<name>\w+){_Q}"), "object"),
    (re.compile(rf"cannot import name {_Q}(?P<name>\w+){_Q} from {_Q}(?P<owner>[\w.]+){_Q}"), "import"),
    (re.compile(rf"No module named {_Q}(?P<owner>[\w.]+){_Q}"), "module-path"),
]  # fmt: skip
_KEYWORD = [
    re.compile(rf"(?:(?P<callee>[\w.<>]+)\(\)\s+)?got an unexpected keyword argument {_Q}(?P<kw>\w+){_Q}"),
    re.compile(r"(?:(?P<called>[\w.]+)\(\)\s+)?"
               r"(?:Unrecognized keyword arguments?(?: passed to (?P<callee>\w+))?"
               r"|Argument\(s\) not recognized):\s*(?P<kws>\{.*?\}|[\w, ]+)"),
]  # fmt: skip
_POSITIONAL = [
    re.compile(r"(?:(?P<callee>[\w.<>]+)\(\)\s+)?takes (?:from \d+ to )?\d+ positional arguments?"
               r" but \d+ (?:positional arguments? )?(?:\(.*?\) )?(?:were|was) given"),
    re.compile(r"(?:(?P<callee>[\w.]+)\(\)\s+)?too many positional arguments"),
]  # fmt: skip


@dataclass(frozen=True)
class Named:
    """The message names `new` as what to use where `old` (as the message spells it, dotted or bare; None
    when it names only the replacement) is gone."""

    old: str | None
    new: str
    caveat: bool  # the message says the replacement behaves differently


@dataclass(frozen=True)
class Missing:
    """`owner` has no `name`: a module (`module`), an object of the class named `owner` (`object`), a
    module an import reads a name from (`import`), or a dotted module path no finder has (`module-path`,
    `name` empty)."""

    owner: str
    name: str
    kind: Literal["module", "object", "import", "module-path"]


@dataclass(frozen=True)
class Keyword:
    """The callee refuses the keyword argument `keyword`. `callee`: the name a cell calls it by
    (`OneHotEncoder`, `to_csv`; None when the message names none), `qualname` as the message gives it
    (`OneHotEncoder.__init__`, `NDFrame.to_csv`)."""

    keyword: str
    callee: str | None
    qualname: str | None = None


@dataclass(frozen=True)
class Positional:
    """The callee was given more positional arguments than it takes."""

    callee: str | None
    qualname: str | None = None


Clue = Named | Missing | Keyword | Positional


def callee_name(qualname: str | None) -> str | None:
    """The name a cell calls a callee by, from the qualname a message gives: `OneHotEncoder.__init__` ->
    `OneHotEncoder`, `NDFrame.to_csv` -> `to_csv`, `read_csv` -> `read_csv`."""
    if not qualname:
        return None
    parts = [p for p in qualname.split(".") if p and not p.startswith("<")]
    if parts and parts[-1] in ("__init__", "__new__", "__call__") and len(parts) > 1:
        return parts[-2]
    return parts[-1] if parts else None


def named(message: str) -> list[Named]:
    """The replacements the message names, in the order it names them, each for the last name the
    message says is gone before it (none when it said none)."""
    gone = sorted((m.start(), m.group("old")) for p in _OLD for m in p.finditer(message))
    caveat = bool(_CAVEAT.search(message))
    out: list[Named] = []
    for pattern in _NEW:
        for found in pattern.finditer(message):
            old = next((name for at, name in reversed(gone) if at < found.start()), None)
            groups = found.groupdict()
            if groups.get("home"):
                if old:  # "It's now available from `np.lib`": the same name, in that module
                    out.append(Named(old, f"{groups['home']}.{old.rsplit('.', 1)[-1]}", caveat))
                continue
            for key in ("new", "alt"):
                new = groups.get(key)
                if new and new != old and not _is_word(new):
                    out.append(Named(old, new, caveat))
    return list(dict.fromkeys(out))


def _is_word(text: str) -> bool:
    """An English word the patterns caught, not a name ("use it instead", "use this instead")."""
    return text in {"it", "this", "that", "them", "these", "those", "a", "an", "the", "one", "other"}


def clues(message: str) -> list[Clue]:
    """Everything the message says: named replacements first (the library's own word), then what is
    missing or refused."""
    out: list[Clue] = list(named(message))
    for pattern, kind in _MISSING:
        found = pattern.search(message)
        if found:
            name = found.groupdict().get("name") or ""
            out.append(Missing(found.group("owner"), name, kind))  # type: ignore[arg-type]
            break
    for pattern in _KEYWORD:
        found = pattern.search(message)
        if not found:
            continue
        groups = found.groupdict()
        qualname = groups.get("callee") or groups.get("called")
        callee = callee_name(qualname)
        if groups.get("kw"):
            out.append(Keyword(found.group("kw"), callee, qualname))
        else:  # Keras: "{'lr': 0.01}" (a dict's repr) or "lr, decay" (the probe's words)
            kws = found.group("kws")
            names = (
                re.findall(r"['\"](\w+)['\"]\s*:", kws) if kws.startswith("{") else re.findall(r"\w+", kws)
            )
            out.extend(Keyword(kw, callee, qualname) for kw in names)
        break
    for pattern in _POSITIONAL:
        found = pattern.search(message)
        if found:
            qualname = found.groupdict().get("callee")
            out.append(Positional(callee_name(qualname), qualname))
            break
    return out
