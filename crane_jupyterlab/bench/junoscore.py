"""Scoring JunoBench predictions like the CRANE-LLM paper: confusion counts (`Score`), detection and
diagnosis counts (`Diagnosis`), and the tables `crane-bench junobench` prints (`report`,
`report_diagnosis`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TextIO


def pct(numerator: int, denominator: int) -> float | None:
    """A percentage rounded half-up to one decimal (the paper's tables), None when undefined."""
    if denominator == 0:
        return None
    value = Decimal(100 * numerator) / Decimal(denominator)
    return float(value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, crash: bool, predicted: bool) -> None:
        if predicted:
            if crash:
                self.tp += 1
            else:
                self.fp += 1
        elif crash:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def figures(self) -> dict[str, Any]:
        precision = pct(self.tp, self.tp + self.fp)
        recall = pct(self.tp, self.tp + self.fn)
        # F1 from the unrounded ratios, then rounded once.
        f1 = pct(2 * self.tp, 2 * self.tp + self.fp + self.fn)
        return {
            "n": self.n,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "accuracy": pct(self.tp + self.tn, self.n),
        }


def score(rows: Iterable[dict[str, Any]], key: str | None = None) -> dict[str, Score]:
    """Confusion counts of the rows that have a prediction, overall (`key` None) or per `row[key]`."""
    scores: dict[str, Score] = {}
    for row in rows:
        prediction = row.get("prediction")
        if not prediction:
            continue
        label = "overall" if key is None else str(row.get(key) or "-")
        scores.setdefault(label, Score()).add(bool(row["crash"]), bool(prediction["detection"]))
    return scores


@dataclass
class Diagnosis:
    """Detection-and-diagnosis counts: a crash is right only when detected and judged `correct`."""

    n: int = 0
    detected_right: int = 0  # TP + TN (detection-only)
    tn: int = 0
    tp: int = 0
    correct: int = 0
    partial: int = 0
    wrong: int = 0
    unjudged: int = 0  # true positives the judge could not grade (not scored here)

    def add(self, row: dict[str, Any]) -> None:
        crash, predicted = bool(row["crash"]), bool(row["prediction"]["detection"])
        self.n += 1
        if crash == predicted:
            self.detected_right += 1
        if not crash and not predicted:
            self.tn += 1
        if crash and predicted:
            self.tp += 1
            label = (row.get("judgement") or {}).get("label")
            if label == "correct":
                self.correct += 1
            elif label == "partially_correct":
                self.partial += 1
            elif label == "wrong":
                self.wrong += 1
            else:
                self.unjudged += 1

    def figures(self) -> dict[str, Any]:
        scored = self.n - self.unjudged
        return {
            "n": self.n,
            "accuracy": pct(self.detected_right, self.n),
            "tp": self.tp,
            "correct": self.correct,
            "partial": self.partial,
            "wrong": self.wrong,
            "unjudged": self.unjudged,
            "dd_accuracy": pct(self.tn + self.correct, scored),
            "dd_accuracy_lenient": pct(self.tn + self.correct + self.partial, scored),
        }


def diagnosis_scores(rows: Iterable[dict[str, Any]], key: str | None = None) -> dict[str, Diagnosis]:
    scores: dict[str, Diagnosis] = {}
    for row in rows:
        if not row.get("prediction"):
            continue
        label = "overall" if key is None else str(row.get(key) or "-")
        scores.setdefault(label, Diagnosis()).add(row)
    return scores


def report_diagnosis(rows: list[dict[str, Any]], judge: str, out: TextIO) -> dict[str, Any]:
    """The detection-and-diagnosis table beside detection-only accuracy; the overall figures."""
    print(
        f"\nDetection and diagnosis (judge {judge}; a crash counts when detected and judged correct)",
        file=out,
    )
    header = f"{'':<24}{'n':>5}{'acc':>7}{'TP':>5}{'corr':>6}{'part':>6}{'wrong':>6}{'unj':>5}"
    header += f"{'D&D':>7}{'D&D~':>7}"
    print(header, file=out)
    per_group = diagnosis_scores(rows, "group")
    overall = diagnosis_scores(rows).get("overall", Diagnosis())
    for label, score in [*sorted(per_group.items()), ("overall", overall)]:
        f = score.figures()
        line = (
            f"{label[:23]:<24}{f['n']:>5}{_fmt(f['accuracy']):>7}{f['tp']:>5}{f['correct']:>6}{f['partial']:>6}"
            f"{f['wrong']:>6}{f['unjudged']:>5}{_fmt(f['dd_accuracy']):>7}{_fmt(f['dd_accuracy_lenient']):>7}"
        )
        print(line, file=out)
    print(
        "acc: detection-only accuracy; corr/part/wrong: the judge's labels of the true positives; unj: true "
        "positives not judged (not scored); D&D: detection-and-diagnosis accuracy; D&D~: partially correct "
        "counted as correct",
        file=out,
    )
    return overall.figures()


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value)


def report(rows: list[dict[str, Any]], out: TextIO) -> dict[str, Any]:
    """Print the tables; return the overall figures (plus the error count)."""
    header = f"{'':<24}{'n':>5}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}{'prec':>7}{'rec':>7}{'F1':>7}{'acc':>7}"

    def table(title: str, scores: dict[str, Score]) -> None:
        print(f"\n{title}", file=out)
        print(header, file=out)
        for label in sorted(scores, key=lambda s: (s == "overall", s)):
            f = scores[label].figures()
            cells = [f[k] for k in ("n", "tp", "fp", "fn", "tn")]
            rates = [_fmt(f[k]) for k in ("precision", "recall", "f1", "accuracy")]
            line = f"{label[:23]:<24}" + "".join(f"{c:>5}" for c in cells) + "".join(f"{r:>7}" for r in rates)
            print(line, file=out)

    overall = score(rows).get("overall", Score())
    table("Overall (crash = positive)", {"overall": overall})
    table("Per group", score(rows, "group"))
    table("Per root cause", score(rows, "root_cause"))

    predictions = [r["prediction"] for r in rows if r.get("prediction")]
    errors = [r for r in rows if not r.get("prediction")]
    tokens = [float(p["prompt_tokens"]) for p in predictions if p.get("prompt_tokens") is not None]
    latency = [float(p["latency_ms"]) for p in predictions if p.get("latency_ms") is not None]
    costs = [float(p["cost_usd"]) for p in predictions if p.get("cost_usd") is not None]
    print(f"\nmean prompt tokens: {_fmt(_mean(tokens))}   mean latency: {_fmt(_mean(latency))} ms", file=out)
    if costs:
        print(f"cost: {sum(costs):.4f} USD", file=out)
    if errors:
        kinds: dict[str, int] = {}
        for row in errors:
            kind = (row.get("error") or {}).get("kind", "unknown")
            kinds[kind] = kinds.get(kind, 0) + 1
        listed = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        print(f"errors (not scored): {len(errors)} ({listed})", file=out)
    figures = overall.figures()
    figures["errors"] = len(errors)
    return figures
