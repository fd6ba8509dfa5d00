"""tensorflow tensors and tf.data datasets, keras models and image iterators."""

from __future__ import annotations

from typing import Any

from ..access import _callable_name, _get_attr
from ..facts import MAX_ITEMS, SAFE_SCALARS, _add, _Ctx, _entry, _fact, _jsonable, _trim
from ..safe import _MISSING, _inst_dict, _is, _short_type, _type_name
from .core import _summarizer
from .objects import _short


@_summarizer(lambda o: _is(o, "tensorflow", "Tensor", "Variable", "EagerTensor", "ResourceVariable"))
def _sum_tf_tensor(t: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "S", "shape", _tf_shape(t.shape))
    _add(e, "R", "dtype", getattr(t.dtype, "name", str(t.dtype)))


def _tf_shape(shape: Any) -> Any:
    try:
        return shape.as_list()
    except Exception:
        return _jsonable(list(shape)) if shape is not None else None


@_summarizer(lambda o: _is(o, "tensorflow", "DatasetV2", "Dataset"))
def _sum_tf_dataset(ds: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "element_spec", _trim(repr(ds.element_spec), 200))
    card = int(ds.cardinality().numpy())
    _add(e, "S", "cardinality", {-1: "infinite", -2: "unknown"}.get(card, card))


@_summarizer(lambda o: _is(o, "keras", "Model") or _is(o, "tf_keras", "Model"))
def _sum_keras_model(m: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    _add(e, "R", "class", type(m).__name__)

    def attr(name: str, default: Any = None) -> Any:
        # _get_attr: a user subclass (class Net(keras.Model)) may override these with its own properties
        try:
            return _get_attr(m, name)
        except Exception:
            return default

    _add(e, "V", "built", bool(attr("built", False)))
    for key in ("input_shape", "output_shape"):
        value = attr(key, _MISSING)
        if value is not _MISSING:
            _add(e, "S", key, _jsonable(value))
    layers = attr("layers", [])
    layers = list(layers) if type(layers) in (list, tuple) else []
    if layers:
        last = layers[-1]
        units = _inst_dict(last).get("units")
        if type(units) is int:
            _add(e, "S", "last_units", units)
        act = _inst_dict(last).get("activation")
        if act is not None:
            _add(e, "R", "last_activation", _callable_name(act))
    compiled = bool(attr("compiled", False)) or attr("optimizer") is not None
    _add(e, "V", "compiled", compiled)
    loss = attr("loss")
    if loss is not None:
        name = _inst_dict(loss).get("name")
        _add(
            e, "R", "loss", loss if type(loss) is str else name if type(name) is str else _callable_name(loss)
        )
    shown = layers if len(layers) <= 10 else layers[:6] + layers[-3:]
    for layer in shown:
        name = _inst_dict(layer).get("name") or _short_type(layer)
        child = _entry(f"{e['expr']}.layers[{layers.index(layer)}]", _type_name(layer))
        child["facts"].append(_fact("R", "name", str(name)))
        ld = _inst_dict(layer)
        for key in ("units", "filters", "kernel_size", "rate", "pool_size", "output_dim", "input_dim"):
            v = ld.get(key)
            if type(v) in (int, float, tuple):
                child["facts"].append(_fact("S", key, v))
        data_format = ld.get("data_format")  # which axis a convolution reads as channels
        if type(data_format) is str:
            child["facts"].append(_fact("R", "data_format", data_format))
        act = ld.get("activation")
        if act is not None and _callable_name(act) != "linear":
            child["facts"].append(_fact("R", "activation", _callable_name(act)))
        e["children"].append(child)


_ITER_ATTRS = (
    ("S", "samples"), ("S", "num_classes"), ("V", "class_indices"), ("S", "batch_size"), ("S", "image_shape"),
    ("S", "target_size"), ("R", "class_mode"), ("R", "color_mode"), ("V", "shuffle"),
)  # fmt: skip


@_summarizer(
    lambda o: (
        _is(o, "keras", "Iterator", "DirectoryIterator", "NumpyArrayIterator", "DataFrameIterator")
        or _is(o, "tf_keras", "Iterator")
    )
)
def _sum_keras_iterator(it: Any, e: dict[str, Any], ctx: _Ctx, hints: dict[str, Any]) -> None:
    """Image iterators: attributes only, never next() (it would advance the epoch)."""
    d = _inst_dict(it)
    for cat, key in _ITER_ATTRS:
        v = d.get(key, _MISSING)
        if v is _MISSING:
            continue
        if key == "class_indices" and isinstance(v, dict):
            v = dict(list(v.items())[:MAX_ITEMS])
        _add(e, cat, key, _jsonable(v) if type(v) in (*SAFE_SCALARS, tuple, list, dict) else _short(v, ctx))
