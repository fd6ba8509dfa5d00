"""Static reading of the target cell: names it reads before binding them, attribute chains, constant
subscripts, calls and the column names they mention. Never evaluates anything.
"""

from __future__ import annotations

import ast
import contextlib
import re
from typing import Any

from .safe import _NOKEY

COLUMN_KWARGS = frozenset(
    {
        "x", "y", "hue", "on", "left_on", "right_on", "by", "columns", "subset", "col", "row", "index",
        "values", "size", "style", "id_vars", "value_vars", "column", "weights", "units", "stratify_col",
    }
)  # fmt: skip


# patsy formulas (statsmodels' `smf.ols('y ~ x + C(g)', data=df)`): the plain variables a formula reads.
# patsy looks each one up in `data`, then in the calling frame (the notebook's namespace), and raises
# PatsyError (NameError inside) when neither has it. Skipped: names called as functions (`C(`,
# `np.log(`), attributes after a dot, keyword names (`Treatment(reference=...)`), quoted names
# (`Q('a b')`), and patsy's own words.
_FORMULA_WORD = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)(?![\w'\"])(?!\s*[.(])(?!\s*=(?!=))")
_FORMULA_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
PATSY_WORDS = frozenset({"C", "I", "Q", "Treatment", "Sum", "Poly", "Diff", "Helmert", "center",
                         "standardize", "scale", "bs", "cr", "cc", "te", "ti", "np", "True", "False",
                         "None"})  # fmt: skip


def formula_names(text: str) -> list[str]:
    """The variables a patsy formula reads ([] when `text` does not look like a formula)."""
    if "~" not in text or len(text) > 2000:
        return []
    plain = _FORMULA_QUOTED.sub(" ", text)
    names = [m.group(1) for m in _FORMULA_WORD.finditer(plain)]
    return [n for n in dict.fromkeys(names) if n not in PATSY_WORDS and not n.isdigit()]


def formula_strings(tree: ast.AST) -> list[str]:
    """Constant formula strings passed to calls: the first positional argument or `formula=`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for arg in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "formula")]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and "~" in arg.value:
                found.append(arg.value)
    return found


COLUMN_METHODS = frozenset(
    {
        "groupby", "drop", "sort_values", "set_index", "pivot", "pivot_table", "value_counts", "nlargest",
        "nsmallest", "explode", "pop", "dropna", "get", "melt", "duplicated", "drop_duplicates",
    }
)  # fmt: skip


# methods whose result has the receiver's columns, so `df.m(...)['col']` needs 'col' in df
COLUMN_KEEPING = frozenset(
    {
        "groupby", "sort_values", "sort_index", "dropna", "fillna", "head", "tail", "query", "copy",
        "reset_index", "drop_duplicates", "sample", "rolling", "expanding", "resample", "astype", "replace",
        "loc", "iloc", "where", "mask", "ffill", "bfill", "interpolate", "round", "abs", "clip", "nlargest",
        "nsmallest",
    }
)  # fmt: skip


# calls that open a file or folder named by their first argument (or one of PATH_KWARGS)
PATH_FUNCS = frozenset(
    {
        "read_csv", "read_excel", "read_json", "read_parquet", "read_table", "read_pickle", "read_feather",
        "read_hdf", "read_fwf", "load", "loadtxt", "genfromtxt", "fromfile", "open", "imread", "load_img",
        "flow_from_directory", "image_dataset_from_directory", "load_model", "load_weights", "listdir",
        "read_file", "load_state_dict_from_url",
    }
)  # fmt: skip


PATH_KWARGS = frozenset(
    {"path", "filepath_or_buffer", "fname", "file", "filename", "filepath", "directory", "path_or_buf", "io"}
)


class _Ref:
    """One chain as written: root name plus attribute/constant-subscript steps."""

    def __init__(self, root: str, ops: list[tuple[str, Any]], pos: int, store: bool) -> None:
        self.root, self.ops, self.pos, self.store = root, ops, pos, store


class _Call:
    def __init__(self, root: str | None, ops: list[tuple[str, Any]], pos: int) -> None:
        self.root, self.ops, self.pos = root, ops, pos
        self.method: str | None = None
        self.func: ast.expr | None = None  # the callee as written, for +D docs
        self.paths: list[ast.expr] = []  # arguments naming a file the call opens
        self.pos_strings: list[str] = []
        self.kw_strings: dict[str, list[str]] = {}
        self.arg_names: list[str] = []
        self.kw_names: dict[str, str] = {}
        # The argument shape, for binding to the callee's signature: None when *args/**kwargs unpack.
        self.n_pos: int | None = None
        self.keywords: list[str] | None = None
        self.text = ""  # the call as written (ast.unparse), the key of its entry
        self.origin: tuple[str, str] | None = None  # (module, name) of a callee this cell imports


def _const_key(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        keys = [_const_key(e) for e in node.elts]
        if all(isinstance(k, str) for k in keys):
            return tuple(keys) if isinstance(node, ast.Tuple) else list(keys)
    return _NOKEY


def _loc_column(node: ast.Subscript) -> Any:
    """The constant column part of `x.loc[rows, 'col']` / `x.loc[rows, ['a', 'b']]`, else None."""
    sl = node.slice
    loc = isinstance(node.value, ast.Attribute) and node.value.attr == "loc"
    if loc and isinstance(sl, ast.Tuple) and len(sl.elts) == 2:
        key = _const_key(sl.elts[1])
        if isinstance(key, (str, list)):
            return key
    return None


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


class _Scanner(ast.NodeVisitor):
    """Walks the cell in execution order, tracking which names are bound before they are read."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.scopes: list[set[str]] = []
        self.free: list[str] = []
        self.deleted_reads: list[str] = []
        self.deleted: set[str] = set()
        self.refs: list[_Ref] = []
        self.calls: list[_Call] = []
        self.imports: list[tuple[str, str]] = []
        self.created: dict[tuple[str, Any], int] = {}
        self.deferred: list[tuple[ast.AST, list[set[str]]]] = []
        self.star_import = False
        self.pos = 0
        self.from_imports: dict[str, tuple[str, str]] = {}
        self.constructed: dict[str, ast.expr] = {}

    # --- names -----------------------------------------------------------------------------------
    def _is_free(self, name: str) -> bool:
        return not any(name in s for s in self.scopes) and name not in self.bound

    def _read(self, name: str) -> None:
        if not self._is_free(name):
            return
        if name in self.deleted and not self.scopes:
            if name not in self.deleted_reads:
                self.deleted_reads.append(name)
        elif name not in self.free:
            self.free.append(name)

    def _bind(self, name: str) -> None:
        if self.scopes:
            self.scopes[-1].add(name)
        else:
            self.bound.add(name)
            self.deleted.discard(name)

    def visit_Name(self, node: ast.Name) -> None:
        self.pos += 1
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
        elif isinstance(node.ctx, ast.Store):
            self._bind(node.id)
        else:  # del x: reads x, then x is gone
            self._read(node.id)
            if not self.scopes:
                self.bound.discard(node.id)
                self.deleted.add(node.id)

    # --- statements in execution order ----------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.visit(t)
            if isinstance(t, ast.Name) and not self.scopes:
                # `clf = LogisticRegression(...)`: later `clf.fit` can be documented from the class
                ctor = node.value.func if isinstance(node.value, ast.Call) else None
                if isinstance(ctor, (ast.Name, ast.Attribute)):
                    self.constructed[t.id] = ctor
                else:
                    self.constructed.pop(t.id, None)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
            self._bind(node.target.id)
        else:
            self._chain(node.target, aug=True)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bound.add(node.target.id) if not [s for s in self.scopes if s] else self._bind(node.target.id)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind(alias.asname or alias.name.split(".")[0])
            self.imports.append((alias.asname or alias.name.split(".")[0], alias.name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_import = True
                continue
            self._bind(alias.asname or alias.name)
            if node.module and not node.level and not self.scopes:
                self.from_imports[alias.asname or alias.name] = (node.module, alias.name)
        if node.module and not node.level:
            self.imports.append(("", node.module))

    def visit_Global(self, node: ast.Global) -> None:
        return

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        for d in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(d)
        if not isinstance(node, ast.Lambda):
            for dec in node.decorator_list:
                self.visit(dec)
            self._bind(node.name)
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        local = params | _assigned_in(node)
        self.deferred.append((node, [*self.scopes, local]))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for n in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(n)
        self.scopes.append(set())
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self._bind(node.name)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        gens = node.generators
        self.visit(gens[0].iter)
        self.scopes.append(set())
        for i, gen in enumerate(gens):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self._bind(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self._bind(node.rest)

    # --- chains and calls -------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._chain(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._chain(node)

    def _chain(self, node: ast.expr, aug: bool = False) -> tuple[str | None, list[tuple[str, Any]]]:
        ops: list[tuple[str, Any]] = []
        cur = node
        slices: list[ast.expr] = []
        kept: list[Any] = []
        while isinstance(cur, (ast.Attribute, ast.Subscript)):
            if isinstance(cur, ast.Attribute):
                ops.append(("attr", cur.attr))
            else:
                key = _const_key(cur.slice)
                if key is _NOKEY:
                    slices.append(cur.slice)
                    loc_col = _loc_column(cur)
                    if loc_col is not None:  # df.loc[rows, 'col']
                        kept.append(loc_col)
                    if ops and ops[-1][0] == "item":  # df[mask]['col']: the rows change, not the columns
                        kept.append(ops[-1][1])
                    ops = []
                else:
                    ops.append(("item", key))
            cur = cur.value
        ops.reverse()
        root: str | None = None
        if isinstance(cur, ast.Name):
            root = cur.id
            free = self._is_free(root)
            self.visit(cur)
            if free:
                self.refs.extend(_Ref(root, [("item", k)], self.pos, False) for k in kept)
            if free and ops:
                store = isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)) and not aug
                self.refs.append(_Ref(root, ops if not store else ops[:-1], self.pos, False))
                if store and ops[-1][0] == "item" and len(ops) == 1:
                    self.created.setdefault((root, _hashable(ops[-1][1])), self.pos)
            elif not free:
                root = None
        else:
            if isinstance(cur, ast.Call) and ops and ops[0][0] == "item":
                self._column_after_call(cur, ops[0][1])
            self.visit(cur)
        for s in reversed(slices):
            self.visit(s)
        return root, ops

    def _column_after_call(self, call: ast.Call, key: Any) -> None:
        """`df.groupby('a')['b']`: 'b' must be a column of df when every method keeps df's columns."""
        node: ast.expr = call
        while True:
            if isinstance(node, ast.Call):
                node = node.func
            elif isinstance(node, ast.Subscript) or (
                isinstance(node, ast.Attribute) and node.attr in COLUMN_KEEPING
            ):
                node = node.value
            else:
                break
        if isinstance(node, ast.Name) and self._is_free(node.id) and isinstance(key, (str, list)):
            self.refs.append(_Ref(node.id, [("item", key)], self.pos, False))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, (ast.Name, ast.Attribute, ast.Subscript)):
            if isinstance(func, ast.Name):
                root: str | None = func.id if self._is_free(func.id) else None
                ops: list[tuple[str, Any]] = []
                self.visit(func)
            else:
                root, ops = self._chain(func)
            call = _Call(root, ops, self.pos)
            call.func = func
            if not any(isinstance(a, ast.Starred) for a in node.args):
                call.n_pos = len(node.args)
            if all(kw.arg is not None for kw in node.keywords):
                call.keywords = [str(kw.arg) for kw in node.keywords]
            with contextlib.suppress(Exception):
                call.text = ast.unparse(node)
            if isinstance(func, ast.Name) and root is None and not self.scopes:
                call.origin = self.from_imports.get(func.id)
            if isinstance(func, ast.Attribute) and ops and ops[-1] == ("attr", func.attr):
                call.method = func.attr
            for a in node.args:
                call.pos_strings.extend(_strings(a))
                if isinstance(a, ast.Name):
                    call.arg_names.append(a.id)
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if callee in PATH_FUNCS and node.args:
                call.paths.append(node.args[0])
            call.paths.extend(kw.value for kw in node.keywords if kw.arg in PATH_KWARGS)
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                if _strings(kw.value):
                    call.kw_strings[kw.arg] = _strings(kw.value)
                if isinstance(kw.value, ast.Name):
                    call.kw_names[kw.arg] = kw.value.id
            self.calls.append(call)
        else:
            self.visit(func)
        for a in node.args:
            self.visit(a)
        for kw in node.keywords:
            self.visit(kw.value)

    def finish(self) -> None:
        """Scan function bodies last: they run later, when every name of the cell is bound."""
        while self.deferred:
            node, scopes = self.deferred.pop(0)
            saved = self.scopes
            self.scopes = scopes
            body: list[Any] = [node.body] if isinstance(node, ast.Lambda) else list(getattr(node, "body", []))
            for stmt in body:
                self.visit(stmt)
            self.scopes = saved


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _assigned_in(node: ast.AST) -> set[str]:
    """Names a function body binds (its locals), without descending into nested scopes' bodies."""
    out: set[str] = set()
    declared: set[str] = set()
    stack: list[ast.AST] = list(getattr(node, "body", [])) if not isinstance(node, ast.Lambda) else []
    while stack:
        cur = stack.pop()
        if isinstance(cur, (ast.Global, ast.Nonlocal)):
            declared.update(cur.names)
            continue
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(cur.name)
            continue
        if isinstance(cur, ast.Name) and isinstance(cur.ctx, (ast.Store, ast.Del)):
            out.add(cur.id)
        elif isinstance(cur, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name.split(".")[0]) for a in cur.names)
        elif isinstance(cur, ast.ExceptHandler) and cur.name:
            out.add(cur.name)
        if isinstance(cur, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(cur))
    return out - declared


def _ops_text(root: str, ops: list[tuple[str, Any]]) -> str:
    text = root
    for kind, val in ops:
        text += f".{val}" if kind == "attr" else f"[{val!r}]"
    return text
