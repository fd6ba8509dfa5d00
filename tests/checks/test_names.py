"""Undefined names and syntax errors: the AST side of the deterministic checks."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest

from crane_jupyterlab.checks import check


def probe(undefined: list[str] = (), modules: tuple[str, ...] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """A minimal probe result: the kernel lacks `undefined` and has these module aliases."""
    return {
        "python": ".".join(map(str, sys.version_info[:3])),
        "syntax_error": None,
        "undefined": list(undefined),
        "modules": [{"name": m, "module": m, "version": "1.0"} for m in modules],
        "objects": [],
    }


def rules(source: str, runtime: dict[str, Any]) -> list[str]:
    return [f.rule for f in check(source, runtime)]


def test_read_of_undefined_name_is_a_crash() -> None:
    findings = check(
        "reviews = load()\nreviews['clean'] = reviews['text'].apply(clean_text)",
        probe(["load", "clean_text"]),
    )
    assert findings[0].rule == "undefined-name"
    assert "load" in findings[0].message and findings[0].line == 1


def test_first_statement_name_then_user_call_barrier() -> None:
    # After a call into unknown code, a later read may be defined by that code (global statement).
    source = "setup()\nprint(model)"
    assert [f.message for f in check(source, probe(["model"]))] == []


@pytest.mark.parametrize(
    "source",
    [
        "if flag:\n    x = 1\nprint(x)",  # bound in one branch only
        "if flag:\n    print(x)",  # read in a branch
        "try:\n    print(x)\nexcept NameError:\n    pass",
        "try:\n    print(x)\nexcept Exception:\n    pass",
        "try:\n    print(x)\nexcept:\n    pass",
        "def f():\n    return x\n",  # function bodies do not run at definition
        "g = lambda: x",
        "y = [x for _ in items]",  # comprehension body runs only if items is non-empty
        "while flag:\n    print(x)",
        "for i in items:\n    print(x)",
        "flag and x",
        "a if flag else x",
        "from helpers import *\nprint(x)",  # a star import may bind it
        "exec('x = 1')\nprint(x)",
        "get_ipython().run_line_magic('run', 'setup.py')\nprint(x)",
        "with suppress(NameError):\n    print(x)",  # a context manager may swallow the error
    ],
)
def test_uncertain_reads_stay_silent(source: str) -> None:
    runtime = probe(["x"])  # flag, items, suppress, helpers: defined in the kernel
    assert [f.message for f in check(source, runtime) if "'x'" in f.message] == []


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as x\nx.zeros(3)",
        "x = 1\nprint(x)",
        "(x := 3)\nprint(x)",
        "for x in range(3):\n    pass\nprint(x)",
        "with open('f') as x:\n    pass\nx.read()",
        "class x:\n    pass\nprint(x)",
        "def x():\n    return 1\nx()",
        "try:\n    pass\nexcept Exception as x:\n    pass\nprint(x)",  # bound only if raised: uncertain
        "match 1:\n    case x:\n        pass\nprint(x)",
        "x, y = 1, 2\nprint(x)",
        "[x for x in range(3)]\n",  # the comprehension's own variable
    ],
)
def test_bindings_in_the_cell_are_respected(source: str) -> None:
    assert [f for f in check(source, probe(["x"])) if "'x'" in f.message] == []


def test_reads_that_always_run_are_found() -> None:
    for source in (
        "class A:\n    v = x",  # class bodies run at definition
        "def f(a=x):\n    pass",  # defaults too
        "y = [i for i in x]",  # the first iterable is evaluated in the enclosing scope
        "with open('f'):\n    print(x)",
        "try:\n    print(x)\nexcept ValueError:\n    pass",
        "for i in range(3):\n    print(x)",  # range(3) runs the body at least once
        "x += 1",
        "del x",
        "print(1)\nx.fit()",
    ):
        assert rules(source, probe(["x"])) == ["undefined-name"], source


def test_loop_body_after_a_possible_continue_is_uncertain() -> None:
    source = "for i in range(3):\n    if i:\n        continue\n    print(x)"
    assert rules(source, probe(["x"])) == []


def test_del_makes_a_name_undefined_even_if_the_kernel_has_it() -> None:
    findings = check("x = 1\ndel x\nprint(x)", probe([]))
    assert [f.rule for f in findings] == ["undefined-name"] and findings[0].line == 3


def test_names_the_kernel_defines_are_fine() -> None:
    assert check("print(df)", probe([])) == []


def test_magics_are_not_syntax_errors_and_names_after_them_count() -> None:
    source = "%matplotlib inline\n!pip list\nprint(x)"
    assert rules(source, probe(["x"])) == ["undefined-name"]


@pytest.mark.parametrize(
    ("source", "line"),
    [("x = (1,\ny = 2", 1), ("def f(:\n    pass", 1), ("print(1)\nreturn 2", 2), ("print(1)\nbreak", 2)],
)
def test_syntax_errors(source: str, line: int) -> None:
    findings = check(source, probe([]))
    assert [f.rule for f in findings] == ["syntax-error"]
    assert findings[0].line == line and "SyntaxError" in findings[0].message


def test_top_level_await_is_valid_in_ipython() -> None:
    assert check("import asyncio\nawait asyncio.sleep(0)", probe([])) == []


def test_syntax_error_from_another_python_version_needs_the_kernels_agreement() -> None:
    runtime = probe([])
    runtime["python"] = "2.7.18"
    assert check("print 'hello'", runtime) == []
    runtime["syntax_error"] = {"line": 1, "col": 7, "msg": "invalid syntax"}
    assert [f.rule for f in check("print 'hello'", runtime)] == ["syntax-error"]


def test_bad_input_is_rejected_clearly() -> None:
    with pytest.raises(ValueError, match="source"):
        check(None, {})  # type: ignore[arg-type]


def test_malformed_runtime_is_treated_as_no_information() -> None:
    assert check("print(x)", {"undefined": "x", "objects": [1, None, {"expr": 3}]}) == []
    assert check("print(x)", None) == []


def test_invalid_escape_in_the_cell_warns_nothing_on_the_server() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rules('pattern = "\\d+ rows"\nprint(pattern)', probe()) == []
    assert [str(w.message) for w in caught] == []


# ----- reads after calls into notebook code ---------------------------------------------------------
_NOTEBOOK = """
import numpy as np
class Net:
    def __init__(self, n):
        self.w = np.zeros(n)
        self.act = relu
    def fit(self, X):
        return self.act(X)
def relu(x):
    return max(x, 0)
def binder():
    global history
    history = 1
class Trainer:
    def run(self):
        binder()
def dynamic():
    globals()["history"] = 1
def uses_setattr(obj):
    setattr(obj, "a", 1)
def imports_sys():
    import sys
    return sys
flag = True
net = Net(3)
"""


def _kernel() -> dict[str, Any]:
    from crane_jupyterlab.kernel.probe import run

    ns: dict[str, Any] = {"__name__": "__main__"}  # as in a kernel: classes are __main__'s
    exec(compile(_NOTEBOOK, "<ipython-input-1>", "exec"), ns)
    return {"run": run, "ns": ns}


@pytest.mark.parametrize(
    "source",
    [
        "model = Net(3)\nmodel.fit(1)\nprint(history)",  # the Keras-corpus shape: a class, then the read
        "Net(3).fit(2)\nprint(history)",
        "net.fit(2)\nprint(history)",
        "relu(1)\nprint(history)",
        "y = relu(net)\nprint(history)",
    ],
)
def test_call_into_notebook_code_that_binds_nothing_keeps_the_read_certain(source: str) -> None:
    k = _kernel()
    findings = check(source, k["run"](source, None, k["ns"]))
    assert [f.rule for f in findings] == ["undefined-name"]
    assert "'history'" in findings[0].message


@pytest.mark.parametrize(
    "source",
    [
        "binder()\nprint(history)",  # `global history` assigned
        "Trainer().run()\nprint(history)",  # transitively, through a method
        "t = Trainer()\nt.run()\nprint(history)",
        "dynamic()\nprint(history)",  # globals()
        "uses_setattr(net)\nprint(history)",  # setattr
        "imports_sys()\nprint(history)",  # an import of sys
        "m = net\nif flag:\n    m = binder\nm()\nprint(history)",  # one path holds the binder
        "m = net\ntry:\n    m = binder\nexcept Exception:\n    pass\nm()\nprint(history)",
        "f = relu\nfor i in range(2):\n    f()\n    f = binder\nprint(history)",  # a later iteration
        "net.act = binder\nnet.fit(1)\nprint(history)",  # the object now reaches the binder
        "fs = [relu]\nfs.append(binder)\nfs[1]()\nprint(history)",
        "net.act = binder\nnet.fit(1)\nprint(history)",
        "pipe = np.zeros(3)\npipe.func = binder\npipe.sum()\nprint(history)",  # a library object holding it
        "import sys\nsys.modules['__main__'].__dict__.update(history=1)\nprint(history)",
        "from helpers import *\nrelu(1)\nprint(history)",
    ],
)
def test_call_that_may_bind_the_name_leaves_the_read_uncertain(source: str) -> None:
    k = _kernel()
    findings = check(source, k["run"](source, None, k["ns"]))
    assert [f.message for f in findings if "'history'" in f.message] == []


def test_probe_reports_the_globals_notebook_code_may_bind() -> None:
    from crane_jupyterlab.kernel.probe.binds import global_binds

    ns = _kernel()["ns"]
    assert global_binds(ns["Net"], ns) == []
    assert global_binds(ns["net"], ns) == []
    assert global_binds(ns["binder"], ns) == ["history"]
    assert global_binds(ns["Trainer"], ns) == ["history"]
    assert global_binds(ns["dynamic"], ns) is None
    assert global_binds(ns["uses_setattr"], ns) is None
    assert global_binds(ns["imports_sys"], ns) is None
    assert global_binds([ns["relu"], {"k": ns["binder"]}], ns) == ["history"]
    import functools

    assert global_binds(functools.partial(ns["binder"]), ns) == ["history"]


def test_the_walk_runs_only_for_a_cell_that_reads_a_name_the_kernel_lacks() -> None:
    """What a call may bind matters only to a read of an undefined name: other cells skip the walk (its
    cost showed in `crane-bench speed`)."""
    k = _kernel()

    def binds(source: str) -> list[Any]:
        result = k["run"](source, None, k["ns"])
        return [f for o in result["objects"] for f in o["facts"] if f["key"] == "binds_globals"]

    assert binds("net.fit(1)\nprint(net)") == []
    assert binds("net.fit(1)\nprint(history)") != []
