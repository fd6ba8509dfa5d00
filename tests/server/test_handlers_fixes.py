"""Verified fixes through the real server and kernels: a candidate is offered only when a trial ran the
edited cell on the same kernel state to its end; one that fails in its trial is never shown."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_stub import Reply, StubLLM, answer
from support import STUB_MODEL, analyze

from crane_jupyterlab.server.trial import platform_sandbox

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not platform_sandbox().available, reason="no OS sandbox for trial runs here"),
]

FRAME = "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0], 'Fare': [7.25, 71.3]})"


@pytest.fixture
def crane_config(llm_stub: StubLLM, crane_env: None) -> dict[str, Any]:
    # Trials on demand only: the fixes are tried all the same (the crash is certain from the checks).
    return {"model": STUB_MODEL, "api_base": llm_stub.url, "llm_timeout": 20.0, "trial": "on-demand"}


async def test_a_close_column_is_offered_once_its_trial_ran(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    cell = "mean_age = df['Agee'].mean()\nprint(mean_age)"
    code, body = await analyze(jp_fetch, k.id, cell)
    assert code == 200 and body["verdict"]["detection"] is True and body["verdict"]["source"] == "checks"
    [fix] = body["fixes"]
    assert fix["title"] == "df['Agee'] → df['Age']" and fix["origin"] == "close-name"
    assert fix["source"] == "mean_age = df['Age'].mean()\nprint(mean_age)"
    assert fix["tried"].startswith("tried: the edited cell then ran to its end in a trial")
    assert fix["line"] == 1 and not fix["shortened"] and fix["trial_ms"] > 0
    assert body["timing"]["fix_ms"] >= fix["trial_ms"]
    # Nothing ran in the kernel itself.
    assert await k.value("'mean_age' in globals()") == "False"
    # The fixed cell gets no fix (and no crash).
    code, fixed = await analyze(jp_fetch, k.id, fix["source"])
    assert fixed["fixes"] == [] and fixed["timing"]["fix_ms"] == 0


async def test_a_candidate_that_fails_in_its_trial_is_never_shown(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    # The close column fixes the KeyError, but the cell crashes next anyway: nothing is offered.
    code, body = await analyze(jp_fetch, k.id, "mean_age = df['Agee'].mean()\nratio = int(mean_age) // 0")
    assert code == 200 and body["verdict"]["detection"] is True
    assert body["fixes"] == [] and body["timing"]["fix_ms"] > 0
    # A column no name of the frame is close to: no candidate, no trial, fix_ms stays 0 ("none tried").
    code, body = await analyze(jp_fetch, k.id, "total = df['Qwxyz'].sum()")
    assert code == 200 and body["verdict"]["detection"] is True
    assert body["fixes"] == [] and body["timing"]["fix_ms"] == 0
    # An alias whose module this kernel cannot import: the import candidate fails its trial.
    code, body = await analyze(jp_fetch, k.id, "booster = xgbx.train({}, None)\nimport_it = xgbx")
    assert code == 200 and body["fixes"] == [], body["fixes"]


async def test_an_import_under_the_usual_alias_and_a_renamed_api(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "x = np.arange(3).sum()")
    assert code == 200 and body["verdict"]["detection"] is True, body["verdict"]
    [fix] = body["fixes"]
    assert (fix["origin"], fix["title"]) == ("import", "add `import numpy as np`")
    assert fix["source"] == "import numpy as np\nx = np.arange(3).sum()"
    # pandas 2 removed iteritems; the fix comes from the library's own message.
    code, body = await analyze(jp_fetch, k.id, "for name, col in df.iteritems():\n    print(name)")
    assert code == 200 and body["verdict"]["detection"] is True, body["verdict"]
    [fix] = body["fixes"]
    assert fix["origin"] in ("renamed-api", "close-name") and ".items()" in fix["source"], fix


async def test_a_renamed_api_whose_edit_still_crashes_is_never_shown(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    # items() fixes the AttributeError, then the loop body divides by zero: no fix is offered.
    cell = "for name, col in df.iteritems():\n    print(name, len(col) // 0)"
    code, body = await analyze(jp_fetch, k.id, cell, settings={"trial": True})
    assert code == 200 and body["verdict"]["detection"] is True, body["verdict"]
    assert body["fixes"] == [] and body["timing"]["fix_ms"] > 0


async def test_fixes_can_be_turned_off_per_request(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    code, body = await analyze(jp_fetch, k.id, "df['Agee'].mean()", settings={"fixes": False})
    assert code == 200 and body["verdict"]["detection"] is True and body["fixes"] == []
    code, body = await analyze(jp_fetch, k.id, "df['Agee'].mean()", tier="checks")
    assert body["fixes"] == [] and body["timing"]["fix_ms"] == 0


def fix_reply(cell: str) -> Any:
    """The stub's answers: the fix asked for (by the fix prompt's system message) is `cell`; any other
    request (a verdict) gets "no crash"."""

    def reply(body: dict[str, Any]) -> Reply:
        if "You fix one cell" in body["messages"][0]["content"]:
            return Reply(content=json.dumps({"reasoning": "use a row the frame has", "cell": cell}))
        return answer(False, "no crash")

    return reply


async def test_the_model_proposes_a_fix_only_when_the_facts_gave_none_and_it_ran(
    jp_fetch: Any, kernels: Any, llm_stub: StubLLM
) -> None:
    k = await kernels.start(FRAME)
    cell = "row = df.loc[10]\nprint(row['Age'])"
    # Observed in a trial (KeyError: 10); no close name, import or renamed API: the model is asked.
    llm_stub.default = fix_reply("row = df.loc[1]\nprint(row['Age'])")
    code, body = await analyze(jp_fetch, k.id, cell, settings={"trial": True})
    assert code == 200 and body["verdict"]["source"] == "trial", body["verdict"]
    [fix] = body["fixes"]
    assert (fix["origin"], fix["title"], fix["line"]) == ("model", "df.loc[10] → df.loc[1]", 1)
    assert fix["source"] == "row = df.loc[1]\nprint(row['Age'])" and "ran to its end" in fix["tried"]
    asked = [r for r in llm_stub.requests if "You fix one cell" in r["body"]["messages"][0]["content"]]
    assert len(asked) == 1
    prompt = asked[0]["body"]["messages"][1]["content"]
    assert cell in prompt and "KeyError: 10" in prompt and "df" in prompt

    # Its edit crashes too: not shown.
    llm_stub.default = fix_reply("row = df.loc[11]\nprint(row['Age'])")
    code, body = await analyze(jp_fetch, k.id, cell, settings={"trial": True})
    assert code == 200 and body["verdict"]["detection"] is True and body["fixes"] == []
    # A rewrite, not a fix: refused before any trial; a malformed answer: no fix, the verdict stands.
    llm_stub.default = fix_reply("import numpy as np\nx = np.zeros(3)\ny = x + 1\nz = y * 2\nprint(z)")
    code, body = await analyze(jp_fetch, k.id, cell, settings={"trial": True})
    assert code == 200 and body["fixes"] == []
    llm_stub.default = Reply(content="I would change the row.")
    code, body = await analyze(jp_fetch, k.id, cell, settings={"trial": True})
    assert code == 200 and body["verdict"]["source"] == "trial" and body["fixes"] == []


async def test_fixes_from_the_library_own_words(jp_fetch: Any, kernels: Any) -> None:
    k = await kernels.start(FRAME)
    # pandas made drop's axis keyword-only: certain from the checks, the probe read drop's params in
    # the kernel, and the argument is given by keyword.
    code, body = await analyze(jp_fetch, k.id, "smaller = df.drop('Fare', 1)\nprint(smaller.shape)")
    assert code == 200 and body["verdict"]["source"] == "checks", body["verdict"]
    [fix] = body["fixes"]
    assert (fix["origin"], fix["title"]) == ("signature", "df.drop(…, 1) → df.drop(…, axis=1)")
    assert fix["source"] == "smaller = df.drop('Fare', axis=1)\nprint(smaller.shape)"
    # Observed in a trial: NumPy's message names the replacement, put where the failing line uses it.
    cell = "import numpy as np\nolder = df['Age'] > 30\nages = df['Age'].where(older, np.NaN)"
    code, body = await analyze(jp_fetch, k.id, cell, settings={"trial": True})
    assert code == 200 and body["verdict"]["source"] == "trial", body["verdict"]
    [fix] = body["fixes"]
    assert (fix["origin"], fix["title"], fix["line"]) == ("message", "np.NaN → np.nan", 3)
    assert (
        fix["source"].endswith("ages = df['Age'].where(older, np.nan)") and "ran to its end" in fix["tried"]
    )
