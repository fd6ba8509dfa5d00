"""OSError: a style name matplotlib's `style.use` cannot load (`plt.style.use('seaborn-whitegrid')` since
matplotlib 3.8; 3.6 renamed the seaborn styles to 'seaborn-v0_8-*' and 3.6-3.7 still mapped the old names).

Precondition, from `matplotlib.style.use`: each str of the specification (a str, or a list of them) is
'default' (or the aliases 'mpl20'/'mpl15'), a key of `style.library`, a dotted package style `pkg.name`, or
else loaded as a file path or URL by `rc_params_from_file`, which raises OSError when it cannot open it. The
probe (kernel/probe/styles.py) says, against the kernel's own matplotlib, whether the library has the name,
whether that version maps it as a deprecated alias, and whether a file of that name exists in the kernel's
working directory; where the cell itself imports matplotlib (not loaded yet), the library is read from the
disk as matplotlib will build it (kernel/probe/styles.py). A name with '.', a path separator, ':' or '~'
is left alone (a package style, path or URL resolves outside what the probe sees). `style.context(name)`
applies the style when its `with` block is entered, so only that form is claimed. dicts, Paths and names
bound to values are never claimed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...kernel.probe.styles import style_entry_expr
from ...models import Finding
from ..context import CellContext, argument, has_star_args, line_of
from ..site import Site

RULE = "missing-attribute"

STYLE_MODULES = ("matplotlib.style", "matplotlib.pyplot.style", "matplotlib.style.core")
ALWAYS_LOADABLE = frozenset({"default", "mpl20", "mpl15"})
NOT_A_LIBRARY_NAME = (".", "/", "\\", ":", "~")


def _style_call(ctx: CellContext, call: ast.Call, site: Site, entered: set[int]) -> bool:
    path = ctx.class_path(call.func, site)
    if path is None or "." not in path:
        return False
    module, _, method = path.rpartition(".")
    if module not in STYLE_MODULES:
        return False
    return method == "use" or (method == "context" and id(call) in entered)


def _judge(ctx: CellContext, name: str) -> tuple[str, list[str]] | None:
    """(message tail, evidence) when `name` certainly fails to load, else None."""
    if name in ALWAYS_LOADABLE or any(c in name for c in NOT_A_LIBRARY_NAME):
        return None
    info = ctx.view.get(style_entry_expr(name))
    if info is None:
        return None
    raw = info.raw
    if raw.get("in_library") is not False or raw.get("deprecated_alias") is not False:
        return None
    if raw.get("file_exists") is not False:
        return None
    version = raw.get("matplotlib")
    where = f"matplotlib {version}" if isinstance(version, str) and version else "the kernel's matplotlib"
    renamed = raw.get("renamed")
    close = raw.get("close")
    if isinstance(renamed, str):
        hint = f" Use {renamed!r} (matplotlib 3.6 renamed the seaborn styles)."
    elif isinstance(close, list) and close:
        hint = " Close names: " + ", ".join(repr(str(c)) for c in close[:3]) + "."
    else:
        hint = ""
    read_from = raw.get("library_read_from")
    library = "matplotlib.style.library"
    if isinstance(read_from, str) and read_from.startswith("disk"):
        library = "the style library matplotlib will load (its stylelib folders, read from the disk)"
    evidence = [
        f"{name!r} in {library} = False ({where})",
        f"no file {name!r} in the kernel's working directory",
    ]
    if isinstance(renamed, str):
        evidence.append(f"{renamed!r} in {library} = True")
    return hint, evidence


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _other_strings(ctx: CellContext) -> list[tuple[int, str]]:
    """Every str constant of the cell with its node id: a name that also appears in another string may
    be a file the cell writes first (`open('mystyle', 'w')`, `!cp a mystyle`)."""
    return [
        (id(node), node.value)
        for node in ast.walk(ctx.tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def _first_failure(
    ctx: CellContext, spec: ast.expr, strings: list[tuple[int, str]], specs: set[int]
) -> tuple[str, str, list[str]] | None:
    """The first str of the specification that cannot load, when everything `use` applies before it is a
    name that certainly loads (anything else could raise first, or be a dict/Path judged elsewhere)."""
    items = spec.elts if isinstance(spec, (ast.List, ast.Tuple)) else [spec]
    for item in items:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return None
        judged = _judge(ctx, item.value)
        written = any(item.value in text for key, text in strings if key not in specs)
        if judged is not None and not written:
            return item.value, judged[0], judged[1]
        info = ctx.view.get(style_entry_expr(item.value))
        loads = item.value in ALWAYS_LOADABLE or (info is not None and info.raw.get("in_library") is True)
        if not loads:
            return None
    return None


def check(ctx: CellContext) -> Iterator[Finding]:
    if ctx.view.source != "probe":
        return
    entered = {
        id(item.context_expr)
        for node in ast.walk(ctx.tree)
        if isinstance(node, (ast.With, ast.AsyncWith))
        for item in node.items
    }
    strings = _other_strings(ctx)
    # the strings given to style calls themselves (the same name used twice is not a file the cell makes)
    specs = {
        id(e)
        for node in ast.walk(ctx.tree)
        if isinstance(node, ast.Call) and _callee_name(node.func) in ("use", "context")
        for arg in [*node.args, *(k.value for k in node.keywords)]
        for e in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])
    }
    for site in ctx.certain(ast.Call):
        call = site.node
        assert isinstance(call, ast.Call)
        if has_star_args(call) or not _style_call(ctx, call, site, entered):
            continue
        spec = argument(call, 0, "style")
        if spec is None or site.caught(("OSError",)):
            continue
        failed = _first_failure(ctx, spec, strings, specs)
        if failed is None:
            continue
        name, hint, evidence = failed
        yield Finding(
            rule=RULE,
            message=(
                f"OSError: {name!r} is not a valid package style, path of style file, URL of style file, "
                f"or library style name (line {line_of(call)}).{hint}"
            ),
            evidence=evidence,
            line=line_of(call),
        )
