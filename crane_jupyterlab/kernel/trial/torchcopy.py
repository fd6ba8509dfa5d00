"""Torch tensors copied to a trial worker (transfer.py): each storage's bytes once, out of band.

Torch pickles a storage by `torch.save`-ing it into bytes that travel in band: the bytes are copied four
times on the way (0.06-0.14 GB/s measured on a CPU for 100-500 MB, 7 s to rebuild 500 MB), and every
view of a tensor carries a copy of its own, so views that share memory in the kernel do not in the worker.
Here a storage goes as its raw bytes, handed to the pickle's buffer callback: written once into the pack
file and, in the worker, wrapped in place over its private mapping (`torch.frombuffer`: no copy, and a
write reaches neither the pack nor the kernel). Every tensor over the same memory (a view, a parameter and
its `.data`) names the one storage, so the worker's share it as the kernel's do. A storage on a GPU is
copied to the host once here and to the same device in the worker, as `torch.load` puts it back.

Stdlib only at import: torch is read from `sys.modules`, where the kernel has it.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any


class _Bytes:
    """One storage's memory on the host: the same object for every tensor over it (pickle's memo then
    writes it once and rebuilds one storage for all of them)."""

    __slots__ = ("device", "host")

    def __init__(self, host: Any, device: str) -> None:
        self.host = host  # kept alive until the pack is written: the buffer reads its memory
        self.device = device

    def buffer(self) -> pickle.PickleBuffer:
        # Through numpy, whose array keeps the storage alive for as long as a view of it is exported (a
        # ctypes array over the storage's address did not: the cycle the pickler makes with its buffer
        # callback, cleared by the garbage collector in any order, released views after their memory).
        torch: Any = sys.modules["torch"]
        flat = torch.empty(0, dtype=torch.uint8).set_(self.host)
        return pickle.PickleBuffer(flat.numpy())


def reduce_storage(obj: Any, seen: dict[Any, _Bytes]) -> Any:
    """How a torch storage goes to a worker (a `__reduce__` value), or NotImplemented where `obj` is not
    one this module copies. `seen` maps each storage's memory to its `_Bytes`, for one pack."""
    if type(obj) is _Bytes:
        return (_untyped, (obj.buffer(), obj.device))
    torch: Any = sys.modules.get("torch")
    storages = getattr(torch, "storage", None)
    if storages is None or "numpy" not in sys.modules:  # without numpy: torch's own pickling
        return NotImplemented
    if type(obj) is torch.Tensor and obj.dtype in _newer_dtypes(storages):
        rebuild, args = obj.__reduce_ex__(5)[:2]
        if rebuild is getattr(torch._utils, "_rebuild_tensor_v3", None):
            return (_tensor_v3, args)
        return NotImplemented
    if isinstance(obj, storages.TypedStorage):
        untyped, dtype = obj._untyped_storage, obj.dtype
    elif isinstance(obj, storages.UntypedStorage):
        untyped, dtype = obj, None
    else:
        return NotImplemented
    device = untyped.device
    if device.type == "meta" or getattr(obj, "_fake_device", None) is not None:
        return NotImplemented  # no data to copy: torch's own way
    key = (str(device), int(untyped.data_ptr()), int(untyped.nbytes()))
    token = seen.get(key)
    if token is None:
        host = untyped if device.type == "cpu" else untyped.cpu()
        token = seen[key] = _Bytes(host, str(device))
    return (_storage, (token, dtype))


def _newer_dtypes(storages: Any) -> Any:
    """The dtypes torch pickles with an untyped storage (float8, uint16...), which its own pickling cannot
    load back (its `_rebuild_tensor_v3` reads the storage as a typed one)."""
    try:
        return storages._new_dtypes()
    except Exception:
        return ()


def _tensor_v3(untyped: Any, *args: Any) -> Any:
    torch: Any = __import__("torch")

    return torch._utils._rebuild_tensor_v3(_storage(untyped, torch.uint8), *args)


def _untyped(buffer: Any, device: str) -> Any:
    torch: Any = __import__("torch")

    view = memoryview(buffer)
    if view.nbytes == 0:
        storage = torch.UntypedStorage(0)
    else:
        storage = torch.frombuffer(view, dtype=torch.uint8).untyped_storage()
    if device != "cpu":
        storage = storage.to(device=torch.device(device))
    return storage


def _storage(untyped: Any, dtype: Any) -> Any:
    if dtype is None:
        return untyped
    torch: Any = __import__("torch")

    return torch.storage.TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)
