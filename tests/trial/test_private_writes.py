"""Trials that write files, in a real ipykernel: with `private_writes` (the server's default) each writer
runs to its end, its writes land in a private copy-on-write copy that reads in the same trial see, and the
real files stay byte-for-byte the same; a write past the cap ends as out of memory; writes outside the
covered directories (working, home, temporary) stay refused; network, processes and signals too."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import fresh_kernel, run_cell

pytestmark = [
    pytest.mark.integration,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("os_layer"),
]


@pytest.fixture(scope="module")
def cow(os_layer: dict[str, Any]) -> None:
    """Skips where the platform cannot mount a private copy (no user namespaces or no Landlock)."""
    if not (os_layer.get("netns") and os_layer.get("landlock_abi")):
        pytest.skip("no unprivileged user namespaces or no Landlock here: writes stay refused")


@pytest.fixture(scope="module")
def os_layer() -> dict[str, Any]:  # module-scoped twin of conftest's, for the module-scoped kernel
    from crane_jupyterlab.kernel.trial.sandbox import confine

    found = confine.probe()
    if not found.get("available"):
        pytest.skip(f"no OS sandbox here: {found.get('reason')}")
    return found


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kernel's working directory: files the trials rewrite, rename, delete, and must not change."""
    root = tmp_path_factory.mktemp("cow")
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("alpha\n")
    (root / "data" / "b.csv").write_text("x,y\n1,2\n")
    (root / "data" / "run.log").write_text("first line\n")
    (root / "data" / "sub").mkdir()
    (root / "data" / "sub" / "c.bin").write_bytes(bytes(range(256)))
    return root


def checksums(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file and directory under `root`: its bytes, mode, modification time."""
    found = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        found[str(path.relative_to(root))] = (
            path.read_bytes() if path.is_file() else b"dir",
            st.st_mode,
            st.st_mtime_ns,
        )
    return found


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(watched: Path, cow: None) -> AsyncIterator[AsyncKernelClient]:
    async with fresh_kernel(cwd=str(watched)) as (_, kc):
        await run_cell(
            kc,
            "import os, pathlib, pickle, logging, tempfile\n"
            "TMP = tempfile.gettempdir()\n"  # the kernel's (the trial's own TMPDIR is a scratch directory)
            "import numpy as np, pandas as pd\n"
            "W = pathlib.Path('data')\n"  # relative: the kernel's working directory
            "df = pd.DataFrame({'x': [1, 2, 3], 'y': [4.0, 5.0, 6.0]})\n"
            "arr = np.arange(12.0).reshape(3, 4)\n",
        )
        yield kc


async def trial(kit: SimpleNamespace, kc: AsyncKernelClient, cell: str, **options: Any) -> dict[str, Any]:
    result = await kit.run_in_kernel(kc, cell, private_writes=True, **options)
    outcome: dict[str, Any] = result["outcome"]
    return outcome


# Each writer, then a read of what it wrote in the same trial (asserts: a failed one is a crash).
WRITERS = {
    "open-write": "open(W / 'new.txt', 'w').write('x')\nassert open(W / 'new.txt').read() == 'x'",
    "open-truncate": "open(W / 'a.txt', 'w').write('beta')\nassert (W / 'a.txt').read_text() == 'beta'",
    "pathlib-write": "(W / 'a.txt').write_text('replaced')\nassert (W / 'a.txt').read_text() == 'replaced'",
    "to_csv": (
        "df.to_csv(W / 'b.csv', index=False)\npd.testing.assert_frame_equal(pd.read_csv(W / 'b.csv'), df)"
    ),
    "np.save": "np.save(W / 'arr.npy', arr)\nassert (np.load(W / 'arr.npy') == arr).all()",
    "tofile": (
        "arr.tofile(str(W / 'sub' / 'c.bin'))\n"
        "assert (np.fromfile(str(W / 'sub' / 'c.bin')) == arr.ravel()).all()"
    ),
    "pickle": (
        "with open(W / 'obj.pkl', 'wb') as f:\n    pickle.dump({'a': arr}, f)\n"
        "assert (pickle.load(open(W / 'obj.pkl', 'rb'))['a'] == arr).all()"
    ),
    "log-append": (
        "log = logging.getLogger('crane-trial-test')\n"
        "handler = logging.FileHandler(W / 'run.log')\n"  # mode 'a'
        "log.addHandler(handler)\nlog.warning('second line')\nhandler.close()\n"
        "assert (W / 'run.log').read_text() == 'first line\\nsecond line\\n'"
    ),
    "checkpoint-dir": (
        "os.makedirs(W / 'checkpoints' / 'epoch-1', exist_ok=True)\n"
        "(W / 'checkpoints' / 'epoch-1' / 'state.json').write_text('{}')\n"
        "assert sorted(os.listdir(W / 'checkpoints')) == ['epoch-1']"
    ),
    "rename": (
        "os.rename(W / 'a.txt', W / 'renamed.txt')\n"
        "assert not (W / 'a.txt').exists() and (W / 'renamed.txt').read_text() == 'alpha\\n'"
    ),
    "replace-across-dirs": (
        "os.replace(W / 'a.txt', W / 'sub' / 'a.txt')\nassert (W / 'sub' / 'a.txt').exists()"
    ),
    "remove": "os.remove(W / 'b.csv')\nassert not (W / 'b.csv').exists()",
    "rmtree": "import shutil\nshutil.rmtree(W / 'sub')\nassert not (W / 'sub').exists()",
    "rmtree-recreate": (
        "import shutil\nshutil.rmtree(W / 'sub')\nos.mkdir(W / 'sub')\nassert os.listdir(W / 'sub') == []"
    ),
    "symlink-inside": (
        "os.symlink('a.txt', W / 'latest')\n(W / 'latest').write_text('via link')\n"
        "assert (W / 'a.txt').read_text() == 'via link'"
    ),
    "chmod": "os.chmod(W / 'a.txt', 0o600)\nassert (W / 'a.txt').stat().st_mode & 0o777 == 0o600",
    "c-level": (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = libc.open(str(W / 'a.txt').encode(), os.O_WRONLY | os.O_TRUNC)\n"
        "assert fd >= 0, ctypes.get_errno()\n"
        "assert (W / 'a.txt').read_bytes() == b''"
    ),
    "home": (
        "home = pathlib.Path.home() / '.crane-trial-test' / 'cache.txt'\n"
        "home.parent.mkdir(exist_ok=True)\nhome.write_text('cached')\nassert home.read_text() == 'cached'"
    ),
    "tempdir": (
        "with open(os.path.join(TMP, 'crane-trial-test.txt'), 'w') as f:\n    f.write('t')\n"
        "assert open(os.path.join(TMP, 'crane-trial-test.txt')).read() == 't'"
    ),
    "absolute-path": "(W.resolve() / 'abs.txt').write_text('a')\nassert (W.resolve() / 'abs.txt').exists()",
}


@pytest.mark.parametrize("name", sorted(WRITERS))
async def test_each_writer_runs_to_its_end_in_a_private_copy(
    name: str, kernel: AsyncKernelClient, watched: Path, kit: SimpleNamespace
) -> None:
    home = Path.home() / ".crane-trial-test"
    before = checksums(watched)
    outcome = await trial(kit, kernel, WRITERS[name])
    assert outcome["status"] == "finished", outcome
    assert "private copy, discarded" in outcome["writes"], outcome
    assert checksums(watched) == before
    assert not home.exists()
    assert not Path(tempfile.gettempdir(), "crane-trial-test.txt").exists()


async def test_heavy_writers_torch_and_matplotlib(
    kernel: AsyncKernelClient, watched: Path, kit: SimpleNamespace
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    await run_cell(
        kernel,
        "import torch\nimport matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
        "weights = torch.nn.Linear(3, 2).state_dict()",
    )
    before = checksums(watched)
    # torch.save opens the file in C++; savefig through matplotlib's own writer.
    cell = (
        "torch.save(weights, W / 'model.pt')\n"
        "loaded = torch.load(W / 'model.pt')\n"
        "assert all((loaded[k] == weights[k]).all() for k in weights)\n"
        "plt.plot([1, 2, 3])\nplt.savefig(W / 'figure.png')\n"
        "assert (W / 'figure.png').read_bytes()[:4] == b'\\x89PNG'"
    )
    outcome = await trial(kit, kernel, cell)
    assert outcome["status"] == "finished", outcome
    assert outcome["writes"].startswith("wrote 2 files"), outcome
    assert checksums(watched) == before


async def test_a_crash_after_a_write_is_observed(
    kernel: AsyncKernelClient, watched: Path, kit: SimpleNamespace
) -> None:
    before = checksums(watched)
    outcome = await trial(kit, kernel, "df.to_csv(W / 'out.csv')\ntotal = df['z'].sum()")
    assert (outcome["status"], outcome["exception"], outcome["line"]) == ("crashed", "KeyError", 2), outcome
    assert outcome["writes"].startswith("wrote 1 file")
    assert checksums(watched) == before


async def test_renaming_a_directory_of_the_real_files_is_blocked_not_a_crash(
    kernel: AsyncKernelClient, watched: Path, kit: SimpleNamespace
) -> None:
    # Overlayfs in a user namespace cannot record a directory's rename (EXDEV): the real run would not
    # fail there, so the trial must not say it crashes. shutil.move copes with EXDEV by copying.
    before = checksums(watched)
    outcome = await trial(kit, kernel, "os.rename(W / 'sub', W / 'moved')")
    assert outcome["status"] == "blocked" and "EXDEV" in outcome["reason"], outcome
    moved = await trial(
        kit,
        kernel,
        "import shutil\nshutil.move(W / 'sub', W / 'moved')\nassert (W / 'moved' / 'c.bin').exists()",
    )
    assert moved["status"] == "finished", moved
    new_dir = await trial(kit, kernel, "os.mkdir(W / 'new')\nos.rename(W / 'new', W / 'renamed')")
    assert new_dir["status"] == "finished" and "made 1 directory" in new_dir["writes"], new_dir
    assert checksums(watched) == before


async def test_one_trial_never_sees_another_trials_writes(
    kernel: AsyncKernelClient, watched: Path, kit: SimpleNamespace
) -> None:
    assert (await trial(kit, kernel, "(W / 'left.txt').write_text('1')"))["status"] == "finished"
    outcome = await trial(kit, kernel, "assert not (W / 'left.txt').exists()")
    assert outcome["status"] == "finished", outcome
    assert "writes" not in outcome  # it wrote nothing
    assert not (watched / "data" / "left.txt").exists()
    # Nor does the kernel: in its own namespace the file never existed.
    assert await kit.printed(kernel, "print(int((W / 'left.txt').exists()))") == 0


async def test_a_huge_write_ends_with_the_caps_reason(
    kernel: AsyncKernelClient, watched: Path, kit: SimpleNamespace
) -> None:
    before = checksums(watched)
    free = shutil.disk_usage(watched).free
    cell = (
        "block = b'x' * (16 << 20)\n"
        "with open(W / 'huge.bin', 'wb') as f:\n"
        "    for _ in range(640):\n"  # 10 GB
        "        f.write(block)"
    )
    outcome = await trial(kit, kernel, cell, memory_mb=128, budget_s=30)  # 10 GB asked, 128 MB allowed
    assert outcome["status"] == "out_of_memory", outcome
    assert "128 MB" in outcome["reason"] and "written" in outcome["reason"], outcome
    assert checksums(watched) == before
    assert shutil.disk_usage(watched).free > free - (64 << 20)  # the real disk took none of it


OUTSIDE = {
    # Made in the private copy, where the supervisor cannot see it: a link out of it is refused.
    "symlink-out": "os.symlink('/var/tmp', W / 'out')\n(W / 'out' / 'crane-trial-test.txt').write_text('x')",
    "var-tmp": "open('/var/tmp/crane-trial-test.txt', 'w').write('x')",
    "etc": "open('/etc/crane-trial-test', 'w').write('x')",
    "c-level-outside": (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = libc.open(b'/var/tmp/crane-trial-c.txt', os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "assert fd >= 0"
    ),
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
async def test_writes_outside_the_covered_directories_stay_blocked(
    name: str, kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    for covered in (Path.cwd(), Path.home(), Path("/tmp")):
        assert not str(Path("/var/tmp").resolve()).startswith(str(covered.resolve()) + "/")
    outcome = await trial(kit, kernel, OUTSIDE[name])
    assert outcome["status"] == "blocked", outcome
    assert not Path("/var/tmp/crane-trial-test.txt").exists() and not Path("/etc/crane-trial-test").exists()
    assert not Path("/var/tmp/crane-trial-c.txt").exists()


async def test_network_leaving_the_group_and_signals_stay_refused(
    kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        for cell in (
            "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=2)",
            "import subprocess\nsubprocess.run(['setsid', 'true'], check=True)",  # would leave the group
            f"import signal\nos.kill({victim.pid}, signal.SIGKILL)",
        ):
            outcome = await trial(kit, kernel, cell)
            assert outcome["status"] == "blocked", (cell, outcome)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
