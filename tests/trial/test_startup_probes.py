"""Library start-up probes that would start a process (loky's `lscpu` core count, joblib's workers for
n_jobs > 1) are answered inside the trial, so a scikit-learn cell runs to its real outcome instead of
ending "blocked". Real ipykernel, as the server sends trials."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import fresh_kernel, run_cell

pytest.importorskip("sklearn")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("os_layer"),
]

SETUP = (
    "import numpy as np\n"
    "from sklearn.pipeline import Pipeline\n"
    "from sklearn.preprocessing import StandardScaler\n"
    "from sklearn.linear_model import LogisticRegression\n"
    "from sklearn.model_selection import GridSearchCV\n"
    "from sklearn.cluster import KMeans\n"
    "rng = np.random.RandomState(0)\n"
    "X = rng.rand(60, 3)\n"
    "y = (X[:, 0] > 0.5).astype(int)\n"
    "pipe = Pipeline([('scale', StandardScaler()), ('clf', LogisticRegression())])\n"
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel() -> AsyncIterator[AsyncKernelClient]:
    # A fresh kernel that has imported scikit-learn but never counted its cores (no KMeans, no n_jobs).
    async with fresh_kernel() as (_km, kc):
        await run_cell(kc, SETUP)
        yield kc


async def _outcome(kit: SimpleNamespace, kc: AsyncKernelClient, source: str) -> dict[str, Any]:
    outcome: dict[str, Any] = (await kit.run_in_kernel(kc, source, budget_s=20))["outcome"]
    return outcome


async def test_kmeans_runs_to_its_real_outcome(kernel: AsyncKernelClient, kit: SimpleNamespace) -> None:
    outcome = await _outcome(kit, kernel, "km = KMeans(n_clusters=3, n_init=2, random_state=0).fit(X)")
    assert outcome["status"] == "finished", outcome


async def test_grid_search_with_two_jobs_runs_to_its_real_outcome(
    kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    cell = "gs = GridSearchCV(pipe, {'clf__C': [0.1, 1.0]}, cv=3, n_jobs=2).fit(X, y)\nprint(gs.best_params_)"
    outcome = await _outcome(kit, kernel, cell)
    assert outcome["status"] == "finished", outcome


async def test_a_crash_right_after_the_grid_search_is_observed(
    kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    cell = (
        "gs = GridSearchCV(pipe, {'clf__C': [0.1, 1.0]}, cv=3, n_jobs=2).fit(X, y)\n"
        "GridSearchCV(pipe, {'clf__not_a_param': [1]}, cv=3, n_jobs=2).fit(X, y)"
    )
    outcome = await _outcome(kit, kernel, cell)
    assert outcome["status"] == "crashed", outcome
    assert "not_a_param" in str(outcome), outcome


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bare_kernel() -> AsyncIterator[AsyncKernelClient]:
    async with fresh_kernel() as (_km, kc):
        await run_cell(kc, "import numpy as np\nX = np.random.RandomState(0).rand(60, 3)")
        yield kc


async def test_probes_of_a_library_the_cell_imports_are_answered_too(
    bare_kernel: AsyncKernelClient, kit: SimpleNamespace
) -> None:
    # joblib is not loaded in the kernel: the trial answers loky's probe as the cell's import runs it.
    cell = "from sklearn.cluster import KMeans\nkm = KMeans(n_clusters=3, n_init=2, random_state=0).fit(X)"
    outcome = await _outcome(kit, bare_kernel, cell)
    assert outcome["status"] == "finished", outcome
