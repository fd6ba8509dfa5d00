"""Torch tensors copied to a trial worker (transfer.py): each storage's bytes once, out of band.

Torch pickles a storage by `torch.save`-ing it into bytes that travel in band: the bytes are copied four
times on the way (0.06-0.14 GB/s measured on a CPU for 100-500 MB, 7 s to rebuild 500 MB), and every
view of a tensor carries a copy of its own, so views that share memory in the kernel do not in the worker.
Here a storage goes as its raw bytes, out of band: copied once into the pack file's pages (from a GPU,
straight there) and, in the worker, wrapped in place over its private mapping (`torch.frombuffer`: no
copy, and a write reaches neither the pack nor the kernel). Every tensor over the same memory (a view, a
parameter and its `.data`) names the one storage, so the worker's share it as the kernel's do. A storage
on a GPU goes back to the same device in the worker, as `torch.load` puts it back. Nothing of the
kernel's changes.

Stdlib only at import: torch is read from `sys.modules`, where the kernel has it.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any


class _Bytes:
    """One storage's memory: the same object for every tensor over it (pickle's memo then writes it once
    and rebuilds one storage for all of them). In the pickle it is an out-of-band buffer whose bytes the
    pack writes itself (`write_at`), straight from the storage into the pack file: a Python buffer over
    the storage would need numpy's (`Tensor.numpy()` marks the kernel's storage as never resizable again)
    or a raw address (views released after their memory when the garbage collector clears the packer)."""

    __slots__ = ("device", "nbytes", "placeholder", "storage")

    def __init__(self, storage: Any) -> None:
        self.storage = storage  # the kernel's, read when the pack is written
        self.device = str(storage.device)
        self.nbytes = int(storage.nbytes())
        self.placeholder = pickle.PickleBuffer(bytearray())  # stands for the bytes in the pickle

    def write_at(self, fd: int, offset: int) -> None:
        """Copy the storage's bytes into the file `fd` at `offset` (page-aligned): a copy from the host or
        from the device into the file's own pages."""
        if not self.nbytes:
            return
        import mmap

        torch: Any = sys.modules["torch"]
        if os.fstat(fd).st_size < offset + self.nbytes:
            os.ftruncate(fd, offset + self.nbytes)
        pages = mmap.mmap(fd, self.nbytes, offset=offset)  # shared: the copy lands in the file's pages
        try:
            target = torch.frombuffer(pages, dtype=torch.uint8)
            source = torch.empty(0, dtype=torch.uint8, device=self.storage.device).set_(self.storage)
            target.copy_(source)
            del target, source  # the mapping closes only once no tensor holds it
        finally:
            pages.close()


def deferred(buffer: pickle.PickleBuffer, seen: dict[Any, Any]) -> _Bytes | None:
    """The storage a buffer the pickler hands out stands for (its bytes written by `write_at`), if any."""
    return seen.get(id(buffer))


def reduce_storage(obj: Any, seen: dict[Any, Any]) -> Any:
    """How a torch storage goes to a worker (a `__reduce__` value), or NotImplemented where `obj` is not
    one this module copies. `seen` maps each storage's memory, and its placeholder, to its `_Bytes`, for
    one pack."""
    if type(obj) is _Bytes:
        return (_untyped, (obj.placeholder, obj.device))
    torch: Any = sys.modules.get("torch")
    storages = getattr(torch, "storage", None)
    if storages is None:
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
    nbytes = int(untyped.nbytes())
    # Empty storages have no memory to share (their address is 0): each goes alone, as in the kernel.
    key = (str(device), int(untyped.data_ptr()), nbytes, 0 if nbytes else id(untyped))
    token = seen.get(key)
    if token is None:
        token = seen[key] = _Bytes(untyped)
        seen[id(token.placeholder)] = token
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
