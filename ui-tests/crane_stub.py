"""The stub LLM of the UI tests: an OpenAI-compatible server on 127.0.0.1 (tests/llm_stub.py) whose
answer is derived from the prompt, the way a model would be expected to read it.

Rule: the target cell crashes when the runtime block of the prompt marks something it reads as
MISSING (an absent column, attribute or key); otherwise it runs. Nothing about the test scenario is
hard-coded: change the data and the answer follows the runtime facts the probe sent.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from llm_stub import Reply, StubLLM, answer  # noqa: E402


def _user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):  # content parts
            return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return str(content or "")
    return ""


def _runtime_block(prompt: str) -> str:
    start = prompt.find("Runtime information")
    end = prompt.find("Target cell", start if start >= 0 else 0)
    if start < 0:
        return ""
    return prompt[start : end if end > start else len(prompt)]


def decide(body: dict[str, Any]) -> Reply:
    """The CRANE answer for one chat request."""
    runtime = _runtime_block(_user_text(body))
    missing = [line.strip() for line in runtime.splitlines() if "MISSING" in line]
    if missing:
        evidence = missing[0]
        if len(evidence) > 160:
            at = evidence.find("MISSING")
            evidence = "…" + evidence[max(0, at - 60) : at + 60] + "…"
        return answer(
            True,
            "The target cell reads something the kernel does not have, so it raises a KeyError. "
            f"Runtime information: {evidence}",
        )
    return answer(False, "Every name, attribute and column the target cell reads exists in the kernel.")


def start_stub() -> StubLLM:
    """Serve on a free port of 127.0.0.1 from a daemon thread (it ends with the server process)."""
    return StubLLM(decide, model="crane-stub").start()
