"""`crane-bench junobench`: crash detection on the JunoBench cases, scored like the CRANE-LLM paper.

Each case becomes a `PredictionRequest` (executed cells, target cell, and for +RT the case's runtime
information as the paper's extractor printed it); a backend answers; crash = positive. Results are
appended to `--out` as each case finishes, so an interrupted run resumes where it stopped.

Backends: the paper's recorded answers (`replay`), any litellm model, the deterministic checks, both
(`hybrid`), and the static analyzers `pyright` / `pylint` (`static.py`). `--categories` keeps only some
of the S/R/V facts of the runtime information (`runtime_facts.py`); `--judge MODEL` grades the reasoning
of every detected crash against the case's ground-truth diagnosis (`judge.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, TextIO

from ..models import RESPONSE_FORMATS, PredictionRequest
from . import runtime_facts

DEFAULT_CASES = "../shared/junobench/cases.jsonl"
SETTINGS = ("+RT", "-RT")
BACKENDS = ("replay", "litellm", "checks", "hybrid", "pyright", "pylint", "none")
STATIC = ("pyright", "pylint")
# Detection-only accuracy the paper reports for the analyzers on all 222 cases.
PAPER_STATIC_ACCURACY = {"pyright": 55.4, "pylint": 56.3}


# ---------------------------------------------------------------- cases and requests


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    """The cases of a JunoBench `cases.jsonl`, each checked for the keys the benchmark reads."""
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"JunoBench cases not found: {source} (pass --cases PATH)")
    cases: list[dict[str, Any]] = []
    required = ("id", "version", "crash", "executed_cells", "target_cell")
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{source}:{number}: not JSON ({exc.msg})") from None
            missing = [key for key in required if key not in case]
            if missing:
                raise ValueError(f"{source}:{number}: case lacks {', '.join(missing)}")
            cases.append(case)
    if not cases:
        raise ValueError(f"{source} holds no cases")
    return cases


def case_id(case: dict[str, Any]) -> str:
    return f"{case['id']}/{case['version']}"


def make_request(case: dict[str, Any], setting: str, categories: str = "SRV") -> PredictionRequest:
    """The request for one case: -RT carries code only; +RT adds the paper's runtime block, and the
    parsed runtime object (for the deterministic checks) marked as JunoBench-shaped.

    `categories` (a subset of SRV) keeps only those facts, in the text and in the object alike; with all
    three the request carries the recorded text unchanged.
    """
    with_runtime = setting == "+RT"
    runtime_obj = case.get("runtime_info_obj") if with_runtime else None
    runtime_text = case.get("runtime_info") if with_runtime else None
    categories = runtime_facts.check_categories(categories)
    if with_runtime and categories != runtime_facts.CATEGORIES:
        parsed = runtime_facts.case_runtime(case)
        runtime_text = (
            runtime_facts.render(runtime_facts.filter_runtime(parsed, categories)) if parsed else None
        )
        if isinstance(runtime_obj, dict):
            runtime_obj = runtime_facts.filter_runtime(runtime_obj, categories)
    return PredictionRequest(
        case_id=case_id(case),
        executed_cells=list(case["executed_cells"]),
        target_cell=case["target_cell"],
        runtime_text=runtime_text,
        runtime=runtime_obj if isinstance(runtime_obj, dict) else None,
        runtime_format="junobench",
    )


# ---------------------------------------------------------------- scoring


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


# ---------------------------------------------------------------- running


def _run_config(args: argparse.Namespace, setting: str) -> dict[str, Any]:
    """What decides the answers; a resumed `--out` must have been written with the same.

    The judge is not part of it: rows carry who judged them, and a resumed run re-judges the others.
    """
    config: dict[str, Any] = {"setting": setting, "backend": args.backend}
    if _replays(args):
        config["llm"] = args.llm
    elif args.backend in ("litellm", "hybrid"):
        config.update(model=args.model, votes=args.votes, api_base=args.api_base)
    elif args.backend in STATIC:
        from .static import tool_version

        config["version"] = tool_version(args.backend)
    if setting == "+RT" and args.categories != runtime_facts.CATEGORIES:
        config["categories"] = args.categories
    return config


def _replays(args: argparse.Namespace) -> bool:
    """replay, or hybrid without --model: the checks first, then the paper's recorded answers."""
    return bool(args.backend == "replay" or (args.backend == "hybrid" and not args.model))


def _read_done(path: Path, config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Rows of a previous run with the same config, latest per case; failed cases are retried."""
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                print(
                    f"warning: {path}:{number} is not JSON (an interrupted write?); ignored", file=sys.stderr
                )
                continue
            if row.get("config") != config:
                raise ValueError(
                    f"{path} holds results of another configuration ({row.get('config')}); "
                    "pass a different --out to keep both"
                )
            if row.get("prediction"):
                done[row["case"]] = row
            else:
                done.pop(row["case"], None)
    return done


def _build_backend(args: argparse.Namespace, setting: str) -> Any:
    from .backends import make_backend

    if args.backend == "none":
        raise ValueError("backend 'none' makes no predictions; choose litellm, replay, checks or hybrid")
    if args.backend in STATIC:
        from .static import StaticAnalyzerBackend

        return StaticAnalyzerBackend(args.backend, runtime=setting == "+RT", timeout=args.timeout)
    if _replays(args):
        if setting == "+RT" and args.categories != runtime_facts.CATEGORIES:
            raise ValueError(
                "replay cannot run a category ablation: the paper's recorded +RT answers were made with "
                "all of S, R and V (its -S/-R/-V answers are not in paper_outputs.jsonl); run "
                "--categories with --backend checks, or litellm/hybrid with --model"
            )
        path = args.replay or str(Path(args.cases).with_name("paper_outputs.jsonl"))
        options = {"path": path, "llm": args.llm, "setting": setting}
        if args.backend == "hybrid":
            return make_backend("hybrid", llm_backend="replay", **options)
        return make_backend("replay", **options)
    if args.backend == "checks":
        return make_backend("checks")
    llm_options: dict[str, Any] = {
        "model": args.model,
        "api_base": args.api_base,
        "votes": args.votes,
        "temperature": args.temperature,
        "timeout": args.timeout,
        "max_tokens": args.max_tokens,
        "response_format": args.response_format,
        "cache_dir": args.cache_dir,
        "runtime": setting == "+RT",
        "categories": args.categories,
        "max_prompt_tokens": args.max_prompt_tokens,
    }
    return make_backend(args.backend, **llm_options)


def _build_judge(args: argparse.Namespace) -> Any:
    if not args.judge:
        return None
    from .judge import LLMJudge

    return LLMJudge(
        args.judge,
        api_base=args.judge_api_base or (args.api_base if args.judge == args.model else None),
        votes=args.judge_votes,
        temperature=args.judge_temperature,
        timeout=args.judge_timeout or args.timeout,
        response_format=args.response_format,
        max_tokens=args.max_tokens,
    )


def _needs_judgement(row: dict[str, Any], judge: Any) -> bool:
    """A detected crash without a judgement by this judge."""
    if judge is None or not row.get("prediction") or not row["crash"] or not row["prediction"]["detection"]:
        return False
    judged = row.get("judgement") or {}
    return bool(judged.get("judge") != judge.describe() or not judged.get("label"))


async def _judge_row(judge: Any, case: dict[str, Any], row: dict[str, Any]) -> None:
    """Add the judge's verdict (or its error) to a detected crash's row."""
    from ..llm.errors import LLMError

    diagnosis = case.get("diagnosis")
    described = judge.describe()
    if not isinstance(diagnosis, str) or not diagnosis.strip():
        row["judgement"] = {"judge": described, "error": {"kind": "bad_request", "message": "no diagnosis"}}
        return
    try:
        judged = await judge.judge(case["target_cell"], diagnosis, row["prediction"]["reasoning"])
        row["judgement"] = {"judge": described, **judged.model_dump(mode="json")}
    except LLMError as exc:
        row["judgement"] = {"judge": described, "error": exc.to_dict()}
    except Exception as exc:  # one broken judgement must not lose the run
        row["judgement"] = {"judge": described, "error": {"kind": "unknown", "message": f"{exc}"}}


async def _evaluate(
    backend: Any,
    cases: list[dict[str, Any]],
    setting: str,
    config: dict[str, Any],
    out_path: Path | None,
    concurrency: int,
    quiet: bool,
    start_count: int,
    total: int,
    categories: str = runtime_facts.CATEGORIES,
    judge: Any = None,
    rejudge: Sequence[tuple[dict[str, Any], dict[str, Any]]] = (),
    batch: int = 25,
) -> list[dict[str, Any]]:
    """Predict (and judge) `cases`, judge the `rejudge` (case, row) pairs; rows are appended to `out_path`.

    A backend with `predict_many` (the static analyzers) gets `batch` cases per call.
    """
    from ..llm.errors import LLMError

    rows: list[dict[str, Any]] = []
    gate = asyncio.Semaphore(concurrency)
    handle = out_path.open("a", encoding="utf-8") if out_path is not None else None
    finished = start_count
    started = time.monotonic()

    def new_row(case: dict[str, Any]) -> dict[str, Any]:
        return {
            "case": case_id(case),
            "id": case["id"],
            "version": case["version"],
            "crash": bool(case["crash"]),
            "group": case.get("group"),
            "root_cause": case.get("root_cause"),
            "config": config,
            "prediction": None,
            "error": None,
        }

    async def finish(case: dict[str, Any], row: dict[str, Any], counts: bool = True) -> None:
        nonlocal finished
        if _needs_judgement(row, judge):
            async with gate:
                await _judge_row(judge, case, row)
        rows.append(row)
        if handle is not None:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
        if counts:
            finished += 1
        if not quiet:
            outcome = (
                f"predicted {'crash' if row['prediction']['detection'] else 'ok'}"
                if row["prediction"]
                else f"error {row['error']['kind']}"
            )
            judged = row.get("judgement") or {}
            if judged:
                outcome += f", judged {judged.get('label') or 'error ' + judged['error']['kind']}"
            truth = "crash" if row["crash"] else "ok"
            elapsed = time.monotonic() - started
            print(
                f"[{finished}/{total}] {row['case']}: {outcome} (truth {truth}) {elapsed:.0f}s",
                file=sys.stderr,
            )

    def store(row: dict[str, Any], result: Any) -> None:
        if isinstance(result, LLMError):
            row["error"] = result.to_dict()
        elif isinstance(result, Exception):
            row["error"] = {"kind": "unknown", "message": f"{type(result).__name__}: {result}"}
        else:
            row["prediction"] = result.model_dump(mode="json")

    async def one(case: dict[str, Any]) -> None:
        row = new_row(case)
        async with gate:
            try:
                store(row, await backend.predict(make_request(case, setting, categories)))
            except Exception as exc:  # one broken case must not lose the others' results
                store(row, exc)
        await finish(case, row)

    async def chunk(part: list[dict[str, Any]]) -> None:
        async with gate:
            try:
                requests = [make_request(case, setting, categories) for case in part]
                results = await backend.predict_many(requests)
            except Exception as exc:
                results = [exc for _ in part]
        for case, result in zip(part, results, strict=True):
            row = new_row(case)
            store(row, result)
            await finish(case, row)

    try:
        jobs = [finish(case, dict(row), counts=False) for case, row in rejudge]
        if hasattr(backend, "predict_many"):
            jobs += [chunk(cases[i : i + batch]) for i in range(0, len(cases), batch)]
        else:
            jobs += [one(case) for case in cases]
        await asyncio.gather(*jobs)
    finally:
        if handle is not None:
            handle.close()
    return rows


def _facts_line(cases: list[dict[str, Any]], categories: str) -> str:
    """How many facts of each category the cases' runtime information carries, and how many are shown."""
    runtimes: list[dict[str, Any] | None] = []
    unreadable = 0
    for case in cases:
        try:
            runtimes.append(runtime_facts.case_runtime(case))
        except ValueError:
            unreadable += 1
    tally = runtime_facts.count(runtimes)
    parts = [f"{c} {tally[c] if c in categories else 0} of {tally[c]}" for c in runtime_facts.CATEGORIES]
    tail = f"; {unreadable} not a runtime dump" if unreadable else ""
    return (
        f"runtime facts shown ({categories or 'none'}): " + ", ".join(parts) + f" ({len(cases)} cases{tail})"
    )


def run(args: argparse.Namespace) -> int:
    if args.minus_rt and args.setting == "+RT":
        print("error: give one setting, +RT or -RT", file=sys.stderr)
        return 2
    setting = "-RT" if args.minus_rt else (args.setting or "+RT")
    try:
        args.categories = runtime_facts.check_categories(
            runtime_facts.CATEGORIES if args.categories is None else args.categories.upper()
        )
        if setting == "-RT" and args.categories != runtime_facts.CATEGORIES:
            raise ValueError("--categories selects runtime facts: it needs --setting +RT")
        cases = load_cases(args.cases)
        if args.limit is not None:
            cases = cases[: args.limit]
        config = _run_config(args, setting)
        out_path = Path(args.out) if args.out else None
        done = _read_done(out_path, config) if out_path is not None else {}
        backend = _build_backend(args, setting)
        judge = _build_judge(args)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # e.g. an analyzer that is not installed (a typed LLMError)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pending = [case for case in cases if case_id(case) not in done]
    rejudge = [
        (case, done[case_id(case)])
        for case in cases
        if case_id(case) in done and _needs_judgement(done[case_id(case)], judge)
    ]
    if done and not args.quiet:
        print(f"resuming: {len(cases) - len(pending)} of {len(cases)} cases already done", file=sys.stderr)
    try:
        new_rows = asyncio.run(
            _evaluate(
                backend,
                pending,
                setting,
                config,
                out_path,
                args.concurrency,
                args.quiet,
                len(cases) - len(pending),
                len(cases),
                categories=args.categories,
                judge=judge,
                rejudge=rejudge,
                batch=args.batch,
            )
        )
    except KeyboardInterrupt:
        where = f"; rerun the same command to resume from {out_path}" if out_path else ""
        print(f"\ninterrupted{where}", file=sys.stderr)
        return 130
    wanted = {case_id(case) for case in cases}
    latest = {key: row for key, row in done.items() if key in wanted}
    latest.update({row["case"]: row for row in new_rows})
    rows = list(latest.values())
    describe = args.llm if _replays(args) else (args.model or getattr(backend, "version", args.backend))
    print(f"JunoBench {setting}, backend {args.backend} ({describe}), {len(cases)} cases")
    if setting == "+RT":
        print(_facts_line(cases, args.categories))
    figures = report(rows, sys.stdout)
    if args.backend in STATIC:
        paper = PAPER_STATIC_ACCURACY[args.backend]
        print(f"paper, all 222 cases (the -RT/+RT split not given): {args.backend} accuracy {paper:.1f} %")
    if judge is not None:
        judged = report_diagnosis(rows, judge.model, sys.stdout)
        figures.update({k: judged[k] for k in ("correct", "partial", "wrong", "unjudged")})
        figures.update(dd_accuracy=judged["dd_accuracy"], dd_accuracy_lenient=judged["dd_accuracy_lenient"])
    if args.json:
        print(json.dumps(figures))
    return 0 if figures["n"] else 1


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "junobench",
        help="crash detection on the JunoBench cases (precision, recall, F1, accuracy)",
        description=(
            "Predict each JunoBench case's crash and score it (crash = positive): overall, per library "
            "group, per root cause. Write -RT as '--setting=-RT' or '--setting -RT'. With --judge, also "
            "detection-and-diagnosis accuracy per group. +RT runs print how many runtime facts of each "
            "category (S, R, V) the cases carry and how many --categories shows."
        ),
    )
    parser.add_argument("--cases", default=DEFAULT_CASES, help=f"cases.jsonl (default {DEFAULT_CASES})")
    parser.add_argument(
        "--setting",
        nargs="?",
        choices=SETTINGS,
        help="+RT with runtime information (default) or -RT code only",
    )
    # argparse reads a bare "-RT" as an option, so it is one: `--setting -RT` lands here.
    parser.add_argument("-RT", dest="minus_rt", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--backend",
        default="replay",
        choices=BACKENDS,
        help="replay (the paper's answers), litellm, checks, hybrid, or a static analyzer: pyright, pylint",
    )
    parser.add_argument(
        "--categories",
        metavar="SRV",
        help="+RT with only these runtime fact categories (any of S, R, V; e.g. SR = -V); default all",
    )
    parser.add_argument(
        "--replay", help="paper_outputs.jsonl (default: beside --cases); also hybrid's LLM when no --model"
    )
    parser.add_argument(
        "--llm", default="gpt-5", help="replayed llm: gemini-2.5-flash, Qwen/Qwen2.5-32B-Instruct, gpt-5"
    )
    parser.add_argument(
        "--model", help="litellm model string, e.g. openai/gpt-5 or openai/<alias> with --api-base"
    )
    parser.add_argument("--api-base", help="OpenAI-compatible server URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--votes", type=int, default=1, help="odd number of samples per case (5 = the paper)")
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per model call")
    parser.add_argument("--max-tokens", type=int, help="completion token limit per call")
    parser.add_argument(
        "--response-format",
        default="auto",
        choices=RESPONSE_FORMATS,
        help="structured output request (json_object_schema for llama.cpp servers)",
    )
    parser.add_argument(
        "--max-prompt-tokens", type=int, default=32_000, help="prompt budget; oldest cells are dropped first"
    )
    parser.add_argument("--cache-dir", help="directory for the on-disk verdict cache")
    parser.add_argument("--out", help="per-case JSONL, appended as cases finish; rerun to resume")
    parser.add_argument(
        "--json", action="store_true", help="print the overall figures as JSON on the last line"
    )
    parser.add_argument("--limit", type=_positive, help="only the first N cases")
    parser.add_argument(
        "--concurrency",
        type=_positive,
        default=4,
        help="cases in flight at once (1 for a single-slot local server such as llama.cpp)",
    )
    parser.add_argument(
        "--batch", type=_positive, default=25, help="cases per analyzer run (pyright, pylint)"
    )
    judging = parser.add_argument_group("diagnosis judge")
    judging.add_argument(
        "--judge",
        metavar="MODEL",
        help="litellm model that grades each detected crash's reasoning against the ground-truth diagnosis",
    )
    judging.add_argument("--judge-api-base", help="the judge's server (default: --api-base if same model)")
    judging.add_argument("--judge-votes", type=int, default=1, help="odd number of judge samples per crash")
    judging.add_argument("--judge-temperature", type=float)
    judging.add_argument("--judge-timeout", type=float, help="seconds per judge call (default --timeout)")
    parser.add_argument("--quiet", action="store_true", help="no per-case progress on stderr")
    parser.set_defaults(func=run)
