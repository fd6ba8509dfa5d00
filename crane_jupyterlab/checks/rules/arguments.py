"""TypeError: a call whose arguments cannot bind to the callee's signature.

Evidence: the probe found the callee in the kernel without running user code (a plain Python
function, a bound method of one, or a class whose call is `object.__new__` plus a Python `__init__`;
nothing wrapped by a decorator or carrying its own `__signature__`) and bound the call's positional
count and keyword names to its signature with `inspect.Signature.bind`. Python raises the same
TypeError before the callee's body runs, whatever the values are: `sns.barplot(x, y)` where seaborn
takes only `data` positionally, `OneHotEncoder(sparse=False)` after scikit-learn removed `sparse`.

Silent unless the callee's name still holds the kernel's object at the call (or the import of this
cell the probe resolved), and when a `try` around the call catches TypeError. Calls that unpack
`*args`/`**kwargs` are never bound. JunoBench's records hold no signatures: probe results only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, has_star_args, line_of
from ..flow import root_name

RULE = "bad-arguments"


def check(ctx: CellContext) -> Iterator[Finding]:
    if ctx.view.source != "probe":
        return
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if has_star_args(call):
            continue
        entry = ctx.view.get(ast.unparse(call))
        if entry is not None and site.caught((entry.raises or "TypeError",)):
            continue
        name = root_name(call.func)
        if entry is None or entry.bind_error is None or name is None:
            continue
        if entry.callee is not None:
            if not isinstance(call.func, ast.Name) or site.imported(name) != entry.callee:
                continue  # the probe resolved this cell's import: it must still be what the name holds
        elif not site.pristine(name):
            continue
        callee = ast.unparse(call.func)
        yield Finding(
            rule=RULE,
            message=f"{entry.raises or 'TypeError'}: {callee}() {entry.bind_error} (line {line_of(call)}).",
            evidence=[f for f in entry.facts if ".bind_error = " in f or ".signature = " in f],
            line=line_of(call),
        )
