"""Running a JunoBench evaluation: the backend and judge a command line asks for, the configuration a
resumed `--out` must match, and `evaluate`, which predicts (and judges) the cases concurrently and
appends each row to `--out` as it finishes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import runtime_facts
from .junocases import case_id, make_request

STATIC = ("pyright", "pylint")


def run_config(args: argparse.Namespace, setting: str) -> dict[str, Any]:
    """What decides the answers; a resumed `--out` must have been written with the same.

    The judge is not part of it: rows carry who judged them, and a resumed run re-judges the others.
    """
    config: dict[str, Any] = {"setting": setting, "backend": args.backend}
    if replays(args):
        config["llm"] = args.llm
    elif args.backend in ("litellm", "hybrid"):
        config.update(model=args.model, votes=args.votes, api_base=args.api_base)
    elif args.backend in STATIC:
        from .static import tool_version

        config["version"] = tool_version(args.backend)
    if setting == "+RT" and args.categories != runtime_facts.CATEGORIES:
        config["categories"] = args.categories
    return config


def replays(args: argparse.Namespace) -> bool:
    """replay, or hybrid without --model: the checks first, then the paper's recorded answers."""
    return bool(args.backend == "replay" or (args.backend == "hybrid" and not args.model))


def read_done(path: Path, config: dict[str, Any]) -> dict[str, dict[str, Any]]:
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


def build_backend(args: argparse.Namespace, setting: str) -> Any:
    from .backends import make_backend

    if args.backend == "none":
        raise ValueError("backend 'none' makes no predictions; choose litellm, replay, checks or hybrid")
    if args.backend in STATIC:
        from .static import StaticAnalyzerBackend

        return StaticAnalyzerBackend(args.backend, runtime=setting == "+RT", timeout=args.timeout)
    if replays(args):
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


def build_judge(args: argparse.Namespace) -> Any:
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


def needs_judgement(row: dict[str, Any], judge: Any) -> bool:
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


async def evaluate(
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
        if needs_judgement(row, judge):
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
