"""`crane-bench junobench`: crash detection on the JunoBench cases, scored like the CRANE-LLM paper.

Each case becomes a `PredictionRequest` (executed cells, target cell, and for +RT the case's runtime
information as the paper's extractor printed it); a backend answers; crash = positive. Results are
appended to `--out` as each case finishes, so an interrupted run resumes where it stopped.

Backends: the paper's recorded answers (`replay`), any litellm model, the deterministic checks, both
(`hybrid`), and the static analyzers `pyright` / `pylint` (`static.py`). `--categories` keeps only some
of the S/R/V facts of the runtime information (`runtime_facts.py`); `--judge MODEL` grades the reasoning
of every detected crash against the case's ground-truth diagnosis (`judge.py`).

Cases and requests are in `junocases.py`, scoring and the tables in `junoscore.py`, the backends and
the concurrent evaluation in `junorun.py`; this module is the sub-command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ..models import RESPONSE_FORMATS
from . import runtime_facts
from .junocases import case_id, load_cases
from .junorun import (
    STATIC,
    build_backend,
    build_judge,
    evaluate,
    needs_judgement,
    read_done,
    replays,
    run_config,
)
from .junoscore import report, report_diagnosis

DEFAULT_CASES = "../shared/junobench/cases.jsonl"
SETTINGS = ("+RT", "-RT")
BACKENDS = ("replay", "litellm", "checks", "hybrid", "pyright", "pylint", "none")
# Detection-only accuracy the paper reports for the analyzers on all 222 cases.
PAPER_STATIC_ACCURACY = {"pyright": 55.4, "pylint": 56.3}


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
        config = run_config(args, setting)
        out_path = Path(args.out) if args.out else None
        done = read_done(out_path, config) if out_path is not None else {}
        backend = build_backend(args, setting)
        judge = build_judge(args)
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
        if case_id(case) in done and needs_judgement(done[case_id(case)], judge)
    ]
    if done and not args.quiet:
        print(f"resuming: {len(cases) - len(pending)} of {len(cases)} cases already done", file=sys.stderr)
    try:
        new_rows = asyncio.run(
            evaluate(
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
    describe = args.llm if replays(args) else (args.model or getattr(backend, "version", args.backend))
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
