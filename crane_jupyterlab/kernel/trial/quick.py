"""The quick trial: the cell with its long loops cut short (Lightning's `fast_dev_run`, for a trial run).

`rewrite(code_text)` takes the cell as the kernel will compile it (after IPython's transform) and wraps
the iterable of every `for` loop and comprehension of the cell, and of the functions it defines, in
`__crane_quick__.each(loop_id, iterable)`; every `while` loop gets `if __crane_quick__.stop(loop_id):
break` at the top of its body, `__crane_quick__.enter(loop_id)` before it (with a reader of its
counter and bound where its condition counts to one, `while i < n`, so its length is known after its
first steps) and `__crane_quick__.leave(loop_id)` in a `finally` around it. At run time (`loops.Runtime`)
a loop is cut after its first k iterations only when it is long: its known length (`len`) projects past
LONG_S from the time those k took, or, length unknown, it has already run LONG_S. Cheap loops (column
lists, data preparation) run whole, so what follows them sees the state a real run sees. Keras
`Model.fit` gets a callback that stops training after k epochs by the same rule (`kerasfit.py`). A
DataLoader, a generator or a tf.data dataset iterated by a `for` loop is cut like any iterable.

Each loop records how many iterations ran, whether it was cut and its length when known. After a crash,
`judge` tells whether the crash depends on how many iterations ran:

- `certain`: no loop had been cut before the crash (everything up to it ran exactly as it will), or the
  crashing statement, after the cut loops, reads nothing the cut loops touch (dataflow over the cell's
  top-level statements: every name of a statement that holds a cut loop, whose value is not a module,
  class, function or builtin, and what later statements compute from or do to those);
- `depends`: the crashing statement reads what a cut loop touched (or is the statement of a cut loop);
- `shortened`: the same, and the exception is one a shortened run makes by itself, raised by the cell's
  own code (its `assert` or `raise`, an index or key past what the loop built, a division by a count),
  or its message names both the size a cut loop or sampled call stopped at and its full size (a sample's
  predictions against all the targets): no evidence of a crash at all.

The same rewrite, with no cut, counts the iterations of a full trial and sends the kernel how far it got
(`progress`), so a trial that runs out of time says where it was. Stdlib only; a cell that cannot be
rewritten runs unchanged.
"""

from __future__ import annotations

import ast
import copy
import itertools
import re
import time
from typing import Any

from . import libcalls
from .kerasfit import fixed_key, keras_fit
from .loops import DEFAULT_K, NAME, NEVER, Loop, Plan, Runtime, _statement, carries

# Re-exported: the cell's side (chain.py, tests) reaches the runtime through this module.
__all__ = [
    "DEFAULT_K",
    "NAME",
    "NEVER",
    "Loop",
    "Plan",
    "Runtime",
    "carries",
    "conclude",
    "judge",
    "preparer",
    "rewrite",
]

_IDS = itertools.count()
# Exceptions a shortened run raises by itself when the crashing line reads what the loops built.
SHORTENED = ("AssertionError", "IndexError", "KeyError", "StopIteration", "ZeroDivisionError")
# scikit-learn's check of X's columns against those seen in fit (which a sample of rows keeps)
_FEATURES = re.compile(
    r"X has \d+ features?, but \w+ is expecting \d+ features?"
    r"|feature names should match those that were passed"
)


def rewrite(code_text: str, filename: str, calls: bool = False) -> tuple[ast.Module, Plan] | None:
    """The cell's tree with its loops wrapped (and with `calls`, its calls of known long library APIs:
    libcalls.py), and the plan; None when it cannot be parsed."""
    try:
        tree = ast.parse(code_text, filename)
    except (SyntaxError, ValueError):
        return None
    plan = Plan()
    plan.body = list(tree.body)  # the original statements (their nodes are rewritten in place)
    _Wrap(plan, calls).visit(tree)
    ast.fix_missing_locations(tree)
    return tree, plan


class _Wrap(ast.NodeTransformer):
    def __init__(self, plan: Plan, calls: bool = False) -> None:
        self.plan, self.calls = plan, calls
        self.stmt = -1  # index of the top-level statement being visited
        self.function: str | None = None

    def visit_Module(self, node: ast.Module) -> Any:
        body: list[ast.stmt] = []
        for n, stmt in enumerate(list(node.body)):
            self.stmt = n
            new = _checked(stmt, n) if isinstance(stmt, ast.Assert) else self.visit(stmt)
            body.extend(new if isinstance(new, list) else [new])
        node.body = body
        return node

    def _add(self, node: ast.AST, kind: str) -> int:
        # Ids unique in the process: a function a chain step defines keeps its loops' ids when a later
        # step, with a runtime of its own, calls it (`Runtime.earlier`).
        lid = next(_IDS)
        self.plan.loops[lid] = (getattr(node, "lineno", 0), kind, self.stmt)
        if self.function is not None:
            self.plan.functions.setdefault(self.function, set()).add(lid)
        return lid

    def visit_FunctionDef(self, node: Any) -> Any:
        outer, self.function = self.function, self.function or node.name
        self.generic_visit(node)
        self.function = outer
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_For(self, node: ast.For) -> Any:
        lid = self._add(node, "for")
        self.generic_visit(node)
        _sizes(node.iter, lid)
        node.iter = _call("each", lid, node.iter, node.iter)
        return node

    def visit_While(self, node: ast.While) -> Any:
        lid = self._add(node, "while")
        self.generic_visit(node)
        check = ast.If(test=_call("stop", lid, None, node), body=[ast.Break()], orelse=[])
        node.body.insert(0, ast.copy_location(check, node))
        enter = _call("enter", lid, None, node)
        counter = _counter(node.test)
        if counter is not None:  # `while i < n`: `lambda: (i, n)` (made once a run, read at its first
            # steps) and the comparison, to tell its length
            pair = ast.Tuple(elts=[counter[0], counter[1]], ctx=ast.Load())
            args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
            enter.args += [ast.Lambda(args=args, body=pair), ast.Constant(value=counter[2])]
        # statements of its block: the loop's run starts here, and however it ends, `leave` reads its clock
        leave = ast.copy_location(ast.Expr(value=_call("leave", lid, None, node)), node)
        guarded = ast.copy_location(ast.Try(body=[node], handlers=[], orelse=[], finalbody=[leave]), node)
        return [ast.copy_location(ast.Expr(value=enter), node), guarded]

    def _comprehension(self, node: Any) -> Any:
        self.generic_visit(node)
        for gen in node.generators:
            lid = self._add(node, "comprehension")
            gen.iter = _call("each", lid, gen.iter, gen.iter)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Call(self, node: ast.Call) -> Any:
        """`x.fit(a, b=c)` as `__crane_quick__.call(id, x.fit, a, b=c)`: the same evaluation order (the
        callee, then its arguments), and the call itself is libcalls.run's to make."""
        self.generic_visit(node)
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not self.calls or name not in libcalls.METHODS | libcalls.FUNCTIONS:
            return node
        lid = self._add(node, "call")
        receiver = func.value if isinstance(func, ast.Attribute) else None
        self.plan.fitted[lid] = {receiver.id} if isinstance(receiver, ast.Name) else set()
        top = self.plan.body[self.stmt] if 0 <= self.stmt < len(self.plan.body) else None
        if self.function is None and isinstance(top, ast.Assign) and top.value is node:
            self.plan.fitted[lid] |= {t.id for t in top.targets if isinstance(t, ast.Name)}
        wrapped = _call("call", lid, func, node)
        wrapped.args.extend(node.args)
        wrapped.keywords = node.keywords
        return wrapped


# Builtins whose result has no length though their arguments have one: `for i, x in enumerate(data)`.
_SIZED = ("enumerate", "zip")
# Methods that iterate their receiver's rows with no length of their own: `for i, row in df.iterrows()`.
_ROWS = ("iterrows", "itertuples")


def _sizes(iterable: ast.expr, lid: int) -> None:
    """`enumerate(x)` or `zip(a, b)` as the loop's iterable: each positional argument wrapped in
    `__crane_quick__.size(id, arg)`, which notes its length, so the loop's length is known (the shortest
    argument's); `x.iterrows()`/`x.itertuples()`: the receiver wrapped in `rows` (a frame's rows). The
    arguments are the same objects, evaluated in the same order."""
    if not isinstance(iterable, ast.Call):
        return
    func = iterable.func
    if isinstance(func, ast.Attribute) and func.attr in _ROWS:
        func.value = _call("rows", lid, func.value, func.value)
    elif (
        isinstance(func, ast.Name)
        and func.id in _SIZED
        and not any(isinstance(a, ast.Starred) for a in iterable.args)
    ):
        for arg in iterable.args:
            _sizes(arg, lid)  # `enumerate(zip(a, b))`: the inner call's arguments give the length
        iterable.args = [_call("size", lid, arg, arg) for arg in iterable.args]


def _checked(node: ast.Assert, index: int) -> ast.stmt:
    """`assert test, msg` as `if not test and not __crane_quick__.skip(index, line): assert False, msg`:
    the same error when it fails, unless the runtime passes it over (a check of what cut loops built)."""
    skip = _call("skip", index, ast.Constant(value=node.lineno), node)
    fail = ast.copy_location(ast.Assert(test=ast.Constant(value=False), msg=node.msg), node)
    test = ast.BoolOp(
        op=ast.And(),
        values=[ast.UnaryOp(op=ast.Not(), operand=node.test), ast.UnaryOp(op=ast.Not(), operand=skip)],
    )
    return ast.copy_location(ast.If(test=test, body=[fail], orelse=[]), node)


# A `while` condition's counter against its bound: the comparison as `counter OP bound`.
_COUNTED = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.NotEq: "!="}
_SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


def _counter(test: ast.expr) -> tuple[ast.expr, ast.expr, str] | None:
    """`(counter, bound, op)` of a `while` condition that counts a name against a bound (`i < n`,
    `n > i`, `i < len(xs) and err > tol`: the loop ends at the bound or sooner), read by a lambda each
    time the runtime asks; None when the condition is no such comparison. The bound may be a constant, a
    name, an attribute, an item or `len(...)` of those, and arithmetic of them: nothing a read can
    change."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for part in parts:
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and type(part.ops[0]) in _COUNTED):
            continue
        op, left, right = _COUNTED[type(part.ops[0])], part.left, part.comparators[0]
        if isinstance(right, ast.Name) and not isinstance(left, ast.Name) and _pure(left):
            left, right, op = right, left, _SWAPPED[op]
        if isinstance(left, ast.Name) and _pure(right):
            load = ast.Name(id=left.id, ctx=ast.Load())
            return ast.copy_location(load, left), copy.deepcopy(right), op
    return None


def _pure(node: ast.expr) -> bool:
    """Whether reading `node` runs no code of the notebook's (besides `len` of a name's value)."""
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if isinstance(node, ast.Subscript):
        return _pure(node.value) and _pure(node.slice)
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand)
    if isinstance(node, ast.Call):
        func = node.func
        return (
            isinstance(func, ast.Name)
            and func.id == "len"
            and len(node.args) == 1
            and not node.keywords
            and _pure(node.args[0])
        )
    return False


def _call(method: str, lid: int, arg: ast.expr | None, where: ast.AST) -> ast.Call:
    func = ast.Attribute(value=ast.Name(id=NAME, ctx=ast.Load()), attr=method, ctx=ast.Load())
    args: list[ast.expr] = [ast.Constant(value=lid)] + ([arg] if arg is not None else [])
    return ast.copy_location(ast.Call(func=func, args=args, keywords=[]), where)


def judge(
    runtime: Runtime,
    exception: str,
    frames: list[dict[str, Any]],
    ns: dict[str, Any],
    own: bool,
    message: str = "",
) -> str:
    """`certain`, `depends` or `shortened` (see the module's doc): a crash after `runtime`'s loops ran.
    `frames`: the crash's frames in the cell, outermost first; `own`: raised by the cell's own code (not
    inside a library)."""
    if not any(loop.cut for loop in runtime.loops.values()) and not any(f.cut for f in runtime.fits):
        return "depends" if any(loop.cut for loop in runtime.earlier.values()) else "certain"
    if (
        exception == "KeyError"
        and frames
        and not runtime.skipped
        and fixed_key(message, str(frames[-1].get("text") or ""), ns)
    ):
        return "certain"  # a History's keys come from compile, not from how many epochs ran
    index = _statement(runtime.plan.body, frames[0]["line"] if frames else None)
    touched = runtime._touched(index, ns)
    if touched is None:
        return "depends"
    values, counts = touched
    if values is False and not runtime.skipped:
        return "certain"
    if exception == "ValueError" and _FEATURES.search(message) and not runtime.skipped:
        # X's columns against those of an estimator fitted on a sample of rows: not the sample's doing
        reach = runtime._reach(index, ns)
        if reach is not None and reach[0] and reach[0] <= runtime._sampled_estimators():
            return "certain"
    if runtime._sized_by_the_cut(message):
        return "shortened"
    return "shortened" if own and exception in SHORTENED and counts else "depends"


def preparer(opts: dict[str, Any], writer: int) -> Any:
    """`prepare` with the trial's options and its pipe to the kernel."""
    return lambda code_text, filename, ns: prepare(code_text, filename, ns, opts, writer)


def prepare(code_text: str, filename: str, ns: dict[str, Any], opts: dict[str, Any], writer: int) -> Any:
    """What to compile: for a quick trial the rewritten tree (with `Runtime` in `ns`), for a full one the
    tree that only counts and reports progress; the text unchanged when it cannot be rewritten."""
    quick = bool(opts.get("quick"))
    if not quick and not opts.get("progress", True):
        return code_text
    rewritten = rewrite(code_text, filename, calls=quick)
    if rewritten is None:
        return code_text
    tree, plan = rewritten
    runtime = Runtime(plan, int(opts.get("quick_k", DEFAULT_K)) if quick else NEVER)
    runtime.filename, runtime.writer, runtime.ns = filename, writer, ns
    budget = opts.get("budget_s")
    if isinstance(budget, (int, float)) and budget > 0:
        runtime.budget_s, runtime.deadline = float(budget), time.monotonic() + float(budget)
    previous = ns.get(NAME)
    if isinstance(previous, Runtime):
        runtime.inherit(previous)
    ns[NAME] = runtime
    if quick:
        keras_fit(runtime)
    return tree


def conclude(outcome: dict[str, Any], ns: dict[str, Any], exc: BaseException | None) -> dict[str, Any]:
    """A quick trial's outcome with what its loops did (`quick`: k, the loops, whether one was cut, and
    for a crash how far it depends on the cut)."""
    runtime = ns.get(NAME)
    if not isinstance(runtime, Runtime) or runtime.k >= NEVER:
        return outcome
    quick = runtime.report()
    if exc is not None and outcome.get("status") == "crashed":
        frames = outcome.get("frames") or []
        own = _raised_in_cell(exc, runtime.filename)
        name = type(exc).__name__
        if own and frames and str(frames[-1].get("text", "")).startswith("raise"):
            name = (
                "AssertionError"  # the cell's own raise: whatever it raises, it judges what the loops built
            )
        try:
            quick["crash"] = judge(runtime, name, frames, ns, own, str(outcome.get("message") or ""))
        except Exception:
            quick["crash"] = "depends"
    return {**outcome, "quick": quick}


def _raised_in_cell(exc: BaseException, filename: str) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename == filename
