"""The cell's inputs as a worker receives them (kernel/trial/transfer.py), packed and rebuilt in this
process: what is copied, how the notebook's own code comes back, what cannot be copied and why."""

from __future__ import annotations

import os
import textwrap
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from crane_jupyterlab.kernel.trial import state as process_state
from crane_jupyterlab.kernel.trial import transfer


def notebook(code: str) -> dict[str, Any]:
    """A namespace as a kernel's: `code` run in it, its functions' globals the namespace itself."""
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(textwrap.dedent(code), "<cell>", "exec"), ns)
    return ns


def roundtrip(cell: str, ns: dict[str, Any], **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pack what `cell` needs from `ns`, rebuild it into a fresh namespace; (that namespace, pack info)."""
    fd = os.memfd_create("test-pack")
    try:
        info = transfer.pack(fd, cell, ns, **kwargs)
        fresh: dict[str, Any] = {"__name__": "__main__"}
        transfer.rebuild(fd, fresh, info["package"])
    finally:
        os.close(fd)
    return fresh, info


def test_the_working_set_follows_the_notebooks_functions_transitively() -> None:
    ns = notebook(
        """
        import math
        K = 2
        unused = [1, 2]
        def g(x): return x * K + math.floor(0.5)
        def f(x): return g(x) + 1
        class Model:
            def predict(self, x): return f(x)
        m = Model()
        """
    )
    assert transfer.working_set("y = m.predict(3)\nz = Model", ns) == ["K", "Model", "f", "g", "m", "math"]
    assert "unused" not in transfer.working_set("f(1)", ns)


def test_notebook_functions_and_classes_come_back_by_value_sharing_the_namespace() -> None:
    ns = notebook(
        """
        K = 2
        def g(x): return x * K
        def counter():
            n = 0
            def step():
                nonlocal n
                n += 1
                return n
            return step
        class Base:
            def __init__(self, k): self.k = k
        class Model(Base):
            scale = 10
            def predict(self, x): return g(x) + self.k * self.scale
            @property
            def twice(self): return 2 * self.k
            @staticmethod
            def name(): return 'model'
            def __repr__(self): return f'Model({self.k})'
        m = Model(3)
        step = counter()
        step()
        """
    )
    cell = "a = m.predict(1)\nb = step()"
    fresh, info = roundtrip(cell, ns)
    m = fresh["m"]
    assert m.predict(1) == 2 + 30 and m.twice == 6 and m.name() == "model" and repr(m) == "Model(3)"
    assert type(m).__name__ == "Model" and isinstance(m, fresh["Base"]) if "Base" in fresh else True
    assert fresh["step"]() == 2  # the closure's state came along
    # Rebuilt functions read the worker's namespace, as the kernel's read the kernel's.
    fresh["K"] = 5
    assert m.predict(1) == 5 + 30
    assert m.predict.__func__.__globals__ is fresh
    assert info["names"] == sorted(info["names"]) and "m" in info["names"]


def test_a_recursive_function_and_a_class_using_super_rebuild() -> None:
    ns = notebook(
        """
        def fact(n): return 1 if n < 2 else n * fact(n - 1)
        class A:
            def hello(self): return 'a'
        class B(A):
            def hello(self): return 'b' + super().hello()
        b = B()
        """
    )
    fresh, _ = roundtrip("fact(5), b.hello()", ns)
    assert fresh["fact"](5) == 120 and fresh["b"].hello() == "ba"


def test_arrays_come_back_as_private_copies_of_the_pack() -> None:
    np = pytest.importorskip("numpy")
    ns = {"__name__": "__main__", "arr": np.arange(100_000, dtype="float64"), "np": np}
    original = ns["arr"].copy()
    fd = os.memfd_create("test-pack")
    try:
        info = transfer.pack(fd, "arr[:] = 0", ns)
        assert info["buffers"] >= 1 and info["inputs_bytes"] - 800_000 < 50_000  # out of band
        first: dict[str, Any] = {}
        transfer.rebuild(fd, first, info["package"])
        first["arr"][:] = 7  # a write in the worker
        second: dict[str, Any] = {}
        transfer.rebuild(fd, second, info["package"])
    finally:
        os.close(fd)
    assert (second["arr"] == original).all()  # reached neither the pack nor the kernel's array
    assert (ns["arr"] == original).all()


def test_a_frame_and_shared_references_survive() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    ns = {"__name__": "__main__", "df": df, "same": df, "pd": pd}
    fresh, _ = roundtrip("df.head(); same", ns)
    pd.testing.assert_frame_equal(fresh["df"], df)
    assert fresh["same"] is fresh["df"]


@pytest.mark.parametrize(
    ("code", "cell", "words"),
    [
        ("gen = (i for i in range(3))", "next(gen)", ["`gen`", "generator"]),
        ("import threading\nlock = threading.Lock()", "lock.acquire()", ["`lock`", "lock"]),
        (
            "fh = open(__file__ if '__file__' in dir() else '/dev/null')",
            "fh.read()",
            ["`fh`", "TextIOWrapper"],
        ),
        ("import enum\nclass Color(enum.Enum):\n    RED = 1\nc = Color.RED", "c", ["Color", "metaclass"]),
    ],
)
def test_what_cannot_be_copied_is_named_with_its_reason(code: str, cell: str, words: list[str]) -> None:
    ns = notebook(code)
    with pytest.raises(transfer.Uncopyable) as raised:
        roundtrip(cell, ns)
    message = str(raised.value)
    assert all(word in message for word in words), message


def test_inputs_over_the_cap_are_refused_with_their_sizes() -> None:
    np = pytest.importorskip("numpy")
    ns = {"__name__": "__main__", "big": np.zeros(3 * 1024 * 1024 // 8)}
    with pytest.raises(transfer.Uncopyable, match=r"inputs are 3\.0 MB; the worker copies at most 1\.0 MB"):
        roundtrip("big.sum()", ns, limit_mb=1)


def test_process_state_is_read_without_changing_it() -> None:
    np = pytest.importorskip("numpy")
    before = (np.random.get_state()[1].copy(), np.geterr())
    state = process_state.read()
    assert (np.random.get_state()[1] == before[0]).all() and np.geterr() == before[1]
    assert "numpy_random" in state and "warnings" in state


def test_reading_the_state_makes_no_keras_seed_generator() -> None:
    # Making Keras' global seed generator creates variables: a trace where the inputs are packed on the
    # kernel's own thread (CUDA), and seconds' worth of ops in a fork.
    pytest.importorskip("keras")
    from keras.src.backend.common import global_state
    from keras.src.random import seed_generator

    kept = global_state.get_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR)
    global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
    try:
        assert process_state.read().get("keras_seed") is None
        assert global_state.get_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR) is None
        made = seed_generator.global_seed_generator()
        assert process_state.read()["keras_seed"]["seed"] == made._initial_seed  # one there is read
    finally:
        global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, kept)


def test_the_shells_functions_are_never_copied_its_history_is() -> None:
    ns = {"__name__": "__main__", "In": ["x"], "Out": {}, "get_ipython": threading.get_ident, "x": 1}
    assert transfer.working_set("print(In, Out, x)\nget_ipython()", ns) == ["In", "Out", "x"]

    shell = SimpleNamespace(user_ns_hidden={"open": open, "_": None})
    assert transfer.shell_names({"open": open, "_": None}, shell) == ["open"]  # a function, not a value


def test_only_the_modules_beside_the_notebook_that_the_cell_imports_are_imported_again(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "beside_a.py").write_text("A = 1\n")
    (tmp_path / "beside_b.py").write_text("B = 2\n")
    (tmp_path / "beside_pkg").mkdir()
    (tmp_path / "beside_pkg" / "__init__.py").write_text("")
    (tmp_path / "beside_pkg" / "part.py").write_text("def f():\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("beside_a", "beside_b", "beside_pkg", "beside_pkg.part"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    import beside_a  # noqa: F401
    import beside_b  # noqa: F401
    import beside_pkg.part  # noqa: F401

    cell = "import json, pytest\nimport beside_a\nfrom beside_pkg import part\nfrom not_imported import x"
    # beside_b was imported by the kernel but not by the cell; json is the stdlib; pytest is installed
    assert process_state.local_modules(cell) == ["beside_a", "beside_pkg", "beside_pkg.part"]
    assert process_state.local_modules("def broken(:") == []


@pytest.mark.parametrize(
    ("cell", "names"),
    [
        # bound before anything reads it: the kernel's old value (maybe one no worker can take) stays
        ("train_set = window(series)\nmodel.fit(train_set)", ["model", "series", "window"]),
        ("x = x + 1\ny = x", ["x"]),  # read by its own assignment
        ("def f():\n    return t\nf()\nt = 1", ["f", "t"]),  # read (by f) before it is bound
        ("if c:\n    d = 1\nprint(d)", ["c", "d", "print"]),  # bound only on one path
    ],
)
def test_the_working_set_leaves_out_what_the_cell_binds_first(cell: str, names: list[str]) -> None:
    assert sorted(transfer.cell_names(cell)) == names
