/**
 * Pure functions over check records and server answers: what a cell shows, the staleness rule, which
 * answer may replace a warning, the history. Unit-tested without a browser.
 */
import type { IFix } from '../contract/api';
import { claimLevel } from './claim';
import type { CellState } from './levels';
import { assess } from './levels';
import type { ICheckRecord, IPending } from '../contract/tokens';

/** What a cell shows, and whether the verdict no longer matches the cell or the kernel. */
export interface ICellView {
  state: CellState;
  stale: boolean;
  /** A check of this very text is in flight; the state shown is the verdict it may replace. */
  pending?: IPending['what'];
  /** A warning a later full check could neither confirm nor clear (see `ICheckRecord.rechecked`). */
  unresolved?: boolean;
}

/**
 * Whether a record was made for other text or another kernel state than the current ones.
 */
export function isStale(
  record: ICheckRecord,
  source: string,
  epoch: number
): boolean {
  return record.source !== source || record.epoch !== epoch;
}

/**
 * What a cell shows, from its last check record and the cell's current text and kernel epoch.
 */
export function cellView(
  record: ICheckRecord | undefined,
  source: string,
  epoch: number
): ICellView {
  if (!record) {
    return { state: 'none', stale: false };
  }
  const same = record.source === source;
  const extra: Pick<ICellView, 'pending' | 'unresolved'> = {};
  if (same && record.pending) {
    extra.pending = record.pending.what;
  }
  if (record.rechecked?.tier === 'full') {
    extra.unresolved = true;
  }
  if (record.run && same) {
    // The run's traceback is the truth about this text: not outdated by the run that produced it.
    return { state: record.run.kind, stale: false, ...extra };
  }
  const stale = isStale(record, source, epoch);
  switch (record.phase) {
    case 'checking':
      return { state: 'checking', stale: false };
    case 'busy':
      return { state: 'busy', stale };
    case 'failed':
      return { state: 'error', stale, ...extra };
  }
  if (record.chain) {
    // Another cell's chain saw this one crash (below/chain.ts).
    return { state: claimLevel(record.chain.outcome), stale, ...extra };
  }
  const assessment = record.result ? assess(record.result) : null;
  return { state: assessment ? assessment.level : 'error', stale, ...extra };
}

/**
 * The fix offered for the cell's current text: the server's verified edit (a trial ran it without an
 * error), while the warning it fixes is shown for that very text. Null otherwise.
 */
export function offeredFix(
  record: ICheckRecord | undefined,
  source: string
): IFix | null {
  if (!record || record.source !== source || record.run) {
    return null;
  }
  return (warns(record) && record.result?.fixes?.[0]) || null;
}

/** Whether a record holds a warning (will or may crash) for its text, or a crash a run confirmed. */
export function warns(record: ICheckRecord): boolean {
  if (record.run) {
    return record.run.kind !== 'passed';
  }
  if (record.chain) {
    return record.phase === 'done'; // a claim is a crash another cell's chain saw
  }
  const assessment =
    record.phase === 'done' && record.result ? assess(record.result) : null;
  return !!assessment && isWarning(assessment.level);
}

/**
 * How strong the evidence of a finished check is: 3 a trial run (a crash seen, or the whole cell
 * run to its end), 2 the deterministic checks (a certain crash, or a full check that found none),
 * 1 the model's prediction.
 */
function evidence(record: ICheckRecord): number {
  if (record.chain) {
    return 3; // a chain's claim: a crash seen in a trial
  }
  const assessment = record.result ? assess(record.result) : null;
  if (!assessment) {
    return 0;
  }
  if (assessment.level === 'no-crash') {
    return assessment.tried.includes('trial') ? 3 : 2;
  }
  switch (assessment.basis) {
    case 'trial':
    case 'quick':
    case 'quick_may':
      return 3;
    case 'llm':
      return 1;
    default:
      return 2;
  }
}

/**
 * Whether `answer`, a check of the same text as `standing` (a warning, or a run's outcome), may
 * replace it; `epoch` is the kernel's now. A warning is never lost to weaker evidence: it gives way
 * to a newer warning, or to a no-crash verdict of the current kernel state from a full check whose
 * evidence is at least as strong (a trial that ran the cell to its end overrules a crash seen in a
 * trial; the checks overrule the checks and the model). A run's outcome gives way only to a check
 * of the kernel state after it.
 */
export function overrules(
  answer: ICheckRecord,
  standing: ICheckRecord,
  epoch: number
): boolean {
  const decided =
    answer.phase === 'done' &&
    (!!answer.chain || (!!answer.result && !!assess(answer.result)));
  if (!decided) {
    return false;
  }
  if (answer.epoch < standing.epoch) {
    return false;
  }
  if (standing.run) {
    return answer.epoch === epoch;
  }
  if (warns(answer)) {
    return true;
  }
  if (standing.chain && !standing.chain.applied) {
    // A chain's claim is about the kernel once another cell's edit ran; a check of this cell on a
    // kernel that does not hold that edit yet cannot clear it (below/chain.ts clears it by a chain).
    return false;
  }
  return (
    answer.epoch === epoch &&
    answer.tier !== 'checks' &&
    evidence(answer) >= evidence(standing)
  );
}

/** Whether the record warns of a crash (will or may crash). */
export function isWarning(state: CellState): boolean {
  return state === 'will-crash' || state === 'may-crash';
}

/**
 * Whether running the cell now should ask for confirmation: its last verdict for this very text
 * says it will or may crash, even when the kernel changed since or a re-check is in flight (a
 * warning only goes away when a check overrules it, see `overrules`).
 */
export function asksBeforeRun(
  record: ICheckRecord | undefined,
  source: string,
  epoch: number
): boolean {
  return (
    record?.source === source &&
    isWarning(cellView(record, source, epoch).state)
  );
}

/**
 * Add a finished check (or a crash) to a notebook's history: newest first, at most `max`, and an
 * entry for the same text of the same cell replaces the older one.
 */
export function pushHistory(
  history: readonly ICheckRecord[],
  record: ICheckRecord,
  max = 12
): ICheckRecord[] {
  if (record.pending) {
    record = { ...record, pending: undefined };
  }
  const rest = history.filter(
    r => !(r.cellId === record.cellId && r.source === record.source)
  );
  return [record, ...rest].slice(0, max);
}
