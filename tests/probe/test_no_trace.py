"""Extraction leaves no trace in a real ipykernel: namespace, history, counters, iterators, RNGs, output."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import CellFailed, fresh_kernel, iopub_of, run_cell
from crane_jupyterlab.kernel import MANIFEST
from crane_jupyterlab.server import payload as client

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

# Printed (not returned) so the check itself leaves only `_i<n>` and In[n] behind, no Out entry.
SNAPSHOT = (
    "print(__import__('json').dumps({'keys': sorted(globals()), 'n_in': len(In), 'out': sorted(Out),"
    " '_': repr(_), '__': repr(__), '_i': _i, 'count': get_ipython().execution_count,"
    " 'last': repr(getattr(__import__('sys'), 'last_value', None))}))"
)


async def snapshot(kc: AsyncKernelClient) -> dict[str, Any]:
    outputs: list[dict[str, Any]] = []
    reply = await run_cell(kc, SNAPSHOT, outputs=outputs)
    text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
    state: dict[str, Any] = json.loads(text)
    state["reply_count"] = reply["execution_count"]
    return state


async def spied_extract(
    kc: AsyncKernelClient, source: str, **kwargs: Any
) -> tuple[dict[str, Any], list[str]]:
    """extract(), plus the msg_ids of the requests it sent."""
    sent: list[str] = []
    execute = kc.execute

    def spy(*args: Any, **kw: Any) -> str:
        msg_id: str = execute(*args, **kw)
        sent.append(msg_id)
        return msg_id

    kc.execute = spy  # type: ignore[method-assign]
    try:
        result = await client.extract(kc, source, **kwargs)
    finally:
        del kc.execute  # back to the class's method
    return result, sent


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kc() -> AsyncIterator[AsyncKernelClient]:
    async with fresh_kernel() as (_, kc):
        await run_cell(
            kc,
            "import sys, random\n"
            "data = [3, 1, 2]\n"
            "gen = (i * i for i in range(100))\n"
            "it = iter(data)\n"
            "next(gen)\n",
        )
        with contextlib.suppress(CellFailed):  # the user's last error: extraction must not replace it
            await run_cell(kc, "1 / 0")
        # ipykernel aborts requests that reach it while it still stops on that error (stop_on_error): on a
        # loaded machine the test's first request could arrive then and come back "aborted"
        await asyncio.sleep(1.0)
        yield kc


async def test_namespace_history_counters_unchanged(kc: AsyncKernelClient) -> None:
    before = await snapshot(kc)
    await client.extract(kc, "total = sum(data) + next(gen) + undefined_name")
    await client.extract(kc, "import os\nos.path.join(a, b)")
    after = await snapshot(kc)
    # Exactly what one more snapshot cell adds: In[n] and _i<n>, nothing of ours.
    assert after["reply_count"] == before["reply_count"] + 1
    assert after["count"] == before["count"] + 1
    assert after["n_in"] == before["n_in"] + 1
    assert set(after["keys"]) - set(before["keys"]) == {f"_i{after['reply_count']}"}
    assert set(before["keys"]) - set(after["keys"]) == set()
    assert after["out"] == before["out"]
    assert (after["_"], after["__"]) == (before["_"], before["__"])
    assert after["_i"] == SNAPSHOT  # the previous input is the snapshot cell, not our request
    assert "ZeroDivisionError" in after["last"] and after["last"] == before["last"]


async def test_history_excludes_our_requests(kc: AsyncKernelClient) -> None:
    await run_cell(kc, "marker = 'history-check'")
    await client.extract(kc, "marker")
    cells = await client.history(kc)
    assert cells[-1] == "marker = 'history-check'"
    assert all("crane" not in cell for cell in cells)


async def test_no_output_on_iopub(kc: AsyncKernelClient) -> None:
    # A cell the probe cannot resolve and one with a syntax error must stay silent as well.
    for source in ("print(data); data.append(4)", "def broken(:", "display(gen)"):
        _, sent = await spied_extract(kc, source)
        msgs = await iopub_of(kc, *sent)
        assert {m["msg_type"] for m in msgs} == {"status"}, [m["content"] for m in msgs]


async def test_generator_and_iterator_positions_unchanged(kc: AsyncKernelClient) -> None:
    await client.extract(kc, "for x in gen:\n    print(x)\nnext(it)\nlist(it)\nsorted(gen)")
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "print(next(gen), next(it))", outputs=outputs)
    text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
    assert text.split() == ["1", "3"]  # gen had yielded 0 once; it had not started


async def test_random_state_unchanged(kc: AsyncKernelClient) -> None:
    await run_cell(kc, "random.seed(7)")
    await client.extract(kc, "random.random() + random.randint(1, 6)")
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "print(random.random() == random.Random(7).random())", outputs=outputs)
    assert "True" in "".join(m["content"].get("text", "") for m in outputs)


async def test_only_post_execute_fires(kc: AsyncKernelClient) -> None:
    await run_cell(
        kc,
        "fired = []\n"
        "for _event in ('pre_execute', 'pre_run_cell', 'post_execute', 'post_run_cell'):\n"
        "    get_ipython().events.register(_event, lambda *a, _e=_event: fired.append(_e))\n",
    )
    await run_cell(kc, "fired.clear()")
    await client.extract(kc, "fired")
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "print(__import__('json').dumps(fired))", outputs=outputs)
    fired = json.loads("".join(m["content"].get("text", "") for m in outputs))
    # The clearing cell's post events, then ours, then the printing cell's pre events.
    assert fired[:2] == ["post_execute", "post_run_cell"]
    assert fired[-2:] == ["pre_execute", "pre_run_cell"]
    # ipykernel fires post_execute for every request, silent ones included (see client.py); nothing else.
    assert set(fired[2:-2]) <= {"post_execute"}


async def test_no_heavy_import_in_bare_kernel() -> None:
    async with fresh_kernel() as (_, bare):
        before = await _modules(bare)
        await client.extract(
            bare,
            "import numpy as np, pandas as pd, torch, tensorflow as tf\n"
            "df = pd.DataFrame(np.zeros(3))\nmodel = torch.nn.Linear(2, 2)\ntf.constant(1)",
        )
        after = await _modules(bare)
        new = set(after) - set(before)
        ours = {m for m in new if m.startswith("_crane_jupyterlab_probe_")}
        # The payload's package and its modules, all under one hashed key.
        assert len({m.split(".")[0] for m in ours}) == 1 and len(ours) == len(MANIFEST) + 1
        for heavy in ("numpy", "pandas", "torch", "tensorflow", "sklearn", "matplotlib", "keras"):
            assert heavy not in after
        stdlib = __import__("sys").stdlib_module_names
        assert {m for m in new - ours if m.split(".")[0] not in stdlib} == set()


async def _modules(kc: AsyncKernelClient) -> list[str]:
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "print(__import__('json').dumps(sorted(__import__('sys').modules)))", outputs=outputs)
    modules: list[str] = json.loads(
        "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
    )
    return modules


async def test_dataloader_not_iterated(kc: AsyncKernelClient) -> None:
    pytest.importorskip("torch")
    await run_cell(
        kc,
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset, Sampler\n"
        "class CountingSampler(Sampler):\n"
        "    def __init__(self, n):\n"
        "        self.n, self.iterations = n, 0\n"
        "    def __iter__(self):\n"
        "        self.iterations += 1\n"
        "        return iter(range(self.n))\n"
        "    def __len__(self):\n"
        "        return self.n\n"
        "ds = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))\n"
        "sampler = CountingSampler(10)\n"
        "loader = DataLoader(ds, batch_size=4, sampler=sampler)\n"
        "shuffled = DataLoader(ds, batch_size=4, shuffle=True)\n"
        "class CountingLoader(DataLoader):\n"
        "    iterators = 0\n"
        "    def __iter__(self):\n"
        "        CountingLoader.iterators += 1\n"
        "        return super().__iter__()\n"
        "counted = CountingLoader(ds, batch_size=5)\n"
        "torch.manual_seed(0)\n"
        "rng_before = torch.get_rng_state().clone()\n",
    )
    result = await client.extract(
        kc,
        "for xb, yb in loader:\n    out = xb @ xb.T\nbatch = next(iter(shuffled))\nlen(loader)\n"
        "first = next(iter(counted))",
    )
    assert {"loader", "counted"} <= {entry["expr"] for entry in result["objects"]}
    outputs: list[dict[str, Any]] = []
    await run_cell(
        kc,
        "print(sampler.iterations, CountingLoader.iterators,"
        " bool(torch.equal(rng_before, torch.get_rng_state())))",
        outputs=outputs,
    )
    assert "".join(m["content"].get("text", "") for m in outputs).split() == ["0", "0", "True"]


async def test_numpy_global_rng_unchanged(kc: AsyncKernelClient) -> None:
    pytest.importorskip("numpy")
    await run_cell(kc, "import numpy as np\nnp.random.seed(3)\narr = np.arange(12.0).reshape(3, 4)")
    await client.extract(kc, "arr[np.random.randint(3)] + np.random.rand(4)")
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "print(np.random.rand() == np.random.RandomState(3).rand())", outputs=outputs)
    assert "True" in "".join(m["content"].get("text", "") for m in outputs)


SPY = """
calls = []
class Spy:
    def __init__(self):
        self.items = [1, 2]
    def __iter__(self):
        calls.append('iter'); return iter(self.items)
    def __len__(self):
        calls.append('len'); return 2
    def __getitem__(self, key):
        calls.append('getitem'); return 1
    def __repr__(self):
        calls.append('repr'); return 'Spy()'
    def __str__(self):
        calls.append('str'); return 'Spy'
    def __bool__(self):
        calls.append('bool'); return True
    def __getattr__(self, name):
        calls.append('getattr'); raise AttributeError(name)
    def __eq__(self, other):
        calls.append('eq'); return False
    def __hash__(self):
        calls.append('hash'); return 1
    @property
    def prop(self):
        calls.append('prop'); return 5
spy = Spy()
import io
text = io.StringIO('line1\\nline2\\n')
text.readline()
"""


async def test_user_code_never_runs(kc: AsyncKernelClient) -> None:
    await run_cell(kc, SPY)
    result = await client.extract(
        kc, "for v in spy:\n    spy[0]\nlen(spy), spy.prop, spy.missing, str(spy), spy == 1\ntext.read()"
    )
    assert {"spy", "text"} <= {entry["expr"] for entry in result["objects"]}
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, "print(calls, text.tell())", outputs=outputs)
    assert "".join(m["content"].get("text", "") for m in outputs).strip() == "[] 6"


async def test_autoreload_ignores_our_modules() -> None:
    # %autoreload walks sys.modules before every cell: our source-only modules must not trouble it.
    async with fresh_kernel() as (_, kc):
        await run_cell(kc, "%load_ext autoreload\n%autoreload 2")
        await client.extract(kc, "value")
        outputs: list[dict[str, Any]] = []
        await run_cell(kc, "value = 1\nprint('clean')", outputs=outputs)
        assert [m["content"].get("text") for m in outputs if m["msg_type"] in ("stream", "error")] == [
            "clean\n"
        ]
