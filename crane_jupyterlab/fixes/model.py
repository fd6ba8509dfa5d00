"""The model as a source of fix candidates, when one is configured and the facts and the libraries' own
word gave none that ran: asked once for the smallest edit of the cell that removes the crash, given the
crash, the runtime facts and the cells the kernel ran. Its answer is validated like the verdict's
(`{"reasoning", "cell"}`, nothing guessed), refused when it rewrites more than a small part of the cell,
and, like every candidate, offered only after a trial ran it (server/service.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..llm.answer import Reasoning, _json_objects
from ..llm.errors import MalformedAnswer
from .edits import diff_title, first_changed
from .proposal import Candidate

# The JSON schema sent to providers that support structured output.
FIX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "cell": {"type": "string"}},
    "required": ["reasoning", "cell"],
    "additionalProperties": False,
}

SYSTEM = (
    "You fix one cell of a Jupyter notebook that will crash. You get the cells the kernel already ran, "
    "facts about the objects the cell uses, the cell, and its crash. Change as little as possible: the "
    "smallest edit of the cell that removes this crash and keeps what the cell is meant to do. Do not "
    "add other improvements, comments, or error handling that hides the crash. Answer with one JSON "
    'object: {"reasoning": "<one sentence: what you changed and why>", "cell": "<the whole fixed cell>"}.'
)

HISTORY_CELLS = 5  # the last cells the kernel ran, for context
HISTORY_CHARS = 4000
# An edit that changes more than this share of the cell's lines (and more than MIN_LINES) is a rewrite,
# not a fix: refused before any trial.
MAX_CHANGED_SHARE = 0.34
MIN_LINES = 2


class FixAnswer(BaseModel):
    """The model's answer, strictly typed."""

    model_config = ConfigDict(extra="ignore")

    reasoning: Reasoning
    cell: str


def messages(cell: str, crash: str, runtime_text: str, executed: list[str]) -> list[dict[str, str]]:
    """The chat messages that ask for a fix."""
    history: list[str] = []
    size = 0
    for source in reversed(executed[-HISTORY_CELLS:]):
        size += len(source)
        if size > HISTORY_CHARS:
            break
        history.insert(0, source)
    ran = "\n\n".join(f"# In[{i + 1}]\n{s}" for i, s in enumerate(history)) or "(none)"
    user = (
        f"Cells the kernel ran (the last {len(history)}):\n```python\n{ran}\n```\n\n"
        f"Runtime facts of the objects the cell uses:\n{runtime_text or '(none)'}\n\n"
        f"The cell:\n```python\n{cell}\n```\n\n"
        f"Its crash: {crash}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse(text: str) -> FixAnswer:
    """Exactly one JSON object with `reasoning` and `cell` (a code fence or prose around it is allowed);
    anything else is a `MalformedAnswer`."""
    objects = _json_objects(text)
    if len(objects) != 1:
        raise MalformedAnswer(f"expected one JSON object with the fixed cell, found {len(objects)}")
    try:
        return FixAnswer.model_validate(objects[0][0])
    except ValidationError as exc:
        raise MalformedAnswer(
            f"the fix answer is not {{reasoning, cell}}: {exc.errors()[0]['msg']}"
        ) from None


def candidate(cell: str, answer: FixAnswer) -> Candidate | None:
    """The model's edit as a candidate; None when it changes nothing or rewrites the cell."""
    fixed = answer.cell.strip("\n")
    if not fixed.strip() or fixed == cell.strip("\n"):
        return None
    before, after = cell.splitlines(), fixed.splitlines()
    changed = sum(1 for a, b in zip(before, after, strict=False) if a != b) + abs(len(before) - len(after))
    if changed > max(MIN_LINES, int(MAX_CHANGED_SHARE * len(before))):
        return None
    return Candidate(diff_title(cell, fixed), fixed, "model", first_changed(cell, fixed) or 1)
