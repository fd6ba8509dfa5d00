"""POST /crane/analyze and GET /crane/config on a real jupyter_server with real kernels.

The only double is the LLM: an OpenAI-compatible stub on 127.0.0.1 (tests/llm_stub.py), reached
through the real litellm backend. Its rule (`crash_if`) answers "crash" only when the prompt carries
the runtime fact that decides the case, so a verdict proves the facts travelled kernel -> prompt.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import time
import uuid
from typing import Any

import pytest
from llm_stub import Reply, answer
from support import STUB_KEY, analyze, crash_if, post_json

from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server

NUMPY_SETUP = "import numpy as np\nx = np.zeros((3, {cols}))"
# Inside a lambda: the checks cannot be sure the line runs, so the model decides (what these tests test).
TARGET = "col = (lambda: x[:, 5])()"


async def test_crashing_pair_and_fixed_twin(jp_fetch: Any, kernels: Any, llm_stub: Any) -> None:
    llm_stub.default = crash_if("x: ndarray (3, 4)", TARGET, reasoning="index 5 is out of bounds")
    buggy = await kernels.start(NUMPY_SETUP.format(cols=4))
    fixed = await kernels.start(NUMPY_SETUP.format(cols=6))

    code, crash = await analyze(jp_fetch, buggy.id, TARGET, cell_id="c1")
    assert code == 200, crash
    assert crash["status"] == "ok" and crash["model"] == "openai/stub-model"
    assert crash["verdict"]["detection"] is True and crash["verdict"]["source"] == "llm"
    assert crash["verdict"]["reasoning"] == "index 5 is out of bounds: crash"
    assert crash["verdict"]["votes"] == [True]
    assert "x: ndarray (3, 4)" in crash["runtime_text"]
    assert crash["executed_cells"] == 1
    assert crash["tokens"] == {"prompt": 100, "completion": 20}
    assert set(crash["timing"]) == {
        "extraction_ms",
        "llm_ms",
        "trial_ms",
        "fix_ms",
        "replica_ms",
        "below_ms",
        "total_ms",
    }
    assert crash["timing"]["total_ms"] >= crash["timing"]["extraction_ms"] + crash["timing"]["llm_ms"]
    assert any(o["expr"] == "x" for o in crash["runtime"]["objects"])

    code, fine = await analyze(jp_fetch, fixed.id, TARGET, cell_id="c1")
    assert code == 200 and fine["status"] == "ok"
    assert fine["verdict"]["detection"] is False and "x: ndarray (3, 6)" in fine["runtime_text"]

    # What reached the model: the executed cell, the runtime block and the target, in one prompt each.
    prompts = [r["body"]["messages"][-1]["content"] for r in llm_stub.requests]
    assert len(prompts) == 2
    assert all(NUMPY_SETUP.split("\n")[1][:10] in p and TARGET in p for p in prompts)
    assert "x: ndarray (3, 4)" in prompts[0] and "x: ndarray (3, 6)" in prompts[1]
    headers = {name.lower(): value for name, value in llm_stub.requests[0]["headers"].items()}
    assert headers["authorization"] == f"Bearer {STUB_KEY}"  # the key from CRANE_API_KEY was used

    # -RT: the same request without runtime information leaves the stub nothing to decide on.
    code, minus_rt = await analyze(jp_fetch, buggy.id, TARGET, settings={"runtime": False})
    assert code == 200 and minus_rt["verdict"]["detection"] is False
    assert "x: ndarray" not in llm_stub.requests[-1]["body"]["messages"][-1]["content"]


async def test_analyze_leaves_the_kernel_untouched(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start("import numpy as np", "x = np.arange(6).reshape(2, 3)", "y = x.sum()")
    snapshot = "(sorted(globals()), len(In), get_ipython().execution_count, repr(_))"
    before = await k.value(snapshot)
    for source in ("x.T @ x", "z = y + undefined_name", "def f(:\n  pass"):
        code, body = await analyze(jp_fetch, k.id, source)
        assert code == 200, body
    assert await k.value(snapshot) == before
    reply = await k.run("1 + 1")
    assert reply["execution_count"] == 4  # three setup cells, then this one: no count was used by us


async def test_syntax_error_is_certain_without_the_model(jp_fetch: Any, kernels: Any, llm_stub: Any) -> None:
    k = await kernels.start("a = 1")
    code, body = await analyze(jp_fetch, k.id, "b = a + 1\nif b > 1\n    print(b)")
    assert code == 200 and body["status"] == "ok"
    verdict = body["verdict"]
    assert verdict["detection"] is True and verdict["source"] == "syntax"
    assert "SyntaxError" in verdict["reasoning"] and "line 2" in verdict["reasoning"]
    assert verdict["findings"][0]["line"] == 2
    assert llm_stub.requests == []
    # A magic is IPython syntax, not a syntax error; nor is a one-line command the kernel's automagic
    # and aliases run (`ls data/`, `cd ..`): the kernel's shell parses it.
    code, body = await analyze(jp_fetch, k.id, "%matplotlib inline\nb = a + 1")
    assert code == 200 and body["verdict"]["source"] == "llm"
    for command in ("ls *.py", "cat setup.cfg", "cd .."):
        code, body = await analyze(jp_fetch, k.id, command)
        assert code == 200 and body["verdict"]["source"] != "syntax", (command, body)


async def test_code_still_being_typed_gets_no_verdict_while_typing(
    jp_fetch: Any, kernels: Any, llm_stub: Any
) -> None:
    """The automatic check after a pause (`typing`) says nothing of a cell with an open bracket, block or
    string; code invalid as it stands stays a syntax error; an explicit check says what running it would."""
    k = await kernels.start("import pandas as pd\ndf = pd.DataFrame({'age': [1, 2]})")
    for unfinished in ('total = df["age"].sum(', "for x in df['age']:", 'note = """starts here'):
        code, body = await analyze(jp_fetch, k.id, unfinished, typing=True)
        assert (code, body) == (200, {"status": "incomplete", "message": "the cell is not finished yet"})
        code, body = await analyze(jp_fetch, k.id, unfinished)
        assert code == 200 and body["verdict"]["source"] == "syntax", body
    for invalid in ("total = df['age'].sum())", "x = 1 +", "def f(:\n  pass"):
        code, body = await analyze(jp_fetch, k.id, invalid, typing=True)
        assert code == 200 and body["verdict"]["source"] == "syntax", (invalid, body)
    code, body = await analyze(jp_fetch, k.id, "total = df['age'].sum()", typing=True)
    assert code == 200 and body["status"] == "ok" and body["verdict"]["source"] != "syntax", body


async def test_the_checks_tier_answers_without_the_trial_or_the_model(
    jp_fetch: Any, kernels: Any, llm_stub: Any
) -> None:
    """`tier: "checks"` is the first badge: the probe and the checks only, status "ok" without the no-model
    hint, even when the request asks for a trial and a model is configured; the full tier then adds them."""
    llm_stub.default = crash_if("x: ndarray (3, 4)", TARGET, reasoning="index 5 is out of bounds")
    k = await kernels.start(
        NUMPY_SETUP.format(cols=4), "import pandas as pd", "df = pd.DataFrame({'age': [1]})"
    )
    code, body = await analyze(jp_fetch, k.id, TARGET, tier="checks", settings={"trial": True})
    assert code == 200 and body["status"] == "ok" and body.get("hint") is None, body
    assert body["verdict"] == {**body["verdict"], "detection": False, "source": "checks"}
    assert body["trial"] is None and body["timing"]["trial_ms"] == 0 and body["model"] is None
    assert "x: ndarray (3, 4)" in body["runtime_text"]
    assert llm_stub.requests == []
    # A certain crash is said by the first tier already.
    code, body = await analyze(jp_fetch, k.id, "df['agee'].sum()", tier="checks")
    assert code == 200 and body["verdict"]["detection"] is True and body["verdict"]["source"] == "checks", (
        body
    )
    # The full tier asks the model (and runs the trial where this machine can).
    code, body = await analyze(jp_fetch, k.id, TARGET, settings={"trial": True})
    assert code == 200 and body["verdict"]["detection"] is True, body
    assert len(llm_stub.requests) == 1
    assert (body["trial"] is not None) == platform_sandbox().available
    code, body = await analyze(jp_fetch, k.id, TARGET, tier="both")
    assert code == 400 and body["field"] == "tier"


async def test_busy_kernel_answers_409_at_once_and_is_not_interrupted(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start("import time")
    msg_id = k.submit("time.sleep(4); done = True")
    await k.wait_state("busy")
    durations = []
    for _ in range(5):
        started = time.perf_counter()
        code, body = await analyze(jp_fetch, k.id, "done")
        durations.append(time.perf_counter() - started)
        assert (code, body) == (409, {"status": "busy", "message": "the kernel is running code"})
    median_ms = statistics.median(durations) * 1000
    print(f"409 latency: median {median_ms:.1f} ms, max {max(durations) * 1000:.1f} ms")
    assert median_ms < 100
    reply = await k.reply(msg_id, timeout=30)
    assert reply["status"] == "ok"  # the user's cell ran to its end
    await k.wait_state("idle")
    assert await k.value("done") == "True"
    code, body = await analyze(jp_fetch, k.id, "done")
    assert code == 200 and body["status"] == "ok"


async def test_unknown_dead_and_restarted_kernels(jp_fetch: Any, kernels: Any, jp_serverapp: Any) -> None:
    code, body = await analyze(jp_fetch, str(uuid.uuid4()), "1")
    assert code == 404 and body["status"] == "error" and "no running kernel" in body["message"]

    k = await kernels.start("v = 1")
    assert (await analyze(jp_fetch, k.id, "v"))[0] == 200
    await jp_serverapp.kernel_manager.restart_kernel(k.id)
    await k.wait_state("idle", timeout=60)
    code, body = await analyze(jp_fetch, k.id, "v")  # a fresh client on the restarted kernel
    assert code == 200, body
    assert "v" in body["runtime"]["undefined"]

    await jp_serverapp.kernel_manager.shutdown_kernel(k.id)
    code, body = await analyze(jp_fetch, k.id, "v")
    assert code == 404 and k.id in body["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("{not json", "body"),
        ([1, 2], "body"),
        ({"source": "1"}, "kernel_id"),
        ({"kernel_id": "k", "source": 5}, "source"),
        ({"kernel_id": "k", "source": "1", "settings": {"votes": 2}}, "settings.votes"),
        ({"kernel_id": "k", "source": "1", "settings": {"categories": "SXZ"}}, "settings.categories"),
        ({"kernel_id": "k", "source": "1", "settings": {"temperature": -1}}, "settings.temperature"),
        ({"kernel_id": "k", "source": "1", "settings": {"model": ""}}, "settings.model"),
        ({"kernel_id": "k", "source": "1", "cell": "typo"}, "cell"),
    ],
)
async def test_malformed_body_is_400_naming_the_field(jp_fetch: Any, body: Any, field: str) -> None:
    code, reply = await post_json(jp_fetch, ["crane", "analyze"], body)
    assert code == 400 and reply["status"] == "error"
    assert reply["message"].startswith(field) or field == "body"
    if field != "body":
        assert reply["field"] == field


async def test_a_model_outside_the_allow_list_is_403(jp_fetch: Any, llm_stub: Any) -> None:
    body = {"kernel_id": "k", "source": "1", "settings": {"model": "openai/gpt-expensive"}}
    code, reply = await post_json(jp_fetch, ["crane", "analyze"], body)
    assert code == 403 and "allowed_models" in reply["message"]
    assert llm_stub.requests == []


async def test_unauthenticated_requests_are_refused(jp_fetch: Any) -> None:
    bad = {"Authorization": "token not-the-token"}
    body = json.dumps({"kernel_id": "k", "source": "1"})
    response = await jp_fetch("crane", "analyze", method="POST", body=body, headers=bad, raise_error=False)
    assert response.code == 403
    response = await jp_fetch("crane", "config", headers=bad, raise_error=False)
    assert response.code == 403


async def test_config_reports_defaults_and_never_a_key(jp_fetch: Any) -> None:
    response = await jp_fetch("crane", "config")
    config = json.loads(response.body)
    assert config == {
        "model": "openai/stub-model",
        "allowed_models": ["openai/stub-model"],
        "categories": "SRV",
        "votes": 1,
        "temperature": 0.0,
        "auto_check": True,
        "docs": False,
        "key_configured": True,
        "missing_env": [],
        "trial": "off",  # the test server's setting (conftest)
        # What the machine allows, whatever the mode says.
        "trial_available": platform_sandbox().available,
        "trial_unavailable_reason": config["trial_unavailable_reason"],
    }
    assert (config["trial_unavailable_reason"] is None) == platform_sandbox().available
    assert STUB_KEY not in response.body.decode()


async def test_llm_failure_keeps_facts_and_findings_and_the_key_leaks_nowhere(
    jp_fetch: Any,
    kernels: Any,
    llm_stub: Any,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    jp_logging_stream: Any,
) -> None:
    caplog.set_level(logging.DEBUG)
    # Providers echo part of a rejected key; the stub echoes all of it.
    leaky = json.dumps({"error": {"message": f"Incorrect API key provided: {STUB_KEY}", "type": "invalid"}})
    llm_stub.default = Reply(status=401, body=leaky)
    k = await kernels.start("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})")
    code, body = await analyze(jp_fetch, k.id, "df['a'] * 2")
    assert code == 200 and body["status"] == "llm_error", body
    assert body["error"]["kind"] == "auth" and "***" in body["error"]["message"]
    assert "df: DataFrame (2, 1)" in body["runtime_text"] and body["verdict"] is None
    bodies = [json.dumps(body)]

    # A certain finding decides without the model (the policy): no request reaches it.
    sent = len(llm_stub.requests)
    code, certain = await analyze(jp_fetch, k.id, "df['b']")
    assert code == 200 and certain["status"] == "ok" and certain["verdict"]["source"] == "checks"
    assert certain["verdict"]["findings"][0]["rule"] == "missing-key" and len(llm_stub.requests) == sent
    bodies.append(json.dumps(certain))

    llm_stub.default = answer(True, "the model predicts a crash")
    code, no_finding = await analyze(jp_fetch, k.id, "df['a']", settings={"votes": 3})
    assert code == 200 and no_finding["verdict"]["votes"] == [True, True, True]
    assert no_finding["verdict"]["source"] == "llm" and len(llm_stub.requests) == sent + 3
    llm_stub.default = Reply(status=500)
    code, failed = await analyze(jp_fetch, k.id, "df['a'] + 1")
    assert code == 200 and failed["status"] == "llm_error" and failed["verdict"] is None
    bodies += [json.dumps(no_finding), json.dumps(failed), (await jp_fetch("crane", "config")).body.decode()]

    assert len(llm_stub.requests) >= 4  # the key was really sent, so there was something to leak
    out, err = capfd.readouterr()  # litellm logs through handlers of its own, straight to stderr
    for text in [*bodies, caplog.text, jp_logging_stream.getvalue(), out, err]:
        assert STUB_KEY not in text


# No model configured (crane_env clears CRANE_MODEL), no trial run: the checks answer.
@pytest.mark.parametrize("crane_config", [{"trial": "off"}])
async def test_no_model_answers_with_the_checks_and_a_hint(
    crane_env: None, jp_fetch: Any, kernels: Any, llm_stub: Any
) -> None:
    k = await kernels.start("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})")
    code, body = await analyze(jp_fetch, k.id, "df['b']")
    assert code == 200 and body["status"] == "no_model" and body["model"] is None
    assert body["verdict"]["detection"] is True and body["verdict"]["source"] == "checks"
    assert "CraneExtension.model" in body["hint"] and "CRANE_MODEL" in body["hint"]
    code, body = await analyze(jp_fetch, k.id, "df['a']")
    assert body["status"] == "no_model" and body["verdict"]["detection"] is False
    assert llm_stub.requests == []
    config = json.loads((await jp_fetch("crane", "config")).body)
    assert config["model"] is None and config["key_configured"] is False


async def test_a_newer_request_supersedes_the_older(jp_fetch: Any, kernels: Any, llm_stub: Any) -> None:
    llm_stub.script = [Reply(content=answer(False).content, latency=15)]
    k = await kernels.start("a = 1")
    older = asyncio.ensure_future(analyze(jp_fetch, k.id, "a + 1", cell_id="cell-1"))
    deadline = time.monotonic() + 60  # the first model call imports litellm
    while not llm_stub.requests:
        assert not older.done() and time.monotonic() < deadline, "the older request never reached the model"
        await asyncio.sleep(0.01)
    started = time.perf_counter()
    code, newer = await analyze(jp_fetch, k.id, "a + 2", cell_id="cell-1")
    assert code == 200 and newer["status"] == "ok"
    code, body = await older
    assert (code, body) == (200, {"status": "superseded"})
    assert time.perf_counter() - started < 5  # long before the stub's 15 s reply


async def test_a_client_that_goes_away_cancels_the_analysis(
    jp_fetch: Any, kernels: Any, llm_stub: Any, crane_ext: Any
) -> None:
    k = await kernels.start("a = 1")
    assert (await analyze(jp_fetch, k.id, "a"))[0] == 200  # litellm imported: the next call is quick
    llm_stub.latency = 20
    body = json.dumps({"kernel_id": k.id, "source": "a + 1"})
    with pytest.raises(Exception, match="Timeout"):
        await jp_fetch("crane", "analyze", method="POST", body=body, request_timeout=3)
    assert len(llm_stub.requests) == 2
    deadline = time.monotonic() + 5
    while crane_ext.service._tasks and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not crane_ext.service._tasks  # cancelled long before the model's 20 s answer


async def test_docs_setting_grounds_the_prompt_in_api_docs(
    jp_fetch: Any, kernels: Any, llm_stub: Any
) -> None:
    k = await kernels.start("import numpy as np\nx = np.zeros((3, 4))")
    code, body = await analyze(jp_fetch, k.id, "y = np.reshape(x, (6, 2))", settings={"docs": True})
    assert code == 200 and body["status"] == "ok"
    assert any(d["call"].endswith("reshape") for d in body["runtime"]["docs"])
    prompt = llm_stub.requests[-1]["body"]["messages"][-1]["content"]
    assert "API documentation" in prompt and "reshape" in prompt.split("API documentation")[1]
    code, body = await analyze(jp_fetch, k.id, "y = np.reshape(x, (2, 6))")  # docs off by default
    assert "API documentation" not in llm_stub.requests[-1]["body"]["messages"][-1]["content"]
