"""The trial worker's own side: a fresh interpreter of the kernel's Python that runs one trial and ends
(`worker.py` is the kernel's side).

It is spawned, never forked from the kernel, so TensorFlow's thread pools and a CUDA context of its own
work in it. `BOOTSTRAP` (the `-c` code) reads the payload's sources from stdin and installs them as the
kernel does; `main` then enters the namespaces while the process has one thread (a user namespace needs
that), imports the libraries the kernel has loaded and says it is warm. That is the spare. A job arrives
on the control socket with the pack of the cell's inputs (`transfer.py`); the worker takes the kernel's
working directory, `sys.path` and environment, mounts the private copy of the directories it may write
to, enters the rest of the sandbox (Landlock, capabilities dropped, the seccomp filter on every thread,
its notifications sent to the kernel's supervisor, the audit hooks), rebuilds the inputs, says it is
ready and runs the cell as the forked child does (`execute.py`, quick trials included). It reports on a
pipe as JSON lines, ends with `os._exit`, and ends at once when the kernel goes away (its lifeline pipe
closes).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

from . import chain, execute, quick, shell_commands, state, transfer
from .child import startup_probes
from .outcome import REBUILD_REFUSED, listed, ms, private_kb, unavailable
from .sandbox import confine, overlay, seccomp
from .sandbox.hooks import Guard

# Run as `python -I -c BOOTSTRAP`: stdin carries {"key", "sources", "args"}; nothing but the stdlib is
# imported before the payload is installed.
BOOTSTRAP = """
import json, os, sys, types
data = json.loads(sys.stdin.buffer.read())
sys.stdin.close()
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
sys.stdin = open(os.devnull)  # as a kernel's: `help()` and `input` checks ask it whether it is a tty
key = data["key"]
name, filename, text = next(s for s in data["sources"] if s[0] == "envelope")
envelope = types.ModuleType(key + ".envelope")
exec(compile(text, filename, "exec"), envelope.__dict__)
envelope.install(types.ModuleType(key), envelope, [tuple(s) for s in data["sources"]])
sys.modules[key + ".trial.spawned"].main(data["args"])
"""


def main(args: dict[str, Any]) -> None:  # pragma: no cover - runs in the spawned worker
    code = 70
    report = int(args["report"])
    try:
        layers = _enter_namespaces(args)  # first: a new user namespace needs a single-threaded process
        _lifeline(int(args["lifeline"]), str(args["scratch"]))
        warm = _warm(args)
        _send(report, {"phase": "warm", **warm, "layers": layers})
        import socket

        control = socket.socket(fileno=int(args["control"]))
        job, fds = _next_job(control, str(args["scratch"]))
        if "cells" in job:  # a run from the top (top.py): no inputs, a fresh namespace
            done = _run_top(job, control, report, layers)
        else:
            done = _run(job, fds[0], control, report, layers, warm)
        _send(report, {"phase": "done", **done})
        code = 0
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            _send(
                report,
                {"phase": "done", **unavailable(f"the trial worker failed: {type(exc).__name__}: {exc}")},
            )
    finally:
        os._exit(code)


def _next_job(control: Any, scratch: str) -> tuple[dict[str, Any], list[int]]:
    """The job, and the descriptor sent with it; before it, the kernel may send modules it loaded since
    this spare started (`{"warm": [...]}`), imported here while the spare still waits."""
    import socket

    buffer, fds = b"", []
    while True:
        while b"\n" not in buffer:
            data, got, _, _ = socket.recv_fds(control, 1 << 20, 1)
            if not data:
                _leave(scratch)  # the kernel discarded the spare, or went away
            buffer += data
            fds += got
        line, buffer = buffer.split(b"\n", 1)
        message = json.loads(line)
        if "warm" in message:
            _import_all(list(message["warm"]))
            continue
        return message, fds


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _lifeline(fd: int, scratch: str) -> None:
    """End the worker when the kernel goes away (only the kernel holds the pipe's other end), leaving
    nothing: a spare removes its scratch directory (a worker in a trial is removed by the kernel's
    thread, or finds it covered by its private layer)."""
    import _thread

    def wait() -> None:
        with contextlib.suppress(OSError):
            while os.read(fd, 1):
                pass
        _leave(scratch)

    _thread.start_new_thread(wait, ())


def _leave(scratch: str) -> None:
    """End a worker that ran no trial, leaving nothing behind."""
    import shutil

    shutil.rmtree(scratch, ignore_errors=True)
    os._exit(0)


def _enter_namespaces(args: dict[str, Any]) -> dict[str, Any]:
    """User, network and mount namespaces, while the process still has its one thread."""
    layers: dict[str, Any] = {}
    if seccomp.arch() is None:
        return layers
    try:
        layers["private_shm"] = confine.enter_namespaces(shm_mb=max(16, int(args["memory_mb"]) // 4))
        layers["netns"] = True
    except OSError as exc:
        layers["netns"] = False
        layers["netns_error"] = exc.strerror or str(exc)
    return layers


def _warm(args: dict[str, Any]) -> dict[str, Any]:
    """What the kernel has loaded, imported ahead of need; and IPython's shell, as the cell's host."""
    t0 = time.perf_counter()
    sys.path[:] = args.get("sys_path") or sys.path  # the kernel's, which -I left out
    sys.dont_write_bytecode = True
    os.environ.setdefault("MPLBACKEND", "agg")
    with contextlib.suppress(OSError):
        os.nice(int(args.get("nice", 5)))
    with contextlib.suppress(BaseException):
        # `platform.uname()` starts `uname -p`, which the sandbox refuses (TensorFlow's import asks):
        # asked here, its answer is cached for the cell.
        __import__("platform").processor()
    imported, failed = _import_all(args.get("modules", []))
    if args.get("cuda"):  # the kernel uses the GPU: this worker's own context, made while it waits
        with contextlib.suppress(BaseException):
            _own_gpu(float(args.get("gpu_fraction") or 0.5))
    _shell()
    return {"warm_ms": ms(time.perf_counter() - t0), "imported": imported, "import_failed": failed,
            "warm_kb": private_kb(os.getpid())}  # fmt: skip


def _import_all(names: list[str]) -> tuple[list[str], list[str]]:
    imported, failed = [], []
    for name in names:
        if name in sys.modules:
            continue
        try:
            __import__(name)
            imported.append(name)
        except BaseException as exc:
            failed.append(f"{name}: {type(exc).__name__}")
    return imported, failed


_SHELL: list[Any] = []


def _shell() -> Any:
    """A plain IPython shell hosts the cell (magics, `display`, the display hook), its history off and
    its output going nowhere; None without IPython."""
    if _SHELL:
        return _SHELL[0]
    shell = None
    try:
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.enabled = False
        shell = InteractiveShell.instance(config=config)

        def nothing(*args: Any, **kwargs: Any) -> None:
            return None

        shell.display_pub.publish = nothing  # type: ignore[method-assign]
        shell.display_pub.clear_output = nothing  # type: ignore[method-assign]
        # `%matplotlib inline` (and `%gui`) ask a plain shell for an event loop it lacks, which raises
        # NotImplementedError; in a kernel they select a display. Here nothing is displayed.
        shell.enable_gui = nothing  # type: ignore[method-assign]
    except BaseException:
        shell = None
    _SHELL.append(shell)
    return shell


def _run(
    job: dict[str, Any], pack: int, control: Any, report: int, layers: dict[str, Any], warm: dict[str, Any]
) -> dict[str, Any]:  # pragma: no cover - worker only
    t0 = time.perf_counter()
    opts = job["opts"]
    scratch = job["scratch"]
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job.get("environ") or {})
    os.environ["MPLBACKEND"] = "agg"  # matplotlib was imported with it; a GUI backend has no display here
    # Libraries the kernel loaded after this spare started: imported now, before the sandbox, as the
    # spare imported the others (an import may probe the network or write a cache).
    # Where the time before the cell goes, phase by phase (the profile a GPU run reads: `rebuild_ms`
    # was seconds there for inputs under 1 MB).
    phases: dict[str, float] = {}

    def lap(phase: str) -> None:
        phases[phase] = ms(time.perf_counter() - t0) - sum(phases.values())

    late, _ = _import_all(job.get("modules") or [])
    lap("late_imports")
    startup_probes()  # joblib's n_jobs and loky's core count without a process, as in the fork
    devices = _own_gpu(float(job.get("gpu_fraction") or 0.5)) if job.get("cuda") else ()
    lap("gpu")
    guard, ready = _sandbox(opts, scratch, control, layers, devices)
    shell = _shell()
    lap("sandbox")
    ns: dict[str, Any] = shell.user_ns if shell is not None else {"__name__": "__main__"}
    try:
        sys.path[:] = job["sys_path"]
        for name in job.get("local_modules", []):
            with contextlib.suppress(BaseException):
                __import__(name)
        rebuilt = transfer.rebuild(pack, ns, job["package"])
        lap("inputs")
        missed = state.restore(rebuilt["state"])
        lap("state")
    except BaseException as exc:
        return unavailable(
            f"the worker could not rebuild the cell's inputs: {type(exc).__name__}: {exc}"[:2000]
        )
    finally:
        os.close(pack)
    if guard.refusals:  # the inputs, or a module the cell imports, are not what the kernel has
        return unavailable(f"{REBUILD_REFUSED}{listed(guard.refusals)}")
    ready["rebuild_ms"] = ms(time.perf_counter() - t0)
    ready.update({"names": len(rebuilt["names"]), "state_missed": missed, "late_imports": late[:20],
                  "phases_ms": {k: round(v, 1) for k, v in phases.items()}})  # fmt: skip
    _send(report, {"phase": "ready", **ready})
    done = execute.run(job["source"], ns, shell, guard, ready, quick.preparer(opts, report))
    done = _copy_cannot_grow(_copy_lacked(done, job))
    if done.get("status") == "crashed" and "CUDA out of memory" in str(done.get("message")):
        share = float(job.get("gpu_fraction") or 0.5)
        cap = f"the cell needed more GPU memory than the worker's cap ({share:.0%} of the GPU)"
        done = {"status": "out_of_memory", "elapsed_ms": done.get("elapsed_ms"), "reason": cap}
    done["refusals"] = guard.refusals
    done["extra_memory_mb"] = round(max(0, private_kb(os.getpid()) - int(warm.get("warm_kb", 0))) / 1024, 1)
    return done


# What a copy mapped in place from the pack meets where the kernel's own object would not: its memory
# cannot grow (torch's `resize_`, a numpy array's `resize`).
_CANNOT_GROW = ("Trying to resize storage that is not resizable", "cannot resize this array: it does not own")


def _copy_cannot_grow(done: dict[str, Any]) -> dict[str, Any]:
    """A crash on resizing an input's memory is the copy's (the worker maps the pack's bytes in place,
    which cannot grow; the kernel's tensor or array owns its memory): never claimed as a crash."""
    message = str(done.get("message") or "")
    if done.get("status") != "crashed" or not any(words in message for words in _CANNOT_GROW):
        return done
    why = ("the cell resizes an input's memory in place, which the worker's copy (mapped from the pack) "
           "cannot do where the kernel's can: the trial cannot tell what the cell meets")  # fmt: skip
    return {**unavailable(why), "elapsed_ms": done.get("elapsed_ms")}


def _copy_lacked(done: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """A NameError for a name the kernel has is the copy's doing (a function rebuilt with other globals:
    a Keras Lambda layer's, deserialized by Keras), not what the cell meets: never claimed as a crash.
    Unless the cell itself deletes that name."""
    import re

    if done.get("status") != "crashed" or done.get("exception") != "NameError":
        return done
    found = chain.NAME_ERROR.search(str(done.get("message") or ""))
    if found is None or found.group(1) not in set(job.get("kernel_names") or []):
        return done
    name = found.group(1)
    if re.search(rf"\bdel\b[^\n]*\b{re.escape(name)}\b", str(job.get("source") or "")):
        return done
    why = (f"the worker's copy of the inputs lacked `{name}`, which the kernel has (a function rebuilt "
           "without the notebook's globals): the trial cannot tell what the cell meets")  # fmt: skip
    return {**unavailable(why), "elapsed_ms": done.get("elapsed_ms")}


def _run_top(
    job: dict[str, Any], control: Any, report: int, layers: dict[str, Any]
) -> dict[str, Any]:  # pragma: no cover - worker only
    """The notebook's cells from the top, in this fresh interpreter: the kernel's working directory,
    `sys.path` and environment, none of its state; the cells as a chain whose target is empty."""
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job.get("environ") or {})
    os.environ["MPLBACKEND"] = "agg"
    sys.path[:] = job["sys_path"]
    opts = job["opts"]
    startup_probes()
    guard, ready = _sandbox(opts, job["scratch"], control, layers)
    shell = _shell()
    ns: dict[str, Any] = shell.user_ns if shell is not None else {"__name__": "__main__"}
    _send(report, {"phase": "ready", **ready})
    # The empty target ran to its end: the kernel's side (watch.py) gives the cells the chain's budget.
    _send(report, {"phase": "done", "status": "finished", "elapsed_ms": 0.0, "refusals": []})
    chain.run("", list(job["cells"]), ns, shell, guard, ready, opts, report, fresh=True)
    return {"status": "finished", "top": True}


_GPU: list[tuple[str, ...]] = []


def _own_gpu(fraction: float) -> tuple[str, ...]:  # pragma: no cover - worker only, on a GPU machine
    """A CUDA context of the worker's own, made before the sandbox (it opens the driver's device files),
    each device capped at `fraction` of its memory and warmed (a first kernel launch, cuBLAS's handle);
    the device files it may keep writing to. Made once (a spare of a GPU kernel makes it while it waits)."""
    import glob

    if _GPU:
        return _GPU[0]
    torch = __import__("torch")
    for index in range(torch.cuda.device_count()):
        torch.cuda.set_per_process_memory_fraction(fraction, index)
        torch.empty(1, device=f"cuda:{index}")
        with contextlib.suppress(Exception):  # the first kernel launch and cuBLAS's handle, ahead of need
            square = torch.ones(8, 8, device=f"cuda:{index}")
            (square @ square).sum().item()
    _GPU.append(tuple(sorted(glob.glob("/dev/nvidia*"))))
    return _GPU[0]


def _sandbox(
    opts: dict[str, Any], scratch: str, control: Any, layers: dict[str, Any], devices: tuple[str, ...] = ()
) -> tuple[Guard, dict[str, Any]]:  # pragma: no cover - worker only
    """The rest of the sandbox, as the forked child enters it (child.enter_sandbox), but for a process with
    threads: the seccomp filter is synchronised onto all of them."""
    import socket
    import tempfile

    cow: dict[str, Any] = overlay.NONE
    if layers.get("netns") and opts.get("private_writes"):
        try:
            cow = overlay.enter(scratch, int(opts["memory_mb"]))
        except OSError as exc:
            cow = {**overlay.NONE, "error": exc.strerror or str(exc)}
    tempfile.tempdir = scratch
    for name in ("TMPDIR", "TEMP", "TMP"):
        os.environ[name] = scratch
    _limit_memory(opts)
    table = seccomp.arch()
    os_layer = processes = False
    failure = "no seccomp filter for this platform"
    if table is not None:
        try:
            layers["landlock_abi"] = confine.landlock_abi()
            confine.drop_privileges(table[1])
            writable = [scratch] + ([confine.SHM] if layers.get("private_shm") else []) + cow["dirs"]
            if layers["landlock_abi"]:
                confine.restrict_files(layers["landlock_abi"], writable, devices, bool(layers.get("netns")))
            processes = True  # in the worker's process group, which ends with it (worker.py)
            listener = confine.install_filter(table[1], table[0], {}, every_thread=True, processes=processes)
            grant = {"landlock": bool(layers["landlock_abi"]), "writable": writable, "watched": {},
                     "gpu": bool(devices), "processes": processes, **overlay.grant(cow)}  # fmt: skip
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
        raise RuntimeError(
            f"no OS sandbox: {failure}; an administrator may allow hooks-only trials "
            "(c.CraneExtension.trial_hooks_only = True)"
        )
    private = ((confine.SHM,) if layers.get("private_shm") else ()) + tuple(cow["dirs"])
    guard = Guard(
        scratch, os_layer, private, netns=bool(layers.get("netns")), processes=os_layer and processes
    )
    shell_commands.prepare(_shell())
    if os_layer:
        guard.channel = control
    sys.addaudithook(guard)
    _refuse_input(guard)
    guard.active = True
    ready = {
        "sandbox": confine.sandbox_name(layers) + "+hooks" if os_layer else "audit hooks only",
        "landlock": bool(layers.get("landlock_abi")),
        "netns_error": layers.get("netns_error"),
        "layers": cow["dirs"] or cow.get("error"),
        "os_layer": os_layer,
        "worker": True,
    }
    return guard, ready


def _limit_memory(opts: dict[str, Any]) -> None:  # pragma: no cover - worker only
    """The first to go when memory runs out, no core dumps, and an address-space backstop above what the
    warm worker already maps (TensorFlow reserves much it never touches)."""
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
        limit = size + 2 * int(opts["memory_mb"]) * 1024 * 1024 + (1 << 30)
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard == resource.RLIM_INFINITY or limit < hard:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, ImportError):
        pass


def _refuse_input(guard: Guard) -> None:  # pragma: no cover - worker only
    import builtins

    def refused(*args: Any, **kwargs: Any) -> str:
        guard.refuse("wait for input from the user")
        return ""

    builtins.input = refused
