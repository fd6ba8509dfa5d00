"""matplotlib style names `style.use`/`style.context` cannot load (checks/rules/styles.py), against the
installed matplotlib through the real probe; every claim is confirmed by running the cell."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import run
from crane_jupyterlab.models import Finding


def findings_for(source: str, ns: dict[str, Any]) -> list[Finding]:
    return check(source, run.run(source, {}, namespace=ns))


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


def test_no_claim_without_matplotlib_style_loaded() -> None:
    """The probe reads the library only from a loaded matplotlib.style: another object's `use` method
    with a kernel that never imported matplotlib gives no entry."""
    result = run.run("import matplotlib.pyplot as plt\nplt.style.use('seaborn')", {}, namespace={})
    loaded = any(o["expr"].startswith("<matplotlib style") for o in result["objects"])
    import sys

    assert loaded == ("matplotlib.style" in sys.modules)
