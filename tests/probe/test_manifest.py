"""The payload's manifest (`kernel.MANIFEST`) against the tree: the server sends exactly the modules it
names, in its order, so a module left out or a name without a file breaks every kernel at install."""

from __future__ import annotations

import ast
from pathlib import Path

from crane_jupyterlab import kernel
from crane_jupyterlab.kernel import MANIFEST

KERNEL = Path(kernel.__file__).parent


def _modules_on_disk() -> set[str]:
    return {p.relative_to(KERNEL).with_suffix("").as_posix() for p in KERNEL.rglob("*.py")}


def test_every_module_of_the_payload_is_in_the_manifest() -> None:
    missing = _modules_on_disk() - {"__init__"} - set(MANIFEST)
    assert not missing, f"modules of the payload that the manifest leaves out: {sorted(missing)}"


def test_every_manifest_name_is_a_file_of_the_payload() -> None:
    absent = set(MANIFEST) - _modules_on_disk()
    assert not absent, f"manifest names without a file: {sorted(absent)}"
    assert len(MANIFEST) == len(set(MANIFEST)), "a module is named twice"


def test_every_package_of_the_payload_has_its_init_sent() -> None:
    for name in MANIFEST:
        for depth in range(1, name.count("/") + 1):
            package = "/".join(name.split("/")[:depth])
            assert f"{package}/__init__" in MANIFEST, f"{name}: its package {package} has no __init__ sent"


def _imported(name: str) -> set[str]:
    """The payload modules `name` imports at its top level (relative imports), as manifest names."""
    package = name.split("/")[:-1]  # an __init__'s package is its own folder
    found = set()
    for node in ast.parse((KERNEL / f"{name}.py").read_text()).body:
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = package[: len(package) - (node.level - 1)]
        parts = [*base, *(node.module.split(".") if node.module else [])]
        targets = [parts] if node.module else [[*parts, a.name] for a in node.names]
        for target in targets:
            path = "/".join(target)
            if f"{path}/__init__" in MANIFEST:
                found.add(f"{path}/__init__")
            elif path in MANIFEST:
                found.add(path)
            else:
                raise AssertionError(
                    f"{name} imports {'.' * node.level}{node.module or ''}: not a payload module"
                )
            # `from .a import b` where b is a module of package a
            for alias in node.names if node.module else []:
                if f"{path}/{alias.name}" in MANIFEST:
                    found.add(f"{path}/{alias.name}")
    return found


def test_the_manifest_installs_each_module_after_those_it_imports() -> None:
    seen: set[str] = set()
    for name in MANIFEST:
        late = _imported(name) - seen - {name}
        assert not late, f"{name} is installed before {sorted(late)}, which it imports"
        seen.add(name)
