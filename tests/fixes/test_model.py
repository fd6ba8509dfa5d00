"""The model's fix answer: validated like the verdict's, nothing guessed; a rewrite is no fix."""

from __future__ import annotations

import pytest

from crane_jupyterlab.fixes import model
from crane_jupyterlab.llm.errors import MalformedAnswer

CELL = "row = df.loc[10]\nprint(row['Age'])"


def test_an_answer_is_one_object_with_reasoning_and_the_whole_cell():
    fenced = '```json\n{"reasoning": "row 1 exists", "cell": "row = df.loc[1]\\nprint(row[\'Age\'])"}\n```'
    answer = model.parse(fenced)
    assert answer.cell == "row = df.loc[1]\nprint(row['Age'])"
    for bad in (
        "I would use row 1.",
        '{"reasoning": "x"}',
        '{"cell": "x"} {"cell": "y"}',
        '{"reasoning": " ", "cell": "x"}',
    ):
        with pytest.raises(MalformedAnswer):
            model.parse(bad)


def test_a_candidate_is_a_small_edit_of_the_cell():
    answer = model.FixAnswer(reasoning="r", cell="row = df.loc[1]\nprint(row['Age'])\n")
    c = model.candidate(CELL, answer)
    assert c is not None and (c.origin, c.title, c.line) == ("model", "df.loc[10] → df.loc[1]", 1)
    assert model.candidate(CELL, model.FixAnswer(reasoning="r", cell=CELL)) is None  # no change
    rewrite = "import numpy as np\nx = np.zeros(3)\ny = x + 1\nprint(y)"
    assert model.candidate(CELL, model.FixAnswer(reasoning="r", cell=rewrite)) is None
    added = model.candidate(CELL, model.FixAnswer(reasoning="r", cell=CELL + "\nprint('done')"))
    assert added is not None and added.line == 3


def test_the_prompt_carries_the_crash_the_facts_the_cell_and_the_last_cells_run():
    asked = model.messages(CELL, "KeyError: 10", "df: DataFrame (3, 2)", [f"x{i} = {i}" for i in range(8)])
    assert asked[0]["role"] == "system" and "smallest edit" in asked[0]["content"]
    user = asked[1]["content"]
    assert CELL in user and "KeyError: 10" in user and "df: DataFrame (3, 2)" in user
    assert "x7 = 7" in user and "x2 = 2" not in user  # the last five cells
