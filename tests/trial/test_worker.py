"""Trials in a spawned worker (kernel/trial/worker.py), in a real ipykernel, called as the server calls
them: for each kind of process-wide state a cell may depend on, the worker's outcome is the real run's;
each kind of input that cannot be copied ends *unavailable* with its reason; the kernel's arrays, weights
and files stay byte-for-byte the same; the sandbox's side-effect suite (test_private_writes.py) holds in
the worker; a Keras `fit` that crashes inside its training step is observed; nothing outlives the kernel.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient
from test_private_writes import OUTSIDE, WRITERS, checksums

from crane_jupyterlab.bench.kernels import CellFailed, fresh_kernel, run_cell

pytestmark = [
    pytest.mark.integration,
    pytest.mark.asyncio(loop_scope="module"),
]


@pytest.fixture(scope="module")
def sandbox() -> dict[str, Any]:
    from crane_jupyterlab.kernel.trial.sandbox import confine

    found = confine.probe()
    if not (found.get("available") and found.get("netns") and found.get("landlock_abi")):
        pytest.skip(f"no OS sandbox with namespaces and Landlock here: {found}")
    return found


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kernel's working directory: files the trials write to, which must not change."""
    root = tmp_path_factory.mktemp("worker")
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("alpha\n")
    (root / "data" / "b.csv").write_text("x,y\n1,2\n")
    (root / "data" / "run.log").write_text("first line\n")
    (root / "data" / "sub").mkdir()
    (root / "data" / "sub" / "c.bin").write_bytes(bytes(range(256)))
    (root / "lib").mkdir()
    (root / "lib" / "helpers_beside.py").write_text("VALUE = 7\ndef twice(x):\n    return 2 * x\n")
    (root / "lib" / "noisy_beside.py").write_text(
        "import subprocess\nsubprocess.run(['setsid', 'true'], check=True)\nVALUE = 3\n"
    )
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "only_here.txt").write_text("here")
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(home: Path, sandbox: dict[str, Any]) -> AsyncIterator[AsyncKernelClient]:
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(
            kc,
            "import os, pathlib, pickle, logging, tempfile, random, warnings, json\n"
            "TMP = tempfile.gettempdir()\n"
            "import numpy as np, pandas as pd\n"
            "W = pathlib.Path('data')\n"
            "df = pd.DataFrame({'x': [1, 2, 3], 'y': [4.0, 5.0, 6.0]})\n"
            "arr = np.arange(12.0).reshape(3, 4)\n",
        )
        yield kc


async def trial(kit: SimpleNamespace, kc: AsyncKernelClient, cell: str, **options: Any) -> dict[str, Any]:
    """A trial in the worker, as the server asks for one; the outcome, which must say it ran there."""
    options = {"private_writes": True, "worker": "always", "budget_s": 10.0, **options}
    result = await kit.run_in_kernel(kc, cell, **options)
    assert result["start"].get("way", "worker") == "worker", result
    outcome: dict[str, Any] = result["outcome"]
    return outcome


async def real(kc: AsyncKernelClient, cell: str) -> dict[str, Any]:
    """The cell run for real in the kernel: finished, or crashed with its exception's name."""
    try:
        await run_cell(kc, cell)
    except CellFailed as failed:
        return {"status": "crashed", "exception": str(failed).split(":", 1)[0].split()[-1]}
    return {"status": "finished"}


async def finishes_in_the_worker(
    kit: SimpleNamespace, kc: AsyncKernelClient, cell: str, **options: Any
) -> None:
    """The cell's trial ran in the worker and finished, and so does its real run in the kernel."""
    options = {"private_writes": True, "budget_s": 30.0, **options}
    outcome = (await kit.run_in_kernel(kc, cell, **options))["outcome"]
    assert outcome["status"] == "finished" and outcome.get("worker"), (cell, outcome)
    assert (await real(kc, cell))["status"] == "finished"


# -- the state a cell depends on -------------------------------------------------------------------

# (setup run in the kernel, target cell): the target's outcome depends on that state being copied.
STATE = {
    "python-random": (
        "random.seed(11)\nrandom.random()\n_s = random.getstate()\nEXPECTED = random.random()\n"
        "random.setstate(_s)",
        "assert random.random() == EXPECTED",
    ),
    "numpy-random": (
        "np.random.seed(5)\nnp.random.rand()\n_s = np.random.get_state()\nEXPECTED = np.random.rand()\n"
        "np.random.set_state(_s)",
        "assert np.random.rand() == EXPECTED",
    ),
    "numpy-errors": ("np.seterr(all='raise')", "np.array([1.0]) / 0"),
    "numpy-errors-default": ("np.seterr(all='warn')", "np.array([1.0]) / 0"),
    "warnings-filters": ("warnings.simplefilter('error', UserWarning)", "warnings.warn('careful')"),
    "pandas-options": (
        "pd.set_option('display.max_rows', 7)",
        "assert pd.get_option('display.max_rows') == 7",
    ),
    "working-directory": ("os.chdir('elsewhere')", "assert open('only_here.txt').read() == 'here'"),
    "environment": (
        "os.environ['CRANE_WORKER_TEST'] = 'yes'",
        "assert os.environ['CRANE_WORKER_TEST'] == 'yes'",
    ),
    "module-beside-the-notebook": (
        "import sys\nsys.path.insert(0, os.path.abspath('lib'))\nimport helpers_beside",
        "assert helpers_beside.twice(helpers_beside.VALUE) == 14",
    ),
    "notebook-code-and-its-globals": (
        "K = 2\ndef g(x):\n    return x * K\n"
        "class Model:\n    def predict(self, x):\n        return g(x) + 1\nm = Model()",
        "assert m.predict(1) == 3\nK = 10\nassert m.predict(1) == 21",
    ),
    "torch-random-and-dtype": (
        "import torch\ntorch.manual_seed(3)\ntorch.rand(1)\n_s = torch.get_rng_state()\n"
        "EXPECTED = torch.rand(1).item()\ntorch.set_rng_state(_s)\ntorch.set_default_dtype(torch.float64)",
        "assert torch.rand(1).item() == EXPECTED and torch.zeros(1).dtype == torch.float64",
    ),
    "keras-floatx-and-eager": (
        "import keras, tensorflow as tf\nkeras.backend.set_floatx('float64')\n"
        "tf.config.run_functions_eagerly(True)",
        "assert keras.backend.floatx() == 'float64' and tf.config.functions_run_eagerly()",
    ),
}


@pytest.mark.parametrize("name", sorted(STATE))
async def test_the_worker_sees_the_state_the_real_run_sees(
    name: str, kit: SimpleNamespace, home: Path, sandbox: dict[str, Any]
) -> None:
    setup, target = STATE[name]
    if "torch" in setup:
        pytest.importorskip("torch")
    if "keras" in setup:
        pytest.importorskip("keras")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, "import os, random, warnings\nimport numpy as np, pandas as pd\n" + setup)
        outcome = await trial(kit, kc, target)
        truth = await real(kc, target)
    assert outcome["status"] == truth["status"], (outcome, truth)
    if truth["status"] == "crashed":
        assert outcome["exception"] == truth["exception"]
    assert outcome["worker"]["reason"]  # it ran in the worker


# -- what cannot be copied -------------------------------------------------------------------------

UNCOPYABLE = {
    "generator": ("gen = (i for i in range(3))", "next(gen)", "`gen`"),
    "open-file": ("fh = open('data/a.txt')", "fh.read()", "`fh`"),
    "lock": ("import threading\nlock = threading.Lock()", "lock.acquire()", "`lock`"),
    "enum-of-the-notebook": ("import enum\nclass Color(enum.Enum):\n    RED = 1", "Color.RED", "Color"),
    "over-the-cap": ("big = np.zeros(3 * 2**20 // 8)", "big.sum()", "3.0 MB"),
    "tf-data": ("import tensorflow as tf\nds = tf.data.Dataset.range(3)", "list(ds)", "`ds`"),
}


@pytest.mark.parametrize("name", sorted(UNCOPYABLE))
async def test_what_cannot_be_copied_is_unavailable_with_its_reason(
    name: str, kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    setup, target, word = UNCOPYABLE[name]
    if "tensorflow" in setup:
        pytest.importorskip("tensorflow")
    await run_cell(kernel, setup)
    outcome = await trial(kit, kernel, target, worker_max_mb=1)
    assert outcome["status"] == "unavailable", outcome
    assert "could not be copied" in outcome["reason"] and word in outcome["reason"], outcome


# -- modules beside the notebook ---------------------------------------------------------------------


async def test_a_module_beside_the_notebook_runs_again_only_where_the_cell_imports_it(
    kit: SimpleNamespace, home: Path, sandbox: dict[str, Any]
) -> None:
    """The worker imports again the modules beside the notebook that the cell imports (the kernel has
    them loaded; the cell's `import` runs none of their code there). What such an import does runs in
    the sandbox: a refused side effect means the worker is not the kernel, never that the cell crashed."""
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, "import sys\nsys.path.insert(0, 'lib')\nimport noisy_beside, helpers_beside")
        refused = await trial(kit, kc, "import noisy_beside\nnoisy_beside.VALUE / 0")
        assert refused["status"] == "unavailable", refused
        assert "could not rebuild" in refused["reason"] and "setsid" in refused["reason"], refused
        for cell in ("x = 1 / 0", "import helpers_beside\nhelpers_beside.twice(1) / 0"):
            outcome = await trial(kit, kc, cell)
            assert (outcome["status"], outcome.get("exception")) == ("crashed", "ZeroDivisionError"), outcome


# -- the kernel is left as it was ------------------------------------------------------------------


async def test_the_kernels_arrays_weights_and_files_are_unchanged(
    kit: SimpleNamespace, home: Path, sandbox: dict[str, Any]
) -> None:
    pytest.importorskip("torch")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        fingerprint = (
            "import hashlib, json\n"
            "h = lambda b: hashlib.sha256(b).hexdigest()\n"
            "print(json.dumps([h(arr.tobytes()), h(net.weight.detach().numpy().tobytes()), "
            "h(open('data/a.txt', 'rb').read())]))"
        )
        await run_cell(
            kc,
            "import numpy as np, torch\narr = np.arange(1000.0)\nnet = torch.nn.Linear(4, 2)\n"
            "opt = torch.optim.SGD(net.parameters(), lr=0.5)",
        )
        before = await kit.printed(kc, fingerprint)
        files = checksums(home / "data")
        outcome = await trial(
            kit,
            kc,
            "arr[:] = 0\nloss = net(torch.ones(3, 4)).sum()\nloss.backward()\nopt.step()\n"
            "open('data/a.txt', 'w').write('changed')\nassert arr.sum() == 0",
        )
        assert outcome["status"] == "finished", outcome
        assert await kit.printed(kc, fingerprint) == before
        assert checksums(home / "data") == files


# -- the sandbox's side-effect suite, in the worker --------------------------------------------------


@pytest.mark.parametrize("name", sorted(WRITERS))
async def test_each_writer_runs_to_its_end_in_a_private_copy(
    name: str, kernel: AsyncKernelClient, home: Path, kit: SimpleNamespace
) -> None:
    before = checksums(home / "data")
    outcome = await trial(kit, kernel, WRITERS[name])
    assert outcome["status"] == "finished", outcome
    assert outcome["writes"] and "discarded" in outcome["writes"]
    assert checksums(home / "data") == before


@pytest.mark.parametrize("name", sorted(OUTSIDE))
async def test_writes_outside_the_covered_directories_stay_blocked(
    name: str, kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    outcome = await trial(kit, kernel, OUTSIDE[name])
    assert outcome["status"] == "blocked", outcome
    assert not Path("/var/tmp/crane-trial-test.txt").exists() and not Path("/etc/crane-trial-test").exists()


async def test_network_leaving_the_group_and_signals_stay_refused(
    kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    import subprocess

    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        for cell in (
            "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=2)",
            "import subprocess\nsubprocess.run(['setsid', 'true'], check=True)",  # would leave the group
            f"import signal\nos.kill({victim.pid}, signal.SIGKILL)",
            f"import signal\nos.kill({os.getppid()}, 0)",
        ):
            outcome = await trial(kit, kernel, cell)
            assert outcome["status"] == "blocked", (cell, outcome)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


# -- TensorFlow: where the fork cannot go ----------------------------------------------------------

KERAS = (
    "import numpy as np, keras\n"
    "x = np.random.rand(256, 4).astype('float32')\ny = np.random.randint(0, 3, 256)\n"
    "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation='relu'),\n"
    "                          keras.layers.Dense(3, activation='softmax')])\n"
    "model.compile('adam', 'sparse_categorical_crossentropy')\nmodel.fit(x, y, epochs=1, verbose=0)\n"
    "y_new = y.copy()\ny_new[10] = 5"
)


async def test_keras_cells_run_in_the_worker_as_they_run_in_the_kernel(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS)
        cases = {
            # a crash inside the training step (the loss, on a label out of range): a fork could only
            # have said "unavailable" at the first graph function
            "model.fit(x, y_new, epochs=2, verbose=0)": ("crashed", "InvalidArgumentError"),
            "model.fit(x, y, epochs=2, verbose=0)\np = model.predict(x, verbose=0)\n"
            "assert p.shape == (256, 3)": ("finished", None),
            "h = model.fit(x, y, epochs=1, verbose=0)\nmodel.evaluate(x, y, verbose=0)\nz = 1 / 0": (
                "crashed",
                "ZeroDivisionError",
            ),
        }
        for cell, (status, exception) in cases.items():
            started = await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0)
            outcome = started["outcome"]
            assert started["start"]["way"] == "worker", started
            assert outcome["status"] == status and outcome.get("exception") == exception, (cell, outcome)
            assert "TensorFlow" in outcome["worker"]["reason"]
            assert await real(kc, cell) == (
                {"status": status, "exception": exception} if exception else {"status": status}
            )
        # Non-TensorFlow cells in the same kernel still run in a fork of it.
        started = await kit.run_in_kernel(kc, "q = x.sum()", private_writes=True)
        assert started["start"]["way"] == "fork" and started["outcome"]["status"] == "finished"


FUNCTIONAL = (
    "import numpy as np, keras\n"
    "X = np.random.rand(256, 6).astype('float32')\ny = X.sum(axis=1).astype('float32')\n"
    "inputs = keras.Input((6,))\nwide = keras.layers.Dense(1)(inputs)\n"
    "hidden = keras.layers.Dropout(0.1)(keras.layers.Dense(16, activation='relu')(inputs))\n"
    "deep = keras.layers.Dense(1)(hidden)\n"
    "net = keras.Model(inputs, keras.layers.Add()([wide, deep]))\nnet.compile('adam', 'mse')\n"
    "net.fit(X, y, epochs=1, verbose=0)"
)


async def test_a_functional_keras_model_with_a_merge_layer_goes_to_the_worker(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    # Its merge layer's build config holds Keras' TrackedList, which does not pickle as it is.
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, FUNCTIONAL)
        cases = (
            ("net.fit(X, y, epochs=2, verbose=0)\nassert net.predict(X).shape == (256, 1)", "finished"),
            ("net.fit(X[:, :5], y, epochs=1, verbose=0)", "crashed"),
        )
        await in_the_worker_as_in_the_kernel(kit, kc, cases)


async def in_the_worker_as_in_the_kernel(kit: SimpleNamespace, kc: Any, cases: Any) -> None:
    """Each (cell, status): its trial ran in the worker and ended so, and so did the cell run for real."""
    for cell, expected in cases:
        outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
        assert outcome["status"] == expected and outcome.get("worker"), (cell, outcome)
        assert (await real(kc, cell))["status"] == expected


SUBCLASSED = (
    "import numpy as np, keras, tensorflow as tf\n"
    "SCALE = 2.0\n"
    "class Doubler(keras.Model):\n"
    "    def __init__(self, **kwargs):\n"
    "        super().__init__(**kwargs)\n"
    "        self.dense = keras.layers.Dense(1)\n"
    "    def call(self, x):\n"
    "        return self.dense(x) * SCALE\n"
    "net = Doubler()\nnet.compile('sgd', 'mse')\n"
    "xs = np.random.rand(32, 3).astype('float32')\nys = np.random.rand(32, 1).astype('float32')\n"
    "net.fit(xs, ys, epochs=1, verbose=0)\n"
    "@tf.function\ndef triple(a):\n    return a * 3\n"
    "triple(tf.constant(1.0))"
)


async def test_the_notebooks_keras_classes_and_tf_functions_are_rebuilt(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, SUBCLASSED)
        cases = (
            (
                "net.fit(xs, ys, epochs=2, verbose=0)\nassert net.predict(xs, verbose=0).shape == (32, 1)",
                "finished",
            ),
            ("assert float(triple(tf.constant(3.0))) == 9.0", "finished"),
            ("net.predict(xs, verbose=0)\nassert triple(tf.constant(1.0)) == 4.0", "crashed"),
        )
        await in_the_worker_as_in_the_kernel(kit, kc, cases)


KERAS_CLASSES = (
    "import numpy as np, keras\n"
    "class RootMeanSquaredError(keras.metrics.Metric):\n"
    "    def __init__(self, name='rmse', **kwargs):\n"
    "        super().__init__(name=name, **kwargs)\n"
    "        self.total = self.add_weight(name='total', initializer='zeros')\n"
    "        self.count = self.add_weight(name='count', initializer='zeros')\n"
    "    def update_state(self, y_true, y_pred, sample_weight=None):\n"
    "        error = keras.ops.square(keras.ops.cast(y_true, 'float32') - y_pred)\n"
    "        self.total.assign_add(keras.ops.sum(error))\n"
    "        self.count.assign_add(keras.ops.cast(keras.ops.size(error), 'float32'))\n"
    "    def result(self):\n"
    "        return keras.ops.sqrt(self.total / self.count)\n"
    "class Wide(keras.Model):\n"
    "    def __init__(self, units=8, **kwargs):\n"
    "        super().__init__(**kwargs)\n"
    "        self.units = units\n"
    "        self.hidden = keras.layers.Dense(units, activation='relu')\n"
    "        self.out = keras.layers.Dense(1)\n"
    "    def call(self, x):\n"
    "        return self.out(self.hidden(x))\n"
    "wide = Wide()\nwide.compile('adam', 'mse', metrics=[RootMeanSquaredError()])\n"
    "xs = np.random.rand(64, 3).astype('float32')\nys = np.random.rand(64, 1).astype('float32')\n"
    "wide.fit(xs, ys, epochs=1, verbose=0)"
)


async def test_notebook_keras_models_and_metrics_the_cell_does_not_name_are_rebuilt(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """The cell names only `wide`: its class and its compiled metric's class are the notebook's, which
    Keras looks up by name while it rebuilds the model."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS_CLASSES)
        for cell, expected in (
            ("wide.fit(xs, ys, epochs=2, verbose=0)\nassert wide.units == 8", ("finished", None)),
            ("wide.fit(xs, ys[:10], epochs=1, verbose=0)", ("crashed", "ValueError")),
        ):
            outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
            got = (outcome["status"], outcome.get("exception"))
            assert got == expected, (cell, outcome)  # the second crashes in the fork, before a graph
            assert outcome.get("worker") or expected[0] == "crashed", (cell, outcome)
            real_run = await real(kc, cell)
            assert (real_run["status"], real_run.get("exception")) == expected


WITH_ARGUMENTS = (
    "import numpy as np, keras\n"
    "class Net(keras.Model):\n"
    "    def __init__(self, units, rate=0.1, **kwargs):\n"
    "        super().__init__(**kwargs)\n"
    "        self.units = units\n"
    "        self.hidden = keras.layers.Dense(units, activation='relu')\n"
    "        self.drop = keras.layers.Dropout(rate)\n"
    "        self.out = keras.layers.Dense(2)\n"
    "    def call(self, x, training=False):\n"
    "        return self.out(self.drop(self.hidden(x), training=training))\n"
    "UNITS, RATE = 6, 0.25\n"
    "xs = np.random.rand(40, 3).astype('float32')\nys = np.random.rand(40, 2).astype('float32')\n"
)


async def test_a_notebook_model_with_init_arguments_is_made_again_by_its_call(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """Keras 3 records no arguments of a model subclass's `__init__`, so it cannot save it: the worker makes
    it again by the call that made it in the notebook, then gives it the kernel's weights, optimizer
    state, History and attributes; where that call now makes another model (a name it reads changed
    since), the trial says unavailable rather than run the cell on the wrong model."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, WITH_ARGUMENTS)
        await run_cell(kc, "net = Net(UNITS, rate=RATE)\nnet.compile('adam', 'mse', metrics=['mae'])")
        await run_cell(kc, "net.fit(xs, ys, epochs=2, verbose=0)\nnet.threshold = 0.5")
        for cell, expected in (
            (
                "p = net.predict(xs, verbose=0)\nassert p.shape == (40, 2) and net.units == 6\n"
                "assert len(net.history.history['loss']) == 2 and net.threshold == 0.5\n"
                "assert int(net.optimizer.iterations) == 4",
                ("finished", None),
            ),
            ("net.history.history['accuracy']", ("crashed", "KeyError")),
            ("net.fit(xs, ys[:10], verbose=0)", ("crashed", "ValueError")),
        ):
            outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
            assert (outcome["status"], outcome.get("exception")) == expected, (cell, outcome)
            assert outcome.get("worker") or "history" in cell, (cell, outcome)
            real_run = await real(kc, cell)
            assert (real_run["status"], real_run.get("exception")) == expected
        # The same weights' shapes, another dropout rate: the copy would not be the kernel's model.
        await run_cell(kc, "RATE = 0.5")
        cell = "p = net.predict(xs, verbose=0)"
        outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
        assert outcome["status"] == "unavailable", outcome
        assert "could not be made again" in outcome["reason"] and "configured" in outcome["reason"], outcome


async def test_a_subclass_that_passes_its_arguments_on_is_made_again_with_the_kernels_state(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """`Ident(*args, **kwargs)` hands its arguments to a notebook base class that needs them (Keras' config
    of it has none); the notebook built it with `model.build(shape)`, which builds none of its layers, and
    keeps a raw `tf.Variable` and a list on it, which Keras' saving does not carry; its Lambda's code,
    marshalled, differs in bytes between processes: the worker's copy has all of it as the kernel has."""
    pytest.importorskip("tensorflow")
    setup = (
        "import numpy as np, keras, tensorflow as tf\n"
        "class Base(keras.Model):\n"
        "    def __init__(self, lb, width, **kwargs):\n"
        "        super().__init__(**kwargs)\n"
        "        self.lb = lb\n"
        "        self.scale = keras.layers.Lambda(lambda x: (x - lb) * 2.0)\n"
        "        self.dense = keras.layers.Dense(width)\n"
        "        self.out = keras.layers.Dense(1)\n"
        "    def call(self, x):\n"
        "        return self.out(self.dense(self.scale(x))) * self.lambd\n"
        "class Ident(Base):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        "        self.lambd = tf.Variable(1.0)\n"
        "        self.lambd_list = []\n"
        "ident = Ident(tf.constant([0.5, 0.5]), 4)\nident.build(input_shape=(None, 2))\n"
        "ident.lambd.assign(3.0)\nident.lambd_list.append(3.0)\n"
        "@tf.function\ndef step():\n    return ident(tf.ones((2, 2)))\n"
    )
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, setup)
        cell = (
            "out = step()\nassert out.shape == (2, 1) and float(ident.lambd) == 3.0\n"
            "assert ident.lambd_list[-1] == 3.0 and len(ident.trainable_variables) == 4"
        )
        await finishes_in_the_worker(kit, kc, cell)


async def test_a_model_whose_config_names_a_function_keras_lacks_is_made_again_by_its_call(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """Keras saves a plain function (an initializer from `tf.random`, the notebook's own activation) by its
    name alone and cannot load that config elsewhere (tensorflow/docs' basics guide): the calls that made
    the model go along, and the worker makes it again by them."""
    pytest.importorskip("tensorflow")
    setup = (
        "import numpy as np, keras, tensorflow as tf\n"
        "def swish2(v):\n    return v * tf.sigmoid(v)\n"
        "x = np.linspace(-2, 2, 64).astype('float32')\ny = x ** 2\n"
        "quad = tf.keras.Sequential([tf.keras.layers.Lambda(lambda v: tf.stack([v, v ** 2], axis=1)),\n"
        "                            tf.keras.layers.Dense(4, activation=swish2),\n"
        "                            tf.keras.layers.Dense(units=1, kernel_initializer=tf.random.normal)])\n"
        "quad.compile(loss=tf.keras.losses.MSE, optimizer=tf.keras.optimizers.SGD(learning_rate=0.01))\n"
        "quad.fit(x, y, epochs=2, verbose=0)\nEXPECTED = quad.predict(x[:3], verbose=0)\n"
    )
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, setup)
        cell = "got = quad.predict(x[:3], verbose=0)\nassert np.allclose(got, EXPECTED, atol=1e-5), got"
        await finishes_in_the_worker(kit, kc, cell)


async def test_a_keras_models_history_and_the_notebooks_attributes_go_with_it(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """Keras saves a model without its last fit's History (`model.history`) or the attributes the notebook
    set on it: without them, a worker would crash on what the kernel's cell reads."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS + "\nmodel.label = 'first'")
        cell = (
            "p = model.predict(x, verbose=0)\nassert model.label == 'first'\n"
            "assert len(model.history.history['loss']) == 1 and model.history.model is model"
        )
        await finishes_in_the_worker(kit, kc, cell)


async def test_a_keras_models_layer_state_goes_with_it_as_keras_saves_it(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """Each layer's variables go as its own `save_own_variables` gives them, so a layer that finishes its
    state on loading (an adapted Normalization) predicts as in the kernel; a lookup layer's vocabulary
    (an asset) goes through Keras' own file."""
    pytest.importorskip("tensorflow")
    setup = (
        "import numpy as np, keras, tensorflow as tf\n"
        "raw = (np.random.rand(64, 3) * 50 + 10).astype('float32')\n"
        "norm = keras.layers.Normalization()\nnorm.adapt(raw)\n"
        "scaled = keras.Sequential([keras.Input((3,)), norm, keras.layers.Dense(1)])\n"
        "scaled.compile('adam', 'mse')\nscaled.fit(raw, raw[:, :1], epochs=1, verbose=0)\n"
        "EXPECTED = scaled.predict(raw[:4], verbose=0)\n"
        "words = keras.Sequential([keras.Input((1,), dtype='string'),\n"
        "                          keras.layers.StringLookup(vocabulary=['cat', 'dog'])])\n"
    )
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, setup)
        for cell in (
            "got = scaled.predict(raw[:4], verbose=0)\nassert np.allclose(got, EXPECTED, atol=1e-5), got",
            "ids = words.predict(tf.constant([['dog'], ['cow']]), verbose=0)\n"
            "assert ids.ravel().tolist() == [2, 0]",
        ):
            await finishes_in_the_worker(kit, kc, cell)


AUTOGRAPH = (
    "import numpy as np, keras, tensorflow as tf\n"
    "def simple_relu(x):\n    if tf.greater(x, 0):\n        return x\n    else:\n        return 0\n"
    "tf_simple_relu = tf.function(simple_relu)\n"
    "@keras.saving.register_keras_serializable()\n"
    "class Scaled(keras.Model):\n"
    "    def __init__(self, **kwargs):\n"
    "        super().__init__(**kwargs)\n"
    "        self.dense = keras.layers.Dense(2)\n"
    "    def call(self, x):\n"
    "        return self.dense(x)\n"
    "scaled = Scaled(name='scaled')\nscaled(tf.ones((1, 3)))\nscaled.save('scaled.keras')"
)


async def test_autograph_and_keras_registry_work_as_in_the_kernel(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """Autograph converts a notebook function from its source (IPython keeps it in linecache, which the
    worker receives); a registered Keras class is found by its registered name, in the rebuild and when
    the cell loads a saved model."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, AUTOGRAPH)
        for cell in (
            "assert int(tf_simple_relu(tf.constant(1))) == 1 and int(tf_simple_relu(tf.constant(-1))) == 0",
            "assert len(scaled.variables) == 2",
            "again = keras.models.load_model('scaled.keras')\nassert again(tf.ones((1, 3))).shape == (1, 2)",
        ):
            await finishes_in_the_worker(kit, kc, cell, worker="always")


async def test_tensorflow_cells_a_fork_can_run_stay_in_the_fork(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """The fork runs first, on the kernel's own objects: what it observes before any graph function (a
    layer's build error, a checkpoint reader) stands; only where TensorFlow stops it does the worker run
    the cell, on the inputs the fork packed before the cell changed them."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS + "\nreader_like = open('data/a.txt')")
        stays = "w = model.layers[0].add_weight('kernel', shape=(2, 2))"  # positional name: ValueError
        outcome = (await kit.run_in_kernel(kc, stays, private_writes=True))["outcome"]
        assert (outcome["status"], outcome["exception"]) == ("crashed", "ValueError") and not outcome.get(
            "worker"
        )
        assert (await real(kc, stays))["exception"] == "ValueError"
        # It reaches a graph function, and an input cannot be copied: the fork's "unavailable" stands.
        both = "reader_like.read()\nmodel.predict(x, verbose=0)"
        outcome = (await kit.run_in_kernel(kc, both, private_writes=True))["outcome"]
        assert outcome["status"] == "unavailable" and "graph function" in outcome["reason"], outcome


async def test_a_graph_call_whose_inputs_no_worker_can_take_runs_in_the_fork(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """A cell that starts with `model.fit` goes to the worker without a fork first; where its inputs cannot
    be copied (a generator), the packing fork runs it on the kernel's own objects: Keras' checks of the
    data, before any graph function, are observed; a graph function it reaches leaves it unavailable,
    saying why no worker took over."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS + "\nbatches = (i for i in range(3))")
        cardinality = "model.fit(x, y[:100], epochs=1, verbose=0)\nnext(batches)"
        outcome = (await kit.run_in_kernel(kc, cardinality, private_writes=True, budget_s=30.0))["outcome"]
        assert (outcome["status"], outcome.get("exception")) == ("crashed", "ValueError"), outcome
        assert not outcome.get("worker"), outcome
        assert await real(kc, cardinality) == {"status": "crashed", "exception": "ValueError"}
        graph = "model.fit(x, y, epochs=1, verbose=0)\nnext(batches)"
        outcome = (await kit.run_in_kernel(kc, graph, private_writes=True, budget_s=30.0))["outcome"]
        assert outcome["status"] == "unavailable", outcome
        assert "graph function" in outcome["reason"] and "`batches`" in outcome["reason"], outcome


async def test_a_quick_trial_cuts_a_long_keras_fit_in_the_worker(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS)
        cell = "history = model.fit(x, y, epochs=500, batch_size=8, verbose=0)\nmodel.evaluate(x[:, :3], y)"
        started = await kit.run_in_kernel(kc, cell, private_writes=True, quick=True, quick_k=2, budget_s=5.0)
        outcome = started["outcome"]
        assert outcome["status"] == "crashed" and outcome["worker"], outcome
        assert outcome["quick"]["cut"] is True  # the fit stopped after its first epochs; the line after ran
        # A History's keys come from compile (no metrics here), not from how many epochs ran: the crash is
        # the full run's too, whatever the cut.
        fit = "history = model.fit(x, y, epochs=500, batch_size=8, verbose=0)\n"
        done = await kit.run_in_kernel(kc, fit + "h = history.history['accuracy']", quick=True, budget_s=5)
        outcome = done["outcome"]
        assert (outcome["status"], outcome["exception"]) == ("crashed", "KeyError"), outcome
        assert outcome["quick"]["cut"] is True and outcome["quick"]["crash"] == "certain", outcome["quick"]


async def test_the_spare_imports_what_the_kernel_loads_while_it_waits(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """A job should find its libraries imported: modules the kernel loads after the spare started go to
    the spare while it waits (with the next trial), not at the job, before the inputs are rebuilt."""
    pytest.importorskip("tensorflow")
    pytest.importorskip("sklearn")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS)
        assert (await kit.run_in_kernel(kc, "q = x.sum()"))["outcome"]["status"] == "finished"  # a spare
        await run_cell(kc, "import sklearn.linear_model")
        assert (await kit.run_in_kernel(kc, "q = x.sum()"))["outcome"]["status"] == "finished"  # tops up
        outcome = (await kit.run_in_kernel(kc, "model.fit(x, y, epochs=1, verbose=0)", budget_s=30.0))[
            "outcome"
        ]
        assert outcome["status"] == "finished" and outcome["worker"], outcome
        assert not [m for m in outcome["worker"]["late_imports"] or [] if m.startswith("sklearn")], outcome


async def test_a_fork_that_aborts_in_a_tensorflow_kernel_is_named_and_the_worker_takes_the_cell(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS)
        # the fork aborts as TensorFlow's runtime may there (the worker, a plain shell, has no ipykernel);
        # the worker then runs the cell to its real end
        cell = "import os, sys\nif 'ipykernel' in sys.modules:\n    os.abort()\nq = y_new[1000]"
        done = await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0)
        outcome = done["outcome"]
        assert (outcome["status"], outcome.get("exception")) == ("crashed", "IndexError"), outcome
        assert outcome["worker"], outcome


async def test_a_fork_that_tensorflow_stops_behind_a_notebook_object_hands_the_cell_to_the_worker(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """The cell names only an object of the notebook's own class, which holds the Keras model: the fork
    runs first and stops at the graph function; the worker, with a runtime of its own, takes the cell."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(
            kc,
            KERAS + "\nclass Holder:\n    def __init__(self, model, data):\n"
            "        self.model, self.data = model, data\n"
            "    def run(self):\n        return self.model.predict(self.data, verbose=0)[1000]\n"
            "holder = Holder(model, x)",
        )
        cell = "holder.run()"
        outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
        assert (outcome["status"], outcome.get("exception")) == ("crashed", "IndexError"), outcome
        assert "TensorFlow stopped the fork" in outcome["worker"]["reason"], outcome
        assert await real(kc, cell) == {"status": "crashed", "exception": "IndexError"}


async def test_a_name_the_copy_lacks_is_never_claimed_as_the_cells_crash(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """Keras rebuilds a Lambda layer's function with its own module's globals, not the notebook's (in the
    worker `tf` was not defined there, where the kernel's run finds it): the worker gives it the
    notebook's back; a cell that deletes the name itself still crashes, as it does for real."""
    pytest.importorskip("tensorflow")
    setup = (
        "import numpy as np, keras, tensorflow as tf\n"
        "seq = keras.Sequential([keras.Input((5,)), keras.layers.Lambda(lambda v: tf.expand_dims(v, -1)),\n"
        "                        keras.layers.Flatten(), keras.layers.Dense(1)])\n"
        "seq.compile('sgd', 'mse')\nseq.fit(np.ones((8, 5)), np.ones((8, 1)), epochs=1, verbose=0)\n"
        "xs = np.ones((4, 5), dtype='float32')"
    )
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, setup)
        cell = "out = seq.predict(xs, verbose=0)\nassert out.shape == (4, 1)"
        outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
        assert (await real(kc, cell))["status"] == "finished"
        # the Lambda's function gets the notebook's globals back in the worker (kerascopy.lambdas_in)
        assert outcome["status"] == "finished" and outcome.get("worker"), outcome
        # and where the copy still lacks a name the kernel has, the trial says so rather than crash
        dropped = "del tf\nout = seq.predict(xs, verbose=0)"
        outcome = (await kit.run_in_kernel(kc, dropped, private_writes=True, budget_s=30.0))["outcome"]
        assert outcome["status"] == "crashed" and outcome["exception"] == "NameError", outcome


async def test_an_input_the_cell_binds_again_first_is_not_copied(
    kit: SimpleNamespace, home: Path, sandbox: Any
) -> None:
    """The kernel's `batches` (a generator: no worker can take it) is bound again by the cell before any
    read: the worker never needs the old one (tensorflow/examples' forecasting notebook rebinds its
    `train_set`, a tf.data pipeline, before `model.fit`)."""
    pytest.importorskip("tensorflow")
    async with fresh_kernel(cwd=str(home)) as (_, kc):
        await run_cell(kc, KERAS + "\nbatches = (i for i in range(3))")
        cell = "batches = [x, y]\nmodel.fit(batches[0], batches[1], epochs=1, verbose=0)"
        outcome = (await kit.run_in_kernel(kc, cell, private_writes=True, budget_s=30.0))["outcome"]
        assert outcome["status"] == "finished" and outcome.get("worker"), outcome


async def test_nothing_outlives_the_kernel(kit: SimpleNamespace, home: Path, sandbox: Any) -> None:
    async with fresh_kernel(cwd=str(home)) as (km, kc):
        outcome = await trial(kit, kc, "x = 1")
        assert outcome["status"] == "finished"
        pid = km.provisioner.process.pid  # type: ignore[union-attr]
        await asyncio.sleep(0.5)
        spares = [child for child, state in kit.children_of(pid) if state != "Z"]
        assert spares, "a warm spare waits for the next trial"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(kit.alive(p) for p in spares):
            await asyncio.sleep(0.1)
        assert not any(kit.alive(p) for p in spares)
    assert not list(Path("/tmp").glob(f"crane-trial-{pid}-*"))  # the spare removed its scratch directory


# -- where CUDA is in use: the inputs packed on a thread of the kernel (here without a GPU) -----------


async def test_a_cuda_kernels_inputs_are_packed_on_a_thread_without_running_notebook_code(
    kit: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, sandbox: Any
) -> None:
    from crane_jupyterlab.kernel.trial import control

    monkeypatch.setattr(control, "cuda_in_use", lambda: "torch has initialised CUDA in this kernel")
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(
        "import numpy as np\narr = np.arange(10.0)\n"
        "class Plain:\n    def total(self):\n        return arr.sum()\n"
        "class Custom:\n    def __reduce__(self):\n"
        "        open('/tmp/crane-reduce-ran', 'w')\n        return (Custom, ())\n"
        "p = Plain()\nc = Custom()",
        ns,
    )
    outcome = kit.run_here("assert p.total() == 45.0\nq = 1 / 0", ns, worker="auto", budget_s=30.0)
    assert (outcome["status"], outcome.get("exception")) == ("crashed", "ZeroDivisionError"), outcome
    assert "CUDA in use" in outcome["worker"]["reason"]
    refused = kit.run_here("c", ns, worker="auto", budget_s=30.0)
    assert refused["status"] == "unavailable" and "pickles itself" in refused["reason"], refused
    assert not Path("/tmp/crane-reduce-ran").exists()
    from crane_jupyterlab.kernel.trial import worker

    worker.discard_spare()  # the spare this process started: other tests count this process's children


async def test_a_cuda_kernels_tensors_reach_the_worker_views_shared_and_a_resize_is_not_claimed(
    kit: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, sandbox: Any
) -> None:
    torch = pytest.importorskip("torch")
    from crane_jupyterlab.kernel.trial import control, worker

    monkeypatch.setattr(control, "cuda_in_use", lambda: "torch has initialised CUDA in this kernel")
    data = torch.arange(1000.0)
    ns: dict[str, Any] = {"__name__": "__main__", "torch": torch, "data": data, "train": data[:800]}
    # A write through one name, read through its view: torch's own pickling gave the view a copy of its
    # own, and the trial claimed an AssertionError the kernel would not meet.
    shared = kit.run_here("data.zero_()\nassert float(train.sum()) == 0.0", ns, worker="auto", budget_s=30.0)
    assert shared["status"] == "finished", shared
    # The worker's copy maps the pack in place and cannot grow; the kernel's tensor can.
    grown = kit.run_here("data.resize_(2000)", ns, worker="auto", budget_s=30.0)
    assert grown["status"] == "unavailable" and "resizes an input" in grown["reason"], grown
    assert float(data.sum()) == 499500.0 and data.shape == (1000,)  # the kernel's tensor untouched
    exec("data.resize_(2000)", ns)  # the real run: no crash
    worker.discard_spare()
