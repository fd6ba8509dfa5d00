"""Edits of a cell's text on its tokens and on its calls' arguments, never on a string or a comment, with
the cell's own layout kept; and the short before → after title of an edit.
"""

from __future__ import annotations

import ast
import io
import itertools
import tokenize

Pick = tuple[tokenize.TokenInfo, str]  # a token and the text that replaces it


# -- tokens ----------------------------------------------------------------------------------------


def tokens(cell: str) -> list[tokenize.TokenInfo] | None:
    """The cell's significant tokens (no newlines, comments, indents); None for a cell that does not
    tokenize (a shell escape, unfinished code): no edit then."""
    try:
        found = list(tokenize.generate_tokens(io.StringIO(cell).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    return [t for t in found if t.type not in skip]


def after_dot(toks: list[tokenize.TokenInfo], i: int) -> bool:
    return i > 0 and toks[i - 1].string == "."


def receiver_start(toks: list[tokenize.TokenInfo], i: int) -> int:
    """The index of the first token of the dotted names before the attribute at `i` (`np.linalg.x`:
    the `np`), or `i` itself when what precedes the dot is not a plain name."""
    j = i
    while j >= 2 and toks[j - 1].string == "." and toks[j - 2].type == tokenize.NAME:
        j -= 2
    return j


def replace_names(cell: str, old: str, new: str, after_dot: bool) -> tuple[str, int] | None:
    """Every NAME token `old` (right after a dot, or not) replaced by `new`; (cell, first line) or None."""
    toks = tokens(cell)
    if toks is None:
        return None
    picks = [
        (t, new)
        for i, t in enumerate(toks)
        if t.type == tokenize.NAME
        and t.string == old
        and (i > 0 and toks[i - 1].string == ".") == after_dot
        # a keyword argument's name (f(old=...)) is not a read of the variable
        and not (
            not after_dot
            and i + 1 < len(toks)
            and toks[i + 1].string == "="
            and i > 0
            and toks[i - 1].string in ("(", ",")
        )
    ]
    return apply(cell, picks)


def replace_keys(cell: str, old: str, new: str) -> tuple[str, int] | None:
    """Every plain string literal `old` used as a subscript (`[...]`) replaced by `new`, quotes kept."""
    toks = tokens(cell)
    if toks is None:
        return None
    picks = []
    for i, t in enumerate(toks):
        if t.type != tokenize.STRING or i == 0 or toks[i - 1].string not in ("[", ","):
            continue
        quote = t.string[0]
        if quote not in "'\"" or t.string.startswith(quote * 3):
            continue  # prefixed (f, b, r) or triple-quoted: left alone
        try:
            value = ast.literal_eval(t.string)
        except (ValueError, SyntaxError):
            continue
        if value == old:
            escaped = new.replace("\\", "\\\\").replace(quote, "\\" + quote)
            picks.append((t, f"{quote}{escaped}{quote}"))
    return apply(cell, picks)


def apply(cell: str, picks: list[Pick]) -> tuple[str, int] | None:
    """The cell with each picked token replaced; (cell, first line changed) or None when none is."""
    if not picks:
        return None
    lines = cell.splitlines(keepends=True)
    for token, text in sorted(picks, key=lambda p: p[0].start, reverse=True):
        (row, col), (end_row, end_col) = token.start, token.end
        if row != end_row:
            return None
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[end_col:]
    return "".join(lines), min(t.start[0] for t, _ in picks)


# -- calls -----------------------------------------------------------------------------------------


class Source:
    """The cell's text with its syntax tree, for edits at the tree's positions (ast counts columns in
    UTF-8 bytes; these are turned into offsets in the text)."""

    def __init__(self, cell: str, tree: ast.Module) -> None:
        self.cell = cell
        self.tree = tree
        self._lines = cell.splitlines(keepends=True)
        self._starts = [0]
        for line in self._lines:
            self._starts.append(self._starts[-1] + len(line))

    @classmethod
    def parse(cls, cell: str) -> Source | None:
        """None for a cell that is not plain Python (IPython syntax, a syntax error)."""
        try:
            return cls(cell, ast.parse(cell))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None

    def offset(self, line: int, col: int) -> int:
        text = self._lines[line - 1] if line <= len(self._lines) else ""
        return self._starts[line - 1] + len(text.encode()[:col].decode(errors="replace"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def text(self, node: ast.AST) -> str:
        return self.cell[self.start(node) : self.end(node)]

    def calls(self, line: int | None) -> list[ast.Call]:
        """The cell's calls, those whose text covers `line` only when it is given, innermost first."""
        found = [
            n
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Call) and (line is None or n.lineno <= line <= (n.end_lineno or n.lineno))
        ]
        return sorted(found, key=lambda n: self.end(n) - self.start(n))

    def _open_paren(self, call: ast.Call) -> int | None:
        """The offset of the call's own `(`: only blanks may lie between the callee and it."""
        i = self.end(call.func)
        while i < len(self.cell) and self.cell[i] in " \t":
            i += 1
        return i if i < len(self.cell) and self.cell[i] == "(" else None


Edit = tuple[int, int, str]  # (start, end, text): the cell's text from start to end becomes text


def rename_keyword(src: Source, call: ast.Call, old: str, new: str) -> Edit | None:
    kw = next((k for k in call.keywords if k.arg == old), None)
    if kw is None:
        return None
    at = src.start(kw)
    return (at, at + len(old), new) if src.cell[at : at + len(old)] == old else None


def drop_keyword(src: Source, call: ast.Call, name: str) -> Edit | None:
    """The keyword argument and one comma beside it removed (the call's parentheses emptied when it was
    its only argument)."""
    items: list[ast.AST] = sorted([*call.args, *call.keywords], key=lambda n: src.start(n))
    index = next((i for i, n in enumerate(items) if isinstance(n, ast.keyword) and n.arg == name), None)
    if index is None:
        return None
    kw = items[index]
    if index > 0:
        return src.end(items[index - 1]), src.end(kw), ""
    if index + 1 < len(items):
        return src.start(kw), src.start(items[index + 1]), ""
    opened = src._open_paren(call)
    if opened is None:
        return None
    return opened + 1, src.end(call) - 1, ""


def name_positional(src: Source, call: ast.Call, index: int, name: str) -> Edit | None:
    """`name=` written before the call's positional argument `index`, whose text must begin right after
    the call's `(` or a comma (a parenthesised argument's node starts inside its parentheses)."""
    arg = call.args[index]
    if isinstance(arg, ast.Starred):
        return None
    at = src.start(arg)
    before = src.cell[:at].rstrip()
    opened = src._open_paren(call)
    if not (before.endswith(",") or (opened is not None and len(before) == opened + 1)):
        return None
    return at, at, f"{name}="


def combine(cell: str, edits: list[Edit]) -> str | None:
    """The cell with non-overlapping edits applied; None when two overlap or none is given."""
    if not edits:
        return None
    ordered = sorted(edits)
    for (_, end, _), (start, _, _) in itertools.pairwise(ordered):
        if start < end:
            return None
    out = cell
    for start, end, text in reversed(ordered):
        out = out[:start] + text + out[end:]
    return out


# -- titles ----------------------------------------------------------------------------------------


def first_changed(before: str, after: str) -> int | None:
    old, new = before.splitlines(), after.splitlines()
    for i, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return i
    return min(len(old), len(new)) + 1 if len(old) != len(new) else None


def diff_title(before: str, after: str) -> str:
    """The first changed line, before → after, trimmed to the part that differs."""
    line = first_changed(before, after)
    if line is None:
        return "edit the cell"
    old_lines, new_lines = before.splitlines(), after.splitlines()
    a = old_lines[line - 1] if line <= len(old_lines) else ""
    b = new_lines[line - 1] if line <= len(new_lines) else ""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    # Widen to whole tokens so the title reads as code: back to a separator, forward to one.
    while start > 0 and (a[start - 1].isalnum() or a[start - 1] in "_.'\"["):
        start -= 1
    old, new = a[start : len(a) - end], b[start : len(b) - end]
    while end > 0 and (a[len(a) - end].isalnum() or a[len(a) - end] in "_]" or not _closed(old, new)):
        # ... and on to the bracket that closes a call the change opened (`fillna(method='ffill')`)
        old, new = old + a[len(a) - end], new + a[len(a) - end]
        end -= 1
    return f"{old.strip()} → {new.strip()}"


def _closed(*texts: str) -> bool:
    return all(t.count("(") <= t.count(")") and t.count("[") <= t.count("]") for t in texts)
