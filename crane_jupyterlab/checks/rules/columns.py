"""KeyError / IndexError: a constant key the object at hand does not have.

- `df['a']`, `df[['a', 'b']]`, `df['a'] += 1`: a column missing from a DataFrame (KeyError);
- `df.drop(columns=[...])`, `df.drop([...], axis=1)`: dropping a column that is not there (KeyError,
  unless `errors='ignore'`);
- `d['k']`: a key missing from a dict whose keys are all known (KeyError);
- `arr['name']` on a NumPy array without named fields (IndexError);
- `sns.histplot(data=df, x='a')`: a seaborn variable naming neither a column nor an index level of
  `data` (ValueError).

Evidence: the probe's entry for `df['a']` marked missing (it asks the live frame), or the frame's complete
column list; the frame must still be the kernel's object at that point of the cell (not reassigned,
not given a column, not passed to user code before).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, argument, const_str, has_star_args, kwarg, line_of
from ..flow import Site, root_name
from ..view import ObjInfo, normalize_expr

RULE = "missing-key"

# dtype spellings of arrays without named fields (structured arrays accept field names as keys).
_PLAIN_DTYPE = re.compile(
    r"^(bool|u?int\d*|float\d*|complex\d*|object|str\d*|bytes\d*|datetime64(\[\w+\])?|timedelta64(\[\w+\])?"
    r"|[<>|=]?[biufcmMOSU]\d*(\[\w+\])?)$"
)


def _plain_labels(columns: list[object]) -> bool:
    """True when every label is a plain string (no MultiIndex tuples shown as text, no truncation)."""
    return all(
        isinstance(c, str) and not (c.startswith("(") and c.endswith(")")) and len(c) < 78 for c in columns
    )


def missing_columns(ctx: CellContext, frame: ObjInfo, keys: list[str]) -> list[str] | None:
    """The keys `frame` certainly lacks ([] = all there), or None when that cannot be told."""
    absent: list[str] = []
    for key in keys:
        child = ctx.view.get(f"{frame.expr}[{key!r}]") if not frame.derived else None
        if child is not None:
            if child.missing:
                absent.append(key)
            continue
        if frame.columns is None or not _plain_labels(frame.columns):
            return None
        if key not in frame.columns:
            absent.append(key)
    return absent


def _absent(
    ctx: CellContext,
    frame: ObjInfo,
    keys: list[str],
    node: ast.AST,
    what: str,
    extra: list[str] | None = None,
) -> Finding | None:
    """The finding for `keys` that `frame` lacks (None when it has them all): "KeyError: <what> column(s)"."""
    absent = missing_columns(ctx, frame, keys)
    if not absent:
        return None
    return Finding(
        rule=RULE,
        message=(
            f"KeyError: {what} column(s) {', '.join(map(repr, absent))} that {frame.expr} does not have "
            f"(line {line_of(node)})."
        ),
        evidence=_columns_evidence(frame, absent) + (extra or []),
        line=line_of(node),
    )


def _columns_evidence(frame: ObjInfo, absent: list[str]) -> list[str]:
    evidence = [f"{frame.expr}[{key!r}] does not exist" for key in absent]
    if frame.columns is not None:
        shown = ", ".join(repr(c) for c in frame.columns[:12])
        more = f", ... ({len(frame.columns)} in all)" if len(frame.columns) > 12 else ""
        evidence.append(f"{frame.expr}.columns = [{shown}{more}]")
    return evidence


def _subscript(ctx: CellContext, site: Site, node: ast.Subscript) -> Finding | None:
    if not isinstance(node.ctx, ast.Load) and not isinstance(node.ctx, ast.Store):
        return None
    base = ctx.value_of(node.value, site)
    if base is None:
        return None
    key = const_str(node.slice)
    if base.is_ndarray and key is not None and base.dtype and _PLAIN_DTYPE.match(base.dtype):
        if site.caught(("IndexError",)):
            return None
        return Finding(
            rule=RULE,
            message=(
                f"IndexError: {base.expr} is a NumPy array of dtype {base.dtype}; it cannot be indexed with "
                f"the string {key!r} (line {line_of(node)})."
            ),
            evidence=[f"type({base.expr}) = numpy.ndarray", f"{base.expr}.dtype = {base.dtype}"],
            line=line_of(node),
        )
    if not isinstance(node.ctx, ast.Load) or site.caught(("KeyError",)):
        return None
    if base.is_frame and isinstance(node.slice, ast.Tuple):
        return _tuple_key(ctx, base, node)
    if base.is_frame:
        keys = ctx.labels(node.slice, site)
        if keys is None:
            return None
        absent = missing_columns(ctx, base, keys)
        if not absent:
            return None
        return Finding(
            rule=RULE,
            message=(
                f"KeyError: {base.expr} has no column {', '.join(map(repr, absent))} (line {line_of(node)})."
            ),
            evidence=_columns_evidence(base, absent),
            line=line_of(node),
        )
    if base.is_dict and key is not None:
        child = ctx.view.get(f"{base.expr}[{key!r}]")
        missing = child.missing if child is not None else (base.keys is not None and key not in base.keys)
        if not missing or (child is None and not all(isinstance(k, str) for k in base.keys or [])):
            return None
        evidence = [f"{base.expr}[{key!r}] does not exist"]
        if base.keys is not None:
            evidence.append(f"{base.expr}.keys() = {base.keys}")
        return Finding(
            rule=RULE,
            message=f"KeyError: {base.expr} has no key {key!r} (line {line_of(node)}).",
            evidence=evidence,
            line=line_of(node),
        )
    return None


def _drop(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`df.drop(columns=...)` / `df.drop(labels, axis=1)` with columns that are not there."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "drop") or has_star_args(call):
        return None
    errors = kwarg(call, "errors")
    if errors is not None and const_str(errors) != "raise":
        return None
    if kwarg(call, "level") is not None or site.caught(("KeyError",)):
        return None
    axis = kwarg(call, "axis")
    if kwarg(call, "columns") is not None:
        if kwarg(call, "labels") is not None or call.args:
            return None  # pandas rejects the mix before looking at the columns; not our message
        keys = ctx.labels(kwarg(call, "columns"), site)
    elif axis is not None and isinstance(axis, ast.Constant) and axis.value in (1, "columns"):
        labels = argument(call, 0, "labels")
        keys = ctx.labels(labels, site)
    else:
        return None
    if keys is None:
        return None
    frame = ctx.value_of(func.value, site)
    if frame is None or not frame.is_frame:
        return None
    return _absent(ctx, frame, keys, call, f"{frame.expr}.drop() names")


# DataFrame methods whose argument names columns: method -> (positional index, keywords, whether an index
# level's name is accepted too). pandas raises KeyError for a name that is neither.
COLUMN_ARGUMENTS: dict[str, tuple[int | None, tuple[str, ...], bool]] = {
    "dropna": (None, ("subset",), False),
    "drop_duplicates": (0, ("subset",), False),
    "duplicated": (0, ("subset",), False),
    "set_index": (0, ("keys",), False),
    "explode": (0, ("column",), False),
    "pop": (0, ("item",), False),
    "nlargest": (1, ("columns",), False),
    "nsmallest": (1, ("columns",), False),
    "melt": (None, ("id_vars", "value_vars"), False),
    "sort_values": (0, ("by",), True),
    "groupby": (0, ("by",), True),
    # pivot_table groups by index/columns (index levels allowed) and selects values; pivot sets them
    # as the index (KeyError "The following 'index' labels are not columns of the DataFrame").
    "pivot_table": (0, ("values", "index", "columns"), True),
    "pivot": (None, ("index", "columns", "values"), True),
}


def _column_method(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`df.dropna(subset=[...])`, `df.sort_values('c')`, `df.groupby('c')`, `pd.get_dummies(df,
    columns=[...])`, ... naming a column the frame does not have."""
    func = call.func
    if not isinstance(func, ast.Attribute) or has_star_args(call) or site.caught(("KeyError",)):
        return None
    frame_node: ast.expr | None = None
    keys_nodes: list[ast.expr] = []
    levels_ok = False
    if func.attr in COLUMN_ARGUMENTS:
        position, keywords, levels_ok = COLUMN_ARGUMENTS[func.attr]
        frame_node = func.value
        keys_nodes = [node for node in (kwarg(call, k) for k in keywords) if node is not None]
        if not keys_nodes and position is not None and len(call.args) > position:
            keys_nodes = [call.args[position]]
        if func.attr in ("dropna", "sort_values", "groupby") and kwarg(call, "axis") is not None:
            return None  # along the other axis the names are row labels
        if func.attr == "groupby" and kwarg(call, "level") is not None:
            return None
    elif func.attr == "get_dummies":
        path = ctx.class_path(func, site)
        if path is None or path.split(".")[0] != "pandas":
            return None
        frame_node = argument(call, 0, "data")
        keys_nodes = [node for node in [kwarg(call, "columns")] if node is not None]
    if frame_node is None or not keys_nodes:
        return None
    keys: list[str] = []
    for node in keys_nodes:
        found = ctx.labels(node, site)
        if found is None:
            return None
        keys += found
    frame = ctx.value_of(frame_node, site)
    if frame is None or not frame.is_frame:
        return None
    if levels_ok:
        if frame.index_names is None:
            return None  # an index level may carry the name
        keys = [k for k in keys if k not in frame.index_names]
    extra = [f"{frame.expr}.index_names = {frame.index_names}"] if levels_ok else []
    return _absent(ctx, frame, keys, call, f"{func.attr}() names", extra)


def _tuple_key(ctx: CellContext, frame: ObjInfo, node: ast.Subscript) -> Finding | None:
    """`df['Guido', 'HR']`: a tuple is ONE label to `DataFrame.__getitem__` (a MultiIndex column, matched
    level by level; on flat columns a tuple label). `key in df.columns` false, as the probe asked the live
    frame, means `columns.get_loc(key)` raises KeyError; the elements are never columns of their own."""
    assert isinstance(node.slice, ast.Tuple)
    key = []
    for elt in node.slice.elts:
        if not (isinstance(elt, ast.Constant) and type(elt.value) in (str, int)):
            return None
        key.append(elt.value)
    child = ctx.view.get(normalize_expr(f"{frame.expr}[{tuple(key)!r}]")) if not frame.derived else None
    if child is None or not child.missing:
        return None
    return Finding(
        rule=RULE,
        message=f"KeyError: {tuple(key)!r}: {frame.expr} has no column {tuple(key)!r} (line {line_of(node)}).",  # noqa: E501
        evidence=[f"{tuple(key)!r} in {frame.expr}.columns = False", *_columns_evidence(frame, [])],
        line=line_of(node),
    )


def _selection(ctx: CellContext, site: Site, node: ast.Subscript) -> Finding | None:
    """`df.groupby(...)['c']` (KeyError: Column not found) and `df.loc[rows, 'c']` (KeyError) reading
    a column the frame does not have."""
    if not isinstance(node.ctx, ast.Load) or site.caught(("KeyError",)):
        return None
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "groupby":
        tupled = _tuple_selection(ctx, site, node, value)
        if tupled is not None:
            return tupled
        keys = ctx.labels(node.slice, site)
        frame_node: ast.expr = value.func.value
        what = "groupby(...)[...] selects"
    elif isinstance(value, ast.Attribute) and value.attr == "loc" and isinstance(node.slice, ast.Tuple):
        if len(node.slice.elts) != 2 or isinstance(node.slice.elts[1], ast.Tuple):
            return None  # `.loc[rows, ('a', 'b')]`: one MultiIndex column, not two
        keys = ctx.labels(node.slice.elts[1], site)
        frame_node = value.value
        what = ".loc[...] reads"
    else:
        return None
    if keys is None:
        return None
    frame = ctx.value_of(frame_node, site)
    if frame is None or not frame.is_frame:
        return None
    return _absent(ctx, frame, keys, node, what)


def _tuple_selection(ctx: CellContext, site: Site, node: ast.Subscript, grouped: ast.Call) -> Finding | None:
    """`df.groupby(k)['a', 'b']`: pandas >= 2 refuses a tuple of several columns (`DataFrameGroupBy.
    __getitem__`: "Cannot subset columns with a tuple with more than one element"), before any lookup."""
    if not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) < 2 or site.caught(("ValueError",)):
        return None
    if not isinstance(grouped.func, ast.Attribute) or ctx.labels(node.slice, site) is None:
        return None
    frame = ctx.value_of(grouped.func.value, site)
    if frame is None or not frame.is_frame or not ctx.view.at_least("pandas", 2):
        return None
    return Finding(
        rule="bad-value",
        message=(
            "ValueError: Cannot subset columns with a tuple with more than one element: "
            f"select a list instead, [{ctx.labels(node.slice, site)}] (pandas >= 2; line {line_of(node)})."
        ),
        evidence=[f"{frame.expr} is a DataFrame", f"pandas {ctx.view.version('pandas')}"],
        line=line_of(node),
    )


# agg/aggregate/apply with a dict {column: func}, and named aggregation `name=('column', func)`:
# pandas' `Apply.normalize_dictlike_arg` raises KeyError "Label(s) [...] do not exist" for a key that
# is not a column.
AGGREGATIONS = frozenset({"agg", "aggregate"})


def _aggregation(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or has_star_args(call) or site.caught(("KeyError",)):
        return None
    if func.attr not in AGGREGATIONS and not (func.attr == "apply" and call.args):
        return None
    receiver = func.value
    keys: list[str] = []
    spec = argument(call, 0, "func")
    if isinstance(spec, ast.Dict):
        for key in spec.keys:
            label = ctx.labels(key, site) if key is not None else None
            if label is None or len(label) != 1 or not isinstance(key, ast.Constant):
                return None
            keys += label
    elif spec is None and call.keywords and func.attr in AGGREGATIONS:
        for kw in call.keywords:  # named aggregation: new=('column', 'sum')
            if not isinstance(kw.value, ast.Tuple) or len(kw.value.elts) != 2:
                return None
            label = ctx.labels(kw.value.elts[0], site)
            if label is None or len(label) != 1:
                return None
            keys += label
    else:
        return None
    frame_node: ast.expr = receiver
    if isinstance(receiver, ast.Call):
        if func.attr == "apply" or not isinstance(receiver.func, ast.Attribute):
            return None
        if receiver.func.attr != "groupby" or has_star_args(receiver):
            return None
        if any(k.arg in ("level", "axis") for k in receiver.keywords):
            return None
        grouping = ctx.labels(receiver.args[0] if receiver.args else kwarg(receiver, "by"), site)
        if grouping is None:
            return None
        keys = [k for k in keys if k not in grouping]  # no claim about the grouping columns themselves
        frame_node = receiver.func.value
    frame = ctx.value_of(frame_node, site)
    if frame is None or not frame.is_frame:
        return None
    return _absent(ctx, frame, keys, call, f"{func.attr}() aggregates")


NUMERIC_DTYPES = ("int", "uint", "float")
STRING_DTYPES = ("str", "string", "string[python]", "string[pyarrow]")


def _merge_keys(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`left.merge(right, on='k')` / `pd.merge(left, right, on='k')` joining numbers with strings."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "merge" or has_star_args(call):
        return None
    path = ctx.class_path(func, site)
    if path is not None and path.split(".")[0] == "pandas":
        if len(call.args) < 2:
            return None
        left_node, right_node = call.args[0], call.args[1]
    elif len(call.args) >= 1:
        left_node, right_node = func.value, call.args[0]
    else:
        return None
    keys = ctx.labels(kwarg(call, "on"), site)
    if keys is None or site.caught(("ValueError",)):
        return None
    left, right = ctx.value_of(left_node, site), ctx.value_of(right_node, site)
    if left is None or right is None or not (left.is_frame and right.is_frame):
        return None
    for key in keys:
        a, b = ctx.view.get(f"{left.expr}[{key!r}]"), ctx.view.get(f"{right.expr}[{key!r}]")
        if a is None or b is None or a.missing or b.missing or not a.dtype or not b.dtype:
            continue
        pair = {a.dtype, b.dtype}
        numeric = [d for d in pair if d.startswith(NUMERIC_DTYPES)]
        text = [d for d in pair if d in STRING_DTYPES]
        if numeric and text:
            return Finding(
                rule="merge-dtypes",
                message=(
                    f"ValueError: You are trying to merge on {a.dtype} and {b.dtype} columns for key {key!r} "
                    f"({left.expr} and {right.expr}, line {line_of(call)})."
                ),
                evidence=[f"{a.expr}.dtype = {a.dtype}", f"{b.expr}.dtype = {b.dtype}"],
                line=line_of(call),
            )
    return None


# seaborn's plotting functions: a string for x/y/hue (and col/row of the figure-level ones) must name a
# column or an index level of `data`; anything else is a ValueError ("Could not interpret value").
SEABORN_PLOTS = frozenset(
    {"histplot", "kdeplot", "ecdfplot", "rugplot", "scatterplot", "lineplot", "barplot", "countplot",
     "boxplot", "violinplot", "boxenplot", "stripplot", "swarmplot", "pointplot", "relplot", "displot",
     "catplot"}
)  # fmt: skip
SEABORN_FACETS = frozenset({"relplot", "displot", "catplot"})


def _seaborn(ctx: CellContext, site: Site, call: ast.Call) -> Finding | None:
    """`sns.histplot(data=train, x='Age')` where train has no column (nor index level) 'Age'."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in SEABORN_PLOTS or has_star_args(call):
        return None
    path = ctx.class_path(func, site)
    if path is None or path.split(".")[0] != "seaborn" or site.caught(("ValueError",)):
        return None
    data = kwarg(call, "data")
    # since seaborn 0.12, `data` is the only positional parameter of the plotting functions
    positional = root_name(func) in ctx.view.modules and ctx.view.at_least("seaborn", 0, 12)
    if data is None and call.args and positional:
        data = call.args[0]
    frame = ctx.value_of(data, site) if data is not None else None
    if frame is None or not frame.is_frame or frame.index_names is None:
        return None
    variables = ("x", "y", "hue", *(("col", "row") if func.attr in SEABORN_FACETS else ()))
    for variable in variables:
        key = const_str(kwarg(call, variable))
        if key is None or key in frame.index_names:
            continue
        if missing_columns(ctx, frame, [key]):
            return Finding(
                rule=RULE,
                message=(
                    f"ValueError: Could not interpret value `{key}` for `{variable}`: {frame.expr} has no "
                    f"column {key!r} (line {line_of(call)})."
                ),
                evidence=[
                    *_columns_evidence(frame, [key]),
                    f"{frame.expr}.index_names = {frame.index_names}",
                ],
                line=line_of(call),
            )
    return None


def check(ctx: CellContext) -> Iterator[Finding]:
    for site in ctx.sites:
        if not site.certain:
            continue
        node = site.node
        finding = None
        if isinstance(node, ast.Subscript):
            finding = _subscript(ctx, site, node) or _selection(ctx, site, node)
        elif isinstance(node, ast.Call):
            finding = (
                _drop(ctx, site, node)
                or _column_method(ctx, site, node)
                or _merge_keys(ctx, site, node)
                or _aggregation(ctx, site, node)
                or _seaborn(ctx, site, node)
            )
        if finding is not None:
            yield finding
