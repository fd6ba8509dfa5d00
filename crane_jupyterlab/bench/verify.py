"""`crane-bench verify`: run every case of a crash suite in a fresh kernel and check its recorded outcome.

Each case gets a new ipykernel of this interpreter, in an empty working directory. Its `executed_cells`
run in order as a notebook runs them (counted, in history, each trailing expression displayed, figures
drawn by the inline matplotlib backend after each cell); each must succeed. Then, with `--facts`, the
case's `decisive_facts` are evaluated in the kernel's namespace (without a trace: through
`user_expressions`), and the `target_cell` runs.

The target crashed when the kernel answers the request with an error, or when the cell published an
error output after it (a figure that fails to draw in the inline backend's post-execute hook shows a
traceback though the reply says ok). The exception is the one the kernel names (for an error raised
while displaying the trailing expression, the one in the error output).

A case passes when the target crashed exactly when `crash` says, with the recorded `exception`, and, with
`--facts`, every decisive fact holds (see `facts.py` for their forms). A different first line of the
message is reported (`msg DIF`) but does not fail the case: messages change between library versions.
The last line printed is `N passed, M failed`; the exit code is 0 when all passed, 1 when one failed,
2 for bad arguments or a malformed cases file.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

from . import facts as facts_module
from .kernels import CellFailed, drain_iopub, fresh_kernel, iopub_of, wait_reply
from .live import load_cases, select

# Beside kernels.KERNEL_ENV (inline figures, quiet TensorFlow): the same numbers on every run.
VERIFY_ENV = {
    "PYTHONHASHSEED": "0",
    "CUDA_VISIBLE_DEVICES": "",
    "TF_ENABLE_ONEDNN_OPTS": "0",
}
_OUTCOME_KEYS = ("crash", "exception")


@dataclass
class Result:
    """What one case did in its kernel, and whether that matches the case."""

    id: str
    version: str
    expected: str  # the exception name, or "no crash"
    observed: str = ""  # the same, or "SETUP-ERROR ..."
    message: str | None = None
    setup_error: str | None = None
    facts: list[list[Any]] | None = None  # [fact, holds, observed]
    seconds: float = 0.0
    passed: bool = False
    message_ok: bool = True
    facts_ok: bool | None = None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify",
        help="run a crash suite's cases in real kernels and check their recorded outcomes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--cases", required=True, type=Path, help="cases file (JSON lines, the live-suite format)")
    p.add_argument("--ids", default="*", help="glob on the case id, or on id/version; comma-separated globs")
    p.add_argument("--version", choices=("buggy", "fixed"), help="only this version of each pair")
    p.add_argument("--facts", action="store_true", help="also check every case's decisive_facts")
    p.add_argument("--jobs", type=int, default=2, help="kernels run at the same time (default 2)")
    p.add_argument("--cell-timeout", type=float, default=120.0, help="seconds per cell (default 120)")
    p.add_argument("--json", type=Path, help="also write the results to this file")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        cases = [c for c in load_cases(args.cases) if args.version in (None, c["version"])]
        cases = [c for c in cases if any(select([c], pattern.strip()) for pattern in args.ids.split(","))]
        for case in cases:
            _check_outcome_fields(case)
        if args.jobs < 1:
            raise ValueError("--jobs must be at least 1")
        if args.json is not None and not args.json.parent.is_dir():
            raise ValueError(f"--json: directory {args.json.parent} does not exist")
    except (OSError, ValueError) as exc:
        print(f"crane-bench verify: {exc}", file=sys.stderr)
        return 2
    if not cases:
        print(f"crane-bench verify: no case matches --ids {args.ids!r}", file=sys.stderr)
        return 2
    results = asyncio.run(verify_all(cases, facts=args.facts, jobs=args.jobs, cell_timeout=args.cell_timeout))
    print(report(results, facts=args.facts))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n", encoding="utf-8")
    return 0 if all(r.passed for r in results) else 1


def _check_outcome_fields(case: dict[str, Any]) -> None:
    name = f"{case['id']}/{case['version']}"
    missing = [k for k in _OUTCOME_KEYS if k not in case]
    if missing:
        raise ValueError(f"{name}: missing {', '.join(missing)}")
    if not isinstance(case["crash"], bool):
        raise ValueError(f"{name}: crash must be true or false")
    if case["crash"] and not isinstance(case["exception"], str):
        raise ValueError(f"{name}: a crashing case names its exception")
    facts = case.get("decisive_facts", [])
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise ValueError(f"{name}: decisive_facts must be a list of strings")


async def verify_all(
    cases: list[dict[str, Any]], *, facts: bool = False, jobs: int = 2, cell_timeout: float = 120.0
) -> list[Result]:
    """Results in the cases' order; `jobs` kernels at a time, progress on stderr."""
    slots = asyncio.Semaphore(jobs)
    done = 0

    async def one(case: dict[str, Any]) -> Result:
        nonlocal done
        async with slots:
            result = await verify_case(case, facts=facts, cell_timeout=cell_timeout)
        done += 1
        verdict = "PASS" if result.passed else "FAIL"
        print(
            f"[{done}/{len(cases)}] {result.id}/{result.version} {verdict} ({result.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        return result

    return list(await asyncio.gather(*(one(case) for case in cases)))


async def verify_case(case: dict[str, Any], *, facts: bool = False, cell_timeout: float = 120.0) -> Result:
    """Run one case in a fresh kernel and compare what happened with what the case records."""
    result = Result(
        id=case["id"], version=case["version"], expected=case["exception"] if case["crash"] else "no crash"
    )
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="crane-verify-", ignore_cleanup_errors=True) as cwd:
            async with fresh_kernel(cwd=cwd, env=VERIFY_ENV) as (_, kc):
                await _run(kc, case, result, facts, cell_timeout)
    except RuntimeError as exc:  # jupyter_client: the kernel did not start or answer
        result.setup_error = f"kernel: {exc}"
    result.seconds = round(time.monotonic() - t0, 2)
    _judge(case, result, facts)
    return result


async def _run(
    kc: AsyncKernelClient, case: dict[str, Any], result: Result, facts: bool, timeout: float
) -> None:
    for number, cell in enumerate(case["executed_cells"]):
        try:
            error = await execute(kc, cell, timeout)
        except (CellFailed, TimeoutError) as exc:
            result.setup_error = f"cell {number}: {exc}"
            return
        if error is not None:
            result.setup_error = f"cell {number}: {error[0]}: {error[1]}"
            return
    if facts:
        try:
            result.facts = await check_facts(kc, case.get("decisive_facts", []), timeout)
        except (CellFailed, TimeoutError, ValueError) as exc:
            result.setup_error = f"facts: {exc}"
            return
    try:
        error = await execute(kc, case["target_cell"], timeout)
    except (CellFailed, TimeoutError) as exc:  # the kernel died or hung: not an outcome a case records
        result.setup_error = f"target: {exc}"
        return
    if error is not None:
        result.observed, result.message = error
    else:
        result.observed = "no crash"


async def execute(kc: AsyncKernelClient, code: str, timeout: float) -> tuple[str, str] | None:
    """Run `code` as a notebook cell; (exception name, first message line) when it crashed, else None.

    Raises `CellFailed` when the kernel dies, `TimeoutError` when the cell outlives `timeout`.
    """
    await drain_iopub(kc)
    msg_id = kc.execute(code, silent=False, store_history=True, allow_stdin=False, stop_on_error=True)
    reply = await wait_reply(kc, msg_id, timeout)
    outputs = await iopub_of(kc, msg_id, timeout=30.0)
    errors = [m["content"] for m in outputs if m["msg_type"] == "error"]
    if reply.get("status") == "ok" and not errors:
        return None
    # An error while displaying the trailing expression leaves the reply without the exception's name
    # (ipykernel names `NoneType`); the error output has it.
    named = reply.get("status") == "error" and reply.get("ename") not in (None, "NoneType")
    source = reply if named or not errors else errors[0]
    name = str(source.get("ename") or "UnknownError")
    return name, facts_module.first_line(str(source.get("evalue") or ""))


async def check_facts(kc: AsyncKernelClient, facts: list[str], timeout: float) -> list[list[Any]]:
    """Evaluate `facts` in the kernel's user namespace; `[fact, holds, observed]` each.

    The checker's source is executed in a dictionary of its own inside a `user_expressions` entry, so
    neither the namespace, nor `In`/`Out`, nor the execution count changes.
    """
    source = Path(facts_module.__file__).read_text(encoding="utf-8")
    expression = (
        f"(lambda ns, g: (exec({source!r}, g), g['check_facts'](ns, {facts!r}))[1])"
        "(globals(), {'__name__': 'crane_verify_facts'})"
    )
    msg_id = kc.execute(
        "", silent=True, store_history=False, allow_stdin=False, user_expressions={"facts": expression}
    )
    reply = await wait_reply(kc, msg_id, timeout)
    await drain_iopub(kc)
    value = reply.get("user_expressions", {}).get("facts", {})
    if value.get("status") != "ok":
        raise ValueError(f"{value.get('ename')}: {value.get('evalue')}")
    checked: list[list[Any]] = json.loads(ast.literal_eval(value["data"]["text/plain"]))
    return checked


def _judge(case: dict[str, Any], result: Result, facts: bool) -> None:
    if result.setup_error is not None:
        result.observed = f"SETUP-ERROR {result.setup_error}"
        result.passed = False
        return
    result.passed = result.observed == result.expected
    result.message_ok = result.message == (case.get("message") if case["crash"] else None)
    if facts:
        result.facts_ok = all(holds is True for _, holds, _ in result.facts or [])
        result.passed = result.passed and result.facts_ok


def report(results: list[Result], *, facts: bool) -> str:
    """The table, the failures' details and the summary line, as printed."""
    width = max([len(r.id) for r in results] + [12])
    header = f"{'id':<{width}} {'version':<7} {'expected':<24} {'observed':<24} {'sec':>6}  pass msg"
    if facts:
        header += " facts"
    lines = [header, "-" * len(header)]
    for r in results:
        line = (
            f"{r.id:<{width}} {r.version:<7} {r.expected:<24} {r.observed[:70]:<24} {r.seconds:>6.1f}  "
            f"{'PASS' if r.passed else 'FAIL'} {'ok ' if r.message_ok else 'DIF'}"
        )
        if facts:
            line += " " + ("ok" if r.facts_ok else "BAD")
        lines.append(line)
        if not r.message_ok:
            lines.append(f"    message observed: {r.message!r}")
        for fact, holds, observed in r.facts or []:
            if holds is not True:
                lines.append(f"    fact does not hold: {fact!r}, observed {observed!r}")
    passed = sum(r.passed for r in results)
    lines.append("-" * len(header))
    lines.append(f"messages matching: {sum(r.message_ok for r in results)}/{len(results)}")
    if facts:
        lines.append(f"facts holding: {sum(bool(r.facts_ok) for r in results)}/{len(results)} cases")
    seconds = [r.seconds for r in results]
    lines.append(f"case seconds: max {max(seconds):.1f}, mean {sum(seconds) / len(seconds):.1f}")
    lines.append(f"{passed} passed, {len(results) - passed} failed")
    return "\n".join(lines)
