"""Trial runs through the real server: the mode and the request's setting decide whether one runs, an
observed crash or end decides the verdict without the model, and a trial that cannot conclude (blocked,
timed out, off) leaves the verdict to the checks and the model, and says so."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from llm_stub import StubLLM, answer
from support import STUB_MODEL, analyze

from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for trial runs here"),
]

FRAME = "import pandas as pd\ndf = pd.DataFrame({'Age': [22, 38], 'Fare': [7.25, 71.3]})"


@pytest.fixture
def crane_config(llm_stub: StubLLM, crane_env: None) -> dict[str, Any]:
    return {"model": STUB_MODEL, "api_base": llm_stub.url, "llm_timeout": 20.0, "trial": "auto"}


async def test_an_observed_crash_decides_without_the_model(
    jp_fetch: Any, kernels: Any, llm_stub: StubLLM
) -> None:
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "mean_age = df['age'].mean()\nprint(mean_age)")
    assert code == 200 and body["status"] == "ok", body
    assert body["verdict"]["source"] == "trial" and body["verdict"]["detection"] is True
    assert "KeyError" in body["verdict"]["reasoning"] and "line 1" in body["verdict"]["reasoning"]
    trial = body["trial"]
    assert (trial["status"], trial["exception"], trial["message"], trial["line"]) == (
        "crashed",
        "KeyError",
        "'age'",
        1,
    )
    assert trial["frames"] == [{"line": 1, "text": "mean_age = df['age'].mean()"}]
    assert trial["sandbox"].startswith("seccomp") and body["timing"]["trial_ms"] > 0
    assert llm_stub.requests == []  # the observation needed no prediction
    # The kernel itself never ran the cell.
    assert await k.value("'mean_age' in globals()") == "False"


async def test_a_message_reaches_the_user_without_its_terminal_codes(
    jp_fetch: Any, kernels: Any, llm_stub: StubLLM
) -> None:
    """Keras bolds a layer's name with terminal codes in its messages: the answer carries the words."""
    k = await kernels.start(FRAME)
    cell = "raise ValueError('Input 0 of layer \\x1b[1m\"dense\"\\x1b[0m is incompatible')"
    code, body = await analyze(jp_fetch, k.id, cell)
    assert code == 200 and body["trial"]["status"] == "crashed", body
    assert body["trial"]["message"] == 'Input 0 of layer "dense" is incompatible'
    assert (
        "\x1b" not in body["verdict"]["reasoning"]
        and '"dense" is incompatible' in body["verdict"]["reasoning"]
    )


async def test_an_observed_end_means_no_crash(jp_fetch: Any, kernels: Any, llm_stub: StubLLM) -> None:
    llm_stub.default = answer(True, "the stub would have said crash")
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "mean_age = df['Age'].mean()")
    assert code == 200 and body["trial"]["status"] == "finished"
    assert body["verdict"]["source"] == "trial" and body["verdict"]["detection"] is False
    assert llm_stub.requests == []


async def test_a_blocked_trial_falls_back_to_the_model(
    jp_fetch: Any, kernels: Any, llm_stub: StubLLM, tmp_path: Path, crane_ext: Any
) -> None:
    llm_stub.default = answer(False, "the model's prediction")
    crane_ext.service.config.trial_private_writes = False  # the administrator's choice: writes refused
    target = tmp_path / "out.csv"
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, f"df.to_csv({str(target)!r})")
    assert code == 200 and body["trial"]["status"] == "blocked"
    assert str(target) in body["trial"]["reason"]
    assert body["verdict"]["source"] == "llm" and body["verdict"]["reasoning"] == "the model's prediction"
    assert len(llm_stub.requests) == 1
    assert not target.exists()


async def test_a_trial_that_writes_a_file_runs_to_its_end_in_a_private_copy(
    jp_fetch: Any, kernels: Any, llm_stub: StubLLM, tmp_path: Path
) -> None:
    layers = (platform_sandbox().sandbox or "").split("+")
    if "netns" not in layers or "landlock" not in layers:
        pytest.skip("no user namespaces or no Landlock here: writes stay refused")
    target = tmp_path / "out.csv"
    k = await kernels.start(FRAME)
    cell = f"df.to_csv({str(target)!r})\nback = pd.read_csv({str(target)!r})\nback['age']"
    code, body = await analyze(jp_fetch, k.id, cell)
    trial = body["trial"]
    assert code == 200 and (trial["status"], trial["exception"], trial["line"]) == ("crashed", "KeyError", 3)
    assert trial["writes"].startswith("wrote 1 file") and "private copy" in trial["writes"]
    assert body["verdict"]["source"] == "trial"
    # No prediction was asked for; the model may have been asked for a fix (the facts offered none).
    system = [r["body"]["messages"][0]["content"] for r in llm_stub.requests]
    assert all(s.startswith("You fix one cell") for s in system), system
    assert body["fixes"] == []  # the stub answers with a verdict, which is no fix
    assert not target.exists()


async def test_the_request_chooses_and_the_mode_decides_the_default(
    jp_fetch: Any, kernels: Any, crane_ext: Any
) -> None:
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "df['age']", settings={"trial": False})
    assert code == 200 and body["trial"] is None and body["verdict"]["source"] != "trial"
    crane_ext.service.config.trial = "on-demand"
    code, body = await analyze(jp_fetch, k.id, "df['age']")
    assert body["trial"] is None
    code, body = await analyze(jp_fetch, k.id, "df['age']", settings={"trial": True})
    assert body["trial"]["status"] == "crashed"
    crane_ext.service.config.trial = "off"
    code, body = await analyze(jp_fetch, k.id, "df['age']", settings={"trial": True})
    assert body["trial"]["status"] == "unavailable" and "off" in body["trial"]["reason"]
    assert body["verdict"]["source"] != "trial"


async def test_a_syntax_error_needs_no_trial(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "df['Age'].mean(")
    assert code == 200 and body["verdict"]["source"] == "syntax" and body["trial"] is None


async def test_the_budget_ends_a_long_trial_and_the_model_decides(
    jp_fetch: Any, kernels: Any, crane_ext: Any, llm_stub: StubLLM
) -> None:
    crane_ext.service.config.trial_budget = 1.0
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "import time\ntime.sleep(600)\nmean = df['Age'].mean()")
    assert code == 200 and body["trial"]["status"] == "timed_out"
    assert body["verdict"]["source"] == "llm" and len(llm_stub.requests) == 1
    # The kernel is free again, and nothing of the trial is left.
    assert await k.value("1 + 1") == "2"


async def test_a_superseded_analysis_ends_its_trial(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    slow = asyncio.ensure_future(analyze(jp_fetch, k.id, "import time\ntime.sleep(600)", cell_id="c9"))
    await asyncio.sleep(1.5)  # the trial has started
    pid = int(await k.value("__import__('os').getpid()"))
    children = await _trial_children(pid)
    code, body = await analyze(jp_fetch, k.id, "x = 1", cell_id="c9")
    assert code == 200 and body["trial"]["status"] == "finished"
    assert (await slow)[1]["status"] == "superseded"
    for child in children:
        assert not _alive(child)


async def _trial_children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


async def test_config_says_what_the_server_allows(jp_fetch: Any) -> None:
    response = await jp_fetch("crane", "config", method="GET")
    import json

    body = json.loads(response.body)
    assert body["trial"] == "auto"
    assert body["trial_available"] is True and body["trial_unavailable_reason"] is None
