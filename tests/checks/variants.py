"""Generated variants of crashing and non-crashing cells, executed to confirm the truth, for every rule.

A generator (tests/checks/gen_*.py) describes one rule's crash class: kernel states that break the
library's precondition and states that meet it, target cells written the ways notebooks write them
(names, aliases, `from x import y`, keyword/positional arguments, method chains), and the control flow
around them (FLOWS: top level, loops, `with`, branches the runtime decides, f-strings, comprehensions,
`try` blocks that catch something else; and flows the checks cannot be sure of: an untaken branch, a
`try` that swallows the error, a function body). `expand()` combines them deterministically.

Nothing is taken on faith: `execute()` runs every variant in a worker process (one per rule, a fresh
namespace per variant: the setup cells as a kernel runs them, the probe on the target cell, then the
target cell itself) and records whether it raised. A variant whose outcome differs from what its
generator expected is a generator bug and fails the test. Results are cached under
$TMPDIR/crane-variants/<probe hash>/ so re-scoring the checks takes seconds.

    python tests/checks/variants.py            # the per-rule table (variants, recall, precision)
    python tests/checks/variants.py -v --rules missing-key,shape-mismatch
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from string import Template
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Variant:
    rule: str  # the rule id that must report the crash
    name: str  # unique, readable: <generator>/<state>/<form>/<flow>
    setup: tuple[str, ...]  # cells executed before (the kernel state)
    cell: str  # the target cell
    crash: bool  # what the generator expects; execution must agree
    # False: a flow the checks cannot be sure of, they must stay silent; None: the evidence may be out
    # of the probe's sample (a rare value in a long column): no claim either way, only precision counts
    certain: bool | None = True


@dataclass
class Outcome:
    crash: bool
    exception: str | None
    message: str
    probe: dict[str, Any]
    setup_error: str | None = None


# ----- control flow around a target ------------------------------------------------------------------


@dataclass(frozen=True)
class Flow:
    name: str
    wrap: Callable[[str], str | None]  # the cell around the target; None when it does not apply
    runs: bool = True  # the target certainly runs (its crash happens)
    certain: bool = True  # the checks may be sure of it
    setup: str = ""  # kernel state the flow needs


def _is_expression(code: str) -> bool:
    try:
        ast.parse(code, mode="eval")
    except SyntaxError:
        return False
    return True


def _indent(code: str) -> str:
    return textwrap.indent(code, "    ")


def _fstring(code: str) -> str | None:
    if not _is_expression(code) or "\n" in code:
        return None
    for quote in ('"', "'"):
        if quote not in code:
            return f"print(f{quote}result: {{{code}}}{quote})"
    return None


def _expr_only(template: str) -> Callable[[str], str | None]:
    return lambda code: template.replace("@", code) if _is_expression(code) and "\n" not in code else None


FLOWS: tuple[Flow, ...] = (
    Flow("top", lambda c: c),
    Flow("assign", _expr_only("result = @")),
    Flow("print", _expr_only("print(@)")),
    Flow("fstring", _fstring),
    Flow("for-range", lambda c: "for epoch in range(2):\n" + _indent(c)),
    Flow("for-list", lambda c: 'for name in ["first", "second"]:\n' + _indent(c)),
    Flow("for-kernel-list", lambda c: "for item in items:\n" + _indent(c), setup="items = [3, 1, 2]"),
    Flow("with", lambda c: "import warnings\nwith warnings.catch_warnings():\n" + _indent(c)),
    Flow("if-runtime", lambda c: "if len(items) > 0:\n" + _indent(c), setup="items = [3, 1, 2]"),
    Flow("if-flag", lambda c: "if DEBUG:\n" + _indent(c) + "\nelse:\n    pass", setup="DEBUG = True"),
    Flow("else-branch", lambda c: "if len(items) > 5:\n    pass\nelse:\n" + _indent(c), setup="items = [1]"),
    Flow("try-other", lambda c: "try:\n" + _indent(c) + "\nexcept ZeroDivisionError:\n    pass"),
    Flow("comprehension", _expr_only("outs = [@ for _ in range(2)]")),
    Flow("conditional", _expr_only("out = @ if len(items) else None"), setup="items = [1, 2]"),
    Flow("while", lambda c: "while True:\n" + _indent(c) + "\n    break"),
    # flows the checks cannot (or must not) be sure of
    Flow(
        "untaken-branch",
        lambda c: "if len(items) > 10:\n" + _indent(c),
        runs=False,
        certain=False,
        setup="items = [3, 1, 2]",
    ),
    Flow(
        "swallowed",
        lambda c: "try:\n" + _indent(c) + "\nexcept Exception:\n    pass",
        runs=False,
        certain=False,
    ),
    Flow(
        "unknown-branch",
        lambda c: "import random\nif random.random() > 2:\n" + _indent(c),
        runs=False,
        certain=False,
    ),
    Flow("function", lambda c: "def step():\n" + _indent(c) + "\n\nstep()", certain=False),
)
FLOW_BY_NAME = {f.name: f for f in FLOWS}
# Flows that run the target at most once, at top level: for targets that change state (`del x`,
# `lst.remove(v)`, `x /= 2`), which a second loop iteration or a function's local scope would change.
ONCE = tuple(
    f.name for f in FLOWS if not f.name.startswith("for-") and f.name not in ("comprehension", "function")
)


# ----- expansion -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """Kernel state: setup cells (a Template: $names are filled from a naming), and whether the rule's
    precondition is broken by it."""

    name: str
    setup: str
    crash: bool
    certain: bool | None = True  # None: the evidence may lie beyond what the probe samples (see Variant)


@dataclass
class Spec:
    """One rule's crash class: states x forms x namings x flows."""

    rule: str
    generator: str
    states: list[State]
    forms: list[str | tuple[str, bool]]  # target cells (Templates over the naming); (cell, False): a
    # form that does not crash even in the crashing states
    namings: list[dict[str, str]] = field(default_factory=lambda: [{}])
    flows: Sequence[str] = tuple(f.name for f in FLOWS)
    per_side: int = 30  # variants kept per side (crashing / fine)
    common: str = ""  # setup shared by every state (imports)


def expand(spec: Spec) -> list[Variant]:
    """Deterministic sample of the combinations, balanced between crashing and fine variants; every
    state, form and flow appears."""
    rng = random.Random(spec.generator + spec.rule)
    pools: dict[bool, list[Variant]] = {True: [], False: []}
    for state in spec.states:
        for f_i, raw_form in enumerate(spec.forms):
            form, form_crashes = raw_form if isinstance(raw_form, tuple) else (raw_form, True)
            for n_i, naming in enumerate(spec.namings):
                for flow_name in spec.flows:
                    flow = FLOW_BY_NAME[flow_name]
                    target = Template(form).substitute(naming)
                    cell = flow.wrap(target)
                    if cell is None:
                        continue
                    setup = [Template(spec.common).substitute(naming)] if spec.common else []
                    setup.append(Template(state.setup).substitute(naming))
                    if flow.setup:
                        setup.append(flow.setup)
                    crash = state.crash and form_crashes and flow.runs
                    pools[crash].append(
                        Variant(
                            rule=spec.rule,
                            name=f"{spec.generator}/{state.name}/f{f_i}n{n_i}/{flow.name}",
                            setup=tuple(setup),
                            cell=cell,
                            crash=crash,
                            certain=flow.certain
                            if state.certain is not None
                            else (None if flow.certain else False),
                        )
                    )
    out: list[Variant] = []
    for side in (True, False):
        pool = pools[side]
        rng.shuffle(pool)
        # round-robin over flows first, so each flow is represented before any repeats
        by_flow: dict[str, list[Variant]] = {}
        for v in pool:
            by_flow.setdefault(v.name.rsplit("/", 1)[1], []).append(v)
        picked: list[Variant] = []
        while len(picked) < spec.per_side and any(by_flow.values()):
            for flow_name in list(by_flow):
                if by_flow[flow_name] and len(picked) < spec.per_side:
                    picked.append(by_flow[flow_name].pop(0))
        out.extend(picked)
    return out


# ----- execution -----------------------------------------------------------------------------------------


def _probe_hash() -> str:
    sys.path.insert(0, str(ROOT))
    from crane_jupyterlab.server.payload import payload_key

    return payload_key()


def _key(v: Variant) -> str:
    return hashlib.sha256(json.dumps([v.setup, v.cell]).encode()).hexdigest()[:24]


# Bump when the worker changes how it runs a variant (its outcomes are cached by probe version).
WORKER_VERSION = 2


def _cache_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "crane-variants" / f"{_probe_hash()}-w{WORKER_VERSION}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def generator(v: Variant) -> str:
    return v.name.split("/", 1)[0]


def family(v: Variant) -> str:
    """The library a variant's generator is about (`keras-target-shape`: keras)."""
    return generator(v).split("-", 1)[0]


def execute(
    variants: Iterable[Variant], jobs: int = 1, timeout: float = 900, by: Callable[[Variant], str] = generator
) -> dict[str, Outcome]:
    """Outcome of every variant (by name), unless cached for this probe version: executed in worker
    processes, one per group `by` makes (a generator's, by default), `jobs` of them at a time."""
    cache = _cache_dir()
    outcomes: dict[str, Outcome] = {}
    todo: dict[str, list[Variant]] = {}
    for v in variants:
        path = cache / f"{_key(v)}.json"
        if path.exists():
            outcomes[v.name] = Outcome(**json.loads(path.read_text()))
        else:
            todo.setdefault(by(v), []).append(v)
    groups = list(todo.values())
    procs: list[tuple[subprocess.Popen[str], Path, list[Variant], Any]] = []
    while groups or procs:
        while groups and len(procs) < jobs:
            batch = groups.pop(0)
            folder = tempfile.TemporaryDirectory()
            job = Path(folder.name)
            (job / "in.json").write_text(json.dumps([asdict(v) for v in batch]))
            # TMPDIR: the folders variants make (tempfile.mkdtemp) go with the job's, removed after it
            env = dict(os.environ, MPLBACKEND="Agg", CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3",
                       PYTHONWARNINGS="ignore", PYTHONPATH=str(ROOT), TMPDIR=str(job))  # fmt: skip
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(HERE / "variants.py"),
                    "--worker",
                    str(job / "in.json"),
                    str(job / "out.json"),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            procs.append((proc, job, batch, folder))
        proc, job, batch, folder = procs.pop(0)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise RuntimeError(f"variant worker timed out on {batch[0].name.split('/')[0]}") from None
        if proc.returncode != 0:
            raise RuntimeError(f"variant worker failed: {err[-2000:]}")
        results = json.loads((job / "out.json").read_text())
        for v in batch:
            outcome = results[v.name]
            (cache / f"{_key(v)}.json").write_text(json.dumps(outcome))
            outcomes[v.name] = Outcome(**outcome)
        folder.cleanup()
    return outcomes


def _run_cell(code: str, ns: dict[str, Any], label: str) -> None:
    """As a kernel runs a cell: statements, then the last expression displayed (its repr computed)."""
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, label, "exec"), ns)
    if last is not None:
        repr(eval(compile(ast.Expression(last.value), label, "eval"), ns))


def _worker(in_path: str, out_path: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    from crane_jupyterlab.kernel.probe import describe as run

    results: dict[str, Any] = {}
    for raw in json.loads(Path(in_path).read_text()):
        v = Variant(**{**raw, "setup": tuple(raw["setup"])})
        ns: dict[str, Any] = {"__name__": "__main__"}
        setup_error = None
        try:
            for i, cell in enumerate(v.setup):
                _run_cell(cell, ns, f"<setup {i}>")
                _close_figures()
        except BaseException as exc:  # a broken generator: reported, never scored
            setup_error = f"{type(exc).__name__}: {exc}"[:300]
        # A generous time budget: the variants test what the rules conclude from the facts, not how
        # many facts a busy machine leaves time for (the budget has its own tests).
        probe = run.run(v.cell, {"budget_ms": 10_000}, ns) if setup_error is None else {}
        crash, exception, message = False, None, ""
        if setup_error is None:
            try:
                _run_cell(v.cell, ns, "<target>")
            except BaseException as exc:
                crash, exception, message = True, type(exc).__name__, str(exc)[:300]
            _close_figures()
        results[v.name] = {
            "crash": crash,
            "exception": exception,
            "message": message,
            "probe": probe,
            "setup_error": setup_error,
        }
    Path(out_path).write_text(json.dumps(results))


def _close_figures() -> None:
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


# ----- scoring -------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    variant: Variant
    outcome: Outcome
    rules: list[str]
    messages: list[str]

    @property
    def fired(self) -> bool:
        return bool(self.rules)

    def problem(self) -> str | None:
        """Why this variant fails the test, or None."""
        o, v = self.outcome, self.variant
        if o.setup_error:
            return f"setup failed: {o.setup_error}"
        if o.crash != v.crash:
            return f"generator expected crash={v.crash}, execution gave {o.exception}: {o.message[:120]}"
        if self.fired and not o.crash:
            return f"false alarm: {self.messages[0]}"
        if o.crash and v.certain is True and v.rule not in self.rules:
            return f"missed ({o.exception}: {o.message[:100]}); fired {self.rules}"
        if v.certain is False and self.fired:
            return f"fired on a flow it cannot be sure of: {self.messages[0]}"
        return None


def score(variants: Sequence[Variant], outcomes: dict[str, Outcome]) -> list[Verdict]:
    sys.path.insert(0, str(ROOT))
    from crane_jupyterlab.checks import check

    verdicts = []
    for v in variants:
        o = outcomes[v.name]
        findings = check(v.cell, o.probe) if o.probe else []
        verdicts.append(Verdict(v, o, [f.rule for f in findings], [f.message for f in findings]))
    return verdicts


def table(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    """Per rule (generator): crashing/fine variants, recall (all crashes / crashes on certain paths),
    precision."""
    rows: dict[str, dict[str, Any]] = {}
    for vd in verdicts:
        key = vd.variant.name.split("/", 1)[0]
        row = rows.setdefault(key, {"generator": key, "rule": vd.variant.rule, "crash": 0, "fine": 0,
                                    "tp": 0, "fp": 0, "crash_certain": 0, "tp_certain": 0})  # fmt: skip
        crash = vd.outcome.crash
        row["crash" if crash else "fine"] += 1
        hit = vd.variant.rule in vd.rules
        if crash:
            row["tp"] += hit
            row["crash_certain"] += vd.variant.certain is True
            row["tp_certain"] += hit and vd.variant.certain is True
        elif vd.fired:
            row["fp"] += 1
    for row in rows.values():
        row["recall"] = round(100.0 * row["tp"] / row["crash"], 1) if row["crash"] else None
        row["recall_certain"] = (
            round(100.0 * row["tp_certain"] / row["crash_certain"], 1) if row["crash_certain"] else None
        )
        fired = row["tp"] + row["fp"]
        row["precision"] = round(100.0 * row["tp"] / fired, 1) if fired else None
    return sorted(rows.values(), key=lambda r: r["generator"])


def replica_table(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    """Per generator: the replica judge (crane_jupyterlab/checks/replica) beside the rules, on the same
    executed variants. A replica claim is right when the variant crashed with the claimed exception."""
    sys.path.insert(0, str(ROOT))
    from crane_jupyterlab.checks import replica
    from crane_jupyterlab.checks.view import from_probe

    replica.warm_up(120)  # the judge abstains while its process warms up

    rows: dict[str, dict[str, Any]] = {}
    for vd in verdicts:
        o, v = vd.outcome, vd.variant
        if o.setup_error or not o.probe:
            continue
        key = v.name.split("/", 1)[0]
        counts = dict.fromkeys(("crash", "fine", "rules_tp", "replica_tp", "replica_wrong", "either_tp"), 0)
        row = rows.setdefault(key, {"generator": key, "rule": v.rule, "wrong": [], **counts})
        claims = replica.judge(v.cell, from_probe(o.probe), list(v.setup))
        exc = claims[0].message.split(":", 1)[0] if claims else None
        row["crash" if o.crash else "fine"] += 1
        rules_hit = o.crash and v.rule in vd.rules
        replica_hit = bool(claims) and o.crash and exc == (o.exception or "").rsplit(".", 1)[-1]
        row["rules_tp"] += rules_hit
        row["replica_tp"] += replica_hit
        row["either_tp"] += rules_hit or replica_hit
        if claims and not replica_hit:
            row["replica_wrong"] += 1
            row["wrong"].append(
                f"{v.name}: claimed {claims[0].message[:100]}; ran: {o.exception} {o.message[:80]}"
            )
    return sorted(rows.values(), key=lambda r: r["generator"])


def print_replica(rows: Sequence[dict[str, Any]]) -> None:
    print("| generator | rule | crashing | fine | rules recall | replica recall | either | replica wrong |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        pct = [
            f"{100.0 * r[k] / r['crash']:.0f} %" if r["crash"] else "-"
            for k in ("rules_tp", "replica_tp", "either_tp")
        ]
        print(
            f"| {r['generator']} | {r['rule']} | {r['crash']} | {r['fine']} | {' | '.join(pct)} | "
            f"{r['replica_wrong']} |"
        )
    crash = max(sum(r["crash"] for r in rows), 1)
    tot = {
        k: sum(r[k] for r in rows) for k in ("rules_tp", "replica_tp", "either_tp", "replica_wrong", "fine")
    }
    print(
        f"all: {crash} crashing, {tot['fine']} fine variants; "
        f"rules recall {100.0 * tot['rules_tp'] / crash:.1f}%, "
        f"replica recall {100.0 * tot['replica_tp'] / crash:.1f}%, "
        f"either {100.0 * tot['either_tp'] / crash:.1f}%; "
        f"replica wrong claims {tot['replica_wrong']}"
    )
    for r in rows:
        for wrong in r["wrong"]:
            print("WRONG", wrong)


def all_specs() -> list[Spec]:
    """Every generator module's SPECS."""
    sys.path.insert(0, str(HERE))
    specs: list[Spec] = []
    for path in sorted(HERE.glob("gen_*.py")):
        module = __import__(path.stem)
        specs.extend(module.SPECS)
    return specs


def main(argv: Sequence[str]) -> int:
    if len(argv) == 3 and argv[0] == "--worker":
        sys.path.insert(0, str(ROOT))
        _worker(argv[1], argv[2])
        return 0
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rules", help="comma-separated generator names or rule ids")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every variant that fails")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument("--replica", action="store_true", help="score the replica judge beside the rules")
    parser.add_argument("--per-side", type=int, default=0, help="with --replica: N crashing, N fine each")
    args = parser.parse_args(argv)
    specs = all_specs()
    if args.rules:
        wanted = set(args.rules.split(","))
        specs = [s for s in specs if s.generator in wanted or s.rule in wanted]
    variants = [v for s in specs for v in expand(s)]
    if args.replica and args.per_side:
        variants = [v for s in specs for crash in (True, False)
                    for v in [x for x in expand(s) if x.crash is crash][: args.per_side]]  # fmt: skip
    verdicts = score(variants, execute(variants, jobs=args.jobs))
    if args.replica:
        print_replica(replica_table(verdicts))
        return 0
    rows = table(verdicts)
    if args.markdown:
        print("| generator | rule | crashing | fine | recall | recall (certain paths) | precision |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['generator']} | {r['rule']} | {r['crash']} | {r['fine']} | {r['recall']} | "
                  f"{r['recall_certain']} | {r['precision']} |")  # fmt: skip
    else:
        for r in rows:
            print(json.dumps(r))
    total_tp = sum(r["tp"] for r in rows)
    total_crash = sum(r["crash"] for r in rows)
    total_fp = sum(r["fp"] for r in rows)
    print(f"all: {len(verdicts)} variants, {total_crash} crashing; recall "
          f"{100.0 * total_tp / max(total_crash, 1):.1f}%, "
          f"precision {100.0 * total_tp / max(total_tp + total_fp, 1):.1f}%")  # fmt: skip
    problems = [(vd.variant, vd.problem()) for vd in verdicts if vd.problem()]
    if args.verbose:
        for v, why in problems:
            print(f"-- {v.name}: {why}\n{textwrap.indent(v.cell, '   | ')}")
    print(f"{len(problems)} variants with problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
