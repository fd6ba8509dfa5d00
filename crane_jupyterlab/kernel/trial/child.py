"""What runs in the forked child of a trial run (`fork.py` and `watch.py` are the kernel's side): it leaves
the kernel's sockets, streams and shared memory alone, enters the sandbox (`sandbox/`), runs the cell on
its copy-on-write copy of the user namespace and reports on a pipe, as JSON lines: "ready" once the sandbox
holds, "done" with the outcome as the child sees it. It ends with `os._exit` (no atexit handlers, no
finalizers). `fork.py` imports it; nothing here imports the kernel's side.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import time
from typing import Any

from ..cell import runnable
from . import chain, execute, quick, shell_commands, tfwork, threads, transfer
from .outcome import ms, private_kb, unavailable
from .sandbox import confine, inherited, overlay, seccomp
from .sandbox.hooks import Guard

# Shared writable mappings up to this size in all are copied into the child; bigger ones become read-only.
COPY_SHARED_LIMIT = 64 * 1024 * 1024
MESSAGE_CHARS = execute.MESSAGE_CHARS


# -- the child ---------------------------------------------------------------------------------------


def main(
    source: str,
    ns: dict[str, Any],
    shell: Any,
    opts: dict[str, Any],
    scratch: str,
    writer: int,
    control: Any,
    random_state: Any,
    parent: int,
    pack: int = -1,
    then_run: bool = False,
) -> None:  # pragma: no cover - runs in the forked child, which ends with os._exit
    code = 70
    try:
        os.setpgid(0, 0)  # an interrupt of the kernel's process group does not reach us
        if sys.platform.startswith("linux"):
            confine.set_pdeathsig()
        if os.getppid() != parent:  # the kernel died before PR_SET_PDEATHSIG took hold
            os._exit(0)
        gc.freeze()  # a collection would touch (and copy) every old object of the kernel
        report = enter_sandbox(shell, opts, scratch, writer, control, random_state, pack)
        guard = report.pop("guard")
        if pack >= 0 and then_run:
            # The inputs first, as they are before the cell changes them: a worker runs the cell on them
            # if this fork cannot (worker.py); "ready" says whether they were packed.
            report["packed"] = _pack(pack, source, ns, shell, opts)
        # the cell's first imports of large libraries, before its budget starts (control.py and worker.py
        # list them where this fork runs the cell, and allow the time)
        execute.import_first(opts.get("first_imports") or [])
        _send(writer, {"phase": "ready", **report})
        if pack >= 0 and not then_run:
            done = _pack(pack, source, ns, shell, opts)
            fallback = opts.get("worker") == "auto" and opts.get("fork_fallback", True)
            if done.get("status") != "packed" and fallback:
                # No worker can take these inputs: this fork runs the cell on the kernel's own objects,
                # and observes what comes before the graph function that stops it (worker.py).
                uncopied = done.get("reason")
                done = execute.run(source, ns, shell, guard, report, quick.preparer(opts, writer))
                done["uncopied"] = uncopied
        else:
            done = execute.run(source, ns, shell, guard, report, quick.preparer(opts, writer))
        done["refusals"] = list(guard.refusals)
        done["extra_memory_mb"] = round(private_kb(os.getpid()) / 1024, 1)
        _send(writer, {"phase": "done", **done})
        below = opts.get("below")
        if below and pack < 0 and done.get("status") == "finished":
            # The cells below, on the state the edited cell left (chain.py); the kernel's side has the
            # edited cell's outcome already.
            cut = bool((done.get("quick") or {}).get("cut"))
            chain.run(source, below, ns, shell, guard, report, opts, writer, cut)
        code = 0
    except BaseException as exc:
        try:
            reason = (
                exc.args[0]
                if isinstance(exc, NoSandbox)
                else f"the trial failed: {type(exc).__name__}: {exc}"
            )
            _send(writer, {"phase": "done", **unavailable(str(reason)[:MESSAGE_CHARS])})
        except BaseException:
            pass
    finally:
        os._exit(code)


def _pack(pack: int, source: str, ns: dict[str, Any], shell: Any, opts: dict[str, Any]) -> dict[str, Any]:
    """The packing child's work: the cell's inputs into the `pack` file, for a worker (worker.py)."""
    t0 = time.perf_counter()
    try:
        limit = float(opts.get("worker_max_mb") or transfer.DEFAULT_LIMIT_MB)
        packed = transfer.pack(pack, runnable(source, shell), ns, limit, shell)
    except transfer.Uncopyable as exc:
        return unavailable(str(exc)[:MESSAGE_CHARS])
    return {"status": "packed", "elapsed_ms": ms(time.perf_counter() - t0), **packed}


class NoSandbox(Exception):
    """The OS sandbox could not be entered (and hooks-only trials are not allowed)."""


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def enter_sandbox(
    shell: Any,
    opts: dict[str, Any],
    scratch: str,
    writer: int,
    control: Any,
    random_state: Any,
    pack: int = -1,
) -> dict[str, Any]:  # pragma: no cover - child only
    """Everything between the fork and the cell; returns what the "ready" report carries.

    The one sandbox of everything that runs notebook code before the user asks: a trial's fork, and each
    variant of the replica judge (checks/replica/runner.py), whose process forks like the kernel."""
    t0 = time.perf_counter()
    steps: dict[str, float] = {}

    def step(name: str) -> None:
        steps[name] = ms(time.perf_counter() - t0)

    layers: dict[str, Any] = {}
    cow: dict[str, Any] = overlay.NONE  # private copy-on-write layers for the cell's writes
    table = seccomp.arch()
    if table is not None:
        # First: a new user namespace needs a single-threaded process, and the libraries below may
        # start threads.
        try:
            layers["private_shm"] = confine.enter_namespaces(shm_mb=max(16, int(opts["memory_mb"]) // 4))
            layers["netns"] = True
            if opts["private_writes"]:  # mounted while we still may (overlay.py)
                cow = overlay.enter(scratch, int(opts["memory_mb"]))
        except OSError as exc:  # not allowed here (Docker, Ubuntu's AppArmor): the other layers hold
            layers["netns"] = False
            layers["netns_error"] = exc.strerror or str(exc)
    step("namespaces")
    _quiet(shell)
    keep = {writer, control.fileno(), *overlay.fds(cow), *([pack] if pack >= 0 else [])}
    downgraded, watched = inherited.neutralise(keep)
    step("fds")
    protected = _private_mappings()
    step("mappings")
    _limits(opts)
    _single_threaded()
    tfwork.arm()  # a TensorFlow graph function ends the trial when called, instead of hanging
    step("threads")
    _libraries(scratch, random_state)
    startup_probes()
    step("libraries")
    os_layer = processes = False
    failure = "no seccomp filter for this platform"
    if table is not None:
        try:
            layers["landlock_abi"] = confine.landlock_abi()
            confine.drop_privileges(table[1])
            writable = [scratch] + ([confine.SHM] if layers.get("private_shm") else []) + cow["dirs"]
            if layers["landlock_abi"]:
                confine.restrict_files(layers["landlock_abi"], writable, netns=bool(layers.get("netns")))
            processes = True  # in the trial's process group, which ends with it (watch.py)
            listener = confine.install_filter(table[1], table[0], watched, processes=processes)
            import socket

            # What the supervisor may let through: writes Landlock guards, in these directories; and
            # the kernel's descriptors it watches for the child.
            grant = {
                "landlock": bool(layers["landlock_abi"]),
                "writable": writable,
                "watched": watched,
                "processes": processes,
                **overlay.grant(cow),
            }
            # The kernel keeps the layers' tmpfs to measure and list what was written.
            socket.send_fds(control, [json.dumps(grant).encode()], [listener, *overlay.fds(cow)])
            os.close(listener)
            os_layer = True
        except OSError as exc:
            failure = f"the kernel refused the sandbox ({exc.strerror or exc})"
    if not os_layer:
        control.close()  # with the OS layer it stays open: the supervisor's refusals arrive on it
    for fd in overlay.fds(cow):
        os.close(fd)
    if not os_layer and not opts["hooks_only"]:
        raise NoSandbox(
            f"no OS sandbox: {failure}; an administrator may allow hooks-only trials "
            "(c.CraneExtension.trial_hooks_only = True)"
        )
    private = ((confine.SHM,) if layers.get("private_shm") else ()) + tuple(cow["dirs"])
    guard = Guard(
        scratch, os_layer, private, netns=bool(layers.get("netns")), processes=os_layer and processes
    )
    shell_commands.prepare(shell)
    if os_layer:
        guard.channel = control
    sys.addaudithook(guard)
    _refuse_input(guard)
    inherited.guard_pools(guard.refuse)
    guard.active = True
    return {
        "guard": guard,
        "sandbox": confine.sandbox_name(layers) + "+hooks" if os_layer else "audit hooks only",
        "landlock": bool(layers.get("landlock_abi")),
        "netns_error": layers.get("netns_error"),
        "layers": cow["dirs"] or cow.get("error"),  # where writes land in a private copy, or why none
        "downgraded": downgraded,
        "watched": {fd: entry["what"] for fd, entry in watched.items()},
        "os_layer": os_layer,
        "protected_mappings": protected,
        "setup_ms": ms(time.perf_counter() - t0),
        "steps": steps,
    }


def _quiet(shell: Any) -> None:  # pragma: no cover - child only
    """No output can reach the notebook: fds 0/1/2 and sys.std* to /dev/null, IPython's display and
    ipykernel's streams and session as no-ops (they would talk to the kernel's sockets)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives until os._exit
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    sys.stderr = sys.stdout

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    iostream = sys.modules.get("ipykernel.iostream")
    if iostream is not None:
        for name in ("OutStream", "IOPubThread", "BackgroundSocket"):
            cls = getattr(iostream, name, None)
            for method in ("write", "writelines", "flush", "_flush", "send_multipart", "schedule"):
                if cls is not None and hasattr(cls, method):
                    setattr(cls, method, (lambda self, s="", *a, **k: len(s) if isinstance(s, str) else None))
    session = sys.modules.get("jupyter_client.session")
    if session is not None and hasattr(session, "Session"):
        session.Session.send = nothing
    publisher = getattr(shell, "display_pub", None)
    if publisher is not None:
        publisher.publish = nothing
        publisher.clear_output = nothing


def _private_mappings() -> int:  # pragma: no cover - child only
    """Memory the kernel shares with other processes (np.memmap in r+ mode, multiprocessing locks, shared
    memory) becomes the child's own: small mappings are copied, big ones made read-only (a write then
    ends the child, reported as blocked). Returns how many were made read-only."""
    try:
        with open("/proc/self/maps") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return 0
    shared = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[1][1] == "w" and parts[1][3] == "s":
            start, end = (int(x, 16) for x in parts[0].split("-"))
            shared.append((start, end - start, parts[1][0] == "r"))
    if not shared:
        return 0
    c = confine.libc()
    table = seccomp.arch()
    protected, copied = 0, 0
    for start, size, readable in shared:
        if readable and table is not None and copied + size <= COPY_SHARED_LIMIT:
            tmp = c.lib.mmap(None, size, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
            if tmp not in (None, -1, 0xFFFFFFFFFFFFFFFF):
                c.ctypes.memmove(tmp, start, size)
                try:
                    c.syscall(
                        table[1]["mremap"], c.ctypes.c_void_p(tmp), size, size, 3, c.ctypes.c_void_p(start)
                    )
                    copied += size
                    continue
                except OSError:
                    pass
        if c.lib.mprotect(start, size, 1) == 0:  # PROT_READ
            protected += 1
    return protected


def _limits(opts: dict[str, Any]) -> None:  # pragma: no cover - child only
    """Lower priority, the first to go when memory runs out, no core dumps, and an address-space cap."""
    with contextlib.suppress(OSError):
        os.nice(int(opts["nice"]))
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # No file the trial or a program it runs writes (its scratch directory is on disk) grows past
        # the memory cap: `dd` into $TMPDIR fails with EFBIG instead of filling the disk.
        cap = int(opts["memory_mb"]) * 1024 * 1024
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_FSIZE, (cap, hard))
        with open("/proc/self/statm") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        # A backstop for one huge allocation before the watching thread's next look; the cap itself is
        # measured on the child's own pages (copy-on-write copies included), which this cannot see.
        limit = size + 2 * int(opts["memory_mb"]) * 1024 * 1024 + (1 << 30)
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard == resource.RLIM_INFINITY or limit < hard:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, ImportError):
        pass


def _single_threaded() -> None:  # pragma: no cover - child only
    """One thread for torch, OpenMP and BLAS in the child: their pools' threads do not survive the fork,
    and the kernel keeps its cores."""
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            threads.KERNEL[0] = int(torch.get_num_threads())  # what the real run will use
            torch.set_num_threads(1)
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if ".so" in line and "/" in line}
    except OSError:
        return
    import ctypes

    setters = {
        "openblas": ("openblas_set_num_threads", "openblas_set_num_threads64_",
                     "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_"),
        "gomp": ("omp_set_num_threads",), "iomp": ("omp_set_num_threads",),
        "libomp": ("omp_set_num_threads",),
        "mkl_rt": ("MKL_Set_Num_Threads",), "blis": ("bli_thread_set_num_threads",),
    }  # fmt: skip
    for path in paths:
        base = os.path.basename(path)
        for key, names in setters.items():
            if key in base:
                try:
                    lib = ctypes.CDLL(path)
                except OSError:
                    continue
                for name in names:
                    fn = getattr(lib, name, None)
                    if fn is not None:
                        with contextlib.suppress(Exception):
                            fn(1)


def _libraries(scratch: str, random_state: Any) -> None:  # pragma: no cover - child only
    """The child behaves like the kernel where the fork changed something, and writes nothing by itself."""
    rnd = sys.modules.get("random")
    if rnd is not None and random_state is not None:
        with contextlib.suppress(Exception):
            rnd.setstate(random_state)  # random reseeds itself in a forked child
    sys.dont_write_bytecode = True  # an import would write .pyc files (refused, and then "blocked")
    import tempfile

    tempfile.tempdir = scratch
    for name in ("TMPDIR", "TEMP", "TMP"):
        os.environ[name] = scratch
    mpl = sys.modules.get("matplotlib")
    if mpl is None:
        os.environ["MPLBACKEND"] = "agg"
    else:
        try:
            current = mpl.rcParams._get_backend_or_none() or ""
        except Exception:
            current = ""
        if current and "inline" not in current and current.lower() != "agg":
            with contextlib.suppress(Exception):
                mpl.use("agg", force=True)  # a GUI backend in a forked child would use the kernel's display
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        with contextlib.suppress(Exception):
            asyncio.events._set_running_loop(None)  # the kernel's loop does not run here


# Modules whose start-up probes start a process, and what answers them here without one.
_LOKY_CONTEXT = "joblib.externals.loky.backend.context"


def _physical_cores() -> int:
    """Physical cores as loky counts them (`lscpu --parse=core`), read from /proc/cpuinfo instead."""
    cores: set[tuple[str, str]] = set()
    physical = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() == "physical id":
                    physical = value.strip()
                elif key.strip() == "core id":
                    cores.add((physical, value.strip()))
    except OSError:
        pass
    return len(cores) or os.cpu_count() or 1


def _answer_probes(cores: int) -> None:
    """Seed what loky would start `lscpu` for, and run joblib's parallel work in this process."""
    context = sys.modules.get(_LOKY_CONTEXT)
    if context is not None and getattr(context, "physical_cores_cache", 0) is None:
        setattr(context, "physical_cores_cache", cores)  # noqa: B010
    joblib = sys.modules.get("joblib")
    config = getattr(joblib, "parallel_config", None) or getattr(joblib, "parallel_backend", None)
    if config is not None and not getattr(_answer_probes, "entered", False):
        with contextlib.suppress(Exception):
            # n_jobs > 1 would start worker processes: the same results, computed one after another.
            config(backend="sequential").__enter__()
            _answer_probes.entered = True  # type: ignore[attr-defined]


_DATALOADER = "torch.utils.data.dataloader"


def _load_in_process() -> None:
    """torch's DataLoader with `num_workers > 0` starts worker processes (refused: the trial would end
    "blocked"): its batches are loaded in this process instead, the same batches one after another; an
    error in the dataset is raised as the same exception class as the workers re-raise."""
    module = sys.modules.get(_DATALOADER)
    loader: Any = getattr(module, "DataLoader", None)
    if not isinstance(loader, type) or getattr(vars(loader).get("__init__"), "_crane_in_process", False):
        return
    original = vars(loader)["__init__"]

    def __init__(self: Any, *given: Any, **kwargs: Any) -> None:
        args = list(given)
        for position, key, alone in ((5, "num_workers", 0), (11, "multiprocessing_context", None)):
            if len(args) > position:
                args[position] = alone
            elif key in kwargs:
                kwargs[key] = alone
        if "prefetch_factor" in kwargs:
            kwargs["prefetch_factor"] = None
        if "persistent_workers" in kwargs:
            kwargs["persistent_workers"] = False
        original(self, *args, **kwargs)

    __init__._crane_in_process = True  # type: ignore[attr-defined]
    setattr(loader, "__init__", __init__)  # noqa: B010
    made = vars(loader).get("_get_iterator")
    if callable(made):

        def _get_iterator(self: Any) -> Any:
            # A loader the kernel made before the trial (`data_iter = DataLoader(..., num_workers=2)` in
            # an earlier cell) loads in this process too: the trial's copy of it, not the kernel's.
            if getattr(self, "num_workers", 0):
                for key, alone in (("num_workers", 0), ("multiprocessing_context", None), ("timeout", 0)):
                    with contextlib.suppress(Exception):
                        object.__setattr__(self, key, alone)
            return made(self)

        setattr(loader, "_get_iterator", _get_iterator)  # noqa: B010


class _AnswerAfter:
    """A module's loader, then the probe answers once the module has run."""

    def __init__(self, loader: Any, cores: int) -> None:
        self.loader, self.cores = loader, cores

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        with contextlib.suppress(Exception):
            _answer_probes(self.cores)
            _load_in_process()


class _ProbeAnswers:
    """A meta path finder that answers the probes of joblib/loky once the cell imports them."""

    cores = 1

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in ("joblib", _LOKY_CONTEXT, _DATALOADER):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: Any = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _AnswerAfter(spec.loader, self.cores)
                return spec
            if spec is not None:
                return spec
        return None


def startup_probes() -> None:  # pragma: no cover - child and worker only
    """Library start-up probes that start a process (the sandbox refuses one, and the trial would end
    "blocked" before the cell's real outcome) are answered in this process: loky's physical core count
    (`lscpu`), joblib's worker processes for n_jobs > 1 (the sequential backend instead), and torch
    DataLoader's workers (loading in this process instead). Libraries are touched only when loaded; a
    later import of joblib or torch is answered as it runs."""
    try:
        finder = _ProbeAnswers()
        finder.cores = _physical_cores()
        _answer_probes(finder.cores)
        _load_in_process()
        if _LOKY_CONTEXT not in sys.modules or _DATALOADER not in sys.modules:
            sys.meta_path.insert(0, finder)
    except Exception:
        pass


def _refuse_input(guard: Guard) -> None:  # pragma: no cover - child only
    import builtins

    def refused(*args: Any, **kwargs: Any) -> str:
        guard.refuse("wait for input from the user")
        return ""

    builtins.input = refused
    module = sys.modules.get("getpass")
    if module is not None:
        setattr(module, "getpass", refused)  # noqa: B010 - a module the kernel loaded, in the child
