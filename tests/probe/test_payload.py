"""The kernel client against real ipykernels: contract, errors, restarts, concurrency, hostile objects, and
every library's summarizer through the real probe."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import math
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import CellFailed, fresh_kernel, run_cell, wait_reply
from crane_jupyterlab.kernel import envelope
from crane_jupyterlab.server import payload as client

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


def needs(module: str) -> pytest.MarkDecorator:
    # find_spec, not importorskip: the library is only imported inside the kernel.
    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=f"{module} is not installed")


def entry(result: dict[str, Any], expr: str) -> dict[str, Any]:
    """The entry for `expr`, searched through children too."""
    stack = list(result["objects"])
    while stack:
        item = stack.pop(0)
        if item["expr"] == expr:
            return item
        stack.extend(item.get("children") or [])
    raise AssertionError(f"no entry for {expr!r} in {[o['expr'] for o in result['objects']]}")


def shows(item: dict[str, Any], *tokens: str) -> None:
    """Every token appears in the entry's type or facts (key names are the probe's business)."""
    text = json.dumps(item)
    missing = [t for t in tokens if t not in text]
    assert not missing, f"{missing} not in {text[:1500]}"


async def printed(kc: AsyncKernelClient, code: str) -> str:
    outputs: list[dict[str, Any]] = []
    await run_cell(kc, code, outputs=outputs)
    return "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kc() -> AsyncIterator[AsyncKernelClient]:
    async with fresh_kernel() as (_, kc):
        yield kc


# --- contract and arguments -------------------------------------------------------------------


async def test_result_is_probe_json(kc: AsyncKernelClient) -> None:
    await run_cell(kc, "counts = {'a': 1, 'b': 2}")
    result = await client.extract(kc, "total = counts['a'] + missing_name")
    assert result["probe_version"] >= 1
    assert "missing_name" in result["undefined"]
    assert entry(result, "counts")["type"] == "dict"
    json.dumps(result, allow_nan=False)  # strict JSON, as it crossed the wire


async def test_any_source_text_travels_intact(kc: AsyncKernelClient) -> None:
    await run_cell(kc, "café = 'crème'")
    source = "print(café, '😀 \\' \"\"\" \\x00', naïve)\n# " + "x" * 200_000
    result = await client.extract(kc, source)
    assert result["undefined"] == ["naïve"]
    assert entry(result, "café")["type"] == "str"


async def test_bad_arguments_fail_before_the_kernel(kc: AsyncKernelClient) -> None:
    with pytest.raises(TypeError, match="AsyncKernelClient"):
        await client.extract(object(), "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        await client.extract(kc, b"x = 1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        await client.extract(kc, "x", options=[("history", True)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_columns"):
        await client.extract(kc, "x", options={"max_columns": [1]})
    with pytest.raises(ValueError, match="budget_ms"):
        await client.extract(kc, "x", options={"budget_ms": math.nan})
    with pytest.raises(ValueError, match="timeout"):
        await client.extract(kc, "x", timeout=0)


async def test_options_reach_the_probe(kc: AsyncKernelClient) -> None:
    await run_cell(kc, "option_marker = 1")
    assert "option_marker = 1" not in (await client.extract(kc, "x")).get("history", [])
    assert "option_marker = 1" in (await client.extract(kc, "x", {"history": True}))["history"]


async def test_history_in_execution_order(kc: AsyncKernelClient) -> None:
    for cell in ("a = 1", "b = a + 1", "a = 3"):
        await run_cell(kc, cell)
    await client.extract(kc, "a + b")
    assert (await client.history(kc))[-3:] == ["a = 1", "b = a + 1", "a = 3"]


async def test_json_safe_in_process() -> None:
    raw = {"v": [math.nan, math.inf, -math.inf, 1.5], "t": (1, 2), 3: object(), "ok": None}
    safe = envelope.json_safe(raw)
    assert safe == {"v": ["nan", "inf", "-inf", 1.5], "t": [1, 2], "3": "<object>", "ok": None}
    json.dumps(safe, allow_nan=False)
    cycle: list[Any] = []
    cycle.append(cycle)
    json.dumps(envelope.json_safe({"cycle": cycle}), allow_nan=False)  # cut at a depth, not a crash
    clean = {"a": [1, "x", True]}
    assert envelope.json_safe(clean) is clean  # compliant results are passed through untouched


async def test_result_survives_disabled_formatters() -> None:
    async with fresh_kernel() as (_, kc):
        await run_cell(kc, "quiet = 1\nformatter = get_ipython().display_formatter")
        for which in ("formatters['application/json']", "mimebundle_formatter"):
            await run_cell(kc, f"formatter.{which}.enabled = False")
            assert entry(await client.extract(kc, "quiet"), "quiet")["type"] == "int"
            await run_cell(kc, f"formatter.{which}.enabled = True")


# --- concurrency --------------------------------------------------------------------------------


async def test_concurrent_extracts_on_one_client(kc: AsyncKernelClient) -> None:
    results = await asyncio.gather(*(client.extract(kc, f"undefined_{i} + 1") for i in range(5)))
    assert [r["undefined"] for r in results] == [[f"undefined_{i}"] for i in range(5)]


async def test_concurrent_kernels_do_not_mix() -> None:
    async with fresh_kernel() as (_, one), fresh_kernel() as (_, two):
        await run_cell(one, "value = 'text'")
        await run_cell(two, "value = 42")
        for _ in range(3):
            first, second = await asyncio.gather(client.extract(one, "value"), client.extract(two, "value"))
            assert entry(first, "value")["type"] == "str"
            assert entry(second, "value")["type"] == "int"


# --- failures -----------------------------------------------------------------------------------


async def test_timeout_on_busy_kernel_then_recovers(kc: AsyncKernelClient) -> None:
    busy = kc.execute("import time; time.sleep(4)")
    with pytest.raises(client.KernelTimeout):
        await client.extract(kc, "time", timeout=0.5)
    with pytest.raises(TimeoutError):  # extract gave up while the kernel was still busy
        await wait_reply(kc, busy, timeout=0.1)
    await wait_reply(kc, busy, timeout=30)
    # The late reply to the timed-out request is still queued: it must be skipped, not taken as ours.
    result = await client.extract(kc, "undefined_after_timeout", timeout=30)
    assert result["undefined"] == ["undefined_after_timeout"]


async def test_request_aborted_by_a_failing_cell_is_retried(kc: AsyncKernelClient) -> None:
    # ipykernel aborts what is queued behind a failing cell, our request included; the retry answers.
    await client.extract(kc, "x")  # installed: one request per attempt from here on
    kc.execute("import time; time.sleep(1); 1 / 0")
    sent = []
    execute = kc.execute

    def spy(*args: Any, **kwargs: Any) -> str:
        sent.append(kwargs.get("user_expressions"))
        msg_id: str = execute(*args, **kwargs)
        return msg_id

    kc.execute = spy  # type: ignore[method-assign]
    try:
        result = await client.extract(kc, "undefined_after_abort", timeout=30)
    finally:
        del kc.execute
    assert result["undefined"] == ["undefined_after_abort"]
    assert len(sent) == 2  # the aborted attempt and the retry


async def test_restart_reinstalls_transparently() -> None:
    async with fresh_kernel() as (km, kc):
        await run_cell(kc, "before = 1")
        assert entry(await client.extract(kc, "before"), "before")["type"] == "int"
        await km.restart_kernel(now=True)
        await kc.wait_for_ready(timeout=60)
        await run_cell(kc, "after = 'x'")
        result = await client.extract(kc, "before + after")
        assert result["undefined"] == ["before"]
        assert entry(result, "after")["type"] == "str"


async def test_dead_kernel_is_reported() -> None:
    async with fresh_kernel() as (_, kc):
        await client.extract(kc, "x")
        kc.execute("import os; os._exit(1)")
        await asyncio.sleep(0.5)
        with pytest.raises(client.KernelDead):
            await client.extract(kc, "x", timeout=20)


@pytest.fixture
def probe_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The client reading a copy of the real payload (the kernel package), which a test may change."""
    shutil.copytree(client._KERNEL, tmp_path / "kernel", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(client, "_SOURCES", client._Sources(tmp_path / "kernel"))
    return tmp_path / "kernel"


async def test_upgraded_probe_replaces_the_old_one(kc: AsyncKernelClient, probe_copy: Path) -> None:
    listing = (
        "print(sorted(k for k in __import__('sys').modules if k.startswith('_crane_jupyterlab_probe_')))"
    )
    await client.extract(kc, "x")
    old = await printed(kc, listing)
    with (probe_copy / "probe" / "summarize" / "pandas.py").open("a") as fh:
        fh.write("\n# a new payload version\n")
    await client.extract(kc, "x")
    new = await printed(kc, listing)
    assert old != new
    # This version's package and modules; every module of the old version is gone.
    modules = eval(new)
    assert len({name.split(".")[0] for name in modules}) == 1
    assert len(modules) == len(client.MANIFEST) + 1  # the package itself, then each manifest module


async def test_broken_probe_is_a_probe_error(kc: AsyncKernelClient, probe_copy: Path) -> None:
    with contextlib.suppress(CellFailed):
        await run_cell(kc, "raise KeyError('the user error')")
    broken = probe_copy / "probe" / "summarize" / "torch.py"
    source = broken.read_text()
    broken.write_text(source + "\nraise RuntimeError('broken probe')\n")
    with pytest.raises(client.ProbeError, match="broken probe"):
        await client.extract(kc, "x")
    # No traceback of ours replaced the user's post-mortem state.
    assert "the user error" in await printed(kc, "import sys; print(repr(sys.last_value))")
    # Nothing of the broken payload stayed registered in the kernel.
    key = client.payload_key()
    assert (
        await printed(kc, f"print([k for k in __import__('sys').modules if k.startswith({key!r})])") == "[]\n"
    )
    broken.write_text(source + "\n# repaired\n")
    assert (await client.extract(kc, "undefined_now"))["undefined"] == ["undefined_now"]


# --- hostile objects ------------------------------------------------------------------------------

HOSTILE = """
import time, unittest.mock
class RaisingProperties:
    @property
    def shape(self): raise RuntimeError('no shape')
    @property
    def dtype(self): raise RuntimeError('no dtype')
    @property
    def columns(self): raise RuntimeError('no columns')
class Anything:
    def __getattr__(self, name): return Anything()
    def __call__(self, *args, **kwargs): return Anything()
    def __iter__(self):
        while True:
            yield Anything()
    def __len__(self): return 10 ** 12
    def __getitem__(self, key): return Anything()
class SlowRepr:
    def __repr__(self):
        time.sleep(60)
        return 'slow'
    __str__ = __repr__
class BadRepr:
    def __repr__(self): raise ValueError('bad repr')
    def __str__(self): raise ValueError('bad str')
    def __bool__(self): raise ValueError('bad bool')
    def __eq__(self, other): raise ValueError('bad eq')
    __hash__ = object.__hash__
class SlowLen(list):
    def __len__(self):
        time.sleep(60)
        return 0
props, anything, slow, bad, slow_len = RaisingProperties(), Anything(), SlowRepr(), BadRepr(), SlowLen([1])
mock = unittest.mock.MagicMock()
loop = []
loop.append(loop)
nest = {}
nest['self'] = nest
huge = list(range(10_000_000))
"""

HOSTILE_TARGET = """
props.shape, props.dtype, props.columns['a']
anything.fit(anything.x.y, mock.shape)
print(slow, bad, slow_len, len(slow_len))
loop[0][0], nest['self']['self']
huge[5] + len(huge) + sum(huge)
for value in anything:
    break
"""


async def test_hostile_objects_neither_crash_nor_hang() -> None:
    async with fresh_kernel() as (_, kc):
        await run_cell(kc, HOSTILE)
        # A hang would end in KernelTimeout: the 60 s sleeps must never be entered.
        result = await client.extract(kc, HOSTILE_TARGET, timeout=20)
        for name in ("props", "anything", "slow", "bad", "slow_len", "mock", "loop", "nest", "huge"):
            entry(result, name)  # each one described, if only by its type
        shows(entry(result, "huge"), "10000000")
        # The kernel is free again at once: nothing of ours is still running in it.
        assert (await printed(kc, "print(6 * 7)")).strip() == "42"


# --- summarizers through the kernel --------------------------------------------------------------


@needs("numpy")
async def test_numpy(kc: AsyncKernelClient) -> None:
    await run_cell(
        kc,
        "import numpy as np\n"
        "arr = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
        "arr[0, 0] = np.nan\n"
        "labels = np.array(['a', 'b', 'a'])\n"
        "scalar = np.int64(7)\n",
    )
    result = await client.extract(kc, "arr @ labels + scalar")
    shows(entry(result, "arr"), "ndarray", "3, 4", "float32")
    shows(entry(result, "labels"), "ndarray", "3")
    shows(entry(result, "scalar"), "int64", "7")
    assert any(m["module"] == "numpy" for m in result["modules"])


@needs("pandas")
async def test_pandas(kc: AsyncKernelClient) -> None:
    await run_cell(
        kc,
        "import numpy as np, pandas as pd\n"
        "people = pd.DataFrame({'Age': [22.0, np.nan, 35.0, 41.0], 'Sex': ['m', 'f', 'f', 'm'],\n"
        "                       'Fare': [7, 71, 8, 53]})\n"
        "ages = people['Age']\n"
        "when = pd.date_range('2024-01-01', periods=4, freq='D')\n",
    )
    result = await client.extract(kc, "people['Age'].astype(int) + people['Cabin']\nages.mean()\nwhen[0]")
    shows(entry(result, "people"), "DataFrame", "4, 3", "Age", "Sex", "Fare")
    shows(entry(result, "ages"), "Series", "float64")
    cabin = entry(result, "people['Cabin']")
    assert cabin["missing"] is True
    shows(entry(result, "when"), "DatetimeIndex")


@needs("sklearn")
async def test_sklearn(kc: AsyncKernelClient) -> None:
    await run_cell(
        kc,
        "import numpy as np\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "from sklearn.pipeline import make_pipeline\n"
        "X = np.random.default_rng(0).normal(size=(50, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "fitted = LogisticRegression().fit(X, y)\n"
        "unfitted = StandardScaler()\n"
        "pipe = make_pipeline(StandardScaler(), LogisticRegression())\n",
    )
    result = await client.extract(kc, "fitted.predict(X)\nunfitted.transform(X)\npipe.fit(X, y)")
    shows(entry(result, "fitted"), "LogisticRegression", "3")  # n_features_in_
    fitted_text = json.dumps(entry(result, "fitted")).lower()
    unfitted_text = json.dumps(entry(result, "unfitted")).lower()
    assert "fit" in fitted_text and "fit" in unfitted_text
    assert fitted_text != unfitted_text
    shows(entry(result, "pipe"), "Pipeline")


@needs("torch")
async def test_torch(kc: AsyncKernelClient) -> None:
    await run_cell(
        kc,
        "import torch\n"
        "t = torch.zeros(2, 3, dtype=torch.float64)\n"
        "net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))\n",
    )
    result = await client.extract(kc, "net(t)")
    shows(entry(result, "t"), "Tensor", "2, 3", "float64", "cpu")
    shows(entry(result, "net"), "Sequential", "Linear")


MORE = [
    pytest.param(
        "builtins",
        "import os\n"
        "def scale(values, factor=2):\n    return [v * factor for v in values]\n"
        "squares = (i * i for i in range(5))\nspan = range(3, 30, 3)\ntags = {'a', 'b'}\npair = (1, 'x')",
        "os.path.join(scale(list(span)), next(squares), tags, pair)",
        {"scale": ["factor"], "squares": ["generator"], "span": ["range"],
         "tags": ["set"], "pair": ["tuple"]},
        id="builtins",
    ),
    pytest.param(
        "torch",
        "import torch\nfrom torch.utils.data import Dataset, IterableDataset, TensorDataset\n"
        "small = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(small.parameters(), lr=0.25)\n"
        "tds = TensorDataset(torch.zeros(6, 2), torch.zeros(6))\n"
        "class Stream(IterableDataset):\n    def __iter__(self):\n        yield from range(3)\n"
        "class Pairs(Dataset):\n    def __len__(self):\n        return 7\n"
        "    def __getitem__(self, i):\n        return i, i\n"
        "stream, pairs = Stream(), Pairs()",
        "opt.step()\ntds[0]\nlist(stream)\npairs[8]",
        {"opt": ["SGD", "0.25"], "tds": ["TensorDataset", "6"], "stream": ["Stream"],
         "pairs": ["Pairs", "7"]},
        id="torch-data",
    ),
    pytest.param(
        "scipy",
        "import numpy as np, scipy.sparse\nsp = scipy.sparse.csr_matrix(np.eye(4))",
        "sp @ sp",
        {"sp": ["4, 4", "csr"]},
        id="scipy-sparse",
    ),
    pytest.param(
        "PIL", "from PIL import Image\nimg = Image.new('RGB', (5, 3))", "img.resize((2, 2))",
        {"img": ["5, 3", "RGB"]}, id="pil",
    ),
    pytest.param(
        "matplotlib",
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nplt.close(fig)",
        "ax.plot([1, 2])\nfig.savefig('x.png')",
        {"fig": ["Figure"], "ax": ["Axes"]},
        id="matplotlib",
    ),
    pytest.param(
        "statsmodels",
        "import numpy as np, statsmodels.api as sm\n"
        "ols = sm.OLS(np.arange(5.0), sm.add_constant(np.arange(5.0) ** 2)).fit()",
        "ols.predict([1, 2])",
        {"ols": ["Results"]},
        id="statsmodels",
    ),
    pytest.param(
        "seaborn",
        "import pandas as pd, seaborn as sns, matplotlib.pyplot as plt\n"
        "grid = sns.FacetGrid(pd.DataFrame({'a': [1, 2], 'b': [3, 4]}), col='a')\nplt.close('all')",
        "grid.map(plt.scatter, 'a', 'b')",
        {"grid": ["FacetGrid"]},
        id="seaborn",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("library", "setup", "target", "expected"), MORE)
async def test_more_summarizers(
    kc: AsyncKernelClient, library: str, setup: str, target: str, expected: dict[str, list[str]]
) -> None:
    if library != "builtins" and importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed")
    await run_cell(kc, setup)
    result = await client.extract(kc, target)
    for expr, tokens in expected.items():
        found = entry(result, expr)
        assert found["error"] is None, found
        shows(found, *tokens)


@needs("tensorflow")
async def test_tensorflow() -> None:
    async with fresh_kernel() as (_, kc):
        await run_cell(
            kc,
            "import tensorflow as tf\n"
            "from tensorflow import keras\n"
            "tt = tf.ones((2, 5), dtype=tf.float32)\n"
            "model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(3)])\n",
            timeout=240,
        )
        result = await client.extract(kc, "model(tt)\nmodel.fit(tt, tt)", timeout=30)
        shows(entry(result, "tt"), "2, 5", "float32")
        shows(entry(result, "model"), "Sequential", "Dense")
        await run_cell(kc, "batches = tf.data.Dataset.from_tensor_slices(tf.zeros((6, 2))).batch(2)")
        result = await client.extract(kc, "for b in batches:\n    model(b)", timeout=30)
        found = entry(result, "batches")
        assert found["error"] is None
        shows(found, "Dataset")


# --- jupyter_server's kernel manager ----------------------------------------------------------------


async def test_with_jupyter_server_kernel_manager(tmp_path: Path) -> None:
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

    from crane_jupyterlab.bench.kernels import _ThisInterpreter

    mkm = AsyncMappingKernelManager(root_dir=str(tmp_path), kernel_spec_manager=_ThisInterpreter())
    kernel_id = await mkm.start_kernel(kernel_name="python3")
    try:
        kc = mkm.get_kernel(kernel_id).client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            await run_cell(kc, "served = [1, 2]")
            result = await client.extract(kc, "served[5]")
            assert entry(result, "served")["type"] == "list"
        finally:
            kc.stop_channels()
    finally:
        await mkm.shutdown_kernel(kernel_id, now=True)
