"""Answers recorded by the CRANE-LLM paper, replayed as a backend.

`paper_outputs.jsonl` holds five runs per (case, llm, setting). The replay backend answers a request
whose `case_id` is "id/version" with the strict majority of those runs (the same rule as live
sampling, see `votes.py`), so the benchmark harness can be checked against the paper's figures
without any model call.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from ..llm.answer import Answer, parse_answer
from ..llm.errors import BadRequest, LLMError, MalformedAnswer
from ..llm.votes import majority
from ..models import PredictionRequest, Verdict
from ..prompt import PromptSettings, build_prompt

SETTINGS = ("-RT", "+RT")


def load_outputs(path: str | Path, llm: str, setting: str) -> dict[str, list[Answer | None]]:
    """`case_id -> answers` (in run order) for one llm and setting; a run that does not parse is None."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {', '.join(SETTINGS)}; got {setting!r}")
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"replay file not found: {source}")
    runs: dict[str, list[tuple[int, Answer | None]]] = defaultdict(list)
    llms: set[str] = set()
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                llms.add(row["llm"])
                if row["llm"] != llm or row["setting"] != setting:
                    continue
                case_id = f"{row['id']}/{row['version']}"
                run = int(row.get("run", 0))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{source}:{number}: not a paper output row ({exc})") from None
            answer: Answer | None
            try:
                answer = parse_answer(row.get("raw")) if row.get("raw") is not None else None
            except MalformedAnswer:
                answer = None
            # The `detection` column is the paper's own parse of `raw`; it decides the vote.
            if isinstance(row.get("detection"), bool):
                reasoning = answer.reasoning if answer is not None else "(no reasoning recorded)"
                answer = Answer(reasoning=reasoning, detection=row["detection"])
            runs[case_id].append((run, answer))
    if not runs:
        known = ", ".join(sorted(llms)) or "none"
        raise ValueError(f"{source} has no rows for llm {llm!r} and setting {setting!r} (llms: {known})")
    return {case: [a for _, a in sorted(rows, key=lambda r: r[0])] for case, rows in runs.items()}


class ReplayBackend:
    """`Backend` answering from the paper's recorded outputs, keyed by `request.case_id`."""

    name = "replay"

    def __init__(
        self,
        path: str | Path,
        llm: str = "gpt-5",
        setting: str = "+RT",
        prompt: PromptSettings | None = None,
    ):
        self.path = Path(path)
        self.llm = llm
        self.setting = setting
        self.outputs = load_outputs(self.path, llm, setting)
        # Only to report the size of the prompt the case would have had.
        self.prompt = prompt or PromptSettings(runtime=setting == "+RT")

    async def predict(self, request: PredictionRequest) -> Verdict:
        if not request.case_id:
            raise BadRequest("the replay backend needs a benchmark case id ('id/version')")
        answers = self.outputs.get(request.case_id)
        if answers is None:
            raise BadRequest(f"no recorded {self.llm} {self.setting} answers for case {request.case_id!r}")
        n = len(answers) if len(answers) % 2 else len(answers) - 1
        decided = majority(answers[:n], n) if n else None
        if decided is None:
            raise LLMError(f"the recorded answers for {request.case_id!r} reach no majority")
        return Verdict(
            detection=decided.detection,
            reasoning=decided.reasoning,
            source="llm",
            votes=decided.votes,
            model=f"replay:{self.llm}",
            latency_ms=0.0,
            prompt_tokens=build_prompt(request, self.prompt).prompt_tokens,
        )
