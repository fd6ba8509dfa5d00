"""The CRANE prompt: structure, -RT / S/R/V / +D variants, and trimming to a token budget."""

from __future__ import annotations

import re

import pytest

from crane_jupyterlab import runtime_text
from crane_jupyterlab.models import PredictionRequest
from crane_jupyterlab.prompt import (
    SYSTEM_PROMPT,
    PromptSettings,
    build_messages,
    build_prompt,
    count_message_tokens,
    render_docs,
)

RUNTIME = "df: pandas.DataFrame shape (891, 12); columns PassengerId, Survived, Age(float64, 177 NaN)"
DOCS = "model.fit -> sklearn.linear_model.LogisticRegression.fit(X, y, sample_weight=None)"


def request(**fields: object) -> PredictionRequest:
    base: dict[str, object] = {
        "executed_cells": ["import pandas as pd", "df = pd.read_csv('train.csv')"],
        "target_cell": "df['Age'].astype(int)",
    }
    base.update(fields)
    return PredictionRequest.model_validate(base)


def user_text(req: PredictionRequest, settings: PromptSettings | None = None) -> str:
    messages = build_messages(req, settings)
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[1]["content"]


def test_system_message_states_task_and_output_contract() -> None:
    messages = build_messages(request())
    assert messages[0]["content"] == SYSTEM_PROMPT
    for needle in ('"reasoning"', '"detection"', "one or two sentences", "certain", "JSON object"):
        assert needle in SYSTEM_PROMPT


def test_user_message_orders_cells_runtime_docs_target() -> None:
    text = user_text(request(runtime_text=RUNTIME, docs_text=DOCS))
    positions = [
        text.index("[1]\n```python\nimport pandas as pd"),
        text.index("[2]\n```python\ndf = pd.read_csv"),
        text.index(RUNTIME),
        text.index(DOCS),
        text.index("Target cell"),
        text.index("df['Age'].astype(int)"),
    ]
    assert positions == sorted(positions)
    assert text.rstrip().endswith("Answer with the JSON object only.")


def test_minus_rt_has_no_runtime_block() -> None:
    # No runtime in the request: no block at all.
    assert "Runtime information" not in user_text(request())
    # Runtime in the request but the -RT setting: still no block, and no trace of its text.
    built = build_prompt(request(runtime_text=RUNTIME), PromptSettings(runtime=False))
    assert not built.has_runtime
    assert RUNTIME not in built.messages[1]["content"]
    assert "Runtime information" not in built.messages[1]["content"]


@pytest.mark.parametrize(
    ("categories", "heading"),
    [
        ("SRV", "(structure, types and representation, values)"),
        ("S", "(structure)"),
        ("R", "(types and representation)"),
        ("V", "(values)"),
        ("VS", "(structure, values)"),
    ],
)
def test_runtime_heading_names_the_categories(categories: str, heading: str) -> None:
    text = user_text(request(runtime_text=RUNTIME), PromptSettings(categories=categories))
    assert f"Runtime information {heading}" in text
    assert RUNTIME in text


def test_no_categories_means_no_runtime_block() -> None:
    assert "Runtime information" not in user_text(
        request(runtime_text=RUNTIME), PromptSettings(categories="")
    )


def test_bad_categories_rejected() -> None:
    with pytest.raises(ValueError, match="subset of 'SRV'"):
        PromptSettings(categories="SX")


def test_structured_probe_result_is_rendered_for_the_chosen_categories() -> None:
    probe = {
        "probe_version": 1,
        "objects": [
            {
                "expr": "df",
                "type": "pandas.DataFrame",
                "facts": [
                    {"cat": "S", "key": "shape", "value": [891, 12]},
                    {"cat": "R", "key": "dtype", "value": "float64"},
                    {"cat": "V", "key": "nan", "value": 177},
                ],
                "children": [],
            }
        ],
    }
    texts = {}
    for cats in ("S", "R", "V", "SRV"):
        expected = runtime_text.render(probe, cats).strip()
        text = user_text(request(runtime=probe), PromptSettings(categories=cats))
        if expected:
            assert expected in text
        texts[cats] = text
    assert len(set(texts.values())) > 1, "the S/R/V choice must change the prompt"
    # A JunoBench-shaped runtime object is never fed to the probe renderer.
    assert "Runtime information" not in user_text(request(runtime={"df": {}}, runtime_format="junobench"))


def test_docs_included_only_when_given_and_enabled() -> None:
    assert "API documentation" not in user_text(request())
    assert DOCS in user_text(request(docs_text=DOCS))
    assert DOCS not in user_text(request(docs_text=DOCS), PromptSettings(docs=False))


def test_render_docs_shows_signature_params_defaults_and_notes() -> None:
    text = render_docs(
        [
            {
                "call": "model.fit",
                "qualname": "sklearn.linear_model.LogisticRegression.fit",
                "signature": "(X, y, sample_weight=None)",
                "required": ["X", "y"],
                "optional": {"sample_weight": "None"},
                "kwonly": [],
                "notes": "X must be  2-D.\nUse reshape(-1, 1).",
                "warnings": "",
            },
            {
                "call": "np.concatenate",
                "signature": "(arrays, /, axis=0, out=None, *, dtype=None)",
                "kwonly": ["dtype"],
            },
            {"qualname": ""},  # nothing to show: skipped
            "not a mapping",
        ]
    )
    assert text.splitlines()[0] == (
        "model.fit -> sklearn.linear_model.LogisticRegression.fit(X, y, sample_weight=None)"
    )
    assert "  required: X, y" in text
    assert "  optional (defaults): sample_weight=None" in text
    assert "  notes: X must be 2-D. Use reshape(-1, 1)." in text
    assert "warnings" not in text and "  keyword-only: dtype" in text
    assert "np.concatenate(arrays, /, axis=0, out=None, *, dtype=None)" in text
    assert render_docs([]) == ""


def test_code_with_backticks_keeps_an_unambiguous_fence() -> None:
    text = user_text(request(target_cell='s = """```python\nx\n```"""'))
    assert "````python\n" in text


def test_prompt_tokens_counted() -> None:
    built = build_prompt(request(runtime_text=RUNTIME))
    assert built.prompt_tokens == count_message_tokens(built.messages)
    assert built.prompt_tokens > 50


def test_long_history_trimmed_oldest_first_keeping_target_and_runtime() -> None:
    cells = [f"step_{i} = load_part({i})\n" + "x = 1\n" * 60 for i in range(40)]
    runtime = "runtime fact " * 300  # ~600 tokens: larger than what remains for cells would be
    target = "final = step_39 + " + " + ".join(f"step_{i}" for i in range(40))
    settings = PromptSettings(max_prompt_tokens=2500)
    built = build_prompt(request(executed_cells=cells, runtime_text=runtime, target_cell=target), settings)
    text = built.messages[1]["content"]

    assert 0 < built.cells_omitted < 40
    assert built.prompt_tokens <= settings.max_prompt_tokens
    assert f"# … {built.cells_omitted} earlier cells omitted …" in text
    assert runtime.strip() in text and target in text
    kept = [int(n) for n in re.findall(r"^\[(\d+)\]$", text, flags=re.MULTILINE)]
    # The newest cells survive, with their original numbers, in order.
    assert kept == list(range(built.cells_omitted + 1, 41))
    assert "step_0 = " not in text and "step_39 = " in text


def test_target_and_runtime_never_cut_even_over_budget() -> None:
    runtime = "fact " * 2000
    built = build_prompt(
        request(runtime_text=runtime, executed_cells=["a = 1", "b = 2"]),
        PromptSettings(max_prompt_tokens=100),
    )
    text = built.messages[1]["content"]
    assert built.cells_omitted == 2
    assert "# … 2 earlier cells omitted …" in text
    assert runtime.strip() in text and "df['Age'].astype(int)" in text


def test_short_history_not_trimmed() -> None:
    built = build_prompt(request(), PromptSettings(max_prompt_tokens=4000))
    assert built.cells_omitted == 0
    assert "omitted" not in built.messages[1]["content"]


def test_empty_history_is_said() -> None:
    assert "No cells have run yet" in user_text(request(executed_cells=[]))
