"""From the top through the real server: the notebook's code cells in a fresh sandboxed worker
of the kernel's Python, while the kernel keeps its state. A cell deleted after it ran still lives in the
kernel: the run finds the crash there and says the kernel holds the name."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support import post_json

from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for runs from the top here"),
]

# The notebook as it is now: the cell that made df_clean was deleted after it ran.
CELLS = [
    {"cell_id": "a", "source": "import pandas as pd\ndf = pd.DataFrame({'age': [22, None, 38]})"},
    {"cell_id": "b", "source": "rows = len(df)"},
    {"cell_id": "c", "source": "mean_age = df_clean['age'].mean()"},
    {"cell_id": "d", "source": "print(mean_age)"},
]


@pytest.fixture
def crane_config(crane_env: None) -> dict[str, Any]:
    return {"trial": "auto", "replicas": False}


async def wait_done(jp_fetch: Any, run_id: str, timeout: float = 120.0) -> dict[str, Any]:
    seen = []
    for _ in range(int(timeout / 0.2)):
        response = await jp_fetch("crane", "notebook", run_id, method="GET")
        run = json.loads(response.body)
        seen.append(run["done"])
        if run["state"] != "running":
            assert seen == sorted(seen)  # progress only moves forward
            return dict(run)
        await asyncio.sleep(0.2)
    raise AssertionError("the run from the top did not end")


async def test_hidden_state_fails_from_the_top_and_the_kernel_is_untouched(
    jp_fetch: Any, kernels: Any
) -> None:
    k = await kernels.start(
        CELLS[0]["source"], "df_clean = df.dropna()", CELLS[1]["source"], CELLS[2]["source"]
    )
    code, body = await post_json(jp_fetch, ["crane", "notebook"], {"kernel_id": k.id, "cells": CELLS})
    assert code == 202, body
    code, again = await post_json(jp_fetch, ["crane", "notebook"], {"kernel_id": k.id, "cells": CELLS})
    assert code == 409 and again["status"] == "busy", again  # one run per kernel at a time
    assert again["field"] == body["id"]
    run = await wait_done(jp_fetch, body["id"])
    assert run["state"] == "done" and run["total"] == 4, run
    assert [c["status"] for c in run["cells"]] == ["ran", "ran", "crashed", "not_reached"]
    crash = run["first_crash"]
    assert (crash["cell_id"], crash["exception"], crash["line"]) == ("c", "NameError", 1)
    assert "df_clean" in crash["message"] and crash["hidden"] is True  # the kernel holds it
    assert run["first_crash_index"] == 2
    assert "fresh worker" in run["message"]
    # The kernel kept its state, and the worker's run left nothing in it.
    assert await k.value("len(df_clean), 'mean_age' in globals()") == "(2, True)"


async def test_a_notebook_that_runs_from_the_top(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start("x = 1")
    cells = [{"cell_id": "a", "source": "x = 2"}, {"cell_id": "b", "source": "y = x * 3"}]
    code, body = await post_json(jp_fetch, ["crane", "notebook"], {"kernel_id": k.id, "cells": cells})
    assert code == 202, body
    run = await wait_done(jp_fetch, body["id"])
    assert [c["status"] for c in run["cells"]] == ["ran", "ran"] and run["first_crash"] is None
    assert await k.value("x") == "1"


async def test_cancel_and_unknown_runs(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start("x = 1")
    cells = [{"cell_id": "a", "source": "import time\ntime.sleep(60)"}]
    body = {"kernel_id": k.id, "cells": cells, "settings": {"full": True}}
    code, started = await post_json(jp_fetch, ["crane", "notebook"], body)
    assert code == 202, started
    await asyncio.sleep(1.0)
    response = await jp_fetch("crane", "notebook", started["id"], method="DELETE")
    assert json.loads(response.body)["state"] == "cancelled"
    missing = await jp_fetch("crane", "notebook", "0123abcd", method="GET", raise_error=False)
    assert missing.code == 404
    code, unknown = await post_json(jp_fetch, ["crane", "notebook"], {"kernel_id": "nope", "cells": cells})
    assert code == 404, unknown
