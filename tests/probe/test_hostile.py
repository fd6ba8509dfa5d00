"""Hostile objects: the probe must describe (or skip) them without running a line of their code, and
`run.run` must return a result whatever they raise, BaseException subclasses included.

Every hook of every hostile object records that it ran in `RAN` and then raises the exception under
test (SystemExit, KeyboardInterrupt, GeneratorExit, a custom BaseException, RuntimeError). The harness
runs the probe on many cells that use the object in many ways, with and without +D docs, and asserts
that nothing was recorded, nothing escaped, and the result is plain JSON. A hook that the probe is
*allowed* to run does not exist here: user code is never trusted.
"""

from __future__ import annotations

import functools
import json
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest

from crane_jupyterlab.kernel import probe

RAN: list[str] = []


class Custom(BaseException):
    """Not an Exception: `except Exception` does not stop it."""


EXCEPTIONS: tuple[type[BaseException], ...] = (
    SystemExit,
    KeyboardInterrupt,
    GeneratorExit,
    Custom,
    RuntimeError,
)


def hook(name: str, exc: type[BaseException]) -> Callable[..., Any]:
    """A function that records `name` and raises `exc`, whatever it is called with."""

    def ran(*args: Any, **kwargs: Any) -> Any:
        RAN.append(name)
        raise exc(name)

    return ran


def hostile_property(name: str, exc: type[BaseException]) -> property:
    return property(hook(name, exc))


# Dunders a careless inspector would call on an instance.
INSTANCE_DUNDERS = (
    "__repr__", "__str__", "__format__", "__len__", "__iter__", "__getitem__", "__contains__", "__eq__",
    "__ne__", "__lt__", "__bool__", "__hash__", "__call__", "__getattr__", "__dir__", "__sizeof__",
    "__array__", "__array_interface__", "__enter__", "__exit__", "__index__", "__int__", "__float__",
    "__fspath__", "__add__", "__radd__", "__matmul__", "__reduce_ex__", "__instancecheck__",
    "__subclasscheck__", "__mro_entries__", "__signature__", "__wrapped__", "__len_hint__", "__next__",
    "__init_subclass__", "__missing__", "__copy__", "__deepcopy__", "__getstate__", "__class_getitem__",
)  # fmt: skip


def _namespace(exc: type[BaseException], names: tuple[str, ...] = INSTANCE_DUNDERS) -> dict[str, Any]:
    ns: dict[str, Any] = {name: hook(name, exc) for name in names}
    if "__hash__" in ns:
        ns["__hash__"] = hook("__hash__", exc)
    return ns


# --- the hostile objects ------------------------------------------------------------------------------


def meta_getattr(exc: type[BaseException]) -> Any:
    """The reported bug: a class whose metaclass defines __getattr__ (binding a call looked it up)."""
    meta = type("Meta", (type,), {"__getattr__": hook("Meta.__getattr__", exc)})

    def __init__(self: Any, a: int, b: int = 2) -> None:
        RAN.append("__init__")

    return meta("Model", (), {"__init__": __init__, "fit": lambda self, X: None})


def meta_getattribute(exc: type[BaseException]) -> Any:
    meta = type(
        "Meta",
        (type,),
        {
            "__getattribute__": hook("Meta.__getattribute__", exc),
            "__getattr__": hook("Meta.__getattr__", exc),
            "__repr__": hook("Meta.__repr__", exc),
            "__call__": hook("Meta.__call__", exc),
            "__instancecheck__": hook("Meta.__instancecheck__", exc),
            "__subclasscheck__": hook("Meta.__subclasscheck__", exc),
            "__hash__": hook("Meta.__hash__", exc),
            "__eq__": hook("Meta.__eq__", exc),
            "__dir__": hook("Meta.__dir__", exc),
            "__len__": hook("Meta.__len__", exc),
            "__iter__": hook("Meta.__iter__", exc),
            "__getitem__": hook("Meta.__getitem__", exc),
            "__signature__": hostile_property("Meta.__signature__", exc),
            "__module__": "keras",  # claims to be a library's metaclass
        },
    )
    return meta("Layer", (), {"__init__": lambda self, units: None})


def instance_of_meta(exc: type[BaseException]) -> Any:
    return object.__new__(meta_getattr(exc))


def every_dunder(exc: type[BaseException]) -> Any:
    cls = type("Everything", (), _namespace(exc))
    obj = object.__new__(cls)
    object.__setattr__(obj, "size", 3)
    return obj


def getattribute(exc: type[BaseException]) -> Any:
    cls = type("Sneaky", (), {"__getattribute__": hook("__getattribute__", exc), "method": lambda self: 1})
    return object.__new__(cls)


class Forever:
    """__getattr__ returns a new object forever: a naive chain walker never stops."""

    def __getattr__(self, name: str) -> Forever:
        RAN.append("Forever.__getattr__")
        return Forever()

    def __getitem__(self, key: Any) -> Forever:
        RAN.append("Forever.__getitem__")
        return Forever()

    def __call__(self, *args: Any, **kwargs: Any) -> Forever:
        RAN.append("Forever.__call__")
        return Forever()


def forever(exc: type[BaseException]) -> Any:
    return Forever()


def lying_class(exc: type[BaseException]) -> Any:
    """`__class__` claims another type (a DataFrame when pandas is loaded), and records that it ran."""
    claimed: Any = int
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        claimed = pandas.DataFrame

    def cls(self: Any) -> Any:
        RAN.append("__class__")
        return claimed

    ns = _namespace(exc, ("__repr__", "__len__", "__getattr__", "__iter__", "__getitem__"))
    ns["__class__"] = property(cls)
    ns["shape"] = hostile_property("shape", exc)
    ns["columns"] = hostile_property("columns", exc)
    ns["dtypes"] = hostile_property("dtypes", exc)
    return object.__new__(type("Liar", (), ns))


def raising_class(exc: type[BaseException]) -> Any:
    ns = _namespace(exc, ("__repr__", "__getattr__"))
    ns["__class__"] = hostile_property("__class__", exc)
    return object.__new__(type("RaisingClass", (), ns))


def spoofed_module(exc: type[BaseException]) -> Any:
    """A notebook class that claims to live in pandas: its hooks are still user code."""
    ns = _namespace(exc)
    for attr in ("shape", "columns", "dtype", "dtypes", "index", "values", "ndim", "size", "name"):
        ns[attr] = hostile_property(attr, exc)
    ns["__module__"] = "pandas"
    ns["__qualname__"] = "DataFrame"
    return object.__new__(type("DataFrame", (), ns))


class Proxy:
    """A transparent proxy in the style of wrapt.ObjectProxy: everything forwards to the wrapped
    object, `__class__` included, and every forward is recorded."""

    __slots__ = ("__wrapped__",)

    def __init__(self, wrapped: Any) -> None:
        object.__setattr__(self, "__wrapped__", wrapped)

    def __getattribute__(self, name: str) -> Any:
        if name == "__wrapped__":
            return object.__getattribute__(self, "__wrapped__")
        RAN.append(f"Proxy.__getattribute__({name})")
        return getattr(object.__getattribute__(self, "__wrapped__"), name)

    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        RAN.append("Proxy.__class__")
        return type(object.__getattribute__(self, "__wrapped__"))

    def _forward(name: str) -> Callable[..., Any]:  # type: ignore[misc]
        def method(self: Any, *args: Any) -> Any:
            RAN.append(f"Proxy.{name}")
            return getattr(object.__getattribute__(self, "__wrapped__"), name)(*args)

        return method

    for _name in ("__repr__", "__str__", "__len__", "__iter__", "__getitem__", "__eq__", "__bool__",
                  "__call__", "__array__", "__dir__", "__contains__", "__add__", "__matmul__"):  # fmt: skip
        locals()[_name] = _forward(_name)
    __hash__ = None  # type: ignore[assignment]
    del _name, _forward


def proxy_frame(exc: type[BaseException]) -> Any:
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return Proxy({"a": 1})
    return Proxy(pandas.DataFrame({"a": [1, 2], "b": ["x", "y"]}))


def proxy_array(exc: type[BaseException]) -> Any:
    numpy = sys.modules.get("numpy")
    return Proxy(numpy.zeros((3, 2)) if numpy is not None else [1, 2, 3])


class Column:
    """An ORM field: a data descriptor whose reads run queries."""

    def __init__(self, exc: type[BaseException]) -> None:
        self.exc = exc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        RAN.append(f"Column.__get__({self.name})")
        raise self.exc(self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        RAN.append("Column.__set__")


def orm_model(exc: type[BaseException]) -> Any:
    cls = type(
        "User",
        (),
        {
            "id": Column(exc),
            "name": Column(exc),
            "objects": Column(exc),
            "shape": Column(exc),
            "columns": Column(exc),
            "__init__": lambda self: None,
        },
    )
    return cls


def orm_instance(exc: type[BaseException]) -> Any:
    return object.__new__(orm_model(exc))


def missing_dict(exc: type[BaseException]) -> Any:
    cls = type("Defaulting", (dict,), _namespace(exc, ("__missing__", "__repr__", "__eq__", "__hash__")))
    return cls(a=1, b=2)


def overriding_dict(exc: type[BaseException]) -> Any:
    names = ("__getitem__", "__iter__", "__len__", "keys", "items", "values", "get", "__contains__",
             "__repr__", "__missing__")  # fmt: skip
    cls = type("Lazy", (dict,), _namespace(exc, names))
    return cls(a=1)


def overriding_list(exc: type[BaseException]) -> Any:
    names = ("__getitem__", "__iter__", "__len__", "__repr__", "__eq__", "__contains__", "index", "remove")
    return type("Lazy", (list,), _namespace(exc, names))([1, 2, 3])


def overriding_str(exc: type[BaseException]) -> Any:
    names = (
        "__eq__",
        "__hash__",
        "__repr__",
        "__str__",
        "__len__",
        "__getitem__",
        "__format__",
        "__fspath__",
    )
    return type("Path", (str,), _namespace(exc, names))("data.csv")


def overriding_int(exc: type[BaseException]) -> Any:
    names = ("__eq__", "__hash__", "__repr__", "__index__", "__format__", "__bool__", "__int__", "__abs__")
    return type("Size", (int,), _namespace(exc, names))(5)


def hostile_keys(exc: type[BaseException]) -> Any:
    """A plain dict (and list) holding hostile keys and values."""
    value = every_dunder(exc)
    key_names = tuple(n for n in INSTANCE_DUNDERS if n != "__hash__")
    key = object.__new__(type("Key", (), {**_namespace(exc, key_names), "__hash__": object.__hash__}))
    return {"k": value, 1: [value, key], None: (value,), key: 1}


def container_of_hostiles(exc: type[BaseException]) -> Any:
    return [every_dunder(exc), lying_class(exc), Forever(), instance_of_meta(exc)]


def magic_mock(exc: type[BaseException]) -> Any:
    return mock.MagicMock(side_effect=hook("MagicMock()", exc))


def spec_mock(exc: type[BaseException]) -> Any:
    pandas = sys.modules.get("pandas")
    spec = pandas.DataFrame if pandas is not None else dict
    return mock.NonCallableMagicMock(spec=spec)


def mock_class(exc: type[BaseException]) -> Any:
    return mock.MagicMock


def signature_liar(exc: type[BaseException]) -> Any:
    """A function whose `__signature__` is a hostile object (inspect.signature checks its type)."""

    def fit(X: Any, y: Any = None) -> None:
        RAN.append("fit")

    fit.__signature__ = every_dunder(exc)  # type: ignore[attr-defined]
    return fit


def wrapped_liar(exc: type[BaseException]) -> Any:
    """A functools.wraps wrapper whose __wrapped__ is hostile."""

    @functools.wraps(lambda a: a)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        RAN.append("wrapper")

    wrapper.__wrapped__ = every_dunder(exc)  # type: ignore[attr-defined]
    return wrapper


def callable_instance(exc: type[BaseException]) -> Any:
    ns = _namespace(exc, ("__call__", "__repr__", "__getattr__"))
    ns["__signature__"] = hostile_property("__signature__", exc)
    ns["__wrapped__"] = hostile_property("__wrapped__", exc)
    ns["__module__"] = "sklearn.base"  # claims to be a library object
    return object.__new__(type("Estimator", (), ns))


def hostile_module(exc: type[BaseException]) -> Any:
    """A module with a PEP 562 `__getattr__`, and a module subclass with its own __getattribute__."""
    mod = types.ModuleType("notebook_helpers")
    mod.__getattr__ = hook("module.__getattr__", exc)  # type: ignore[method-assign]
    return mod


def module_subclass(exc: type[BaseException]) -> Any:
    cls = type(
        "LazyModule",
        (types.ModuleType,),
        {"__getattribute__": hook("LazyModule.__getattribute__", exc), "__getattr__": hook("LM.ga", exc)},
    )
    mod = cls("pandas")  # named like a library
    return mod


def exception_object(exc: type[BaseException]) -> Any:
    cls = type("Failure", (Custom,), _namespace(exc, ("__repr__", "__str__", "__getattr__", "__eq__")))
    return cls()


def hostile_dataset(exc: type[BaseException]) -> Any:
    """A torch-style dataset of the notebook's own (not a torch subclass): never sampled."""
    return object.__new__(type("Dataset", (), _namespace(exc, ("__len__", "__getitem__", "__iter__"))))


def frame_subclass(exc: type[BaseException]) -> Any:
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return every_dunder(exc)
    ns = _namespace(exc, ("__repr__", "__getitem__", "__len__", "__getattr__", "__iter__"))
    ns["shape"] = hostile_property("shape", exc)
    ns["columns"] = hostile_property("columns", exc)
    ns["_constructor"] = hostile_property("_constructor", exc)
    cls = type("MyFrame", (pandas.DataFrame,), ns)
    frame = pandas.DataFrame({"a": [1.0, None], "b": ["x", "y"]})
    obj = object.__new__(cls)
    obj.__dict__.update(frame.__dict__)
    return obj


def method_of_hostile(exc: type[BaseException]) -> Any:
    """A bound method whose function is a hostile callable: a method forwards attribute reads to it."""
    return types.MethodType(every_dunder(exc), 1)


def partial_of_hostile(exc: type[BaseException]) -> Any:
    return functools.partial(signature_liar(exc), every_dunder(exc), y=every_dunder(exc))


def cached_property_class(exc: type[BaseException]) -> Any:
    """functools.cached_property and classmethod(property(...)): descriptors of trusted types that
    call notebook functions."""
    ns: dict[str, Any] = {
        "shape": functools.cached_property(hook("cached_property", exc)),
        "columns": classmethod(property(hook("classmethod(property)", exc))),  # type: ignore[arg-type]
        "values": staticmethod(hook("staticmethod", exc)),
    }
    cls = type("Cached", (), ns)
    return object.__new__(cls)


def dict_slot_property(exc: type[BaseException]) -> Any:
    """A class whose `__dict__` is a property: reading an instance dict the usual way runs it."""
    cls = type(
        "NoDict", (), {"__dict__": hostile_property("__dict__", exc), "__repr__": hook("__repr__", exc)}
    )
    return object.__new__(cls)


def meta_slots(exc: type[BaseException]) -> Any:
    """A metaclass that overrides the slots a class is read through: __dict__, __mro__, __module__."""
    meta = type(
        "SlotMeta",
        (type,),
        {
            "__dict__": hostile_property("SlotMeta.__dict__", exc),
            "__mro__": hostile_property("SlotMeta.__mro__", exc),
            "__module__": "pandas",
            "__signature__": hostile_property("SlotMeta.__signature__", exc),
            "__doc__": hostile_property("SlotMeta.__doc__", exc),
        },
    )
    return meta("Frame", (), {"__init__": lambda self, data: None})


def module_dict_property(exc: type[BaseException]) -> Any:
    cls = type("DictModule", (types.ModuleType,), {"__dict__": hostile_property("DictModule.__dict__", exc)})
    return cls("numpy")


def function_with_odd_module(exc: type[BaseException]) -> Any:
    """A function whose __module__ and __qualname__ are hostile str subclasses."""

    def fit(X: Any, y: Any = None) -> None:
        RAN.append("fit")

    fit.__module__ = overriding_str(exc)
    fit.__defaults__ = (every_dunder(exc),)
    fit.__annotations__ = {"X": every_dunder(exc), "y": meta_getattribute(exc)}
    return fit


def estimator_subclass(exc: type[BaseException]) -> Any:
    """A notebook estimator built on scikit-learn's base class, with hostile fitted attributes and a
    property over a name the library defines."""
    base = pytest.importorskip("sklearn.base")
    ns = _namespace(exc, ("__repr__", "__getattr__", "get_params", "__sklearn_is_fitted__"))
    hostile_default = every_dunder(exc)
    ns["__init__"] = lambda self, alpha=hostile_default: None
    cls = type("MyModel", (base.BaseEstimator,), ns)
    est = object.__new__(cls)
    est.__dict__.update(
        classes_=every_dunder(exc), n_features_in_=overriding_int(exc), coef_=lying_class(exc)
    )
    return est


def torch_module_subclass(exc: type[BaseException]) -> Any:
    """A notebook nn.Module overriding what the probe reads (parameters, named_modules, __getattr__)."""
    nn = pytest.importorskip("torch.nn")
    ns = _namespace(
        exc, ("parameters", "named_modules", "named_children", "modules", "__repr__", "__getattr__")
    )
    cls = type("Net", (nn.Module,), ns)
    net = cls.__new__(cls)
    nn.Module.__init__(net)
    return net


HOSTILES: dict[str, Callable[[type[BaseException]], Any]] = {
    f.__name__: f
    for f in (
        meta_getattr, meta_getattribute, instance_of_meta, every_dunder, getattribute, forever, lying_class,
        raising_class, spoofed_module, proxy_frame, proxy_array, orm_model, orm_instance, missing_dict,
        overriding_dict, overriding_list, overriding_str, overriding_int, hostile_keys, container_of_hostiles,
        magic_mock, spec_mock, mock_class, signature_liar, wrapped_liar, callable_instance, hostile_module,
        module_subclass, exception_object, hostile_dataset, frame_subclass, method_of_hostile,
        partial_of_hostile, cached_property_class, dict_slot_property, meta_slots, module_dict_property,
        function_with_odd_module, estimator_subclass, torch_module_subclass,
    )
}  # fmt: skip

# Cells that use `x` the way notebooks use objects: reading, chains, subscripts, calls that the probe
# binds to signatures, columns named in keyword arguments, files, loops, with blocks, f-strings.
CELLS = (
    "x",
    "x.attr",
    "x.attr.deeper.still[0]['k']",
    "x['k']\nx[0]\nx[-1]\nx[['a', 'b']]",
    "x(1, 2)\nx(a=1)\nx(1, 2, 3, 4, z=5)",
    "x.fit(X, y)\nx.predict(X)\nx.method(1, key=2)\nx.objects.filter(id=1)",
    "len(x)\nprint(x)\nf'{x}'\nx + 1\nx @ x",
    "for item in x:\n    item.attr\nwith x as y:\n    y.z",
    "x.groupby('a')['b'].sum()\nx.merge(x, on='a')\nx.drop(columns=['a'])\nx.a\nx.shape",
    "sns.histplot(data=x, x='a', hue='b')\npd.read_csv(x)\nnp.load(x)\nopen(x)",
    "x.style.use('seaborn')\nx.__class__\nx.__dict__\nx.__wrapped__",
    "y = x\ndel x\ny.attr",
    "from os.path import join\njoin(x, 'a')\nx.id\nx.name\nx.shape[0]",
    "model = x(3)\nmodel.fit(X)\nx.fit(x)",
    "X = x.values\nx.to_numpy()\nx.astype(int)\nx.str.lower()",
)

OPTIONS: tuple[dict[str, Any], ...] = ({}, {"docs": True, "history": True, "budget_ms": 10_000})


def _friends() -> dict[str, Any]:
    """Ordinary objects beside the hostile one, so the probe's library paths run too."""
    ns: dict[str, Any] = {"In": ["", "X = x.values", "x.fit(X)"]}
    for alias, name in (("np", "numpy"), ("pd", "pandas"), ("sns", "seaborn")):
        module = sys.modules.get(name)
        if module is not None:
            ns[alias] = module
    if "numpy" in sys.modules:
        ns["X"] = sys.modules["numpy"].ones((4, 2))
        ns["y"] = sys.modules["numpy"].arange(4)
    return ns


def _cases() -> Iterator[Any]:
    """Every object with SystemExit in the normal run (whether code runs does not depend on what it
    raises); every other exception in the slow run."""
    for name in HOSTILES:
        for exc in EXCEPTIONS:
            marks = () if exc is SystemExit else (pytest.mark.slow,)
            yield pytest.param(name, exc, id=f"{name}-{exc.__name__}", marks=marks)


@pytest.fixture(scope="module", autouse=True)
def _libraries() -> None:
    """numpy and pandas loaded, as in most kernels (the hostile objects then meet the library paths)."""
    pytest.importorskip("numpy")
    pytest.importorskip("pandas")


def _probe(source: str, options: dict[str, Any], ns: dict[str, Any]) -> dict[str, Any]:
    try:
        result = probe.run(source, dict(options), ns)
    except BaseException as escaped:
        pytest.fail(f"{type(escaped).__name__} escaped run.run on {source!r}")
    assert isinstance(result, dict)
    json.dumps(result, allow_nan=False)
    return result


@pytest.mark.parametrize(("name", "exc"), list(_cases()))
def test_probe_runs_no_code_of_a_hostile_object_and_always_returns(
    name: str, exc: type[BaseException]
) -> None:
    obj = HOSTILES[name](exc)
    RAN.clear()
    for options in OPTIONS:
        for source in CELLS:
            ns = {**_friends(), "x": obj}
            before = dict(ns)
            result = _probe(source, options, ns)
            assert RAN == [], f"{name}: user code ran for {source!r} ({options}): {RAN[:5]}"
            assert result["error"] is None, f"{name}: {source!r}: {result['error']}"
            assert ns.keys() == before.keys() and all(ns[k] is before[k] for k in ns)
    if issubclass(type(obj), mock.NonCallableMock):  # (isinstance would ask a hostile __class__)
        assert obj.mock_calls == [] and obj.method_calls == []
        assert not obj._mock_children  # no attribute was ever created through its __getattr__


def test_every_hostile_object_in_one_namespace() -> None:
    """All of them at once, in containers and as attributes of each other, read by one cell."""
    RAN.clear()
    ns = _friends()
    for i, make in enumerate(HOSTILES.values()):
        ns[f"h{i}"] = make(EXCEPTIONS[i % len(EXCEPTIONS)])
    source = "\n".join(f"h{i}.a.b\nh{i}['k']\nh{i}(1)\nprint(h{i})" for i in range(len(HOSTILES)))
    for options in OPTIONS:
        result = _probe(source, options, ns)
        assert result["error"] is None
    assert RAN == []


def test_the_harness_notices_code_that_runs() -> None:
    """The recording works: calling a hook by hand records it and raises what it was given."""
    RAN.clear()
    obj = every_dunder(SystemExit)
    with pytest.raises(SystemExit):
        repr(obj)
    with pytest.raises(KeyboardInterrupt):
        meta_getattr(KeyboardInterrupt).missing  # noqa: B018
    assert RAN == ["__repr__", "Meta.__getattr__"]
    RAN.clear()


def test_base_exceptions_inside_the_probe_become_an_error_not_an_escape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If a probe step itself raised a BaseException, run() still returns a result naming it."""
    from crane_jupyterlab.kernel.probe import scan

    for exc in EXCEPTIONS:

        def boom(self: Any, *args: Any, exc: type[BaseException] = exc) -> None:
            raise exc("inside the probe")

        monkeypatch.setattr(scan._Scanner, "finish", boom)
        result = _probe("x.a", {}, {"x": 1})
        assert result["error"] is not None and exc.__name__ in result["error"]


def test_a_dataset_sampled_on_purpose_may_raise_anything() -> None:
    """A map-style torch Dataset is the one object whose code the probe runs (its samples are the
    point); a SystemExit from its __getitem__ costs that entry, not the result."""
    torch_data = pytest.importorskip("torch.utils.data")

    class Faces(torch_data.Dataset):  # type: ignore[misc]
        def __len__(self) -> int:
            return 10

        def __getitem__(self, i: int) -> Any:
            raise SystemExit("dataset")

    result = _probe("ds[0]\nlen(ds)", {}, {"ds": Faces(), "x": 1})
    assert result["error"] is None
    ds = next(e for e in result["objects"] if e["expr"] == "ds")
    assert ds["error"] is not None or all("dataset" not in str(f["value"]) for f in ds["facts"])
