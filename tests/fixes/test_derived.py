"""Fix candidates derived from the crash's own message and the installed library (fixes/derived.py), on
the real errors of the installed libraries: each test runs the old code to get the library's real
message and line, reads the kernel's facts with the probe as the server does, asserts the candidate, and
runs the edited cell (a trial does that before the server offers it: tests/server/test_handlers_fixes.py).
"""

from __future__ import annotations

import traceback
import warnings
from typing import Any

import pytest

from crane_jupyterlab.fixes import Candidate, Crash, candidates
from crane_jupyterlab.fixes.candidates import CONVENTIONAL
from crane_jupyterlab.fixes.derived import Derivation
from crane_jupyterlab.fixes.library import Library
from crane_jupyterlab.kernel import probe

CELL = "<cell>"


def _run(code: str, ns: dict[str, Any]) -> BaseException | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, CELL, "exec"), ns)
    except Exception as exc:
        return exc
    return None


class Case:
    """A kernel that ran `setup`, and `cell`'s real crash on it."""

    def __init__(self, setup: str, cell: str) -> None:
        self.setup, self.cell = setup, cell
        self.ns: dict[str, Any] = {"__name__": "__main__"}
        assert _run(setup, self.ns) is None
        self.runtime = probe.run(cell, {}, dict(self.ns))
        exc = _run(cell, dict(self.ns))
        assert exc is not None, "the old code runs on the installed library"
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == CELL]
        self.crash = Crash(f"{type(exc).__name__}: {exc}", frames[-1].lineno if frames else None)

    def found(self, limit: int = 3) -> list[Candidate]:
        return candidates(self.cell, self.runtime, [self.crash], limit=limit, executed=[self.setup])

    def derivation(self) -> Derivation:
        library = Library(self.runtime, [self.setup, self.cell])
        return Derivation(self.cell, [self.crash], library, CONVENTIONAL)

    def runs(self, candidate: Candidate) -> bool:
        return _run(candidate.source, dict(self.ns)) is None


def only(found: list[Candidate], origin: str) -> Candidate:
    picked = [c for c in found if c.origin == origin]
    assert picked, [(c.origin, c.title) for c in found]
    return picked[0]


# -- a replacement the message names ---------------------------------------------------------------


def test_numpy_names_the_replacement_of_a_removed_constant_and_of_an_alias_of_a_builtin():
    pytest.importorskip("numpy")
    case = Case("import numpy as np", "x = np.zeros(2) + np.NaN")
    assert "Use `np.nan` instead" in case.crash.message
    first = case.found()[0]
    assert (first.origin, first.title, first.source) == (
        "message",
        "np.NaN → np.nan",
        "x = np.zeros(2) + np.nan",
    )
    assert case.runs(first)

    case = Case("import numpy as np", "a = np.array([1, 2], dtype=np.float)\nb = np.float64(1)")
    first = case.found()[0]
    # "use `float` by itself": the whole `np.float` becomes the builtin; np.float64 is left alone
    assert (first.origin, first.source) == ("message", "a = np.array([1, 2], dtype=float)\nb = np.float64(1)")
    assert case.runs(first)


def test_the_module_own_text_is_read_when_the_crash_message_is_the_checks_short_one():
    pytest.importorskip("numpy")
    case = Case("import numpy as np", "x = np.int(3.7)")
    # The checks say only this much; NumPy's __getattr__ says more, and is asked here.
    short = Crash("AttributeError: module 'numpy' 2.4.6 has no attribute 'int' (line 1).", 1)
    found = candidates(case.cell, {"objects": [], "modules": case.runtime["modules"]}, [short])
    assert (found[0].origin, found[0].source) == ("message", "x = int(3.7)")


def test_torch_names_the_replacement_of_a_removed_function_and_warns_of_its_differences():
    pytest.importorskip("torch")
    case = Case("import torch", "r = torch.matrix_rank(torch.eye(3))")
    # "Please use the `torch.linalg.matrix_rank` function instead": the old name is the failing call's
    first = case.found()[0]
    assert (first.origin, first.title) == ("message", "torch.matrix_rank → torch.linalg.matrix_rank")
    assert first.source == "r = torch.linalg.matrix_rank(torch.eye(3))" and case.runs(first)

    case = Case("import torch", "x = torch.lstsq(torch.eye(2), torch.eye(2))")
    first = case.found()[0]
    assert first.source == "x = torch.linalg.lstsq(torch.eye(2), torch.eye(2))" and case.runs(first)
    # "has reversed arguments": it runs, and the title says it may compute something else
    assert "may change what the cell computes" in first.title


# -- a keyword the signature refuses ----------------------------------------------------------------


def test_a_refused_keyword_is_renamed_to_the_close_one_of_the_signature():
    pytest.importorskip("sklearn")
    case = Case("from sklearn.manifold import TSNE", "tsne = TSNE(n_components=2, n_iter=300)")
    first = case.found()[0]
    assert (first.origin, first.title) == ("signature", "TSNE(n_iter=…) → TSNE(max_iter=…)")
    assert first.source == "tsne = TSNE(n_components=2, max_iter=300)" and case.runs(first)

    # What the hand-written table knows (sparse -> sparse_output) the signature finds by itself.
    case = Case("from sklearn.preprocessing import OneHotEncoder", "enc = OneHotEncoder(sparse=False)")
    [renamed, *_] = case.derivation().keywords()
    assert renamed.source == "enc = OneHotEncoder(sparse_output=False)" and case.runs(renamed)


def test_a_keyword_of_a_method_of_an_object_the_cell_makes_itself():
    pytest.importorskip("pandas")
    # No probe entry for `df` (the cell binds it): the message's qualname (NDFrame.to_csv) and the
    # object's class are read in this process, which has the kernel's pandas.
    cell = (
        "df = pd.DataFrame({'a': [1, 2]})\ntext = df.to_csv(\n    index=False,\n    line_terminator='\\n',\n)"
    )
    case = Case("import pandas as pd", cell)
    first = case.found()[0]
    assert first.title == "df.to_csv(line_terminator=…) → df.to_csv(lineterminator=…)"
    assert first.line == 4 and case.runs(first)


def test_torch_and_keras_keywords():
    pytest.importorskip("torch")
    case = Case("import torch", "dl = torch.utils.data.DataLoader([1, 2, 3], batch_size=2, numworkers=0)")
    first = case.found()[0]
    assert first.source == "dl = torch.utils.data.DataLoader([1, 2, 3], batch_size=2, num_workers=0)"
    assert case.runs(first)


def test_keras_unrecognized_keyword_arguments():
    pytest.importorskip("keras")
    case = Case("import keras", "layer = keras.layers.Dense(4, activaton='relu')")
    assert "Unrecognized keyword arguments passed to Dense" in case.crash.message
    first = case.found()[0]
    assert first.source == "layer = keras.layers.Dense(4, activation='relu')" and case.runs(first)


def test_a_removed_keyword_is_dropped_last_and_says_it_may_change_the_result():
    pytest.importorskip("sklearn")
    case = Case(
        "from sklearn.linear_model import LinearRegression",
        "model = LinearRegression(\n    normalize=True,\n    fit_intercept=True,\n)",
    )
    [drop] = case.found()
    assert (
        drop.origin == "signature" and drop.source == "model = LinearRegression(\n    fit_intercept=True,\n)"
    )
    assert drop.title == (
        "drop `normalize=True` from LinearRegression() (not accepted any more; "
        "may change what the cell computes)"
    )
    assert case.runs(drop)
    # A message naming no callee (scikit-learn's parameter validation): the call that passes it.
    case = Case(
        "from sklearn.metrics import mean_squared_error",
        "rmse = mean_squared_error([1, 2], [1, 3], squared=False)",
    )
    assert case.crash.message == "TypeError: got an unexpected keyword argument 'squared'"
    [drop] = case.found()
    assert drop.source == "rmse = mean_squared_error([1, 2], [1, 3])" and case.runs(drop)
    assert "may change what the cell computes" in drop.title


# -- positional arguments the signature takes by keyword only -----------------------------------------


def test_positional_arguments_made_keyword_only_are_passed_by_keyword():
    pytest.importorskip("pandas")
    setup = "import pandas as pd\ndf = pd.DataFrame({'a': [1], 'b': [2]})\ns = pd.Series([1])"
    case = Case(setup, "d = df.drop('a', 1)")
    [first] = case.found()
    assert (first.origin, first.title) == ("signature", "df.drop(…, 1) → df.drop(…, axis=1)")
    assert first.source == "d = df.drop('a', axis=1)" and case.runs(first)

    case = Case(setup, "both = pd.concat([s, s], 1)")
    assert case.found()[0].source == "both = pd.concat([s, s], axis=1)"


def test_scikit_learn_estimators_and_functions_made_keyword_only():
    pytest.importorskip("sklearn")
    case = Case("from sklearn.model_selection import KFold", "cv = KFold(5, True)")
    [first] = case.found()
    assert first.title == "KFold(…, True) → KFold(…, shuffle=True)" and case.runs(first)

    case = Case("from sklearn.svm import SVC", "clf = SVC(1.0, 'linear')")
    [first] = case.found()
    assert first.source == "clf = SVC(C=1.0, kernel='linear')" and case.runs(first)
    assert first.title.endswith("(keywords in the signature's order: check them)")


# -- a name a module, an import or a class lacks ------------------------------------------------------


def test_a_name_the_module_lacks_takes_its_closest_one():
    pytest.importorskip("numpy")
    case = Case("import numpy as np", "total = np.product([1, 2, 3])")
    assert case.crash.message == "AttributeError: module 'numpy' has no attribute 'product'"
    first = case.found()[0]
    assert (first.origin, first.source) == ("close-name", "total = np.prod([1, 2, 3])") and case.runs(first)
    case = Case("import numpy as np", "area = np.trapz([1, 2, 3])")
    first = case.found()[0]
    assert first.source == "area = np.trapezoid([1, 2, 3])" and case.runs(first)


def test_an_import_of_a_name_the_module_lacks_or_that_moved():
    pytest.importorskip("sklearn")
    case = Case(
        "", "from sklearn.metrics import mean_absolute_percent_error\nm = mean_absolute_percent_error"
    )
    first = case.found()[0]
    assert first.source == (
        "from sklearn.metrics import mean_absolute_percentage_error\nm = mean_absolute_percentage_error"
    )
    assert first.title.endswith("(the closest name in sklearn.metrics)") and case.runs(first)

    case = Case("", "from sklearn.cross_validation import train_test_split, cross_val_score")
    [first] = case.found()
    assert first.origin == "import" and case.runs(first)
    assert first.source == "from sklearn.model_selection import train_test_split, cross_val_score"

    pytest.importorskip("pandas")
    case = Case("", "from pandas.tools.plotting import scatter_matrix")
    [first] = case.found()
    assert first.source == "from pandas.plotting import scatter_matrix" and case.runs(first)


def test_an_attribute_the_class_of_an_object_the_cell_makes_lacks():
    pytest.importorskip("pandas")
    case = Case("import pandas as pd", "s = pd.Series([1, 2])\nfor k, v in s.iteritems():\n    print(k, v)")
    # The class's closest public name, read in this process (the probe never saw `s`)
    [close, *_] = case.derivation().names()
    assert close.source == "s = pd.Series([1, 2])\nfor k, v in s.items():\n    print(k, v)" and case.runs(
        close
    )
    # DataFrame.append is gone with no close public name (never the private `_append`): the message names
    # nothing, and the table of what no message names has pandas' own advice, pd.concat
    case = Case("import pandas as pd\ndf = pd.DataFrame({'a': [1]})", "df = df.append(df, ignore_index=True)")
    found = case.found(limit=10)
    assert all("_append" not in c.source for c in found)
    [concat] = [c for c in found if case.runs(c)]
    assert (concat.origin, concat.source) == ("renamed-api", "df = pd.concat([df, df], ignore_index=True)")
    # pd.value_counts: the message names nothing and pandas has no close name: nothing is proposed
    case = Case("import pandas as pd\ns = pd.Series([1, 1])", "counts = pd.value_counts(s)")
    assert case.found() == []


def test_a_name_the_module_lacks_that_another_module_of_the_package_has_under_a_name_of_the_cell():
    pytest.importorskip("matplotlib")
    setup = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt"
    cell = "plt.scatter([1, 2], [1, 2], c=[0, 1],\n            cmap=plt.cm.get_cmap('viridis', 10))"
    case = Case(setup, cell)
    assert case.crash.message == "AttributeError: module 'matplotlib.cm' has no attribute 'get_cmap'"
    first = case.found()[0]
    assert first.title == "plt.cm.get_cmap → plt.get_cmap (get_cmap of matplotlib.pyplot)"
    assert first.source == cell.replace("plt.cm.get_cmap", "plt.get_cmap") and case.runs(first)
