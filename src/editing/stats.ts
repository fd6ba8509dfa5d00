/**
 * What crash prediction did for one notebook since it was opened: checks done, crashes caught,
 * warnings confirmed by a run, crashes missed, and an estimate of the time saved. It lives in this
 * page's memory only; nothing is sent anywhere.
 *
 * A crash is *caught* when a cell was warned (will or may crash) and then either
 * - was edited and its next run ended without an error (the user fixed it), or
 * - was not run: deleted, or its kernel restarted or replaced before the cell ran.
 * A warned cell that runs unchanged and crashes *confirms* the warning; one that runs unchanged
 * without an error was a false alarm and counts for nothing.
 *
 * Time saved, the estimate: a crash half-way through a cell can leave the kernel half-mutated, and
 * the safe way back is a restart and a re-run of every cell the kernel had run (the cost the CRANE
 * paper argues early detection saves). So each caught crash saves the run time of every cell run
 * since the kernel started, each counted once at its last measured duration. Not counted: the
 * crashed run itself, the time to read the traceback and debug, cells that would be re-run more
 * than once. Without a restart the real saving is smaller; with a long debugging session, larger.
 */
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

/** Who caught a crash: an observed crash in a trial run, or a prediction (checks or model). */
export type CatchKind = 'observed' | 'predicted';

/** A warning waiting to be resolved by what the user does next. */
interface IPendingWarning {
  source: string;
  kind: CatchKind;
}

/** The figures the sidebar shows. */
export interface ISessionFigures {
  checks: number;
  /** Warnings given (will or may crash), each cell text once however often it was checked. */
  warnings: number;
  caught: Record<CatchKind, number>;
  confirmed: number;
  missed: number;
  /** Estimated, see the module's comment. */
  savedMs: number;
}

/** What a finished run meant, for the caller to show. */
export type RunVerdict = 'caught' | 'confirmed' | 'false-alarm' | 'none';

/**
 * The session statistics of one notebook.
 */
export class SessionStats {
  /** Emits whenever a figure changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get figures(): Readonly<ISessionFigures> {
    return this._figures;
  }

  /** Run time of each cell run since the kernel started, by cell id (the last run counts). */
  get kernelRuns(): ReadonlyMap<string, number> {
    return this._runs;
  }

  /** A check finished (whatever it found). */
  checked(): void {
    this._figures.checks += 1;
    this._changed.emit();
  }

  /** A cell was warned that `source` will or may crash. A new warning replaces an older one. */
  warned(cellId: string, source: string, kind: CatchKind): void {
    const known = this._pending.get(cellId);
    if (known?.source !== source) {
      this._figures.warnings += 1;
    }
    this._pending.set(cellId, { source, kind });
    this._changed.emit();
  }

  /** The kernel ran `code` of a cell; `crashed` tells whether it raised. */
  ran(
    cellId: string,
    code: string,
    elapsedMs: number,
    crashed: boolean
  ): RunVerdict {
    const pending = this._pending.get(cellId);
    this._pending.delete(cellId);
    let verdict: RunVerdict = 'none';
    if (pending) {
      if (pending.source === code) {
        verdict = crashed ? 'confirmed' : 'false-alarm';
      } else if (!crashed) {
        verdict = 'caught';
      }
    }
    // The time a crash would have cost is what ran before this cell, not the cell itself.
    if (verdict === 'caught') {
      this._catch(pending!.kind, cellId);
    } else if (verdict === 'confirmed') {
      this._figures.confirmed += 1;
    }
    this._runs.set(cellId, elapsedMs);
    this._changed.emit();
    return verdict;
  }

  /** A cell ran and crashed although its check of this very text found no crash. */
  missed(): void {
    this._figures.missed += 1;
    this._changed.emit();
  }

  /** The cell was deleted: a warning it had was heeded. */
  deleted(cellId: string): void {
    const pending = this._pending.get(cellId);
    this._pending.delete(cellId);
    if (pending) {
      this._catch(pending.kind, cellId);
    }
    this._runs.delete(cellId);
    this._changed.emit();
  }

  /** The kernel restarted or was replaced: warned cells that did not run were heeded. */
  kernelReset(): void {
    for (const [cellId, pending] of this._pending) {
      this._catch(pending.kind, cellId);
    }
    this._pending.clear();
    this._runs.clear();
    this._changed.emit();
  }

  /** What re-running the kernel's cells would cost now, other than `except`. */
  rerunCostMs(except: string | null = null): number {
    let total = 0;
    for (const [cellId, ms] of this._runs) {
      if (cellId !== except) {
        total += ms;
      }
    }
    return total;
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _catch(kind: CatchKind, cellId: string): void {
    this._figures.caught[kind] += 1;
    this._figures.savedMs += this.rerunCostMs(cellId);
  }

  private _figures: ISessionFigures = {
    checks: 0,
    warnings: 0,
    caught: { observed: 0, predicted: 0 },
    confirmed: 0,
    missed: 0,
    savedMs: 0
  };
  private _pending = new Map<string, IPendingWarning>();
  private _runs = new Map<string, number>();
  private _changed = new Signal<this, void>(this);
}
