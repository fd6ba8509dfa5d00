"""Keras objects copied to a trial worker (transfer.py): how a model goes (`reduce_model`), which of the
notebook's classes go with it, and the notebook functions of its Lambda layers, which Keras rebuilds with
its own module's globals.

Keras rebuilds a model from its config, naming the classes of its layers, metrics and losses: the
notebook's own must be rebuilt and registered before it. A Lambda layer's function is saved as bytecode and
loaded with the globals of a Keras module, where the kernel's reads the notebook's (`tf`, a constant):
the names it reads go with the inputs and, in the worker, it gets the namespace's globals back. Stdlib
only at import: Keras is imported only while a Keras model is copied, where the kernel has it loaded.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from . import unpacking

KERAS = ("keras", "tf_keras")


def keras_class(value: Any, ns: dict[str, Any]) -> bool:
    """A class of the notebook's own that derives from a Keras class (a model, layer, metric, loss...)."""
    if not isinstance(value, type) or not notebook_class(value):
        return False
    try:
        return any(root_of(base) in KERAS for base in type.__dict__["__mro__"].__get__(value)[1:])
    except Exception:
        return False


def keras_object(value: Any) -> bool:
    try:
        return any(root_of(base) in KERAS for base in type.__dict__["__mro__"].__get__(type(value)))
    except Exception:
        return False


def keras_model(value: Any) -> bool:
    """An instance of a Keras Model class (a notebook's subclass included)."""
    try:
        mro = type.__dict__["__mro__"].__get__(type(value))
    except Exception:
        return False
    return any(type.__dict__["__name__"].__get__(c) == "Model" and root_of(c) in KERAS for c in mro)


def lambda_functions(value: Any) -> list[types.FunctionType]:
    """The Python functions of the Keras Lambda layers a Keras model or layer holds (Keras saves them as
    bytecode and loads them with its own module's globals: `rebuild` gives them the namespace's)."""
    if not keras_object(value):
        return []
    try:
        layers = list(value._flatten_layers())
    except Exception:
        return []
    found = []
    for layer in layers:
        kind = type(layer)
        if kind.__name__ == "Lambda" and root_of(kind) in KERAS:
            fn = getattr(layer, "function", None)
            if type(fn) is types.FunctionType:
                found.append(fn)
    return found


def lambdas_in(value: Any, ns: dict[str, Any]) -> None:  # pragma: no cover - worker only
    """A Keras Lambda layer's function as the notebook has it: Keras loaded its bytecode with the globals of
    its own module, where the kernel's function reads the notebook's (`tf`, a constant)."""
    for layer_fn in lambda_functions(value):
        globs = layer_fn.__globals__
        if globs is ns or not str(globs.get("__name__", "")).startswith(KERAS):
            continue
        for layer in value._flatten_layers():
            if getattr(layer, "function", None) is layer_fn:
                rebuilt = types.FunctionType(
                    layer_fn.__code__, ns, layer_fn.__name__, layer_fn.__defaults__, layer_fn.__closure__
                )
                rebuilt.__kwdefaults__ = layer_fn.__kwdefaults__
                layer.function = rebuilt


def notebook_class(cls: type) -> bool:
    """A class the notebook defined (its module is `__main__`: no worker can import it)."""
    return bool(type.__dict__["__module__"].__get__(cls) == "__main__")


def root_of(cls: type) -> str:
    """The top-level package a class comes from ("keras", "tensorflow", "__main__")."""
    module = type.__dict__["__module__"].__get__(cls)
    return module.split(".", 1)[0] if isinstance(module, str) else ""


# -- a Keras model and what its saving leaves out -----------------------------------------------------


class NotMadeAgain(Exception):
    """A Keras model no worker can make as the kernel has it; the message says why."""


# Attributes Keras sets on every model, never taken for the notebook's own (`_attributes`).
_KERAS_ATTRIBUTES = frozenset(
    {"name", "built", "compiled", "stop_training", "stop_predicting", "loss", "steps_per_execution",
     "trainable", "autocast", "supports_jit", "history", "optimizer", "activity_regularizer",
     "call_signature_parameters", "train_function", "test_function", "predict_function",
     "unrolled_steps_per_execution"}
)  # fmt: skip
# The methods by which a Keras object describes itself (a notebook class's own would run its code).
_DESCRIBING = ("get_config", "get_build_config", "get_compile_config", "save_own_variables")


def reduce_model(model: Any, ns: dict[str, Any], guarded: bool) -> Any:
    """How a Keras model goes to a worker (a `__reduce__` value), or NotImplemented for pickle's own way.

    As Keras saves a model, without its file: its serialized config (with its build and compile
    configs), and each layer's and the optimizer's variables through their own `save_own_variables`,
    as arrays the pickle hands over out of band; Keras' own file (zip, HDF5, a temporary directory: 4 to
    8 times slower in a trial's fork) only where a layer keeps assets (a lookup layer's vocabulary).
    Neither takes its `History` (`model.history`, which cells read) nor its other attributes (a list the
    notebook appends to, a raw `tf.Variable`): those go beside it. A model of the notebook's own class
    whose `__init__` takes arguments its config lacks (Keras 3 records no model's arguments) is made again
    in the worker by the call that made it in the notebook (`constructor_calls`), then given the kernel's
    state; where its layers' classes, configs or variables then differ from the kernel's, it is not used
    (`_made_again`). A config that names a function Keras knows only by name may not load in the worker:
    the calls go along with it, and are tried where it does not."""
    keras = _keras_of(model)
    if keras is None:  # not a model, or Keras 2 (tf_keras): its own pickling
        return NotImplemented
    if guarded and _notebook_code(model, ns):
        raise NotMadeAgain(
            f"the notebook's Keras class {type(model).__qualname__} describes itself with its own code, "
            "which would run in the kernel (inputs of a GPU kernel's trial are copied by a thread of it)"
        )
    extras = {"history": _history(model), "attributes": _attributes(model)}
    cls = type(model)
    config = _config(model, keras)
    if config is not None:
        if any(getattr(type(layer), "save_assets", None) for layer in model._flatten_layers()):
            rebuild, args = model.__reduce__()[:2]
            return (_with_extras, (rebuild, args, extras))
        if not _by_name(config):
            return (_from_config, (config, _state(model, compare=False), extras))
        # A function Keras knows only by its name (`kernel_initializer=tf.random.normal`, an activation of
        # the notebook's): its config may not load in the worker, so the calls that made it go along.
        calls, captured = _calls(model, ns)
        again = (cls, calls, captured) if calls else None
        return (_from_config, (config, _state(model, compare=again is not None), extras, again))
    if not notebook_class(cls):
        raise NotMadeAgain(f"Keras cannot save the model {cls.__qualname__} (it has no config)")
    calls, captured = _calls(model, ns)
    if not calls:
        raise NotMadeAgain(
            f"the notebook's Keras model class {cls.__qualname__} has `__init__` arguments Keras does not "
            "record, and no cell that made this model was found"
        )
    return (_made_again, (cls, calls, captured, _state(model, compare=True), extras))


def _calls(model: Any, ns: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The calls that may have made `model` (`constructor_calls`), and the kernel's values of the names
    they read, which go with them."""
    calls = constructor_calls(model, ns)
    return calls, {n: ns[n] for call in calls for n in _names(call) if n in ns}


def _by_name(config: Any, depth: int = 0) -> bool:
    """Whether a config names a plain function Keras does not know (`{"module": "builtins", "class_name":
    "function", ...}`): where the worker's Keras does not have it registered, the config does not load."""
    if depth > 40:
        return False
    if type(config) is dict:
        if config.get("module") == "builtins" and config.get("class_name") == "function":
            return True
        return any(_by_name(v, depth + 1) for v in config.values())
    if type(config) in (list, tuple):
        return any(_by_name(v, depth + 1) for v in config)
    return False


def _keras_of(model: Any) -> Any:
    """The Keras 3 module of a Keras model (a notebook's subclass included), or None."""
    if not keras_model(model):
        return None
    for cls in type.__dict__["__mro__"].__get__(type(model)):
        module = sys.modules.get(root_of(cls))
        if root_of(cls) in KERAS and module is not None:
            major = str(getattr(module, "__version__", "0")).split(".", 1)[0]
            return module if major.isdigit() and int(major) >= 3 else None
    return None


def _config(model: Any, keras: Any) -> Any:
    """The model serialized as Keras saves it, or None where that config cannot make it again: Keras
    cannot give one, or the notebook's class needs `__init__` arguments the config lacks."""
    try:
        config = keras.saving.serialize_keras_object(model)
    except Exception:
        return None
    import inspect

    given = config.get("config") or {}
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    for cls in type.__dict__["__mro__"].__get__(type(model)):
        if not notebook_class(cls) or "from_config" in vars(cls):
            break  # Keras' own classes, or a class that says how to make itself from its config
        if "__init__" not in vars(cls):
            continue
        # this class, or a base it passes `*args` to (`super().__init__(*args, **kwargs)`), needs arguments
        try:
            parameters = list(inspect.signature(vars(cls)["__init__"]).parameters.values())[1:]
        except (TypeError, ValueError):
            return config
        if any(p.kind in kinds and p.default is p.empty and p.name not in given for p in parameters):
            return None
    return config


def constructor_calls(model: Any, ns: dict[str, Any], most: int = 6) -> list[str]:
    """The calls in the cells the kernel ran (latest first) that may have made `model`: the value of an
    assignment to a name now bound to it (`model = build(64)`), then any call of its class by name."""
    history = ns.get("_ih") if isinstance(ns.get("_ih"), list) else ns.get("In")
    if not isinstance(history, list):
        return []
    import ast

    cls_name = type(model).__name__
    bound = {name for name, value in list(ns.items()) if value is model and isinstance(name, str)}
    first: list[str] = []
    then: list[str] = []
    for source in reversed(history[-500:]):
        if not isinstance(source, str) or not any(word in source for word in (cls_name, *bound)):
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            value = getattr(node, "value", None)
            if (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and isinstance(value, ast.Call)
                and any(isinstance(t, ast.Name) and t.id in bound for t in targets)
            ):
                first.append(ast.unparse(value))
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name == cls_name:
                    then.append(ast.unparse(node))
    found: list[str] = []
    for call in first + then:
        if call not in found:
            found.append(call)
    return found[:most]


def _names(expression: str) -> set[str]:
    import ast

    return {node.id for node in ast.walk(ast.parse(expression, mode="eval")) if isinstance(node, ast.Name)}


def _notebook_code(model: Any, ns: dict[str, Any]) -> bool:
    """Whether describing `model` (or a layer of it) would run a method of the notebook's own."""
    try:
        layers = list(model._flatten_layers())
    except Exception:
        layers = [model]
    for layer in layers:
        for cls in type.__dict__["__mro__"].__get__(type(layer)):
            if notebook_class(cls) and any(m in vars(cls) for m in _DESCRIBING):
                return True
    return False


def _history(model: Any) -> Any:
    """The `History` of the model's last fit, as plain values (Keras saves none of it)."""
    found = vars(model).get("history")
    if found is None or type(found).__name__ != "History" or root_of(type(found)) not in KERAS:
        return None
    return {
        "history": dict(getattr(found, "history", None) or {}),
        "epoch": list(getattr(found, "epoch", None) or []),
        "params": dict(getattr(found, "params", None) or {}),
    }


def _attributes(model: Any) -> dict[str, Any]:
    """The model's public attributes that are not Keras' own nor hold Keras objects (its layers and their
    variables come with it): `self.units`, `model.threshold`, a raw `tf.Variable` Keras does not track,
    a list the notebook appends to."""
    found = {}
    for key, value in list(vars(model).items()):
        if not isinstance(key, str) or key.startswith("_") or key in _KERAS_ATTRIBUTES:
            continue
        for plain in (list, dict, set, tuple):  # Keras keeps a list set on a layer as its TrackedList
            if isinstance(value, plain) and type(value) is not plain and keras_object(value):
                value = plain(value)
        if not _holds_keras(value):
            found[key] = value
    return found


def _holds_keras(value: Any) -> bool:
    """A Keras object, or a container of them, or a function of Keras' (the `build` wrapper it sets)."""
    if type(value) in (types.FunctionType, types.MethodType):
        module = getattr(value, "__module__", None)
        return isinstance(module, str) and module.split(".", 1)[0] in KERAS
    if type(value) in (list, tuple, set):
        return any(keras_object(item) for item in list(value)[:1000])
    if type(value) is dict:
        return any(keras_object(item) for item in list(value.values())[:1000])
    return keras_object(value)


def _layer_configs(model: Any) -> list[Any]:
    """Each inner layer's class, config (without its name, which a process numbers as it goes) and
    trainable flag: what the model made again must match."""
    found = []
    for layer in model._flatten_layers(include_self=False):
        try:
            config = _nameless(layer.get_config())
        except Exception:
            config = None
        found.append((type(layer).__qualname__, config, bool(layer.trainable)))
    return found


def _nameless(config: Any) -> Any:
    """A config without the names in it (a process numbers its layers as it makes them: `leaky_re_lu_1`),
    nor a Lambda function's marshalled code (whose bytes differ between processes: marshal marks objects
    by their reference counts); the function's code is the notebook's, made again from the same code."""
    if type(config) is dict:
        lambda_code = config.get("class_name") == "__lambda__"
        return {
            k: {n: _nameless(v) for n, v in config[k].items() if n != "code"}
            if lambda_code and k == "config" and type(config[k]) is dict
            else _nameless(config[k])
            for k in config
            if k != "name"
        }
    if type(config) in (list, tuple):
        return [_nameless(v) for v in config]
    if hasattr(config, "__array__") and hasattr(config, "shape"):  # an array or tensor in a closure: by value
        try:
            return sys.modules["numpy"].asarray(config).tolist()
        except Exception:
            return repr(config)
    return config


def _state(model: Any, compare: bool) -> dict[str, Any]:
    """What the kernel's model holds beyond its code: each layer's build (the model's first: `_flatten_layers`
    gives the model itself first), compile, each layer's variables (as its own `save_own_variables` gives
    them) and the optimizer's; with `compare`, its layers' configs."""
    layers = list(model._flatten_layers())
    optimizer = getattr(model, "optimizer", None) if getattr(model, "compiled", False) else None
    # a merge layer's build config lists its input shapes in Keras' TrackedList, which holds a lambda
    built = [(bool(one.built), _plain(one.get_build_config()) if one.built else None) for one in layers]
    return {
        "compile": _plain(model.get_compile_config()) if getattr(model, "compiled", False) else None,
        "trainable": [bool(layer.trainable) for layer in layers],
        "builds": built,
        "classes": _classes(layers),
        "variables": [_own_variables(layer) for layer in layers],
        "optimizer": _own_variables(optimizer) if optimizer is not None and optimizer.built else None,
        "layers": _layer_configs(model) if compare else None,
    }


def _plain(value: Any, depth: int = 0) -> Any:
    """`value` with Keras' tracked containers (and any other list, dict, tuple or set subclass) made the
    plain ones, so that it pickles without their trackers."""
    if depth > 40:
        return value
    if isinstance(value, dict):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)) and not hasattr(value, "_fields"):  # not a namedtuple
        kind = next(k for k in (list, tuple, set, frozenset) if isinstance(value, k))
        return kind(_plain(v, depth + 1) for v in value)
    return value


def _own_variables(saveable: Any) -> dict[str, Any]:
    store: dict[str, Any] = {}
    saveable.save_own_variables(store)
    return {key: value.numpy() if hasattr(value, "numpy") else value for key, value in store.items()}


def _with_extras(rebuild: Any, args: tuple[Any, ...], extras: dict[str, Any]) -> Any:  # pragma: no cover
    model = rebuild(*args)
    _give(model, extras)
    return model


def _made_again(
    cls: type, calls: list[str], captured: dict[str, Any], state: dict[str, Any], extras: dict[str, Any]
) -> Any:  # pragma: no cover - the worker's
    """In the worker: the model made by the first call that gives one as the kernel's (see `reduce_model`)."""
    tried = []
    for call in calls:
        try:
            code = compile(call, "<the call that made the model>", "eval")
            model = eval(code, unpacking.NAMESPACE[0], dict(captured))
            if type(model) is not cls:
                raise TypeError(f"it gives a {type(model).__qualname__}")
            _restore(model, state)
        except Exception as exc:
            tried.append(f"`{call}`: {type(exc).__name__}: {exc}"[:300])
            continue
        _give(model, extras)
        return model
    raise NotMadeAgain(
        f"the notebook's Keras model ({cls.__qualname__}) could not be made again as the kernel has it: "
        + "; ".join(tried)
    )


def _from_config(
    config: Any, state: dict[str, Any], extras: dict[str, Any], again: Any = None
) -> Any:  # pragma: no cover - the worker's
    """In the worker: the model from its config (built and compiled as Keras loads it), given the
    kernel's variables; where Keras cannot load the config and the calls that may have made the model
    came along (`again`: a function Keras knows only by name is in it), made again by one of them."""
    import keras

    try:
        model = keras.saving.deserialize_keras_object(config, safe_mode=False)
        _restore(model, state)
    except Exception as exc:
        if again is None:
            raise
        cls, calls, captured = again
        try:
            return _made_again(cls, calls, captured, state, extras)
        except NotMadeAgain as failed:
            raise NotMadeAgain(
                f"Keras could not load its config ({type(exc).__name__}: {exc}"[:400] + f"); {failed}"
            ) from None
    _give(model, extras)
    return model


def _restore(model: Any, state: dict[str, Any]) -> None:  # pragma: no cover - the worker's
    """The kernel's builds, compile, trainable flags and variables, given to a model made again here;
    raises where it does not have the kernel's layers and variables."""
    layers = list(model._flatten_layers())
    built, build = state["builds"][0]  # the model's own
    if _classes(layers) != state["classes"] and built and build and not model.built:
        model.build_from_config(build)  # a Sequential makes its InputLayer as it is built
        layers = list(model._flatten_layers())
    if _classes(layers) != state["classes"]:
        raise ValueError("its layers are not the kernel's")
    _build(model, layers, state)
    for layer, trainable, store in zip(layers, state["trainable"], state["variables"]):
        layer.trainable = trainable
        layer.load_own_variables(store)
    if state["compile"] is not None and not getattr(model, "compiled", False):
        model.compile_from_config(state["compile"])
    if state["optimizer"] is not None:
        optimizer = model.optimizer
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
        if len(optimizer.variables) != len(state["optimizer"]):
            raise ValueError("its optimizer has other variables than the kernel's")
        optimizer.load_own_variables(state["optimizer"])
    if state["layers"] is not None and _layer_configs(model) != state["layers"]:
        raise ValueError("its layers are not configured as the kernel's")


def _classes(layers: list[Any]) -> list[str]:
    return [type(layer).__qualname__ for layer in layers]


def _build(model: Any, layers: list[Any], state: dict[str, Any]) -> None:  # pragma: no cover
    """Each layer built as the kernel's is: the inner layers the kernel built, from their build configs,
    then the model, by running it where the kernel's inner layers are all built (Keras' way), else by its
    `build` as the notebook called it (`model.build(shape)` on a subclass marks it built, and builds none)."""
    for layer, (built, config) in list(zip(layers, state["builds"]))[1:]:
        if built and not layer.built:
            if not config:
                raise ValueError(f"the kernel's layer {layer.name} was built without a build config")
            layer.build_from_config(config)
    built, shapes = state["builds"][0]  # the model's own
    if not built or model.built:
        return
    if shapes is None:
        raise ValueError("the kernel's model was built without a build config")
    if all(built for built, _ in state["builds"][1:]):
        model.build_from_config(shapes)
    else:
        if "input_shape" in shapes:
            model.build(shapes["input_shape"])
        else:
            model.build(**shapes["shapes_dict"])


def _give(model: Any, extras: dict[str, Any]) -> None:  # pragma: no cover - the worker's
    """What Keras' saving leaves out: the last fit's History, and the attributes as the kernel's model
    has them now (a list the notebook appended to, a raw `tf.Variable` it trained)."""
    for key, value in extras["attributes"].items():
        setattr(model, key, value)
    found = extras["history"]
    if found is not None:
        import keras

        history = keras.callbacks.History()
        history.history, history.epoch, history.params = found["history"], found["epoch"], found["params"]
        history.set_model(model)
        model.history = history
