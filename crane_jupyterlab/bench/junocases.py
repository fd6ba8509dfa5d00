"""JunoBench cases and the requests made of them: reading `cases.jsonl`, naming a case, and turning a
case into the `PredictionRequest` a backend answers (-RT code only; +RT with the case's runtime
information, optionally only some of its S/R/V facts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..models import PredictionRequest
from . import runtime_facts


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
