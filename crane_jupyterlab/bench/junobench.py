"""`crane-bench junobench`: crash detection on the JunoBench cases, scored like the CRANE-LLM paper.

Each case becomes a `PredictionRequest` (executed cells, target cell, and for +RT the case's runtime
information as the paper's extractor printed it); a backend answers; crash = positive. Results are
appended to `--out` as each case finishes, so an interrupted run resumes where it stopped.
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

DEFAULT_CASES = "../shared/junobench/cases.jsonl"
SETTINGS = ("+RT", "-RT")


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


def make_request(case: dict[str, Any], setting: str) -> PredictionRequest:
    """The request for one case: -RT carries code only; +RT adds the paper's runtime block, and the
    parsed runtime object (for the deterministic checks) marked as JunoBench-shaped."""
    with_runtime = setting == "+RT"
    runtime_obj = case.get("runtime_info_obj") if with_runtime else None
    return PredictionRequest(
        case_id=case_id(case),
        executed_cells=list(case["executed_cells"]),
        target_cell=case["target_cell"],
        runtime_text=case.get("runtime_info") if with_runtime else None,
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
    """What decides the answers; a resumed `--out` must have been written with the same."""
    config: dict[str, Any] = {"setting": setting, "backend": args.backend}
    if _replays(args):
        config["llm"] = args.llm
    elif args.backend in ("litellm", "hybrid"):
        config.update(model=args.model, votes=args.votes, api_base=args.api_base)
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
    if args.backend == "trial":
        raise ValueError("backend 'trial' needs live kernels; JunoBench has recorded runtime only")
    if _replays(args):
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
        "max_prompt_tokens": args.max_prompt_tokens,
    }
    return make_backend(args.backend, **llm_options)


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
) -> list[dict[str, Any]]:
    from ..llm.errors import LLMError

    rows: list[dict[str, Any]] = []
    gate = asyncio.Semaphore(concurrency)
    handle = out_path.open("a", encoding="utf-8") if out_path is not None else None
    finished = start_count
    started = time.monotonic()

    async def one(case: dict[str, Any]) -> None:
        nonlocal finished
        async with gate:
            row: dict[str, Any] = {
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
            try:
                verdict = await backend.predict(make_request(case, setting))
                row["prediction"] = verdict.model_dump(mode="json")
            except LLMError as exc:
                row["error"] = exc.to_dict()
            except Exception as exc:  # one broken case must not lose the others' results
                row["error"] = {"kind": "unknown", "message": f"{type(exc).__name__}: {exc}"}
        rows.append(row)
        if handle is not None:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
        finished += 1
        if not quiet:
            outcome = (
                f"predicted {'crash' if row['prediction']['detection'] else 'ok'}"
                if row["prediction"]
                else f"error {row['error']['kind']}"
            )
            truth = "crash" if row["crash"] else "ok"
            elapsed = time.monotonic() - started
            print(
                f"[{finished}/{total}] {row['case']}: {outcome} (truth {truth}) {elapsed:.0f}s",
                file=sys.stderr,
            )

    try:
        await asyncio.gather(*(one(case) for case in cases))
    finally:
        if handle is not None:
            handle.close()
    return rows


def run(args: argparse.Namespace) -> int:
    if args.minus_rt and args.setting == "+RT":
        print("error: give one setting, +RT or -RT", file=sys.stderr)
        return 2
    setting = "-RT" if args.minus_rt else (args.setting or "+RT")
    try:
        cases = load_cases(args.cases)
        if args.limit is not None:
            cases = cases[: args.limit]
        config = _run_config(args, setting)
        out_path = Path(args.out) if args.out else None
        done = _read_done(out_path, config) if out_path is not None else {}
        backend = _build_backend(args, setting)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pending = [case for case in cases if case_id(case) not in done]
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
            )
        )
    except KeyboardInterrupt:
        where = f"; rerun the same command to resume from {out_path}" if out_path else ""
        print(f"\ninterrupted{where}", file=sys.stderr)
        return 130
    wanted = {case_id(case) for case in cases}
    rows = [row for key, row in done.items() if key in wanted] + new_rows
    describe = args.llm if _replays(args) else (args.model or args.backend)
    print(f"JunoBench {setting}, backend {args.backend} ({describe}), {len(cases)} cases")
    figures = report(rows, sys.stdout)
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
            "Predict each JunoBench case's crash and score it (crash = positive). Write -RT as "
            "'--setting=-RT' or '--setting -RT'."
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
        "--backend", default="replay", choices=("replay", "litellm", "checks", "hybrid", "none")
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
    parser.add_argument("--quiet", action="store_true", help="no per-case progress on stderr")
    parser.set_defaults(func=run)
