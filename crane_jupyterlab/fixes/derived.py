"""Fix candidates derived from a crash's own message and from the installed library, by rule, never from
a table of APIs (renamed.py keeps what no message names):

- a replacement the message names, put where the failing line uses the old name (`np.NaN` -> `np.nan`,
  `np.float` -> `float`, `torch.lstsq` -> `torch.linalg.lstsq`), also from the text the module itself
  gives for a name it no longer has (NumPy's `__getattr__`);
- a keyword the callee refuses: renamed to the close keyword its signature has (`sparse` ->
  `sparse_output`), else dropped, saying that this may change what the cell computes;
- positional arguments the signature now takes by keyword only, passed by keyword in its order;
- a name a module or a class lacks, replaced by a close one it has (`np.product` -> `np.prod`); an
  imported name the package defines in another module (`pandas.tools.plotting` -> `pandas.plotting`).

Signatures and names are read as the kernel has them (library.py). Every candidate is a proposal: the
server offers one only after a trial ran the edited cell to its end (server/service.py).
"""

from __future__ import annotations

import ast
import builtins
import re
import tokenize
from collections.abc import Iterable, Iterator

from .edits import (
    Edit,
    Pick,
    Source,
    after_dot,
    apply,
    combine,
    diff_title,
    drop_keyword,
    first_changed,
    name_positional,
    receiver_start,
    rename_keyword,
    replace_names,
    tokens,
)
from .library import Library, close, dotted, public
from .proposal import Candidate, Crash
from .words import Keyword, Missing, Named, Positional, clues, named

MAY_CHANGE = "may change what the cell computes"
TITLE_CHARS = 60


class Derivation:
    """The candidates one cell's crashes lead to, by kind; each kind a generator, so that the caller
    orders them among the other sources and stops at its limit without reading more of the library."""

    def __init__(
        self, cell: str, crashes: Iterable[Crash], library: Library, conventional: dict[str, str]
    ) -> None:
        self.cell = cell
        self.src = Source.parse(cell)
        self.toks = tokens(cell)
        self.lib = library
        self.conventional = conventional  # usual aliases: np -> numpy, for names the kernel lacks
        self.found = [(clue, crash.line) for crash in crashes for clue in clues(crash.message)]

    def canonical(self, name: str) -> str:
        return self.lib.modules.get(name) or self.conventional.get(name, name)

    # -- the library's own word -----------------------------------------------------------------------

    def named(self) -> Iterator[Candidate]:
        """Replacements the crash's message names, then those the module's own text names for a name
        it no longer has (read here: the kernel's copy of the text may have been cut)."""
        for clue, line in self.found:
            if isinstance(clue, Named):
                yield from self._named(clue, line)
        for clue, line in self.found:
            if not isinstance(clue, Missing) or clue.kind not in ("module", "import"):
                continue
            for said in named(self.lib.absent_text(clue.owner, clue.name) or ""):
                if clue.kind == "module":
                    old = said.old if said.old and "." in said.old else f"{clue.owner}.{clue.name}"
                    yield from self._named(Named(old, said.new, said.caveat), line)
                elif said.new.isidentifier():  # `from m import old` -> `from m import new`
                    done = replace_names(self.cell, clue.name, said.new, after_dot=False)
                    if done:
                        yield Candidate(diff_title(self.cell, done[0]), done[0], "message", done[1])

    def _named(self, clue: Named, line: int | None) -> Iterator[Candidate]:
        suffix = f" ({MAY_CHANGE}: the library says the replacement differs)" if clue.caveat else ""
        old, new = clue.old, clue.new
        if old and old.isidentifier() and new.isidentifier() and self.src is not None:
            calls = [c for c in self.src.calls(line) if any(k.arg == old for k in c.keywords)]
            if calls:  # a keyword the message says was renamed
                edited = combine(
                    self.cell, [e for c in calls if (e := rename_keyword(self.src, c, old, new))]
                )
                if edited:
                    func = self.src.text(calls[0].func)
                    title = f"{func}({old}=…) → {func}({new}=…)" + suffix
                    yield Candidate(title, edited, "message", first_changed(self.cell, edited))
                return
        if old is None:
            old = self._called_like(new, line)
        if old is None:
            return
        edited = self._replace_attribute(old, new, line)
        if edited is not None:
            yield Candidate(
                diff_title(self.cell, edited) + suffix, edited, "message", first_changed(self.cell, edited)
            )

    def _called_like(self, new: str, line: int | None) -> str | None:
        """The failing line's callee the message's replacement stands for, when the message names only
        the replacement ("Please use the `torch.linalg.matrix_rank` function instead"): one of the same
        library with the same last name."""
        if self.src is None:
            return None
        parts = new.split(".")
        for call in self.src.calls(line):
            written = dotted(call.func)
            if (
                written
                and len(written) > 1
                and written[-1] == parts[-1]
                and self.canonical(written[0]) == self.canonical(parts[0])
                and written != parts
            ):
                return ".".join(written)
        return None

    def _replace_attribute(self, old: str, new: str, line: int | None) -> str | None:
        """`old` (dotted: a module's name; bare: any object's attribute) replaced by `new` wherever the
        cell reads it, one of them on the failing line when it is known."""
        if self.toks is None:
            return None
        owner, attr = old.split(".")[:-1], old.split(".")[-1]
        parts = new.split(".")
        want = [self.canonical(owner[0]), *owner[1:]] if owner else []
        have = [self.canonical(parts[0]), *parts[1:]]
        picks: list[Pick] = []
        for i, tok in enumerate(self.toks):
            if tok.type != tokenize.NAME or tok.string != attr or not after_dot(self.toks, i):
                continue
            start = receiver_start(self.toks, i)
            written = [self.toks[k].string for k in range(start, i, 2)]
            if owner:
                if not self._is_module(written, want):
                    continue
                if have[: len(want)] == want and len(have) > len(want):
                    picks.append((tok, ".".join(parts[len(want) :])))  # np.NaN -> np.nan
                elif (len(parts) == 1 and hasattr(builtins, new)) or (
                    len(parts) > 1 and parts[0] in self.lib.modules
                ):
                    # np.float -> float, plt.cm.get_cmap -> plt.get_cmap: the whole expression is replaced
                    picks += [(self.toks[start], new)] + [(self.toks[k], "") for k in range(start + 1, i + 1)]
                else:
                    continue
            elif len(parts) == 1 or parts[-2][:1].isupper():  # `items`, `DataFrame.map`: a method's name
                picks.append((tok, parts[-1]))
        if line is not None and not any(t.start[0] == line for t, _ in picks):
            return None
        done = apply(self.cell, picks)
        return done[0] if done else None

    def _is_module(self, written: list[str], path: list[str]) -> bool:
        """Whether the receiver as written (`np`, `plt.cm`) is the module at `path` (its first part
        canonical): by name, else by what the library says the written path is (`plt.cm` is
        `matplotlib.cm`)."""
        if not written:
            return False
        mine = [self.canonical(written[0]), *written[1:]]
        if mine == path:
            return True
        found = self.lib.object_at(".".join(mine)) if len(mine) > 1 else None
        return getattr(found, "__name__", None) == ".".join(path)

    # -- the callee's signature -----------------------------------------------------------------------

    def _keyword_calls(self, clue: Keyword, line: int | None) -> dict[str, list[ast.Call]]:
        """The calls passing the refused keyword, on the failing line when it is known, grouped by
        callee as written; those whose callee the message names, when any do."""
        if self.src is None:
            return {}
        calls = [c for c in self.src.calls(line) if any(k.arg == clue.keyword for k in c.keywords)]
        same = [c for c in calls if _last_name(c.func) == clue.callee]
        groups: dict[str, list[ast.Call]] = {}
        for call in same or calls:
            groups.setdefault(self.src.text(call.func), []).append(call)
        return groups

    def keywords(self) -> Iterator[Candidate]:
        """A refused keyword renamed to the close one the callee's signature has."""
        for clue, line in self.found:
            if not isinstance(clue, Keyword) or self.src is None:
                continue
            for func, calls in self._keyword_calls(clue, line).items():
                params = self.lib.params(ast.unparse(calls[0]), calls[0].func, clue.qualname)
                if params is None:
                    continue
                passed = {k.arg for c in calls for k in c.keywords}
                for new in close(clue.keyword, [p for p in params.keywords if p not in passed], n=1):
                    edits = [rename_keyword(self.src, c, clue.keyword, new) for c in calls]
                    edited = combine(self.cell, [e for e in edits if e])
                    if edited:
                        title = f"{func}({clue.keyword}=…) → {func}({new}=…)"
                        yield Candidate(title, edited, "signature", first_changed(self.cell, edited))

    def drops(self) -> Iterator[Candidate]:
        """A refused keyword dropped: last, since its value may have mattered."""
        for clue, line in self.found:
            if not isinstance(clue, Keyword) or self.src is None:
                continue
            for func, calls in self._keyword_calls(clue, line).items():
                edits = [drop_keyword(self.src, c, clue.keyword) for c in calls]
                edited = combine(self.cell, [e for e in edits if e])
                if not edited:
                    continue
                kw = next(k for k in calls[0].keywords if k.arg == clue.keyword)
                value = _short(self.src.text(kw.value), 24)
                title = f"drop `{clue.keyword}={value}` from {func}() (not accepted any more; {MAY_CHANGE})"
                yield Candidate(title, edited, "signature", first_changed(self.cell, edited))

    def positionals(self) -> Iterator[Candidate]:
        """Positional arguments beyond those the signature takes by position, given by keyword: the
        keyword-only parameters in the signature's order (libraries kept the old order when they made
        them keyword-only; more than one moved is said to be checked)."""
        for clue, line in self.found:
            if not isinstance(clue, Positional) or self.src is None:
                continue
            calls = [
                c
                for c in self.src.calls(line)
                if c.args
                and not any(isinstance(a, ast.Starred) for a in c.args)
                and all(k.arg is not None for k in c.keywords)
            ]
            same = [c for c in calls if _last_name(c.func) == clue.callee]
            for call in same or calls:
                candidate = self._by_keyword(call, clue.qualname if call in same else None)
                if candidate is not None:
                    yield candidate
                    break

    def _by_keyword(self, call: ast.Call, qualname: str | None) -> Candidate | None:
        assert self.src is not None
        params = self.lib.params(ast.unparse(call), call.func, qualname)
        if params is None or params.var_positional or len(call.args) <= len(params.positional):
            return None
        cap = len(params.positional)
        passed = {k.arg for k in call.keywords}
        free = [k for k in params.keyword_only if k not in passed]
        if len(call.args) - cap > len(free):
            return None
        edits: list[Edit] = []
        for i in range(cap, len(call.args)):
            edit = name_positional(self.src, call, i, free[i - cap])
            if edit is None:
                return None
            edits.append(edit)
        edited = combine(self.cell, edits)
        if edited is None:
            return None
        func = self.src.text(call.func)
        moved = [self.src.text(a) for a in call.args[cap:]]
        kept = "…, " if cap else ""
        before = _short(", ".join(moved), TITLE_CHARS)
        after = _short(
            ", ".join(f"{name}={text}" for name, text in zip(free, moved, strict=False)), TITLE_CHARS
        )
        title = f"{func}({kept}{before}) → {func}({kept}{after})"
        if len(edits) > 1:
            title += " (keywords in the signature's order: check them)"
        return Candidate(title, edited, "signature", first_changed(self.cell, edited))

    # -- names the library has -------------------------------------------------------------------------

    def names(self) -> Iterator[Candidate]:
        """A missing name replaced by a close one its module or class has; an import from the module of
        the package that defines the name."""
        for clue, line in self.found:
            if not isinstance(clue, Missing):
                continue
            if clue.kind == "module":
                yield from self._sibling(clue, line)
                module = self.lib.module(clue.owner)
                options = public(dir(module)) if module is not None else []
                for new in close(clue.name, options, n=1):
                    edited = self._replace_attribute(f"{clue.owner}.{clue.name}", f"{clue.owner}.{new}", line)
                    if edited:
                        yield self._closest(edited, clue.owner)
            elif clue.kind == "object":
                cls = self.lib.class_named(clue.owner)
                # A fitted attribute (`coef_`) is missing because nothing was fitted: no method stands in.
                options = (
                    [n for n in public(dir(cls)) if n.endswith("_") == clue.name.endswith("_")] if cls else []
                )
                for new in close(clue.name, options, n=1):
                    edited = self._replace_attribute(clue.name, new, line)
                    if edited:
                        yield self._closest(edited, clue.owner)
            elif clue.kind == "import":
                yield from self._moved(clue.owner, [clue.name])
                module = self.lib.module(clue.owner)
                for new in close(clue.name, public(dir(module)) if module is not None else [], n=1):
                    done = replace_names(self.cell, clue.name, new, after_dot=False)
                    if done:
                        yield self._closest(done[0], clue.owner)
            elif clue.kind == "module-path" and self.src is not None:
                for node in ast.walk(self.src.tree):
                    if (
                        isinstance(node, ast.ImportFrom)
                        and node.module
                        and not node.level
                        and (node.module == clue.owner or node.module.startswith(clue.owner + "."))
                    ):
                        yield from self._moved(node.module, [a.name for a in node.names])

    def _sibling(self, clue: Missing, line: int | None) -> Iterator[Candidate]:
        """The same name in another module of the package that the cell has under a name of its own
        (`plt.cm.get_cmap` -> `plt.get_cmap`: matplotlib.pyplot still has it)."""
        top = clue.owner.split(".")[0]
        for alias, path in self.lib.modules.items():
            if (
                path == clue.owner
                or path.split(".")[0] != top
                or not hasattr(self.lib.module(path), clue.name)
            ):
                continue
            edited = self._replace_attribute(f"{clue.owner}.{clue.name}", f"{alias}.{clue.name}", line)
            if edited:
                title = f"{diff_title(self.cell, edited)} ({clue.name} of {path})"
                yield Candidate(title, edited, "close-name", first_changed(self.cell, edited))

    def _closest(self, edited: str, owner: str) -> Candidate:
        # A library's name that merely looks like the one it lacks may do something else: the title says
        # where it comes from, so that it reads as a guess to check.
        title = f"{diff_title(self.cell, edited)} (the closest name in {owner})"
        return Candidate(title, edited, "close-name", first_changed(self.cell, edited))

    def _moved(self, module: str, names: list[str]) -> Iterator[Candidate]:
        """`from module import names` rewritten to import them from the one module of the package that
        defines them all."""
        if self.src is None:
            return
        homes: list[str] | None = None
        for name in names:
            found = self.lib.elsewhere(module, name)
            homes = found if homes is None else [h for h in homes if h in found]
        for home in (homes or [])[:2]:
            edits: list[Edit] = []
            for node in ast.walk(self.src.tree):
                if (
                    isinstance(node, ast.ImportFrom)
                    and node.module == module
                    and not node.level
                    and {a.name for a in node.names} <= set(names)
                ):
                    text = self.src.text(node)
                    edits.append(
                        (
                            self.src.start(node),
                            self.src.end(node),
                            re.sub(r"^from\s+[\w.]+", f"from {home}", text),
                        )
                    )
            edited = combine(self.cell, edits)
            if edited:
                yield Candidate(
                    f"from {module} import → from {home} import",
                    edited,
                    "import",
                    first_changed(self.cell, edited),
                )


def _last_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
