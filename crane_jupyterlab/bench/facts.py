"""Decisive facts of a crash-suite case, checked in the namespace the target cell is about to run in.

A fact is one of
    `<expr> = <value>`   holds when `str(<expr>)` is `<value>`, or `<value>` is a Python literal equal to
                         the expression's value (a torch.Size or TensorShape compares as a tuple, a 0-d
                         array or tensor as its item);
    `<name> is undefined` / `<name> is defined`   the name is (not) bound in the namespace or builtins.
Anything else cannot be checked (`ok` is None).

This module is stdlib only and self-contained: `crane-bench verify` sends its source into the kernel and
calls `check_facts` there (through `user_expressions`, so nothing is added to the user's namespace or
history).
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from typing import Any

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def first_line(text: str) -> str:
    """First non-empty line of an exception message, colour codes removed."""
    for line in _ANSI.sub("", text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def _normalized(value: Any) -> Any:
    kind = type(value)
    if kind.__name__ in ("Size", "TensorShape"):
        try:
            as_list = getattr(value, "as_list", None)
            return tuple(as_list() if as_list is not None else value)
        except Exception:
            return value
    if getattr(value, "shape", None) == () and hasattr(value, "item"):
        try:
            return value.item()
        except Exception:
            return value
    return value


def _equal(literal: Any, value: Any) -> bool:
    try:
        if isinstance(value, (list, tuple)) and isinstance(literal, (list, tuple)):
            return list(literal) == list(value)
        same = literal == value
    except Exception:  # a hostile __eq__
        return False
    if isinstance(same, bool):
        return same
    if getattr(same, "shape", None) == ():  # numpy's bool_
        try:
            return bool(same)
        except Exception:
            return False
    return False  # an array compared element-wise is no answer


def check_fact(fact: str, ns: dict[str, Any]) -> tuple[bool | None, str]:
    """(holds, what was observed) for one fact; holds is None when the fact has no checkable form."""
    text = fact.strip()
    for suffix, want in ((" is undefined", False), (" is defined", True)):
        if text.endswith(suffix):
            name = text[: -len(suffix)].strip()
            defined = name in ns or hasattr(builtins, name)
            return defined is want, "defined" if defined else "undefined"
    if " = " not in text:
        return None, "not of the form '<expr> = <value>'"
    expr, expected = text.split(" = ", 1)
    try:
        value = _normalized(eval(expr, ns))
    except BaseException as exc:  # a fact about a missing name or column: report it, never raise
        return False, f"<{type(exc).__name__}: {first_line(str(exc))}>"
    try:
        observed = str(value)
    except BaseException as exc:
        return False, f"<str() raised {type(exc).__name__}>"
    if observed == expected:
        return True, observed
    try:
        literal = ast.literal_eval(expected)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, observed
    return _equal(literal, value), observed


def check_facts(ns: dict[str, Any], facts: list[str]) -> str:
    """JSON list of `[fact, holds, observed]`, one per fact (a string survives `user_expressions`)."""
    return json.dumps([[fact, *check_fact(fact, ns)] for fact in facts])
