/**
 * What the user's runs mean for the warnings. A run is judged against the verdict its cell showed
 * when the run started: the same text and a warning → confirmed; the same text and "no crash found"
 * → missed; a run without an error stands for its text until the text or the kernel's session
 * changes. Every run outdates the verdicts of the kernel state before it.
 */
import type { Notebook } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';

import type { IRunEnd, IRunStart, KernelActivity } from '../contract/kernel';
import type { CellChecks } from '../badge/model';
import type { SessionStats } from './stats';
import type { ICheckRecord } from '../contract/tokens';
import { cellView, isWarning } from '../badge/verdict';

/** A user run in progress: the cell's record when it started, to judge the warning by. */
interface IRunWatch {
  cellId: string | null;
  record: ICheckRecord | undefined;
}

/**
 * Puts each user run's outcome (`IRunOutcome`) on its cell's check record and counts it in the
 * session statistics.
 */
export class RunOutcomes implements IDisposable {
  constructor(
    private readonly _notebook: Notebook,
    private readonly _kernel: KernelActivity,
    private readonly _checks: CellChecks,
    private readonly _stats: SessionStats
  ) {
    _kernel.runStarted.connect(this._onRunStarted, this);
    _kernel.runFinished.connect(this._onRunFinished, this);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Forget the runs in flight (the kernel restarted: they never finish). */
  clear(): void {
    this._runs.clear();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._kernel.runStarted.disconnect(this._onRunStarted, this);
    this._kernel.runFinished.disconnect(this._onRunFinished, this);
    this._runs.clear();
  }

  /** Find the cell of a run: by the id this page sent, else (another client ran it) by its text. */
  private _cellIdOf(run: IRunStart): string | null {
    const cells = this._notebook.widgets;
    if (run.cellId !== null) {
      return cells.some(c => c.model.id === run.cellId) ? run.cellId : null;
    }
    const cell = cells.find(
      c =>
        c.model.type === 'code' && c.model.sharedModel.getSource() === run.code
    );
    return cell?.model.id ?? null;
  }

  private _onRunStarted(sender: KernelActivity, run: IRunStart): void {
    const cellId = this._cellIdOf(run);
    // The verdict that stood for the text that runs, before this run outdates every verdict (a
    // check still in flight does not count: it had not replaced it).
    this._runs.set(run.msgId, {
      cellId,
      record: cellId ? this._checks.standing(cellId, run.code) : undefined
    });
    this._checks.bumpEpoch();
  }

  private _onRunFinished(sender: KernelActivity, run: IRunEnd): void {
    const watch = this._runs.get(run.msgId);
    this._runs.delete(run.msgId);
    const cellId = watch?.cellId ?? null;
    if (!cellId) {
      return;
    }
    const record = watch?.record;
    this._stats.ran(cellId, run.code, run.elapsedMs, run.error !== null);
    const current = this._checks.standing(cellId, run.code);
    if (!run.error) {
      // It ran fine: no badge on it, and no check on focus while its text and the kernel's session
      // stay (a restart forgets this: `CellChecks.dropPassed`).
      this._checks.set({
        ...(current ?? {
          cellId,
          source: run.code,
          epoch: this._checks.epoch,
          phase: 'done',
          startedAt: Date.now(),
          sent: {}
        }),
        pending: undefined,
        run: { kind: 'passed', ename: '', evalue: '', at: Date.now() }
      });
      return;
    }
    if (record?.run?.kind === 'passed') {
      // It ran fine before and crashed now: the clean run no longer speaks for it.
      this._checks.clear(cellId);
      return;
    }
    if (!record || record.source !== run.code) {
      return;
    }
    // The cell ran the very text that was checked, and crashed: the warning was right, or missed.
    const state = cellView(record, run.code, record.epoch).state;
    let kind: 'confirmed' | 'missed' | null = null;
    if (isWarning(state)) {
      kind = 'confirmed';
    } else if (state === 'no-crash') {
      kind = 'missed';
      this._stats.missed();
    }
    if (kind) {
      this._checks.set({
        // The verdict that stood when the run started, not a check started since.
        ...record,
        pending: undefined,
        run: {
          kind,
          ename: run.error.ename,
          evalue: run.error.evalue,
          at: Date.now()
        }
      });
    }
  }

  private _runs = new Map<string, IRunWatch>();
  private _isDisposed = false;
}
