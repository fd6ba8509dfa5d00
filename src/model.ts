import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

import type { ICellChecks, ICheckRecord } from './tokens';
import { pushHistory } from './verdict';

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

  /** Store the latest record of a cell; finished checks also enter the history. */
  set(record: ICheckRecord): void {
    this._records.set(record.cellId, record);
    if (record.phase === 'done' || record.phase === 'failed') {
      this._history = pushHistory(this._history, record);
    }
    this._changed.emit(record.cellId);
  }

  /** The cell has no current verdict (its text is still being typed); its history stays. */
  clear(cellId: string): void {
    if (this._records.delete(cellId)) {
      this._changed.emit(cellId);
    }
  }

  /** Forget a cell (deleted from the notebook). */
  delete(cellId: string): void {
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
    this._history = [];
    Signal.clearData(this);
  }

  private _records = new Map<string, ICheckRecord>();
  private _history: ICheckRecord[] = [];
  private _epoch = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, string>(this);
  private _epochChanged = new Signal<this, number>(this);
}
