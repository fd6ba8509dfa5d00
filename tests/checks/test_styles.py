"""matplotlib style names `style.use`/`style.context` cannot load (checks/rules/styles.py), against the
installed matplotlib through the real probe; every claim is confirmed by running the cell."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe
from crane_jupyterlab.models import Finding


def findings_for(source: str, ns: dict[str, Any]) -> list[Finding]:
    return check(source, probe.run(source, {}, namespace=ns))


@pytest.fixture
def ns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)  # style files the cells write stay in the test's folder
    return {"plt": plt, "mpl": matplotlib}


def _raises(source: str, ns: dict[str, Any]) -> bool:
    import matplotlib.pyplot as plt

    try:
        with plt.style.context("default"):  # leave rcParams as they were
            exec(compile(source, "<cell>", "exec"), dict(ns))
    except OSError:
        return True
    return False


CRASHING = [
    "plt.style.use('seaborn-whitegrid')",
    "import matplotlib.pyplot as plt\nplt.style.use('seaborn-white')",
    "mpl.style.use(['ggplot', 'seaborn-darkgrid'])",
    "with plt.style.context('seaborn-paper'):\n    plt.plot([1, 2])",
    "from matplotlib import style\nstyle.use(style='fivethirtyeight2')",
]


@pytest.mark.parametrize("source", CRASHING)
def test_unknown_style_names_are_claimed_and_crash(source: str, ns: dict[str, Any]) -> None:
    import matplotlib.pyplot as plt

    findings = findings_for(source, dict(ns))
    assert [f.rule for f in findings] == ["missing-attribute"]
    assert findings[0].message.startswith("OSError: '")
    assert _raises(source, ns)
    name = findings[0].message.split("'")[1]
    renamed = "seaborn-v0_8" + name[len("seaborn") :]
    if name.startswith("seaborn") and renamed in plt.style.library:
        assert f"Use {renamed!r} (matplotlib 3.6 renamed the seaborn styles)" in findings[0].message


FINE = [
    "plt.style.use('default')",
    "plt.style.use('mpl20')",
    "plt.style.use({'lines.linewidth': 2})",
    "plt.style.use(['ggplot', 'default'])",
    "plt.style.context('no-such-style')",  # never entered: nothing is applied
    "try:\n    plt.style.use('seaborn-whitegrid')\nexcept OSError:\n    pass",
    "with open('mystyle', 'w') as fh:\n    fh.write('axes.grid: True\\n')\nplt.style.use('mystyle')",
    "with open('a.mplstyle', 'w') as fh:\n    fh.write('axes.grid: True\\n')\nplt.style.use('a.mplstyle')",
    "from pathlib import Path\nPath('b.mplstyle').write_text('axes.grid: True\\n')\n"
    "plt.style.use(Path('b.mplstyle'))",
]


@pytest.mark.parametrize("source", FINE)
def test_loadable_specifications_are_not_claimed(source: str, ns: dict[str, Any]) -> None:
    assert findings_for(source, dict(ns)) == []
    assert not _raises(source, ns)


def test_library_names_and_files_of_the_working_directory(ns: dict[str, Any]) -> None:
    import matplotlib.pyplot as plt

    name = sorted(s for s in plt.style.available if not s.startswith("_"))[0]
    assert findings_for(f"plt.style.use({name!r})", dict(ns)) == []
    Path("house_style").write_text("axes.grid: True\n")  # an existing file: `use` loads it
    assert os.path.exists("house_style")
    assert findings_for("plt.style.use('house_style')", dict(ns)) == []
    assert not _raises("plt.style.use('house_style')", ns)


def test_a_name_bound_in_the_cell_is_not_the_kernels_module(ns: dict[str, Any]) -> None:
    source = (
        "class S:\n    def use(self, s):\n        pass\n"
        "plt = type('P', (), {'style': S()})\nplt.style.use('nope')"
    )
    assert findings_for(source, dict(ns)) == []


# Run in a fresh interpreter: the kernel of a notebook's first cell, which has not imported matplotlib.
FRESH = """
import json, sys
sys.path[:0] = json.loads(sys.argv[2])
from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe
source = sys.argv[1]
findings = check(source, probe.run(source, {}, namespace={}))
from crane_jupyterlab.kernel.probe import styles
disk = styles._library_on_disk()
loaded = "matplotlib" in sys.modules
outcome = "ran"
try:
    import matplotlib
    matplotlib.use("Agg")
    exec(compile(source, "<cell>", "exec"), {})
except OSError as exc:
    outcome = "OSError"
import matplotlib.style
print(json.dumps({"findings": [[f.message, f.evidence] for f in findings], "loaded": loaded,
                  "outcome": outcome, "library": sorted(matplotlib.style.library),
                  "disk": disk and [sorted(disk[0]), list(disk[1])], "version": matplotlib.__version__}))
"""


def _run_script(script: str, source: str, tmp_path: Path, path: list[str]) -> Any:
    """`script` in a fresh interpreter (argv: the cell, the entries put first on sys.path); its last line."""
    import json
    import subprocess
    import sys

    config = tmp_path / "mplconfig"
    config.mkdir(exist_ok=True)
    environ = {**os.environ, "MPLCONFIGDIR": str(config), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", script, source, json.dumps(path)],
        capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fresh(source: str, tmp_path: Path) -> Any:
    pytest.importorskip("matplotlib")
    return _run_script(FRESH, source, tmp_path, [])


def test_a_cell_that_imports_matplotlib_is_judged_from_the_library_on_disk(tmp_path: Path) -> None:
    """The first cell of a notebook: `%matplotlib inline`, the import and a removed style name. The library
    is read from the disk without importing matplotlib, and the cell does crash."""
    source = "import matplotlib.pyplot as plt\nplt.style.use('seaborn-whitegrid')"
    seen = _fresh(source, tmp_path)
    assert seen["loaded"] is False
    (message, evidence), *rest = seen["findings"]
    assert not rest and message.startswith("OSError: 'seaborn-whitegrid'")
    assert "read from the disk" in evidence[0]
    assert seen["outcome"] == "OSError"
    # What was read from the disk is the library matplotlib built when imported, and its version.
    names, version = seen["disk"]
    assert names == seen["library"] and "seaborn-v0_8-whitegrid" in names
    assert ".".join(map(str, version)) == ".".join(seen["version"].split(".")[:2])
    fine = _fresh("import matplotlib.pyplot as plt\nplt.style.use('seaborn-v0_8-whitegrid')", tmp_path)
    assert fine["findings"] == [] and fine["outcome"] == "ran"


def test_a_users_own_style_library_is_read_too(tmp_path: Path) -> None:
    (tmp_path / "mplconfig" / "stylelib").mkdir(parents=True)
    (tmp_path / "mplconfig" / "stylelib" / "house.mplstyle").write_text("axes.grid: True\n")
    seen = _fresh("import matplotlib.pyplot as plt\nplt.style.use('house')", tmp_path)
    assert "house" in seen["library"]
    assert seen["findings"] == [] and seen["outcome"] == "ran"


def test_a_matplotlib_the_import_system_would_not_load_from_its_package_is_not_judged(tmp_path: Path) -> None:
    """A module file named matplotlib earlier on sys.path shadows the package: nothing is known."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "matplotlib.py").write_text("raise ImportError('shadowed')\n")
    from crane_jupyterlab.kernel.probe import imports

    found = imports._package_on_path("matplotlib", [str(shadow)])
    assert found is None
    source = "import matplotlib.pyplot as plt\nplt.style.use('seaborn-whitegrid')"
    probe = _fresh_probe_only(source, tmp_path, [str(shadow)])
    assert probe == []


PROBE_ONLY = (
    "import json, sys\nsys.path[:0] = json.loads(sys.argv[2])\n"
    "from crane_jupyterlab.checks import check\nfrom crane_jupyterlab.kernel import probe\n"
    "print(json.dumps([f.message for f in check(sys.argv[1], probe.run(sys.argv[1], {}, namespace={}))]))"
)


def _fresh_probe_only(source: str, tmp_path: Path, path: list[str]) -> Any:
    return _run_script(PROBE_ONLY, source, tmp_path, path)


def test_package_dir_follows_the_file_finders_order(tmp_path: Path) -> None:
    from crane_jupyterlab.kernel.probe import imports

    portion, package, module = (tmp_path / n for n in ("portion", "package", "module"))
    (portion / "pkgx").mkdir(parents=True)  # a namespace portion: the search goes on
    (package / "pkgx").mkdir(parents=True)
    (package / "pkgx" / "__init__.py").write_text("")
    module.mkdir()
    (module / "pkgx.py").write_text("")
    assert imports._package_on_path("pkgx", [str(portion), str(package)]) == str(package / "pkgx")
    assert imports._package_on_path("pkgx", [str(module), str(package)]) is None
    assert imports._package_on_path("pkgx", [str(portion)]) is None
    assert imports.package_dir("os") is None  # loaded: not read from the disk
