"""What `crane-bench notebooks` found: each executed cell's outcome classified, and the summary figures.

A real crash is counted apart when the machine caused it, not the code: no network (the benchmark's
kernels may have none) or a data file that is not there. Both are read from the exception's type and
message as Python and the usual clients word them. A `NameError` of a name that an earlier failed cell
should have bound is a *cascade*: the first crash's consequence, counted apart too.

Verified fixes (`--fixes`): a fix offered for a cell whose real run raised was run in its place
(`fix_run`); the fix's precision is the share of those runs that succeeded, so an offered fix whose run
fails is a defect. A fix offered on a cell that did not raise (it ran, or ran past the timeout) is
counted and listed apart: no run tells whether it was right. The share of crashes given a fix is counted
against the crashes an edit of the cell could fix (fixable.py sets apart a missing package, a removed
dataset, state an earlier failed cell should have made).
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import fixable

# Exceptions that only the network raises (builtins, socket, urllib, http.client, requests, urllib3).
NETWORK_EXCEPTIONS = frozenset({
    "ConnectionError", "ConnectionRefusedError", "ConnectionResetError", "ConnectionAbortedError",
    "URLError", "HTTPError", "gaierror", "herror", "RemoteDisconnected", "SSLError", "ConnectTimeout",
    "ReadTimeout", "ProxyError", "MaxRetryError", "NewConnectionError", "NameResolutionError",
    "ContentTooShortError",
})  # fmt: skip
# The resolver's and the socket layer's words, for exceptions that wrap them (Keras' get_file raises a
# bare Exception("URL fetch failure on ...: [Errno -3] Temporary failure in name resolution")).
NETWORK_WORDS = re.compile(
    r"Temporary failure in name resolution|Name or service not known|No address associated with hostname"
    r"|nodename nor servname|Network is unreachable|Failed to establish a new connection"
    r"|URL fetch failure|urlopen error|Connection refused|getaddrinfo failed|Max retries exceeded",
    re.IGNORECASE,
)
# A file the code reads that is not on this machine.
MISSING_FILE_WORDS = re.compile(r"No such file or directory|does not exist|not found: ", re.IGNORECASE)
_NAME_ERROR = re.compile(r"name '([^']+)' is not defined")

MACHINE = ("network", "missing_file")
ORDER = ("ok", "crash", "cascade", "network", "missing_file", "timeout", "died", "skipped")


def classify(run: dict[str, Any], failed_names: set[str]) -> str:
    """The class of a real execution: ok, crash, cascade, network, missing_file, timeout, died."""
    status = run["status"]
    if status != "error":
        return str(status)
    exception = str(run.get("exception") or "")
    message = str(run.get("message") or "")
    if exception in NETWORK_EXCEPTIONS or NETWORK_WORDS.search(message):
        return "network"
    if exception == "FileNotFoundError" or (
        exception in ("OSError", "IOError") and MISSING_FILE_WORDS.search(message)
    ):
        return "missing_file"
    if exception == "NameError":
        name = _NAME_ERROR.search(message)
        if name and name.group(1) in failed_names:
            return "cascade"
    return "crash"


def framework(sources: Iterable[str]) -> str:
    """The notebook's heaviest framework, from its imports: tensorflow (with keras), torch, sklearn,
    pandas, else numpy (numpy, matplotlib, plain Python)."""
    text = "\n".join(sources)
    for name, pattern in (
        ("tensorflow", r"^\s*(?:import|from)\s+(?:tensorflow|keras|tf_keras)\b"),
        ("torch", r"^\s*(?:import|from)\s+torch\b"),
        ("sklearn", r"^\s*(?:import|from)\s+sklearn\b"),
        ("pandas", r"^\s*(?:import|from)\s+pandas\b"),
    ):
        if re.search(pattern, text, re.MULTILINE):
            return name
    return "numpy"


def load(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{number}: not JSON: {exc}") from None
    return rows


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def percentiles(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "p50": None, "p95": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


def claimed_exception(row: dict[str, Any]) -> str | None:
    """The exception a certain warning names: the trial's own, or the checks' message's first word."""
    trial = row.get("trial") or {}
    verdict = row.get("verdict") or {}
    if verdict.get("source") == "trial":
        return trial.get("exception")
    if verdict.get("source") == "syntax":
        return "SyntaxError"
    match = re.match(
        r"\s*([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt))\b", verdict.get("reasoning") or ""
    )
    return match.group(1).rsplit(".", 1)[-1] if match else None


# Subclasses a claim of the base class covers (Python reports a bad indent as IndentationError).
_SUBCLASSES = {"SyntaxError": ("IndentationError", "TabError"), "ImportError": ("ModuleNotFoundError",)}


def same_exception(claimed: str | None, real: str | None) -> bool:
    """Whether a warning's exception is the one that was raised (None: the warning named none)."""
    return claimed is None or claimed == real or real in _SUBCLASSES.get(claimed, ())


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure of the summary, as data (the rendered text is `render`'s)."""
    ran = [r for r in rows if r.get("outcome") not in (None, "skipped")]
    outcomes = Counter(str(r.get("outcome")) for r in rows)
    certain = [r for r in ran if r.get("warning") == "certain"]
    warned = Counter(str(r["outcome"]) for r in certain)
    crashes = [r for r in ran if r["outcome"] == "crash"]
    non_name = [r for r in crashes if (r.get("run") or {}).get("exception") != "NameError"]
    judged = [r for r in ran if r["outcome"] != "timeout"]  # a cut cell's outcome is unknown
    true_warnings = sum(1 for r in certain if r["outcome"] not in ("ok", "timeout"))
    false_warnings = [r for r in certain if r["outcome"] == "ok"]
    missed = [r for r in crashes if r.get("warning") != "certain"]

    def recall(group: list[dict[str, Any]]) -> dict[str, Any]:
        hit = sum(1 for r in group if r.get("warning") == "certain")
        return {"found": hit, "of": len(group), "pct": _pct(hit, len(group))}

    def of_class(name: str) -> dict[str, Any]:
        return recall([r for r in ran if r["outcome"] == name])

    by_source = Counter(
        f"{(r.get('verdict') or {}).get('source')}:{'true' if r['outcome'] != 'ok' else 'false'}"
        for r in certain
        if r["outcome"] != "timeout"
    )
    trials = [r["trial"] for r in ran if r.get("trial")]
    trial_status = Counter(str(t.get("status")) for t in trials)
    agreement: Counter[str] = Counter()
    for r in ran:
        status = (r.get("trial") or {}).get("status")
        if status in ("crashed", "finished") and r["outcome"] != "timeout":
            really = "ran" if r["outcome"] == "ok" else "crashed"
            agreement[f"{status} / {really}"] += 1
    latency = {"all": percentiles([r["timing"]["analyze_ms"] for r in ran if "analyze_ms" in r["timing"]])}
    for name in sorted({str(r.get("framework")) for r in ran}):
        latency[name] = percentiles(
            [
                r["timing"]["analyze_ms"]
                for r in ran
                if r.get("framework") == name and "analyze_ms" in r["timing"]
            ]
        )
    mismatched = [
        r for r in certain
        if r["outcome"] not in ("ok", "timeout")
        and not same_exception(claimed_exception(r), (r.get("run") or {}).get("exception"))
    ]  # fmt: skip
    return {
        "notebooks": len({r["notebook"] for r in rows}),
        "cells": len(rows),
        "ran": len(ran),
        "outcomes": {k: outcomes[k] for k in ORDER if outcomes[k]},
        "analysis_errors": sum(1 for r in ran if str(r.get("analysis") or "").startswith("error")),
        "warnings": {
            "certain": len(certain),
            "on_ok": warned["ok"],
            "on_crash": warned["crash"],
            "on_cascade": warned["cascade"],
            "on_machine": sum(warned[k] for k in MACHINE),
            "on_timeout": warned["timeout"],
            "on_died": warned["died"],
            "precision_pct": _pct(true_warnings, true_warnings + len(false_warnings)),
            "predicted": sum(1 for r in ran if r.get("warning") == "predicted"),
            "may": sum(1 for r in ran if r.get("warning") == "may"),
            "may_on_ok": sum(1 for r in ran if r.get("warning") == "may" and r["outcome"] == "ok"),
            "by_source": dict(sorted(by_source.items())),
            "other_exception": len(mismatched),
        },
        "recall": {
            "crash": recall(crashes),
            "crash_non_name_error": recall(non_name),
            "crash_name_error": recall([r for r in crashes if r not in non_name]),
            "cascade": of_class("cascade"),
            "machine": recall([r for r in ran if r["outcome"] in MACHINE]),
            "all_failures": recall([r for r in judged if r["outcome"] != "ok"]),
        },
        "trial": {
            "outcomes": dict(trial_status.most_common()),
            "versus_real_run": dict(sorted(agreement.items())),
        },
        "analyze_ms": latency,
        "false_warnings": [_brief(r) for r in false_warnings],
        "missed_crashes": [_brief(r) for r in missed],
        "other_exception": [_brief(r) for r in mismatched],
        "crash_exceptions": dict(
            Counter(str((r.get("run") or {}).get("exception")) for r in crashes).most_common()
        ),
        "fixes": fix_figures(ran),
    }


def fix_figures(ran: list[dict[str, Any]]) -> dict[str, Any]:
    """The verified fixes against the real runs: offered on which cells, how the fixed runs went, and
    the time spent trying candidates."""
    offered = [r for r in ran if r.get("fix")]
    raised = [r for r in offered if (r.get("run") or {}).get("status") == "error"]
    not_raised = [r for r in offered if (r.get("run") or {}).get("status") != "error"]
    runs = [r for r in raised if (r.get("fix_run") or {}).get("status") in ("ok", "error")]
    succeeded = [r for r in runs if r["fix_run"]["status"] == "ok"]

    def share(outcome: str) -> dict[str, Any]:
        group = [r for r in ran if r["outcome"] == outcome]
        hit = sum(1 for r in group if r.get("fix"))
        return {"offered": hit, "of": len(group), "pct": _pct(hit, len(group))}

    tried = [r for r in ran if (r.get("timing") or {}).get("fix_ms", 0) > 0]
    why = [(r, reason) for r, reason in fixable.reasons(ran)]
    reachable = [r for r, reason in why if reason is None]
    hit = sum(1 for r in reachable if r.get("fix"))
    return {
        "offered": len(offered),
        "on_crash": share("crash"),
        # the crashes an edit of the cell could fix: the fair pool for the share given a fix
        "on_reachable": {"offered": hit, "of": len(reachable), "pct": _pct(hit, len(reachable))},
        "unreachable": dict(Counter(reason for _, reason in why if reason).most_common()),
        "on_cascade": share("cascade"),
        "on_machine": sum(1 for r in offered if r["outcome"] in MACHINE),
        "on_not_crashed": len(not_raised),
        "by_origin": dict(Counter(str(r["fix"].get("origin")) for r in offered).most_common()),
        "fixed_runs": len(runs),
        "fixed_ok": len(succeeded),
        "precision_pct": _pct(len(succeeded), len(runs)),
        # fixed runs that timed out or killed the kernel: neither right nor wrong
        "fixed_undecided": len(raised) - len(runs),
        "fix_ms": percentiles([r["timing"]["fix_ms"] for r in tried]),
        "analyze_ms_where_tried": percentiles(
            [r["timing"]["analyze_ms"] for r in tried if "analyze_ms" in r["timing"]]
        ),
        "list": [_fix_brief(r) for r in offered],
        "failed": [_fix_brief(r) for r in runs if r not in succeeded],
        "not_crashed": [_fix_brief(r) for r in not_raised],
        "crash_without_fix": [
            {**_brief(r), "candidates_tried": (r.get("timing") or {}).get("fix_ms", 0) > 0}
            for r in reachable
            if not r.get("fix")
        ],
        "unreachable_list": [{**_brief(r), "reason": reason} for r, reason in why if reason],
    }


def _fix_brief(row: dict[str, Any]) -> dict[str, Any]:
    fix = row.get("fix") or {}
    fix_run = row.get("fix_run") or {}
    status = fix_run.get("status")
    return {
        **_brief(row),
        "outcome": row.get("outcome"),
        "fix": fix.get("title"),
        "origin": fix.get("origin"),
        "fix_ms": (row.get("timing") or {}).get("fix_ms"),
        "fixed_run": (
            f"{fix_run.get('exception')}: {_first_line(fix_run.get('message'))[:160]}"
            if status == "error"
            else status
        ),
    }


def _brief(row: dict[str, Any]) -> dict[str, Any]:
    run = row.get("run") or {}
    verdict = row.get("verdict") or {}
    trial = row.get("trial") or {}
    first = (row.get("source") or "").strip().splitlines()
    return {
        "where": f"{row['notebook']}#{row['index']}",
        "cell": first[0][:100] if first else "",
        "real": f"{run.get('exception')}: {_first_line(run.get('message'))[:160]}"
        if run.get("status") == "error"
        else str(run.get("status")),
        "line": run.get("line"),
        "verdict": f"{verdict.get('source')}: {_first_line(verdict.get('reasoning'))[:200]}"
        if row.get("warning")
        else None,
        "trial": trial.get("status"),
        "trial_reason": (trial.get("reason") or "")[:160] or None,
    }


def _first_line(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


def _render_fixes(f: dict[str, Any]) -> list[str]:
    def share(v: dict[str, Any]) -> str:
        return f"{v['offered']}/{v['of']}" + (f" ({v['pct']} %)" if v["pct"] is not None else "")

    ms, both = f["fix_ms"], f["analyze_ms_where_tried"]
    lines = [
        f"fixes offered: {f['offered']} ("
        + (", ".join(f"{k} {v}" for k, v in f["by_origin"].items()) or "none")
        + f"); on real crashes {share(f['on_crash'])}, on cascades {share(f['on_cascade'])}, "
        f"on network/missing file {f['on_machine']}",
        f"fixes offered on the crashes an edit of the cell could fix: {share(f['on_reachable'])}; "
        "crashes none could ("
        + (", ".join(f"{k} {v}" for k, v in f["unreachable"].items()) or "none")
        + ", listed below)",
        f"fix precision: {f['precision_pct']} % ({f['fixed_ok']} of {f['fixed_runs']} fixed runs succeeded"
        + (f"; {f['fixed_undecided']} timed out or died, not counted" if f["fixed_undecided"] else "")
        + ")",
        f"fixes offered on cells that did not crash: {f['on_not_crashed']} (no run says whether they were "
        "right: not counted in the precision)",
        f"fix trials ms (p50 / p95, cells with candidates tried): {ms['p50']} / {ms['p95']} ({ms['n']}); "
        f"analyze latency of those cells, fix trials included: {both['p50']} / {both['p95']}",
    ]
    for title, key in (
        ("offered fixes", "list"),
        ("fixes whose real run failed", "failed"),
        ("fixes offered on cells that did not crash", "not_crashed"),
    ):
        lines.append(f"{title} ({len(f[key])}):")
        for b in f[key]:
            lines.append(
                f"  {b['where']}: {b['fix']} [{b['origin']}, {b['fix_ms']} ms] | real {b['outcome']}: "
                f"{b['real']} | fixed run {b['fixed_run']}"
            )
    tried = sum(1 for b in f["crash_without_fix"] if b["candidates_tried"])
    lines.append(
        f"real crashes an edit could fix with no fix offered ({len(f['crash_without_fix'])}; candidates "
        f"tried, none ran, on {tried}):"
    )
    for b in f["crash_without_fix"]:
        said = " | candidates tried, none ran" if b["candidates_tried"] else ""
        lines.append(f"  {b['where']} line {b['line']}: {b['real']} | {b['cell']}{said}")
    lines.append(f"real crashes no edit of the cell can fix ({len(f['unreachable_list'])}):")
    for b in f["unreachable_list"]:
        lines.append(f"  {b['where']} line {b['line']}: {b['reason']}: {b['real']} | {b['cell']}")
    return lines


def render(figures: dict[str, Any]) -> str:
    w = figures["warnings"]
    rc = figures["recall"]

    def r(key: str) -> str:
        v = rc[key]
        return f"{v['found']}/{v['of']}" + (f" ({v['pct']} %)" if v["pct"] is not None else "")

    outcomes = ", ".join(f"{k} {v}" for k, v in figures["outcomes"].items())
    lines = [
        f"{figures['notebooks']} notebooks, {figures['cells']} code cells, {figures['ran']} ran "
        f"(analysis errors: {figures['analysis_errors']})",
        f"real outcomes: {outcomes}",
        f"certain warnings: {w['certain']} (on cells that ran fine {w['on_ok']}, crashed {w['on_crash']}, "
        f"cascades {w['on_cascade']}, network/missing file {w['on_machine']}, timed out {w['on_timeout']}, "
        f"kernel died {w['on_died']}); by source: "
        + (", ".join(f"{k} {v}" for k, v in w["by_source"].items()) or "none"),
        f"precision of certain warnings: {w['precision_pct']} % "
        f"({w['certain'] - w['on_ok'] - w['on_timeout']} true, {w['on_ok']} false); "
        f"naming another exception than the real one: {w['other_exception']}",
        f"recall on crashes (cascades and machine-caused apart): {r('crash')}",
        f"  non-NameError crashes {r('crash_non_name_error')}, "
        f"NameError (not cascades) {r('crash_name_error')}",
        f"  cascades {r('cascade')}, network/missing file {r('machine')}; every failure {r('all_failures')}",
    ]
    if w["predicted"]:
        lines.append(f"predicted (model) warnings: {w['predicted']}")
    if w.get("may"):
        lines.append(f"'may crash' warnings (a quick trial's crash that may depend on its cut): {w['may']}, "
                     f"on cells that ran fine {w['may_on_ok']}")  # fmt: skip
    crash_types = ", ".join(f"{k} {v}" for k, v in figures["crash_exceptions"].items())
    lines.append(f"crash exceptions: {crash_types or 'none'}")
    trial = figures["trial"]
    lines.append(
        "trial outcomes: "
        + (", ".join(f"{k} {v}" for k, v in trial["outcomes"].items()) or "none (no trials)")
    )
    if trial["versus_real_run"]:
        lines.append(
            "  observed trial / real run: "
            + ", ".join(f"{k} {v}" for k, v in trial["versus_real_run"].items())
        )
    lines.append("analyze latency ms (p50 / p95, cells):")
    for name, p in figures["analyze_ms"].items():
        lines.append(f"  {name:<11} {p['p50']} / {p['p95']} ({p['n']})")
    fixes = figures.get("fixes")
    if fixes and (fixes["offered"] or fixes["fix_ms"]["n"]):
        lines += _render_fixes(fixes)
    for title, key in (
        ("false warnings", "false_warnings"),
        ("missed crashes", "missed_crashes"),
        ("warnings naming another exception", "other_exception"),
    ):
        lines.append(f"{title} ({len(figures[key])}):")
        for b in figures[key]:
            said = f" | said {b['verdict']}" if b["verdict"] else ""
            tried = (
                f" | trial {b['trial']}" + (f" ({b['trial_reason']})" if b["trial_reason"] else "")
                if b["trial"]
                else ""
            )
            lines.append(f"  {b['where']} line {b['line']}: {b['real']} | {b['cell']}{said}{tried}")
    return "\n".join(lines)
