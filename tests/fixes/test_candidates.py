"""Fix candidates from the facts the probe read: edits on the cell's tokens, never inside a string or a
comment; each a proposal until a trial runs it (tests/server/test_fixes.py)."""

from __future__ import annotations

from crane_jupyterlab.fixes import candidates, notes


def frame(missing: str, close: list[str], kind: str = "missing column") -> dict:
    child = {
        "expr": missing,
        "type": kind,
        "facts": [{"cat": "S", "key": "close", "value": close}],
        "children": [],
        "missing": True,
    }
    return {
        "objects": [
            {"expr": "df", "type": "pandas.DataFrame", "facts": [], "children": [child], "missing": False}
        ],
        "undefined": [],
    }


def test_a_missing_column_with_a_close_one_is_replaced_in_every_subscript_quotes_kept():
    cell = 'a = df["Agee"].mean()\n# df["Agee"] stays in a comment\nb = df[\'Agee\'].max()\nprint("Agee")'
    [c] = candidates(cell, frame("df['Agee']", ["Age"]), [])
    assert c.origin == "close-name" and c.line == 1
    assert c.title == "df['Agee'] → df['Age']"
    assert (
        c.source
        == 'a = df["Age"].mean()\n# df["Agee"] stays in a comment\nb = df[\'Age\'].max()\nprint("Agee")'
    )


def test_a_missing_attribute_and_an_undefined_variable_take_their_close_names():
    runtime = {
        "objects": [
            {
                "expr": "model",
                "type": "sklearn.LinearRegression",
                "facts": [],
                "missing": False,
                "children": [
                    {
                        "expr": "model.fitt",
                        "type": "LinearRegression",
                        "missing": True,
                        "facts": [{"key": "close", "value": ["fit"]}],
                        "children": [],
                    }
                ],
            }
        ],
        "undefined": ["X_trian"],
        "undefined_close": {"X_trian": ["X_train"]},
    }
    cell = "model.fitt(X_trian, y)\nlabel = 'X_trian'\nf(X_trian=1)"
    found = candidates(cell, runtime, [])
    assert [(c.title, c.source) for c in found] == [
        ("model.fitt → model.fit", "model.fit(X_trian, y)\nlabel = 'X_trian'\nf(X_trian=1)"),
        ("X_trian → X_train", "model.fitt(X_train, y)\nlabel = 'X_trian'\nf(X_trian=1)"),
    ]


def test_a_module_read_under_its_usual_alias_gets_its_import():
    runtime = {"objects": [], "undefined": ["np", "mystery"]}
    [c] = candidates("x = np.arange(3)", runtime, [])
    assert (c.origin, c.title, c.source) == (
        "import",
        "add `import numpy as np`",
        "import numpy as np\nx = np.arange(3)",
    )
    # A cell magic stays first: no import is put above it.
    assert candidates("%%time\nx = np.arange(3)", runtime, []) == []


def test_renamed_apis_come_from_the_crash_message_and_duplicates_are_dropped():
    cell = "for k, v in df.iteritems():\n    pass"
    message = "AttributeError: 'DataFrame' object has no attribute 'iteritems'"
    [c] = candidates(cell, {"objects": []}, [message, message])
    assert (c.origin, c.title, c.line) == ("renamed-api", "df.iteritems → df.items", 1)
    assert c.source == "for k, v in df.items():\n    pass"


def test_at_most_the_limit_and_nothing_for_code_that_does_not_tokenize():
    runtime = frame("df['Agee']", ["Age"])
    runtime["undefined"] = ["np", "pd", "plt"]
    assert len(candidates("df['Agee'] + np.pi + pd.NA + plt", runtime, [], limit=3)) == 3
    assert candidates("df['Agee'\n!ls", runtime | {"undefined": []}, []) == []


def test_no_close_name_for_a_cascade_or_an_unfitted_attribute():
    # `genres` is missing because the cell that binds it failed: `all_genres` would run and be wrong.
    runtime = {"objects": [], "undefined": ["genres"], "undefined_close": {"genres": ["all_genres"]}}
    cell = "counts = genres.value_counts()"
    assert [c.title for c in candidates(cell, runtime, [])] == ["genres → all_genres"]
    executed = ["all_genres = []\nfor x in movies.genres:\n    genres = x.split('|')"]
    assert candidates(cell, runtime, [], executed=executed) == []
    # `best_params_` is missing because the search was not fitted, not misspelt.
    unfitted = {
        "objects": [
            {
                "expr": "grid",
                "type": "GridSearchCV",
                "facts": [],
                "missing": False,
                "children": [
                    {
                        "expr": "grid.best_params_",
                        "type": "GridSearchCV",
                        "missing": True,
                        "facts": [{"key": "close", "value": ["set_params"]}],
                        "children": [],
                    }
                ],
            }
        ],
        "undefined": [],
    }
    assert candidates("print(grid.best_params_)", unfitted, []) == []


def test_a_module_the_probe_found_importable_gets_a_plain_import():
    runtime = {"objects": [], "undefined": ["mglearn"], "undefined_importable": ["mglearn"]}
    [c] = candidates("mglearn.plots.plot_animal_tree()", runtime, [])
    assert (c.origin, c.source) == ("import", "import mglearn\nmglearn.plots.plot_animal_tree()")
    assert candidates("mglearn.plots.plot_animal_tree()", {"objects": [], "undefined": ["mglearn"]}, []) == []


def test_notes_are_the_probe_messages_of_what_the_kernel_lacks():
    note = "`np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead."
    runtime = {
        "objects": [
            {
                "expr": "np",
                "missing": False,
                "facts": [{"key": "note", "value": "a module"}],
                "children": [
                    {
                        "expr": "np.NaN",
                        "missing": True,
                        "facts": [{"key": "note", "value": note}],
                        "children": [],
                    }
                ],
            }
        ]
    }
    assert notes(runtime) == [note]
