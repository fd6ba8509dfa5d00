"""The verdict policy: which evidence decides whether a cell will crash. One policy, used by the server and
by `crane-bench` alike, so the benchmark measures what ships.

Evidence, strongest first:
1. a **syntax error**: the cell cannot even start;
2. an **observed** outcome of the trial run (the cell run in a sandboxed fork of the kernel): it crashed,
   with the real exception and line, or it ran to its end (the same code on the same state: no crash).
   A trial that was blocked, timed out, ran out of memory or could not run says nothing either way;
   a *quick* trial (long loops cut after their first iterations, kernel/trial/quick.py) decides only with a
   crash that does not depend on the cut ("quick"); one that may ("quick_may") is a warning that ranks
   with the model's prediction, and a shortened run that finished says nothing about the rest;
3. **certain findings** of the deterministic checks: the crash follows from the facts;
4. the **model's prediction**, for everything the above cannot decide.
Nothing here consults the model for 1-3 (it would cost time and money and could only agree). Without a
model, no certain finding means "no crash found", which is not a proof of safety.
"""

from __future__ import annotations

from .checks import SYNTAX_RULE
from .models import Finding, TrialOutcome, Verdict

NO_CERTAIN_CRASH = "The deterministic checks found no certain crash (they cannot prove a cell safe)."


# Kinds of the entries of a quick trial that are library calls run on a sample (kernel/trial/libcalls.py).
SAMPLED_CALLS = frozenset({"rows", "fit", "minimize"})


def cut_words(trial: TrialOutcome) -> str:
    """ "loops cut to their first 2 iterations", "long library calls run on a sample of their rows", or
    both"""
    k = trial.quick.k if trial.quick is not None else 0
    loops = f"loops cut to their first {k} iteration{'s' if k != 1 else ''}"
    cut = [loop.kind for loop in trial.quick.loops if loop.cut] if trial.quick is not None else []
    if not any(kind in SAMPLED_CALLS for kind in cut):
        return loops
    calls = "long library calls run on a sample of their rows"
    return f"{loops}, {calls}" if any(kind not in SAMPLED_CALLS for kind in cut) else calls


def observed(trial: TrialOutcome | None) -> Verdict | None:
    """The verdict of a trial that saw the cell crash or finish; None when it did not conclude."""
    if trial is None or not trial.observed:
        return None
    where = f" (sandbox: {trial.sandbox})" if trial.sandbox else ""
    if trial.status == "crashed" and trial.shortened:
        at = f" at line {trial.line}" if trial.line else ""
        message = f": {trial.message}" if trial.message else ""
        return Verdict(
            detection=True,
            reasoning=f"The cell raised {trial.exception}{message}{at} in a quick trial "
            f"({cut_words(trial)}) in a sandboxed copy of the kernel{where}; the crash does not depend on "
            "how many iterations ran.",
            source="quick",
        )
    if trial.status == "crashed":
        at = f" at line {trial.line}" if trial.line else ""
        message = f": {trial.message}" if trial.message else ""
        return Verdict(
            detection=True,
            reasoning=f"The cell raised {trial.exception}{message}{at} when it ran in a sandboxed copy of "
            f"the kernel{where}.",
            source="trial",
        )
    took = f" in {trial.elapsed_ms / 1000:.2f} s" if trial.elapsed_ms is not None else ""
    return Verdict(
        detection=False,
        reasoning=f"The cell ran to its end{took} in a sandboxed copy of the kernel{where}, without an "
        "exception.",
        source="trial",
    )


def certain(findings: list[Finding], trial: TrialOutcome | None = None) -> Verdict | None:
    """The verdict that needs no model, or None when only a model can decide."""
    syntax = next((f for f in findings if f.rule == SYNTAX_RULE), None)
    if syntax is not None:
        return Verdict(
            detection=True,
            reasoning=f"{syntax.message} The cell cannot run until it parses.",
            source="syntax",
            findings=[syntax],
        )
    seen = observed(trial)
    if seen is not None:
        # An observation outranks the checks: findings that agree come along as the explanation.
        return seen.model_copy(update={"findings": findings if seen.detection else []})
    if findings:
        return Verdict(
            detection=True,
            reasoning="\n".join(f.message for f in findings),
            source="checks",
            findings=findings,
        )
    return None


def maybe_quick(trial: TrialOutcome | None) -> Verdict | None:
    """A crash seen in a quick trial that may depend on how many iterations ran: a warning ("may crash"),
    weaker than the checks, in place of the model's prediction."""
    if trial is None or trial.status != "crashed" or not trial.shortened or trial.quick is None:
        return None
    if trial.quick.crash != "depends":
        return None
    at = f" at line {trial.line}" if trial.line else ""
    message = f": {trial.message}" if trial.message else ""
    return Verdict(
        detection=True,
        reasoning=f"The cell raised {trial.exception}{message}{at} in a quick trial ({cut_words(trial)}); "
        + (
            f"it went on past the assert at line {trial.quick.skipped_asserts[0]}, which checks what the "
            "shortened loops computed, so the full run may stop there first."
            if trial.quick.skipped_asserts
            else f"the line reads what the {_shortened(trial)} computed, so the full run may differ."
        ),
        source="quick_may",
    )


def _shortened(trial: TrialOutcome) -> str:
    cut = [loop.kind for loop in trial.quick.loops if loop.cut] if trial.quick is not None else []
    if cut and all(kind in SAMPLED_CALLS for kind in cut):
        return "library calls run on a sample"
    return "shortened loops"


def without_model(findings: list[Finding], trial: TrialOutcome | None = None) -> Verdict:
    """The verdict when no model may be asked: the certain one, else "no certain crash found"."""
    return (
        certain(findings, trial)
        or maybe_quick(trial)
        or Verdict(detection=False, reasoning=NO_CERTAIN_CRASH, source="checks")
    )


def from_model(prediction: Verdict) -> Verdict:
    """The model's prediction as the verdict of a cell nothing certain was found in."""
    return prediction.model_copy(update={"source": "llm", "findings": []})


def from_trial_alone(trial: TrialOutcome | None) -> Verdict:
    """The trial's verdict with no other evidence (`crane-bench --backend trial`): a crash only when one
    was observed."""
    seen = observed(trial) or maybe_quick(trial)
    if seen is not None:
        return seen
    if trial is not None and trial.shortened:
        ran = (
            "its first iterations ran without an error, the rest did not run"
            if trial.status == "finished"
            else f"it raised {trial.exception} on what the shortened loops built, as a shortened run may"
        )
        reasoning = f"The trial did not conclude: a quick trial ({cut_words(trial)}); {ran}."
        return Verdict(detection=False, reasoning=reasoning, source="trial")
    why = trial.reason if trial is not None and trial.reason else "no trial ran"
    status = trial.status if trial is not None else "none"
    reasoning = f"The trial did not conclude ({status}: {why})."
    return Verdict(detection=False, reasoning=reasoning, source="trial")
