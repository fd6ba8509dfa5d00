import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

import type { ICellChecks, ICheckRecord, IPending } from '../contract/tokens';
import { overrules, pushHistory, warns } from './verdict';

/**
 * The verdict state of one notebook: the last check of each cell, a short history, and the kernel
 * epoch that tells whether a verdict still describes the kernel.
 */
export class CellChecks implements ICellChecks, IDisposable {
  /** Emits the id of the cell whose record changed. */
  get changed(): ISignal<this, string> {
    return this._changed;
  }

  /** Emits the new epoch. */
  get epochChanged(): ISignal<this, number> {
    return this._epochChanged;
  }

  get epoch(): number {
    return this._epoch;
  }

  get history(): readonly ICheckRecord[] {
    return this._history;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  get(cellId: string): ICheckRecord | undefined {
    return this._records.get(cellId);
  }

  /** Ids of the cells with a record. */
  cellIds(): string[] {
    return [...this._records.keys()];
  }

  /**
   * Store the latest record of a cell as it is (a failure to start, a run's outcome, an earlier
   * record restored); finished checks also enter the history, clean runs do not.
   */
  set(record: ICheckRecord): void {
    this._records.set(record.cellId, record);
    if (warns(record)) {
      this._warnings.set(record.cellId, record);
    } else if (
      record.run?.kind === 'passed' &&
      this._warnings.get(record.cellId)?.source === record.source
    ) {
      this._warnings.delete(record.cellId); // it ran without an error: no warning to come back to
    }
    if (
      (record.phase === 'done' || record.phase === 'failed') &&
      record.run?.kind !== 'passed'
    ) {
      this._history = pushHistory(this._history, record);
    }
    this._changed.emit(record.cellId);
  }

  /**
   * The verdict that stands for `source` in a cell: the record shown when it is a finished check or
   * a run of that text, else the cell's last warning when it was for that text (the user typed and
   * came back to it).
   */
  standing(cellId: string, source: string): ICheckRecord | undefined {
    const shown = this._records.get(cellId);
    if (shown?.source === source && (shown.phase === 'done' || shown.run)) {
      return shown;
    }
    const warning = this._warnings.get(cellId);
    return warning?.source === source ? warning : undefined;
  }

  /**
   * A check started (`record.phase` checking or busy). A verdict standing for that very text stays
   * on display, marked with what is in flight, so no warning disappears while a check runs.
   */
  begin(record: ICheckRecord, what: IPending['what']): void {
    const standing = this.standing(record.cellId, record.source);
    this._records.set(
      record.cellId,
      standing
        ? {
            ...standing,
            pending: { what, epoch: record.epoch, tier: record.tier }
          }
        : record
    );
    this._changed.emit(record.cellId);
  }

  /**
   * A check finished (`record.phase` done or failed). It replaces the verdict standing for its text
   * unless that is a warning or a run's outcome it cannot overrule (see `overrules`, e.g. an answer
   * that was outdated by the run when it arrived): then that stays, a warning marked as re-checked
   * (so the same check is not asked again). Returns whether `record` is now
   * the cell's record.
   */
  finish(record: ICheckRecord): boolean {
    const standing = this.standing(record.cellId, record.source);
    if (
      standing &&
      (warns(standing) || standing.run) &&
      !overrules(record, standing, this._epoch)
    ) {
      this._records.set(record.cellId, {
        ...standing,
        pending: undefined,
        ...(warns(standing)
          ? { rechecked: { epoch: record.epoch, tier: record.tier ?? 'full' } }
          : {})
      });
      this._changed.emit(record.cellId);
      return false;
    }
    if (
      !warns(record) &&
      this._warnings.get(record.cellId)?.source === record.source
    ) {
      this._warnings.delete(record.cellId);
    }
    this.set(record);
    return true;
  }

  /**
   * Change the record shown for a cell in place (the check in flight ended, it was re-checked, a
   * chain's claim learnt that the kernel holds its edit): no new history entry. The warning kept
   * for its text follows.
   */
  amend(cellId: string, change: Partial<ICheckRecord>): void {
    const shown = this._records.get(cellId);
    if (!shown) {
      return;
    }
    const next = { ...shown, ...change };
    this._records.set(cellId, next);
    if (this._warnings.get(cellId)?.source === shown.source && warns(next)) {
      this._warnings.set(cellId, next);
    }
    this._changed.emit(cellId);
  }

  /**
   * Withdraw the claim of another cell's chain about this cell (below/chain.ts: its premise went, or the
   * cell's text changed): the record shown and the warning kept, when they are claims. The history
   * keeps what was said.
   */
  withdraw(cellId: string): void {
    if (this._warnings.get(cellId)?.chain) {
      this._warnings.delete(cellId);
    }
    if (this._records.get(cellId)?.chain) {
      this._records.delete(cellId);
      this._changed.emit(cellId);
    }
  }

  /** Forget the clean runs (the kernel restarted: those cells are worth checking again). */
  dropPassed(): void {
    for (const [cellId, record] of this._records) {
      if (record.run?.kind === 'passed') {
        this._records.delete(cellId);
        this._changed.emit(cellId);
      }
    }
  }

  /** The cell has no current verdict (its text is still being typed); its history stays. */
  clear(cellId: string): void {
    if (this._records.delete(cellId)) {
      this._changed.emit(cellId);
    }
  }

  /** Forget a cell (deleted from the notebook). */
  delete(cellId: string): void {
    this._warnings.delete(cellId);
    if (this._records.delete(cellId)) {
      this._history = this._history.filter(r => r.cellId !== cellId);
      this._changed.emit(cellId);
    }
  }

  /** The kernel state changed (user code ran, restart, other kernel): every verdict is outdated. */
  bumpEpoch(): void {
    this._epoch += 1;
    this._epochChanged.emit(this._epoch);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._records.clear();
    this._warnings.clear();
    this._history = [];
    Signal.clearData(this);
  }

  private _records = new Map<string, ICheckRecord>();
  /** The last warning of each cell, until a check of its text overrules it. */
  private _warnings = new Map<string, ICheckRecord>();
  private _history: ICheckRecord[] = [];
  private _epoch = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, string>(this);
  private _epochChanged = new Signal<this, number>(this);
}
