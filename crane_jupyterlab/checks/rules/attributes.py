"""AttributeError: an attribute the live object or module does not have.

Evidence: the probe looked the attribute up on the live object without running user code and marked the
entry `missing` (removed APIs such as `np.float` in NumPy 2 or `Sequential.predict_classes` in Keras 3
are found this way, against the installed version, with no list of removed names). The root name must
still hold the kernel's object at that point of the cell.

JunoBench's records only list attributes the extractor could read, so an absent one proves nothing and
this rule never fires on that format.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, line_of
from ..flow import root_name
from ..view import ModuleInfo, type_class

RULE = "missing-attribute"


def check(ctx: CellContext) -> Iterator[Finding]:
    if ctx.view.source != "probe":
        return
    reported: set[str] = set()
    for site in ctx.certain(ast.Attribute):
        node = site.node
        assert isinstance(node, ast.Attribute)
        if not isinstance(node.ctx, ast.Load) or site.caught(("AttributeError",)):
            continue
        name = root_name(node)
        if name is None or not site.pristine(name):
            continue
        if any(isinstance(sub, ast.Call) for sub in ast.walk(node.value)):
            continue  # the value is computed in the cell: not the object the probe looked at
        expr = ast.unparse(node)
        entry = ctx.view.get(expr)
        if entry is None or not entry.missing or expr in reported:
            continue
        reported.add(expr)
        owner = ctx.view.get(ast.unparse(node.value))
        module = ctx.view.modules.get(ast.unparse(node.value))
        dotted = ast.unparse(node.value).split(".")
        top = ctx.view.modules.get(dotted[0])
        owner_type = owner.type if owner is not None else entry.type  # a missing entry carries its owner's
        if module is None and owner_type == "module" and top is not None:
            # `matplotlib.cm.get_cmap`: a submodule reached through a kernel module alias
            module = ModuleInfo(ast.unparse(node.value), ".".join([top.module, *dotted[1:]]), top.version)
        if module is not None:
            version = f" {module.version}" if module.version else ""
            what = f"module '{module.module}'{version} has no attribute '{node.attr}'"
        else:
            kind = (
                type_class(owner.type)
                if owner is not None and owner.type
                else type_class(entry.type or "object")
            )
            what = f"'{kind}' object has no attribute '{node.attr}'"
        evidence = [f"{expr} does not exist in the kernel"]
        evidence += [f for f in entry.facts if ".close = " in f or ".note = " in f]
        yield Finding(
            rule=RULE,
            message=f"AttributeError: {what} (line {line_of(node)}).",
            evidence=evidence,
            line=line_of(node),
        )
