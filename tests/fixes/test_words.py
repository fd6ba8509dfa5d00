"""What a crash's message says, read into clues (fixes/words.py), and the edits of a call's arguments
(fixes/edits.py) on the cell's own layout."""

from __future__ import annotations

from crane_jupyterlab.fixes.edits import Source, combine, drop_keyword, name_positional, rename_keyword
from crane_jupyterlab.fixes.words import Keyword, Missing, Named, Positional, clues, named


def test_the_replacement_is_read_only_where_the_message_names_it_as_one():
    assert named("AttributeError: `np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead.") == [
        Named("np.NaN", "np.nan", False)
    ]
    assert named("FutureWarning: DataFrame.applymap has been deprecated. Use DataFrame.map instead.") == [
        Named("DataFrame.applymap", "DataFrame.map", False)
    ]
    assert named("AttributeError: 'Foo' object has no attribute 'bar'. Did you mean: 'baz'?") == [
        Named("bar", "baz", False)
    ]
    assert named(
        "`np.add_newdoc` was removed in the NumPy 2.0 release. It's still available as `np.lib.add_newdoc`."
    )
    # Not a name to put in place of the old one: a value the library got, an expression, a context manager
    assert (
        named("The 'loss' parameter of SGDClassifier must be a str among {'log_loss'}. Got 'log' instead.")
        == []
    )
    assert (
        named("`np.cast` was removed in the NumPy 2.0 release. Use `np.asarray(arr, dtype=dtype)` instead.")
        == []
    )
    assert (
        named(
            "`np.geterrobj` was removed in the NumPy 2.0 release. "
            "Use the np.errstate context manager instead."
        )
        == []
    )
    assert (
        named(
            "`np.asfarray` was removed in the NumPy 2.0 release. "
            "Use `np.asarray` with a proper dtype instead."
        )
        == []
    )
    assert named("ValueError: use it instead") == []


def test_what_is_missing_refused_or_too_many():
    assert clues("AttributeError: module 'numpy' 2.4.6 has no attribute 'float' (line 1).") == [
        Missing("numpy", "float", "module")
    ]
    assert clues(
        "ImportError: cannot import name 'Imputer' from 'sklearn.preprocessing' (/x/__init__.py)"
    ) == [Missing("sklearn.preprocessing", "Imputer", "import")]
    assert clues("ModuleNotFoundError: No module named 'sklearn.cross_validation'") == [
        Missing("sklearn.cross_validation", "", "module-path")
    ]
    assert clues("TypeError: OneHotEncoder.__init__() got an unexpected keyword argument 'sparse'") == [
        Keyword("sparse", "OneHotEncoder", "OneHotEncoder.__init__")
    ]
    assert clues("ValueError: Argument(s) not recognized: {'lr': 0.01, 'decay': 0.1}") == [
        Keyword("lr", None),
        Keyword("decay", None),
    ]
    assert clues("TypeError: DataFrame.drop() takes from 1 to 2 positional arguments but 3 were given") == [
        Positional("drop", "DataFrame.drop")
    ]


def test_call_argument_edits_keep_the_layout():
    cell = "m = f(\n    a,\n    old=1,  # note\n    b=2,\n)\ng(old=3)\nh(x, old=4,)"
    src = Source.parse(cell)
    assert src is not None
    f, g, h = sorted(src.calls(None), key=src.start)
    assert combine(cell, [rename_keyword(src, f, "old", "new")]) == cell.replace("old=1", "new=1")
    assert (
        combine(cell, [drop_keyword(src, f, "old")])
        == "m = f(\n    a,  # note\n    b=2,\n)\ng(old=3)\nh(x, old=4,)"
    )
    assert (
        combine(cell, [drop_keyword(src, g, "old")])
        == "m = f(\n    a,\n    old=1,  # note\n    b=2,\n)\ng()\nh(x, old=4,)"
    )
    assert combine(cell, [drop_keyword(src, h, "old")]).endswith("h(x,)")


def test_an_argument_is_named_only_where_its_text_starts_the_argument():
    cell = "a = f(1, (2))\nb = g(x, y)"
    src = Source.parse(cell)
    assert src is not None
    f, g = sorted(src.calls(None), key=src.start)
    assert name_positional(src, f, 1, "axis") is None  # `(2)`: the node starts inside the parentheses
    assert combine(cell, [name_positional(src, g, 1, "axis")]) == "a = f(1, (2))\nb = g(x, axis=y)"
    assert Source.parse("!ls\nx = 1") is None  # IPython syntax: no tree, no call edits


def test_a_title_closes_the_call_its_change_opened():
    from crane_jupyterlab.fixes.edits import diff_title

    assert diff_title("x = data.fillna(method='ffill')", "x = data.ffill()") == (
        "data.fillna(method='ffill') → data.ffill()"
    )
    assert diff_title("a = df['Agee'].mean()", "a = df['Age'].mean()") == "df['Agee'] → df['Age']"
