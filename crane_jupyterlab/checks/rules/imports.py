"""ModuleNotFoundError / ImportError: an import the kernel's environment cannot satisfy.

- `import torchvision` where no finder of the kernel has it (not installed, or not on `sys.path`);
- `from sklearn.cross_validation import train_test_split` where scikit-learn is loaded and has no such
  submodule (removed in 0.20): "No module named 'sklearn.cross_validation'";
- `from sklearn.metrics import plot_confusion_matrix` where the loaded module defines no such name, has
  no such submodule, and its PEP 562 `__getattr__` (if any) refuses it: "cannot import name".

Precondition (the import system's own): a name is importable when `sys.modules` holds it or a finder
on `sys.meta_path` finds it (on `sys.path` for a top-level name, on the loaded parent's `__path__` for
a submodule). The probe (kernel/probe/imports.py) answers from the kernel as it is, never importing, and says
`unknown` whenever a finder or path hook it cannot read without running its code is involved, or when
the answer depends on package code that has not run yet (a submodule of a package not loaded).

The cell must not change the import system before the line: no shell or unknown magic line (`!pip
install`, `%pip`, `%cd`), no use of `sys`/`importlib`/`site`/`subprocess` or of `os` beyond reading
paths and the environment, no call except builtins like `print` and functions of trusted libraries,
and no earlier import that runs code outside the trusted libraries (`import _init_paths` may extend
sys.path). The statement certainly runs and no enclosing `except` catches ImportError.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from ...kernel.probe.imports import load_ext_module
from ...kernel.probe.safe import TRUSTED_ROOTS
from ...models import Finding
from ..context import CellContext
from ..effects import PURE_BUILTINS
from ..flow import ImportSite, root_name
from ..site import Site

RULE = "missing-import"

# Magics that leave the import system alone (anything else, and any `!` line, may install or move).
_QUIET_MAGICS = frozenset({"matplotlib", "config", "autoreload", "precision", "time", "timeit", "pylab"})
# IPython's BUILTINS_EXTS: `%load_ext autoreload` loads IPython.extensions.autoreload when no module of that
# name exists (its code is IPython's own), and is never a ModuleNotFoundError.
_BUILTIN_EXTENSIONS = frozenset({"autoreload", "storemagic"})
# Module names whose use before an import may change what it finds.
_IMPORT_STATE = frozenset(
    {"sys", "importlib", "site", "subprocess", "runpy", "pkg_resources", "pip", "get_ipython", "exec",
     "eval", "__import__", "open", "shutil"}
)  # fmt: skip
_OS_READS = frozenset({"environ", "path", "getcwd", "getenv", "listdir", "cpu_count", "sep"})
# Libraries whose calls (np.random.seed, warnings.filterwarnings) do not touch the import system.
_QUIET_ROOTS = (TRUSTED_ROOTS | {"warnings", "logging"}) - {"os", "pathlib", "pickle", "builtins", "types"}


def _shell_or_magic(source: str) -> set[int] | None:
    """The lines of quiet magics (`%matplotlib inline`); None when a line may change the import system."""
    quiet: set[int] = set()
    for number, line in enumerate(source.split("\n"), 1):
        text = line.strip()
        if text.startswith("!") or re.match(r"^[\w\s,()\[\]]*=\s*[!%]", text):
            return None  # `!pip install x`, `out = !cmd`, `out = %sx cmd`
        if text.startswith("%%"):
            if text[2:].split()[:1] in (["time"], ["timeit"], ["capture"]):
                continue  # the body is Python, read as such
            return None
        if text.startswith("%"):
            words = text.lstrip("%").split()
            magic = words[0] if words else ""
            if magic not in _QUIET_MAGICS and magic != "load_ext":  # load_ext: judged in order, in check
                return None
            quiet.add(number)
    return quiet


def _aliases(ctx: CellContext) -> dict[str, str]:
    """Name -> top package, for the kernel's module aliases and the cell's own `import x as y`."""
    names = {alias: info.module.split(".")[0] for alias, info in ctx.view.modules.items()}
    for site in ctx.imports:
        node = site.node
        for alias in node.names:
            if isinstance(node, ast.Import):
                names[alias.asname or alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif node.module and not node.level:
                names[alias.asname or alias.name] = node.module.split(".")[0]
    return names


def _quiet_before(
    ctx: CellContext, stmt: ast.stmt | ast.expr, aliases: dict[str, str], magics: set[int]
) -> bool:
    """Nothing in the cell before `stmt` may change what the import finds."""
    where = (stmt.lineno, stmt.col_offset)
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or not isinstance(node, (ast.stmt, ast.expr)):
            continue
        if node.lineno in magics:
            continue  # `get_ipython().run_line_magic('matplotlib', 'inline')`
        if (node.lineno, node.col_offset) >= where:
            continue
        if isinstance(node, ast.Name) and node.id in _IMPORT_STATE:
            return False
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr not in _OS_READS
        ):
            return False
        if isinstance(node, ast.Call):
            root = root_name(node.func)
            if root is None:
                return False
            if isinstance(node.func, ast.Name) and root in PURE_BUILTINS and root not in aliases:
                continue
            if aliases.get(root) not in _QUIET_ROOTS:
                return False
    return True


def _pairs(site: ImportSite) -> list[tuple[str, str | None]]:
    node = site.node
    if isinstance(node, ast.Import):
        return [(alias.name, None) for alias in node.names]
    if node.module and not node.level:
        return [(node.module, alias.name) for alias in node.names]
    return []


def check(ctx: CellContext) -> Iterator[Finding]:
    if ctx.view.source != "probe" or not ctx.view.imports:
        return
    magics = _shell_or_magic(ctx.source)
    if magics is None:
        return
    verdicts: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    for item in ctx.view.imports:
        verdicts.setdefault((item.get("line"), item.get("module"), item.get("name")), item)
    aliases = _aliases(ctx)
    # The imports and `%load_ext` lines in the order they run.
    steps: list[tuple[int, int, ImportSite | Site]] = [
        (s.node.lineno, s.node.col_offset, s) for s in ctx.imports
    ]
    steps += [(s.node.lineno, s.node.col_offset, s) for s in ctx.sites if load_ext_module(s.node) is not None]
    steps.sort(key=lambda step: (step[0], step[1]))
    foreign_code_ran = False  # an earlier import or extension ran code outside the trusted libraries

    def claimable(site: ImportSite | Site, exc: str) -> bool:
        """The failing line certainly runs, on the import system as the kernel has it now."""
        return (
            site.certain
            and not site.barrier
            and not foreign_code_ran
            and not site.caught((exc,))
            and _quiet_before(ctx, site.node, aliases, magics)
        )

    for line, _, site in steps:
        if isinstance(site, Site):
            module = str(load_ext_module(site.node))
            entry = verdicts.get((line, module, None)) or {}
            if entry.get("state") == "missing" and claimable(site, "ModuleNotFoundError"):
                yield _finding(entry, module, None, line, f"%load_ext {module}")
                return
            if module not in _BUILTIN_EXTENSIONS:
                foreign_code_ran = True  # the extension's load_ipython_extension runs
            continue
        for module, name in _pairs(site):
            entry = verdicts.get((site.node.lineno, module, name)) or {}
            state = entry.get("state")
            if state in ("missing", "no-name"):
                exc = "ModuleNotFoundError" if state == "missing" else "ImportError"
                if claimable(site, exc):
                    yield _finding(entry, module, name, site.node.lineno)
                    return  # the cell stops at the first failing import
            if state != "loaded" and module.split(".")[0] not in TRUSTED_ROOTS:
                foreign_code_ran = True


def _finding(
    entry: dict[str, Any], module: str, name: str | None, line: int, magic: str | None = None
) -> Finding:
    version = entry.get("version") if isinstance(entry.get("version"), str) else None
    elsewhere = [m for m in entry.get("elsewhere") or [] if isinstance(m, str)]
    top = module.split(".")[0]
    evidence = [f"`{magic}` imports {module!r} (IPython's extension manager)"] if magic else []
    if entry.get("state") == "missing":
        missing = str(entry.get("missing") or module)
        message = f"ModuleNotFoundError: No module named {missing!r} (line {line})"
        if "." not in missing:
            evidence.append(
                f"{missing!r}: no finder of the kernel has it (sys.path and sys.meta_path searched)"
            )
            advice = "it is not installed in the kernel's environment; install the package that provides it"
        else:
            parent = missing.rpartition(".")[0]
            evidence.append(
                f"{parent} is loaded; {missing!r} is neither in sys.modules nor on {parent}.__path__"
            )
            release = f"{top} {version}" if version else f"the installed {top}"
            advice = f"{release} has no module {missing!r}"
    else:
        message = f"ImportError: cannot import name {name!r} from {module!r} (line {line})"
        evidence.append(f"{module} is loaded and defines no {name!r} (no attribute, no submodule)")
        release = f"{top} {version}" if version else f"the installed {top}"
        advice = f"{release} does not define it"
        note = entry.get("note")
        if isinstance(note, str) and note:
            evidence.append(f"{module}.__getattr__({name!r}): {note}")
            advice = note.rstrip(".")
    if name and name != "*" and elsewhere:
        advice += f"; `{name}` is in `{elsewhere[0]}`"
        evidence.append(f"{name!r} is defined in the loaded module(s) {', '.join(elsewhere)}")
    return Finding(rule=RULE, message=f"{message}: {advice}.", evidence=evidence, line=line)
