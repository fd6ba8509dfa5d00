"""The verdict policy: which evidence decides whether a cell will crash. One policy, used by the server and
by `crane-bench` alike, so the benchmark measures what ships.

Evidence, strongest first:
1. a **syntax error** (the cell cannot even start) and **certain findings** of the deterministic checks:
   the crash follows from the facts, so the model is not consulted (it would cost time and money and
   could only agree);
2. the **model's prediction**, for everything the checks cannot prove.
Without a model, no certain finding means "no crash found", which is not a proof of safety.
"""

from __future__ import annotations

from .checks import SYNTAX_RULE
from .models import Finding, Verdict

NO_CERTAIN_CRASH = "The deterministic checks found no certain crash (they cannot prove a cell safe)."


def certain(findings: list[Finding]) -> Verdict | None:
    """The verdict that needs no model, or None when only a model can decide."""
    syntax = next((f for f in findings if f.rule == SYNTAX_RULE), None)
    if syntax is not None:
        return Verdict(
            detection=True,
            reasoning=f"{syntax.message} The cell cannot run until it parses.",
            source="syntax",
            findings=[syntax],
        )
    if findings:
        return Verdict(
            detection=True,
            reasoning="\n".join(f.message for f in findings),
            source="checks",
            findings=findings,
        )
    return None


def without_model(findings: list[Finding]) -> Verdict:
    """The verdict when no model may be asked: the certain one, else "no certain crash found"."""
    return certain(findings) or Verdict(detection=False, reasoning=NO_CERTAIN_CRASH, source="checks")


def from_model(prediction: Verdict) -> Verdict:
    """The model's prediction as the verdict of a cell nothing certain was found in."""
    return prediction.model_copy(update={"source": "llm", "findings": []})
