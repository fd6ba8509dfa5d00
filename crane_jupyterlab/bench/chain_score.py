"""Scoring `crane-bench chain`: each case's chain against its real run, and the summary.

A case's *real break* is the first cell below the edit whose real run raised (the real run stops there);
the chain *found* it when its entry for that cell is `crashed` with the same exception. A *claim* is a
chain entry `crashed` with `after_cut` false (the crash depends on no loop cut upstream): the real run
confirms it (that cell raised the same exception), contradicts it (the cell ran, or raised another
exception), or cannot say (the real run stopped before that cell, or the cell ran past the timeout). A
`crashed` entry with `after_cut` true is a *hedged* claim, scored the same way apart. The chain *passed
over* a real crash when it says a cell ran to its end (finished, shortened) or skipped it, and that cell
raised for real. A real break is *pre-existing* when the unedited notebook's run raised the same
exception in the same cell (the baseline): the chain's `without_edit` should then say so.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .notebook_summary import percentiles, same_exception

# Chain statuses that say the cell ran to its end (or need not run): a real crash there was passed over.
PASSED = ("finished", "shortened", "skipped")


def _judge(entry: dict[str, Any], real: dict[int, dict[str, Any]]) -> str:
    """What the real run says of a chain entry that claims a crash."""
    run = real.get(entry["index"])
    if run is None:
        return "unverified"  # the real run stopped before this cell
    if run["status"] == "error":
        return "confirmed" if same_exception(entry.get("exception"), run.get("exception")) else "contradicted"
    if run["status"] == "ok":
        return "contradicted"
    return "unknown"  # ran past the timeout, or the kernel died


def score(row: dict[str, Any]) -> dict[str, Any]:
    """One case's figures; `valid` false when its truth was not taken (an error before)."""
    truth = row.get("truth")
    if not truth:
        return {"valid": False}
    chain = row.get("chain") or []
    real = {r["index"]: r for r in truth["below"]}
    last = truth["below"][-1] if truth["below"] else None
    edited_ok = truth["edited"]["status"] == "ok"
    end = "edited" if not edited_ok else (last["status"] if last and last["status"] != "ok" else "end")
    brk = last if last is not None and last["status"] == "error" else None
    by_index = {e["index"]: e for e in chain}
    at_break = by_index.get(brk["index"]) if brk else None
    base = row.get("baseline")
    pre = None
    if brk is not None and base is not None:
        was = base.get(str(brk["index"])) or {}
        pre = was.get("status") == "error" and was.get("exception") == brk.get("exception")
    found = None
    if brk is not None:
        found = bool(
            at_break
            and at_break["status"] == "crashed"
            and same_exception(at_break.get("exception"), brk.get("exception"))
        )

    def judged(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"index": e["index"], "exception": e.get("exception"), "verdict": _judge(e, real)}
            for e in entries
        ]

    crashed = [e for e in chain if e["status"] == "crashed"]
    return {
        "valid": True,
        "edited_crashed": not edited_ok,
        "end": end,  # edited (the edited cell did not run to its end), error, timeout, died, end
        "real_cells": len(truth["below"]),
        "real_break": None if brk is None else {
            "index": brk["index"], "exception": brk.get("exception"), "pre_existing": pre,
        },
        "chain_at_break": None if at_break is None else at_break["status"],
        "found": found,
        "found_after_cut": bool(found and at_break and at_break.get("after_cut")),
        "without_edit_at_break": None if at_break is None else at_break.get("without_edit"),
        "claims": judged([e for e in crashed if not e.get("after_cut")]),
        "hedged": judged([e for e in crashed if e.get("after_cut")]),
        "passed_over": [
            e["index"] for e in chain
            if e["status"] in PASSED and (real.get(e["index"]) or {}).get("status") == "error"
        ],
        "statuses": dict(Counter(e["status"] for e in chain)),
        "reached": sum(1 for e in chain if e["status"] not in ("not_reached", "unavailable")),
    }  # fmt: skip


def one_line(row: dict[str, Any]) -> str:
    """A case's progress line."""
    if row.get("error"):
        return f"error: {row['error']}"
    s = row["score"]
    if not s.get("valid"):
        return "no truth"
    trial = ((row.get("analysis") or {}).get("trial") or {}).get("status")
    if s["edited_crashed"]:
        return f"the edited cell crashed for real ({row['truth']['edited'].get('exception')}); trial {trial}"
    brk = s["real_break"]
    real = "no real crash below" if brk is None else f"real crash at [{brk['index']}] {brk['exception']}"
    if brk is not None and brk["pre_existing"]:
        real += " (pre-existing)"
    chain = ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items())) or "no chain"
    found = "" if brk is None else (" FOUND" if s["found"] else f" missed (chain: {s['chain_at_break']})")
    wrong = [c for c in s["claims"] if c["verdict"] == "contradicted"]
    return f"{real}{found}; trial {trial}; chain {chain}" + (f"; {len(wrong)} CONTRADICTED" if wrong else "")


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure of the summary, as data."""
    valid = [r for r in rows if (r.get("score") or {}).get("valid")]
    edited_crashed = [r for r in valid if r["score"]["edited_crashed"]]
    breaks = [r for r in valid if r["score"]["real_break"]]
    by_cause = {
        "edit": [r for r in breaks if r["score"]["real_break"]["pre_existing"] is False],
        "pre_existing": [r for r in breaks if r["score"]["real_break"]["pre_existing"]],
        "unknown": [r for r in breaks if r["score"]["real_break"]["pre_existing"] is None],
    }

    def found(group: list[dict[str, Any]]) -> dict[str, Any]:
        hit = sum(1 for r in group if r["score"]["found"])
        return {"found": hit, "of": len(group), "pct": _pct(hit, len(group))}

    def verdicts(key: str) -> dict[str, Any]:
        all_ = [(r, c) for r in valid for c in r["score"][key]]
        counts = Counter(c["verdict"] for _, c in all_)
        return {
            "total": len(all_),
            **{v: counts[v] for v in ("confirmed", "contradicted", "unverified", "unknown")},
            "list": [_brief(r, c) for r, c in all_ if c["verdict"] == "contradicted"],
        }

    statuses: Counter[str] = Counter()
    for r in valid:
        statuses.update(r["score"]["statuses"])
    not_reached = Counter(
        str(e.get("reason")) for r in valid for e in r.get("chain") or [] if e["status"] == "not_reached"
    )
    analysed = [r for r in valid if (r.get("analysis") or {}).get("analyze_ms") is not None]
    chained = [r for r in analysed if r["analysis"].get("below_ms")]
    blame = Counter(
        f"{'pre-existing' if r['score']['real_break']['pre_existing'] else 'edit'} / without_edit "
        f"{r['score']['without_edit_at_break']}"
        for r in breaks
        if r["score"]["found"] and r["score"]["real_break"]["pre_existing"] is not None
    )
    guesses = Counter(
        f"guess {r.get('guess')} / "
        + ("edit broke a cell below" if r in by_cause["edit"] else "no edit-caused crash")
        for r in valid
        if not r["score"]["edited_crashed"]
    )
    return {
        "cases": len(rows),
        "errors": [{"id": r["id"], "error": r.get("error")} for r in rows if r.get("error")],
        "valid": len(valid),
        "edited_crashed": {
            "n": len(edited_crashed),
            "trial_crashed": sum(1 for r in edited_crashed if _trial_status(r) == "crashed"),
        },
        "real_breaks": {k: len(v) for k, v in by_cause.items()} | {"all": len(breaks)},
        "found": found(breaks),
        "found_edit_caused": found(by_cause["edit"]),
        "found_pre_existing": found(by_cause["pre_existing"]),
        "found_after_cut": sum(1 for r in breaks if r["score"]["found_after_cut"]),
        "missed_at": dict(
            Counter(str(r["score"]["chain_at_break"]) for r in breaks if not r["score"]["found"])
        ),
        "missed": [
            {
                "id": r["id"],
                "cell": r["score"]["real_break"]["index"],
                "exception": r["score"]["real_break"]["exception"],
                "chain": r["score"]["chain_at_break"],
            }
            for r in breaks
            if not r["score"]["found"]
        ],
        "without_edit_on_found": dict(sorted(blame.items())),
        "claims": verdicts("claims"),
        "hedged_claims": verdicts("hedged"),
        "passed_over": [
            {"id": r["id"], "cells": r["score"]["passed_over"]} for r in valid if r["score"]["passed_over"]
        ],
        "statuses": dict(statuses.most_common()),
        "not_reached_reasons": dict(not_reached.most_common()),
        "cells_reached": {
            "chain": sum(r["score"]["reached"] for r in valid),
            "real": sum(r["score"]["real_cells"] for r in valid),
        },
        "trial": dict(Counter(str(_trial_status(r)) for r in valid).most_common()),
        "below_ms": percentiles([r["analysis"]["below_ms"] for r in chained]),
        "analyze_ms": percentiles([r["analysis"]["analyze_ms"] for r in analysed]),
        "analyze_ms_with_chain": percentiles([r["analysis"]["analyze_ms"] for r in chained]),
        "wall_s": round(sum(r.get("wall_s") or 0 for r in rows), 1),
        "guesses": dict(sorted(guesses.items())),
    }


def _trial_status(row: dict[str, Any]) -> str | None:
    return ((row.get("analysis") or {}).get("trial") or {}).get("status")


def _brief(row: dict[str, Any], claim: dict[str, Any]) -> dict[str, Any]:
    real = {r["index"]: r for r in row["truth"]["below"]}.get(claim["index"]) or {}
    return {
        "id": row["id"],
        "cell": claim["index"],
        "chain": claim["exception"],
        "real": real.get("status") if real.get("status") != "error" else real.get("exception"),
    }


def render(f: dict[str, Any]) -> str:
    """The summary as text."""
    lines = [f"crane-bench chain: {f['cases']} cases, {f['valid']} with a real run"]
    for e in f["errors"]:
        lines.append(f"  error {e['id']}: {e['error']}")
    ec = f["edited_crashed"]
    lines.append(f"edited cell crashed for real: {ec['n']} (its trial said crashed: {ec['trial_crashed']})")
    rb = f["real_breaks"]
    lines.append(
        f"real crashes below the edit: {rb['all']} (the edit's: {rb['edit']}, pre-existing: "
        f"{rb['pre_existing']}, no baseline: {rb['unknown']})"
    )

    def ratio(x: dict[str, Any]) -> str:
        return f"{x['found']}/{x['of']}" + (f" ({x['pct']} %)" if x["pct"] is not None else "")

    lines.append(
        f"found by the chain (same cell, same exception): {ratio(f['found'])}; the edit's "
        f"{ratio(f['found_edit_caused'])}, pre-existing {ratio(f['found_pre_existing'])}; "
        f"{f['found_after_cut']} of them after a cut loop"
    )
    for m in f["missed"]:
        lines.append(f"  missed {m['id']}: cell {m['cell']} {m['exception']} (chain: {m['chain']})")
    if f["without_edit_on_found"]:
        lines.append(
            "without_edit on found crashes: "
            + ", ".join(f"{k}: {v}" for k, v in f["without_edit_on_found"].items())
        )
    for key, label in (
        ("claims", "claims (crashed, after_cut false)"),
        ("hedged_claims", "hedged claims (after_cut)"),
    ):
        c = f[key]
        lines.append(
            f"{label}: {c['total']}: confirmed {c['confirmed']}, contradicted {c['contradicted']}, "
            f"unverified {c['unverified']}, unknown {c['unknown']}"
        )
        for x in c["list"]:
            lines.append(f"  contradicted {x['id']}: cell {x['cell']} chain {x['chain']}, real {x['real']}")
    lines.append(f"passed over a real crash: {len(f['passed_over'])}")
    for p in f["passed_over"]:
        lines.append(f"  {p['id']}: cells {p['cells']}")
    lines.append("chain statuses: " + ", ".join(f"{k} {v}" for k, v in f["statuses"].items()))
    for reason, n in f["not_reached_reasons"].items():
        lines.append(f"  not reached ({n}): {reason}")
    cr = f["cells_reached"]
    lines.append(f"cells below reached: chain {cr['chain']}, real run {cr['real']}")
    lines.append("edited cell's trial: " + ", ".join(f"{k} {v}" for k, v in f["trial"].items()))

    def pp(x: dict[str, Any]) -> str:
        return f"p50 {x['p50']} / p95 {x['p95']} ms (n {x['n']})"

    lines.append(f"chain time (timing.below_ms): {pp(f['below_ms'])}")
    lines.append(f"analysis wall time: {pp(f['analyze_ms'])}; with a chain {pp(f['analyze_ms_with_chain'])}")
    lines.append(f"wall time, all cases: {f['wall_s']} s")
    if f["guesses"]:
        lines.append("the suite's guesses: " + ", ".join(f"{k}: {v}" for k, v in f["guesses"].items()))
    return "\n".join(lines)
