"""Trials in a real ipykernel, sent silently as the server sends them, each checked from outside: the
side-effect suite (files, network, processes, signals), the kernel left unchanged, the kernel responsive
while a trial runs, no zombie, and a restart that ends a running trial."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient
from support import CountingServer, processes_with

from crane_jupyterlab.bench.kernels import drain_iopub, fresh_kernel, run_cell

pytestmark = [
    pytest.mark.integration,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("os_layer"),
]


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with files the trials must not change, and a file beside it."""
    root = tmp_path_factory.mktemp("watched")
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("alpha\n")
    (root / "data" / "b.csv").write_text("x,y\n1,2\n")
    (root / "data" / "sub").mkdir()
    (root / "data" / "sub" / "c.bin").write_bytes(bytes(range(256)))
    (root / "outside.txt").write_text("outside\n")
    return root


def checksums(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file and directory under `root`: content hash, mode, modification time."""
    found = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        found[str(path.relative_to(root))] = (digest, st.st_mode, st.st_mtime_ns)
    return found


@pytest.fixture(scope="module")
def server() -> Iterator[CountingServer]:
    counting = CountingServer()
    yield counting
    counting.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(watched: Path, server: CountingServer) -> AsyncIterator[tuple[Any, AsyncKernelClient]]:
    async with fresh_kernel(cwd=str(watched)) as (km, kc):
        await run_cell(
            kc,
            "import os, sys, random, json, shutil, signal, pathlib, subprocess, socket, urllib.request\n"
            "import numpy as np, pandas as pd\n"
            f"W = pathlib.Path({str(watched / 'data')!r})\n"
            f"PORT = {server.port}\n"
            "df = pd.DataFrame({'x': [1, 2, 3], 'y': [4.0, 5.0, 6.0]})\n"
            "arr = np.arange(12.0).reshape(3, 4)\n"
            "data = [3, 1, 2]\n"
            "gen = (i * i for i in range(100))\n"
            "it = iter(data)\n"
            "next(gen)\n"
            "random.seed(7)\n"
            "np.random.seed(7)\n",
        )
        # Counting connections needs a reachable server, which a kernel can reach: check that first.
        await run_cell(kc, "socket.create_connection(('127.0.0.1', PORT)).close()")
        assert server.count == 1
        server.count = 0
        yield km, kc


def kernel_pid(km: Any) -> int:
    pid: int = km.provisioner.process.pid
    return pid


FILE_CELLS = {
    "open-write": "open(W / 'new.txt', 'w').write('x')",
    "open-append": "open(W / 'a.txt', 'a').write('more')",
    "pathlib-write": "(W / 'a.txt').write_text('replaced')",
    "pathlib-rename": "(W / 'a.txt').rename(W / 'renamed.txt')",
    "pathlib-unlink": "(W / 'b.csv').unlink()",
    "os-replace": "os.replace(W / 'a.txt', W / 'sub' / 'a.txt')",
    "chmod": "os.chmod(W / 'a.txt', 0o777)",
    "to_csv": "df.to_csv(W / 'b.csv', index=False)",
    "np.save": "np.save(W / 'arr.npy', arr)",
    "tofile": "arr.tofile(str(W / 'arr.bin'))",
    "rmtree": "shutil.rmtree(W)",
    "outside": "open(W.parent / 'outside.txt', 'w').write('changed')",
    "mkdir": "os.makedirs(W / 'new' / 'dir')",
    "c-level": (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = libc.open(str(W / 'a.txt').encode(), os.O_WRONLY | os.O_TRUNC)\n"
        "assert fd >= 0, ctypes.get_errno()"
    ),
}


@pytest.mark.parametrize("name", sorted(FILE_CELLS))
async def test_files_are_unchanged(
    name: str, kernel: tuple[Any, AsyncKernelClient], watched: Path, kit: SimpleNamespace
) -> None:
    before = checksums(watched)
    result = await kit.run_in_kernel(kernel[1], FILE_CELLS[name])
    assert result["outcome"]["status"] == "blocked", result["outcome"]
    assert checksums(watched) == before


async def test_torch_save_is_blocked_by_the_os_layer(
    kernel: tuple[Any, AsyncKernelClient], watched: Path, kit: SimpleNamespace
) -> None:
    pytest.importorskip("torch")
    before = checksums(watched)
    await run_cell(kernel[1], "import torch\nweights = torch.nn.Linear(3, 2).state_dict()")
    # torch.save opens the file in C++ (no audit event): what refuses it is the OS layer.
    result = await kit.run_in_kernel(kernel[1], "torch.save(weights, W / 'model.pt')")
    assert result["outcome"]["status"] == "blocked"
    assert "model.pt" in result["outcome"]["reason"]
    assert checksums(watched) == before


NETWORK_CELLS = {
    "socket": "socket.create_connection(('127.0.0.1', PORT), timeout=2)",
    "raw-socket": "s = socket.socket()\ns.connect(('127.0.0.1', PORT))",
    "urllib": "urllib.request.urlopen(f'http://127.0.0.1:{PORT}/', timeout=2).read()",
    "requests": "import requests\nrequests.get(f'http://127.0.0.1:{PORT}/', timeout=2)",
    "udp": "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', PORT))",
}


@pytest.mark.parametrize("name", sorted(NETWORK_CELLS))
async def test_no_connection_leaves_the_trial(
    name: str, kernel: tuple[Any, AsyncKernelClient], server: CountingServer, kit: SimpleNamespace
) -> None:
    if name == "requests":
        pytest.importorskip("requests")
    result = await kit.run_in_kernel(kernel[1], NETWORK_CELLS[name])
    assert result["outcome"]["status"] == "blocked", result["outcome"]
    await asyncio.sleep(0.3)
    assert server.count == 0


async def test_in_a_network_namespace_of_its_own_a_socket_may_be_made_and_bound(
    kernel: tuple[Any, AsyncKernelClient], server: CountingServer, kit: SimpleNamespace, tmp_path: Path
) -> None:
    # TensorFlow's import makes a socket and binds ::1 (a probe); in the trial's own network namespace
    # that reaches nothing outside, so it runs; a path is the machine's, and connecting stays refused.
    bind = "s = socket.socket(socket.AF_INET6)\ns.bind(('::1', 0))\nport = s.getsockname()[1]"
    bound = await kit.run_in_kernel(kernel[1], bind)
    if "netns" not in str(bound["outcome"].get("sandbox")):
        pytest.skip("no private network namespace here (the sandbox refuses every socket instead)")
    assert bound["outcome"]["status"] == "finished", bound["outcome"]
    then = "t = socket.socket()\nt.bind(('127.0.0.1', 0))\nt.listen()\n"
    then += "socket.create_connection(t.getsockname())"
    connected = await kit.run_in_kernel(kernel[1], then)
    assert connected["outcome"]["status"] == "blocked", connected["outcome"]
    path = tmp_path / "trial.sock"
    unix = await kit.run_in_kernel(kernel[1], f"socket.socket(socket.AF_UNIX).bind({str(path)!r})")
    assert unix["outcome"]["status"] == "blocked", unix["outcome"]
    assert not path.exists()
    await asyncio.sleep(0.3)
    assert server.count == 0


# Each leaves a process running past the cell, a different way; the trial must end it.
PROCESS_CELLS = {
    "subprocess": "subprocess.Popen(['sleep', '{mark}'])",
    "os.system": "os.system('sleep {mark} &')",
    "bang": "!sleep {mark} &",
    "posix_spawn": "os.posix_spawn('/bin/sleep', ['sleep', '{mark}'], os.environ)",
    "fork": "if os.fork() == 0:\n    os.execvp('sleep', ['sleep', '{mark}'])",
    "nohup": "!nohup sleep {mark} > /dev/null 2>&1 &",
    "bash-cell": "%%bash\nsleep {mark} > /dev/null 2>&1 &\necho started",
}


@pytest.mark.parametrize("name", sorted(PROCESS_CELLS))
async def test_a_process_runs_in_the_sandbox_and_ends_with_the_trial(
    name: str, kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    mark = f"7.{abs(hash(name)) % 10**6:06d}"
    pid = kernel_pid(kernel[0])
    before = {p for p, _ in kit.children_of(pid)}
    result = await kit.run_in_kernel(kernel[1], PROCESS_CELLS[name].format(mark=mark))
    assert result["outcome"]["status"] == "finished", result["outcome"]
    assert processes_with(mark) == []
    assert {p for p, _ in kit.children_of(pid)} <= before


@pytest.mark.parametrize(
    "cell",
    [
        "!setsid sleep 61",  # a session of its own would outlive the trial's process group
        "subprocess.Popen(['sleep', '62'], start_new_session=True)",
        "!python3 -c 'import os; os.setpgid(0, 0)'",
    ],
)
async def test_a_process_cannot_leave_the_trials_group(
    cell: str, kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    result = await kit.run_in_kernel(kernel[1], cell)
    assert result["outcome"]["status"] == "blocked", result["outcome"]
    assert "session" in result["outcome"]["reason"] or "process group" in result["outcome"]["reason"]
    assert processes_with("sleep 61") == processes_with("sleep 62") == []


SHELL_CELLS = {
    "touch": "!touch {W}/new.txt",
    "rm": "!rm {W}/a.txt",
    "redirect": "!echo changed > {W}/a.txt",
    "bash-cell": "%%bash\necho changed > $CRANE_W/a.txt",
    "mv": "!mv {W}/a.txt {W}/moved.txt",
    "outside": "!echo changed >> {W}/../outside.txt",
    "python-child": "!python3 -c \"open('{W}/b.csv', 'w').write('x')\"",
}


@pytest.mark.parametrize("name", sorted(SHELL_CELLS))
async def test_a_shell_command_changes_no_file(
    name: str, kernel: tuple[Any, AsyncKernelClient], watched: Path, kit: SimpleNamespace
) -> None:
    before = checksums(watched)
    await run_cell(kernel[1], "os.environ['CRANE_W'] = str(W)")
    result = await kit.run_in_kernel(kernel[1], SHELL_CELLS[name] + "\nassert _exit_code == 0")
    assert result["outcome"]["status"] == "blocked", result["outcome"]
    assert checksums(watched) == before


async def test_a_shell_command_reaches_no_network_and_says_it_needed_one(
    kernel: tuple[Any, AsyncKernelClient], server: CountingServer, kit: SimpleNamespace
) -> None:
    cell = "!python3 -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{PORT}/')\""
    result = await kit.run_in_kernel(kernel[1], cell)
    outcome = result["outcome"]
    assert outcome["status"] == "blocked", outcome
    assert "'python3' reach the network" in outcome["reason"], outcome
    await asyncio.sleep(0.3)
    assert server.count == 0


async def test_shell_commands_run_as_the_kernel_runs_them(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    kc = kernel[1]
    # `x = !cmd` binds IPython's list of lines; `!cmd` leaves its exit code; a crash after is observed
    listed = "files = !ls {W}\nassert 'a.txt' in files and files.n\nfiles[99]"
    outcome = (await kit.run_in_kernel(kc, listed))["outcome"]
    assert (outcome["status"], outcome["exception"], outcome["line"]) == ("crashed", "IndexError", 3), outcome
    code = "!exit 3\nassert _exit_code == 3, _exit_code\nundefined_after_the_shell"
    outcome = (await kit.run_in_kernel(kc, code))["outcome"]
    assert (outcome["status"], outcome["exception"]) == ("crashed", "NameError"), outcome
    bash = "%%bash\nls / > /dev/null\necho done"
    assert (await kit.run_in_kernel(kc, bash))["outcome"]["status"] == "finished"
    # the kernel's own `!cmd` still runs through its pseudo-terminal, untouched by the trials
    reply = await run_cell(kc, "out = !echo kernel-side\nassert out == ['kernel-side']")
    assert reply["status"] == "ok"


async def test_a_package_install_is_answered_from_the_environment(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    kc = kernel[1]
    from importlib.metadata import version

    installed = (await kit.run_in_kernel(kc, "%pip install -q -U numpy 'pandas>=1.0' > /dev/null"))["outcome"]
    assert installed["status"] == "finished", installed
    assert f"already installed: numpy {version('numpy')}" in installed["installs"]
    missing = "!pip install -q crane-no-such-package==1.0\nimport crane_no_such_package\nx = 1 / 0"
    outcome = (await kit.run_in_kernel(kc, missing))["outcome"]
    assert outcome["status"] == "unavailable", outcome
    assert "needs crane-no-such-package" in outcome["reason"] and "lacks it" in outcome["reason"]
    # a version this environment does not have is not claimed satisfied
    pinned = "!pip install numpy==0.0.1\nimport numpy"
    outcome = (await kit.run_in_kernel(kc, pinned))["outcome"]
    assert outcome["status"] == "finished" and "not in this environment: numpy==0.0.1" in outcome["installs"]


@pytest.mark.parametrize(
    "cell",
    [
        "os.kill(VICTIM, signal.SIGKILL)",
        "os.killpg(os.getpgid(VICTIM), signal.SIGKILL)",
        "import ctypes\nassert ctypes.CDLL(None).kill(VICTIM, 9) == 0",
        "os.kill(os.getppid(), signal.SIGKILL)",  # the kernel itself
    ],
)
async def test_other_processes_receive_no_signal(
    cell: str, kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        await run_cell(kernel[1], f"VICTIM = {victim.pid}")
        result = await kit.run_in_kernel(kernel[1], cell)
        assert result["outcome"]["status"] == "blocked", result["outcome"]
        assert victim.poll() is None and kit.alive(victim.pid)
        assert kit.alive(kernel_pid(kernel[0]))
    finally:
        victim.kill()
        victim.wait()


SNAPSHOT = (
    "print(json.dumps({'keys': sorted(globals()), 'ids': {k: id(v) for k, v in globals().items()},"
    " 'n_in': len(In), 'out': sorted(Out), 'count': get_ipython().execution_count,"
    " 'last': repr(getattr(sys, 'last_value', None))}))"
)


async def test_the_kernel_is_unchanged(kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace) -> None:
    kc = kernel[1]
    before = await kit.printed(kc, SNAPSHOT)
    cells = [
        "data.append(4); data.sort(); df['z'] = df.x * 2; arr += 1",
        "for value in gen:\n    pass\nrest = list(it)",
        "draws = [random.random() for _ in range(5)] + list(np.random.rand(5))",
        "del df\nnew_name = 1\n1 / 0",
        "get_ipython().run_line_magic('reset', '-f')",
    ]
    for cell in cells:
        assert (await kit.run_in_kernel(kc, cell))["outcome"]["status"] in ("finished", "crashed")
    after = await kit.printed(kc, SNAPSHOT)
    # Exactly what one more snapshot cell adds: In[n] and _i<n>; the same objects under the same names.
    assert after["count"] == before["count"] + 1 and after["n_in"] == before["n_in"] + 1
    assert set(after["keys"]) - set(before["keys"]) == {f"_i{after['count'] - 1}"} - set(before["keys"])
    assert after["out"] == before["out"] and after["last"] == before["last"]
    assert {k: v for k, v in after["ids"].items() if k in before["ids"] and not k.startswith("_")} == {
        k: v for k, v in before["ids"].items() if not k.startswith("_")
    }
    state = await kit.printed(
        kc,
        "print(json.dumps([data, df.columns.tolist(), arr[0].tolist(), next(gen), next(it),"
        " random.random() == random.Random(7).random(), float(np.random.rand()) == float("
        "np.random.RandomState(7).rand())]))",
    )
    assert state == [[3, 1, 2], ["x", "y"], [0.0, 1.0, 2.0, 3.0], 1, 3, True, True]


async def test_model_weights_after_a_fit_in_the_trial(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    kc = kernel[1]
    pytest.importorskip("sklearn")
    await run_cell(
        kc,
        "from sklearn.linear_model import SGDClassifier\n"
        "clf = SGDClassifier(random_state=0).fit(arr, [0, 1, 0])\n"
        "weights = clf.coef_.copy()",
    )
    result = await kit.run_in_kernel(kc, "clf.partial_fit(arr * 5, [1, 0, 1])\nclf.fit(arr[::-1], [1, 1, 0])")
    assert result["outcome"]["status"] == "finished"
    assert await kit.printed(kc, "print(json.dumps(bool((clf.coef_ == weights).all())))") is True
    if _has("torch"):
        await run_cell(
            kc,
            "import torch\ntorch.manual_seed(0)\nnet = torch.nn.Linear(4, 2)\n"
            "before = [p.detach().clone() for p in net.parameters()]\n"
            # An optimizer's first step imports torch._dynamo: seconds the kernel pays once, not the trial.
            "torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1).step()",
        )
        train = (
            "opt = torch.optim.SGD(net.parameters(), lr=0.5)\n"
            "for _ in range(5):\n"
            "    opt.zero_grad(); net(torch.ones(3, 4)).sum().backward(); opt.step()"
        )
        assert (await kit.run_in_kernel(kc, train))["outcome"]["status"] == "finished"
        same = "print(json.dumps(all(torch.equal(a, b) for a, b in zip(before, net.parameters()))))"
        assert await kit.printed(kc, same) is True


async def test_long_library_calls_run_on_a_sample_in_a_quick_trial(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    """A grid search (n_jobs=2: processes the sandbox refuses) and a KMeans (joblib asks `lscpu`) run
    on a sample of their rows in a quick trial, so the crash after them is seen; the kernel's objects do
    not change; a row-wise apply is cut and tiled back to the real index."""
    kc = kernel[1]
    pytest.importorskip("sklearn")
    await run_cell(
        kc,
        "import time\nfrom sklearn.cluster import KMeans\nfrom sklearn.model_selection import GridSearchCV\n"
        "from sklearn.svm import SVC\nrng = np.random.default_rng(0)\n"
        "big = pd.DataFrame(rng.normal(size=(40000, 5)), columns=list('abcde'))\n"
        "target = (big['a'] + rng.normal(size=40000) > 0).astype(int)\nbig_test = big.iloc[:20, :4]\n"
        "grid = GridSearchCV(SVC(), {'C': [0.1, 1, 10]}, cv=5, n_jobs=2)\n"
        "def slow(row):\n    t = time.perf_counter()\n    while time.perf_counter() - t < 0.0002:\n"
        "        pass\n    return row['a']\n",
    )
    cell = (
        "grid.fit(big, target)\nkm = KMeans(n_clusters=8, n_init=10).fit(big)\npred = grid.predict(big_test)"
    )
    outcome = (await kit.run_in_kernel(kc, cell, quick=True, budget_s=5.0))["outcome"]
    assert (outcome["status"], outcome["exception"], outcome["line"]) == ("crashed", "ValueError", 3), outcome
    assert outcome["quick"]["crash"] == "certain" and outcome["quick"]["cut"]
    assert outcome["elapsed_ms"] < 5000
    rows = (
        "big['s'] = big.apply(slow, axis=1)\nassert big['s'].notna().all() and len(big) == 40000\nbig['zz']"
    )
    outcome = (await kit.run_in_kernel(kc, rows, quick=True, budget_s=5.0))["outcome"]
    assert (outcome["exception"], outcome["quick"]["crash"]) == ("KeyError", "depends"), outcome
    same = "print(json.dumps([hasattr(grid, 'best_estimator_'), grid.n_jobs, big.columns.tolist()]))"
    assert await kit.printed(kc, same) == [False, 2, list("abcde")]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


async def test_no_output_reaches_the_notebook(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    kc = kernel[1]
    await drain_iopub(kc)
    cell = (
        "print('leak-1')\nsys.stderr.write('leak-2')\ndisplay('leak-3')\nsys.__stdout__.write('leak-4')\n"
        "import logging\nlogging.getLogger('x').warning('leak-5')\n"
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n"
    )
    result = await kit.run_in_kernel(kc, cell, budget_s=30)
    assert result["outcome"]["status"] == "finished", result["outcome"]
    await run_cell(kc, "pass")
    messages = await drain_iopub(kc)
    assert not [m for m in messages if "leak" in str(m["content"])]
    assert not [m for m in messages if m["msg_type"] in ("display_data", "stream", "error")]


async def test_ipython_syntax_runs_as_the_kernel_runs_it(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    kc = kernel[1]
    crashed = (await kit.run_in_kernel(kc, "%%time\nx = 1\ny = undefined_name"))["outcome"]
    assert (crashed["status"], crashed["exception"], crashed["line"]) == ("crashed", "NameError", 3)
    magic = (await kit.run_in_kernel(kc, "%time z = 1\nz2 = missing_too"))["outcome"]
    assert (magic["exception"], magic["line"]) == ("NameError", 2)


async def test_the_kernel_stays_responsive_and_the_budget_ends_the_trial(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace
) -> None:
    from crane_jupyterlab.server import payload

    km, kc = kernel
    started = await payload.invoke(kc, "trial.start", "'import time\\ntime.sleep(60)', {'budget_s': 3.0}")
    assert started["state"] == "running"
    # Cells run while the trial runs (how much longer they take is measured by `crane-bench speed`).
    for _ in range(3):
        reply = await run_cell(kc, "1 + 1")
        assert reply["status"] == "ok"
    assert (await payload.invoke(kc, "trial.result", repr(started["token"])))["state"] == "running"
    assert kit.alive(started["pid"])
    deadline = time.monotonic() + 30
    while (state := await payload.invoke(kc, "trial.result", repr(started["token"])))["state"] == "running":
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    assert state["outcome"]["status"] == "timed_out"
    assert not kit.alive(started["pid"])
    assert not [c for c in kit.children_of(kernel_pid(km)) if c[1] == "Z"]


async def test_a_cells_first_import_of_a_library_is_not_counted_in_its_budget(
    kernel: tuple[Any, AsyncKernelClient], kit: SimpleNamespace, watched: Path
) -> None:
    """TensorFlow's first import takes 4-6 s, the budget is 5 s: the modules a cell's leading imports load
    for the first time are imported before the budget starts (execute.new_imports), so what comes after
    them is observed; an import after other statements counts, as before."""
    _, kc = kernel
    for name in ("slow_first_import", "slow_later_import"):
        (watched.parent / f"{name}.py").write_text("import time\ntime.sleep(2.5)\nVALUE = 1\n")
    await run_cell(kc, f"sys.path.append({str(watched.parent)!r})")
    first = "import slow_first_import\nslow_first_import.VALUE / 0"
    outcome = (await kit.run_in_kernel(kc, first, budget_s=1.5))["outcome"]
    assert (outcome["status"], outcome.get("exception")) == ("crashed", "ZeroDivisionError"), outcome
    later = "x = 1\nimport slow_later_import\nslow_later_import.VALUE / 0"
    outcome = (await kit.run_in_kernel(kc, later, budget_s=1.5))["outcome"]
    assert outcome["status"] == "timed_out", outcome


SLEEP_120 = "'import time\\ntime.sleep(120)', {'budget_s': 120}"


async def test_a_kernel_restart_ends_a_running_trial(kit: SimpleNamespace) -> None:
    from crane_jupyterlab.server import payload

    async with fresh_kernel() as (km, kc):
        started = await payload.invoke(kc, "trial.start", SLEEP_120)
        assert kit.alive(started["pid"])
        await km.restart_kernel(now=True)
        deadline = time.monotonic() + 20
        while kit.alive(started["pid"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not kit.alive(started["pid"])
        await kc.wait_for_ready(timeout=60)
        assert await payload.invoke(kc, "trial.result", repr(started["token"])) == {"state": "unknown"}


async def test_a_kernel_shutdown_ends_a_running_trial(kit: SimpleNamespace) -> None:
    from crane_jupyterlab.server import payload

    async with fresh_kernel() as (_, kc):
        started = await payload.invoke(kc, "trial.start", SLEEP_120)
        assert kit.alive(started["pid"])
    deadline = time.monotonic() + 20
    while kit.alive(started["pid"]) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not kit.alive(started["pid"])
