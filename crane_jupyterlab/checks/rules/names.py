"""NameError: the cell reads a name that nothing defines.

Evidence: the kernel does not define the name (the probe's `undefined` list, or for JunoBench the
record plus the executed cells), and the cell reads it on every path before anything in the cell could
bind it (branches, loop bodies, function bodies and `except NameError` make it uncertain). A call into
notebook code makes later reads of a name uncertain only when the code it can reach may bind that name
(`Site.may_define`: a `global` assignment of it, or anything that can bind any name, such as `exec`,
`globals()`, `setattr`, an import, code whose source is not the notebook's; the probe's `binds_globals`,
kernel/probe/binds.py, and the walker's bookkeeping in checks/flow.py). A name deleted by `del` earlier in
the cell is undefined whatever the kernel holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...models import Finding
from ..context import CellContext, line_of

RULE = "undefined-name"


def check(ctx: CellContext) -> Iterator[Finding]:
    reported: set[str] = set()
    for site in ctx.certain(ast.Name):
        node = site.node
        assert isinstance(node, ast.Name)
        name = node.id
        if not isinstance(node.ctx, ast.Load) or name in reported or site.caught(("NameError",)):
            continue
        if name in site.deleted and not site.may_define(name):
            evidence = [f"`del {name}` runs earlier in this cell"]
        elif name in ctx.view.undefined and name not in site.bound and not site.may_define(name):
            evidence = [f"{name} is undefined in the kernel", f"the cell reads {name} before binding it"]
        else:
            continue
        reported.add(name)
        yield Finding(
            rule=RULE,
            message=f"NameError: name '{name}' is not defined (line {line_of(node)}).",
            evidence=evidence,
            line=line_of(node),
        )
