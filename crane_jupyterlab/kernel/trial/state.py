"""The process-wide state that changes what a cell does, read in the kernel (getters only, each library's
part only where `sys.modules` has it) and set again in a trial worker (transfer.py carries it): the random
states, numpy's error and print settings, the warnings filters, torch's default dtype, device and grad mode,
TensorFlow's eager-functions switch and global seed, Keras' floatx, image format, dtype policy and seed
generator, pandas options and matplotlib rc settings that differ from their defaults. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import Any


def read() -> dict[str, Any]:
    """What outside the namespace changes what a cell does: each library's part only where the kernel
    has loaded it. Every read is a getter; nothing is set."""
    import warnings

    state: dict[str, Any] = {"warnings": list(warnings.filters)}
    rnd = sys.modules.get("random")
    if rnd is not None:
        state["random"] = rnd.getstate()
    np = sys.modules.get("numpy")
    if np is not None:
        _read(state, "numpy_random", lambda: np.random.get_state())
        _read(state, "numpy_err", lambda: np.geterr())
        _read(state, "numpy_print", lambda: np.get_printoptions())
    torch = sys.modules.get("torch")
    if torch is not None:
        _read(state, "torch_rng", lambda: torch.get_rng_state())
        _read(state, "torch_dtype", lambda: str(torch.get_default_dtype()).replace("torch.", ""))
        _read(state, "torch_device", lambda: str(torch.get_default_device()))
        _read(state, "torch_grad", lambda: bool(torch.is_grad_enabled()))
        if torch.cuda.is_initialized():
            _read(state, "torch_cuda_rng", lambda: [r.cpu() for r in torch.cuda.get_rng_state_all()])
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        _read(state, "tf_eager_functions", lambda: bool(tf.config.functions_run_eagerly()))
        _read(state, "tf_seed", _tf_seed)
    keras = sys.modules.get("keras")
    if keras is not None:
        _read(state, "keras_registry", _keras_registry)
        _read(state, "keras_floatx", lambda: keras.backend.floatx())
        _read(state, "keras_image_format", lambda: keras.backend.image_data_format())
        _read(state, "keras_policy", lambda: keras.mixed_precision.dtype_policy().name)
        _read(state, "keras_seed", _keras_seed_state)
    pd = sys.modules.get("pandas")
    if pd is not None:
        _read(state, "pandas_options", lambda: _pandas_options(pd))
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:
        _read(state, "matplotlib_rc", lambda: _rc_changes(mpl))
    return state


def _read(state: dict[str, Any], key: str, getter: Any) -> None:
    # A library too old for that getter: the worker keeps its own default.
    with contextlib.suppress(Exception):
        state[key] = getter()


HEAVY = ("numpy", "pandas", "scipy", "sklearn", "torch", "tensorflow", "keras", "matplotlib", "seaborn",
         "PIL", "xgboost", "lightgbm", "statsmodels", "transformers", "torchvision")  # fmt: skip


def top_modules() -> set[str]:
    return {name for name in HEAVY if name in sys.modules}


def loaded_modules() -> list[str]:
    """The heavy libraries the kernel has loaded and their public submodules it has loaded
    (`torch.nn.functional`, `sklearn.ensemble`, `keras.layers`), parents first: what a worker imports
    ahead of a job, so that rebuilding the inputs imports nothing. A package's private modules come with
    its public ones."""
    found = []
    for name, module in list(sys.modules.items()):
        root, _, rest = name.partition(".")
        if module is None or root not in HEAVY:
            continue
        if rest and any(part.startswith("_") for part in rest.split(".")):
            continue
        found.append(name)
    return sorted(found)


def local_modules(code_text: str) -> list[str]:
    """The modules the cell imports that the notebook imported from files beside it (not installed, not
    the standard library): the worker imports them before the cell runs, from the same `sys.path`, so that
    the cell's `import` finds them loaded as it does in the kernel. Only those: every other module beside
    the notebook that the inputs need comes by pickle's own import, and running a module's code again is
    not free (what it does at import runs in the sandbox)."""
    import ast
    import sysconfig

    try:
        tree = ast.parse(code_text)
    except (SyntaxError, ValueError):
        return []
    wanted: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            wanted.append(node.module)
            wanted += [f"{node.module}.{alias.name}" for alias in node.names]  # submodules among them
    installed = {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    installed = {os.path.realpath(p) + os.sep for p in installed if p}
    found = []
    for name in dict.fromkeys(wanted):
        module = sys.modules.get(name)
        root = sys.modules.get(name.partition(".")[0])
        path = getattr(root, "__file__", None) if type(root) is types.ModuleType else None
        if module is None or not isinstance(path, str) or name.startswith("_crane"):
            continue
        real = os.path.realpath(path)
        if real.startswith(tuple(installed)) or "site-packages" in real or "dist-packages" in real:
            continue
        found.append(name)
    return found


def _keras_registry() -> dict[str, Any]:
    """Keras' registry of custom objects (`@keras.saving.register_keras_serializable`): its own loading
    and unpickling find the notebook's classes by their registered names there."""
    module = sys.modules["keras.src.saving.object_registration"]
    return {"objects": dict(module.GLOBAL_CUSTOM_OBJECTS), "names": dict(module.GLOBAL_CUSTOM_NAMES)}


def early(state: dict[str, Any]) -> None:  # pragma: no cover - runs in the worker
    """What must be in place before the inputs are rebuilt: Keras' registry (a model of a registered
    notebook class is rebuilt through it)."""
    registry = state.get("keras_registry")
    module = sys.modules.get("keras.src.saving.object_registration")
    if registry and module is not None:
        with contextlib.suppress(Exception):
            module.GLOBAL_CUSTOM_OBJECTS.update(registry["objects"])
            module.GLOBAL_CUSTOM_NAMES.update(registry["names"])


def _tf_seed() -> Any:
    context = sys.modules["tensorflow.python.eager.context"]
    return context.global_seed()


def _keras_seed_state() -> Any:
    """The global seed generator's state where Keras has made one; never made here (making one creates
    variables: slow in a fork, and a trace in a kernel whose inputs are packed on its own thread)."""
    module = sys.modules.get("keras.src.random.seed_generator")
    holder = sys.modules.get("keras.src.backend.common.global_state")
    name = getattr(module, "GLOBAL_SEED_GENERATOR", None)
    if holder is None or name is None:
        return None
    gen = holder.get_global_attribute(name)
    if gen is None:
        return None
    return {"seed": gen._initial_seed, "state": gen.state.numpy()}


def _pandas_options(pd: Any) -> dict[str, Any]:
    config = sys.modules["pandas._config.config"]
    deprecated = getattr(config, "_deprecated_options", {})
    changed = {}
    for key, option in config._registered_options.items():
        if key in deprecated:
            continue  # reading one warns (and its value follows another option's)
        try:
            value = pd.get_option(key)
        except Exception:
            continue
        if value is not option.defval and value != option.defval:
            changed[key] = value
    return changed


def _rc_changes(mpl: Any) -> dict[str, Any]:
    defaults = mpl.rcParamsDefault
    return {
        k: v
        for k, v in dict.items(mpl.rcParams)
        if k != "backend" and k in defaults and _differs(v, dict.__getitem__(defaults, k))
    }


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:
        return True


def restore(state: dict[str, Any]) -> list[str]:  # pragma: no cover - runs in the worker
    """Set the process-wide state read by `read`; returns what could not be set (said in the
    outcome)."""
    import warnings

    missed: list[str] = []

    def put(key: str, setter: Any) -> None:
        if key in state and state[key] is not None:
            try:
                setter(state[key])
            except Exception as exc:
                missed.append(f"{key}: {type(exc).__name__}")

    warnings.filters[:] = state.get("warnings", warnings.filters)  # type: ignore[index]
    warnings._filters_mutated()  # type: ignore[attr-defined]
    put("random", lambda v: __import__("random").setstate(v))
    np = sys.modules.get("numpy")
    if np is not None:
        put("numpy_random", np.random.set_state)
        put("numpy_err", lambda v: np.seterr(**v))
        put("numpy_print", lambda v: np.set_printoptions(**v))
    torch = sys.modules.get("torch")
    if torch is not None:
        put("torch_rng", torch.set_rng_state)
        put("torch_dtype", lambda v: torch.set_default_dtype(getattr(torch, v)))
        put("torch_device", lambda v: torch.set_default_device(v) if v != "cpu" else None)
        put("torch_grad", torch.set_grad_enabled)
        put("torch_cuda_rng", torch.cuda.set_rng_state_all)
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        put("tf_eager_functions", tf.config.run_functions_eagerly)
        put("tf_seed", tf.random.set_seed)
    keras = sys.modules.get("keras")
    if keras is not None:
        put("keras_floatx", keras.backend.set_floatx)
        put("keras_image_format", keras.backend.set_image_data_format)
        put("keras_policy", keras.mixed_precision.set_dtype_policy)
        put("keras_seed", _restore_keras_seed)
    pd = sys.modules.get("pandas")
    if pd is not None:
        put("pandas_options", lambda v: [pd.set_option(k, x) for k, x in v.items()])
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:
        put("matplotlib_rc", mpl.rcParams.update)
    return missed


def _restore_keras_seed(value: dict[str, Any]) -> None:  # pragma: no cover - worker only
    module = sys.modules["keras.src.random.seed_generator"]
    gen = module.global_seed_generator()
    gen.state.assign(value["state"])
