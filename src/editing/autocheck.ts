/**
 * When the active cell is checked by itself, in two tiers: the checks' quick first answer once its
 * text paused for `delay`, the full check (the trial run, the model) once it settled. Neither starts
 * while user code runs (the probe would queue behind it), nor when a verdict for the text and the
 * kernel's state already stands.
 */
import type { Cell } from '@jupyterlab/cells';
import { CodeCell } from '@jupyterlab/cells';
import type { Notebook } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';

import type { KernelActivity } from '../contract/kernel';
import type { CellChecks } from '../badge/model';
import { Debouncer } from './schedule';
import type { CraneSettings } from '../settings/model';
import { requestPlan } from '../settings/plan';

/**
 * How long a cell's text must stay unchanged before its full check (the trial run, the model) starts
 * and a syntax error is said: the checks' first answer comes after the shorter `delay`.
 */
export const SETTLE_MS = 1000;

/** What a second tier adds to the checks' first answer: a trial run, the model, or nothing. */
export function fullAdds(settings: CraneSettings): {
  trial: boolean;
  model: boolean;
} {
  const config = settings.server;
  const plan = requestPlan(settings.current, settings.explicit, config);
  return {
    trial:
      config?.trial_available !== false &&
      (plan.settings.trial ?? config?.trial === 'auto'),
    model: !!(plan.settings.model ?? config?.model)
  };
}

/** What the automatic check of one notebook reads and starts. */
export interface IAutoCheckOptions {
  notebook: Notebook;
  kernel: KernelActivity;
  checks: CellChecks;
  settings: CraneSettings;
  /** Start the check of `tier` of a cell whose text was typed. */
  check: (cell: CodeCell, tier: 'checks' | 'full') => void;
}

/**
 * The quiet periods of one notebook's active cell: which tier it still needs, when it starts, and
 * waiting for an idle kernel.
 */
export class AutoCheck implements IDisposable {
  constructor(private readonly _options: IAutoCheckOptions) {
    const settings = _options.settings;
    this._debouncer = new Debouncer(
      () => this._onQuiet(),
      settings.current.delay
    );
    this._settle = new Debouncer(
      () => this._onSettled(),
      Math.max(settings.current.delay, SETTLE_MS)
    );
    _options.kernel.idle.connect(this._onIdle, this);
    _options.notebook.activeCellChanged.connect(
      this._onActiveCellChanged,
      this
    );
    settings.changed.connect(this._onSettingsChanged, this);
    this._onSettingsChanged();
    this._onActiveCellChanged(_options.notebook, _options.notebook.activeCell);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** When the active cell's text last changed (ms since the epoch; 0: no edit yet). */
  get lastEdit(): number {
    return this._lastEdit;
  }

  /**
   * (Re)start the quiet periods of the checks the active cell still needs; with `restart` false
   * (the kernel went idle, maybe after our own probe), leave a quiet period already running alone.
   */
  schedule(restart = true): void {
    const auto = !this._isDisposed && this._options.settings.current.autoCheck;
    for (const [timer, tier] of [
      [this._debouncer, 'checks'],
      [this._settle, 'full']
    ] as const) {
      if (!auto || !this._needsCheck(tier)) {
        timer.cancel();
      } else if (restart || !timer.pending) {
        timer.trigger();
      }
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._debouncer.cancel();
    this._settle.cancel();
    this._setActive(null);
    const { kernel, notebook, settings } = this._options;
    kernel.idle.disconnect(this._onIdle, this);
    notebook.activeCellChanged.disconnect(this._onActiveCellChanged, this);
    settings.changed.disconnect(this._onSettingsChanged, this);
  }

  private _onActiveCellChanged(notebook: Notebook, cell: Cell | null): void {
    this._setActive(cell);
    this.schedule();
  }

  private _setActive(cell: Cell | null): void {
    this._active?.model.contentChanged.disconnect(this._onActiveContent, this);
    this._active = cell;
    cell?.model.contentChanged.connect(this._onActiveContent, this);
  }

  private _onActiveContent(): void {
    this._lastEdit = Date.now();
    this.schedule();
  }

  private _onIdle(): void {
    this.schedule(false);
  }

  /**
   * The active code cell if it has text and lacks a verdict of `tier` for its text and the kernel's
   * state, with no check in flight for it. A cell whose text ran is not checked again (its outcome
   * says more than a prediction) until its text or the kernel's session changes; nor is a warning
   * that a check of this kernel state already failed to clear.
   */
  private _needsCheck(tier: 'checks' | 'full'): CodeCell | null {
    const active = this._options.notebook.activeCell;
    const cell = active instanceof CodeCell ? active : null;
    if (!cell) {
      return null;
    }
    const source = cell.model.sharedModel.getSource();
    if (!source.trim()) {
      return null;
    }
    const checks = this._options.checks;
    const epoch = checks.epoch;
    const record = checks.get(cell.model.id);
    if (!record || record.source !== source) {
      return cell;
    }
    if (record.run) {
      return null;
    }
    const adds = fullAdds(this._options.settings);
    const fullWanted = adds.trial || adds.model;
    // A check in flight for this text and kernel state covers `tier` unless it is only the
    // checks' first answer and the full check adds something.
    const covers = (inFlight: 'checks' | 'full' | undefined) =>
      inFlight !== 'checks' || tier === 'checks' || !fullWanted;
    const pending = record.pending;
    if (pending && pending.what !== 'busy' && pending.epoch === epoch) {
      return covers(pending.tier) ? null : cell;
    }
    if (record.phase === 'busy' || pending?.what === 'busy') {
      return cell;
    }
    if (record.phase === 'checking') {
      return record.epoch === epoch && covers(record.tier) ? null : cell;
    }
    const rechecked = record.rechecked;
    if (record.epoch !== epoch) {
      if (rechecked?.epoch !== epoch) {
        return cell;
      }
      return tier === 'full' && rechecked.tier === 'checks' && fullWanted
        ? cell
        : null;
    }
    return tier === 'full' && record.tier === 'checks' && fullWanted
      ? cell
      : null;
  }

  /** The text paused for `delay`: the checks' first answer (or the whole check, when the full one adds nothing). */
  private _onQuiet(): void {
    if (this._settle.delay <= this._debouncer.delay) {
      return; // the full check starts now too
    }
    const cell = this._needsCheck('checks');
    if (cell && !this._waitForKernel(cell)) {
      const adds = fullAdds(this._options.settings);
      this._options.check(cell, adds.trial || adds.model ? 'checks' : 'full');
    }
  }

  /** The text settled: the full check (the trial run, the model), and a syntax error said. */
  private _onSettled(): void {
    const cell = this._needsCheck('full');
    if (cell && !this._waitForKernel(cell)) {
      this._options.check(cell, 'full');
    }
  }

  /**
   * While user code runs, the probe would queue behind it in the kernel: wait until it finished
   * (`idle` schedules the check again), and say so on the badge. A verdict for this very text stays
   * shown instead, marked as waiting: a warning is never replaced by a wait.
   */
  private _waitForKernel(cell: Cell): boolean {
    if (!this._options.kernel.busy) {
      return false;
    }
    const checks = this._options.checks;
    checks.begin(
      {
        cellId: cell.model.id,
        source: cell.model.sharedModel.getSource(),
        epoch: checks.epoch,
        phase: 'busy',
        startedAt: Date.now(),
        sent: {}
      },
      'busy'
    );
    return true;
  }

  private _onSettingsChanged(): void {
    const settings = this._options.settings.current;
    this._debouncer.delay = settings.delay;
    this._settle.delay = Math.max(settings.delay, SETTLE_MS);
    if (!settings.autoCheck) {
      this._debouncer.cancel();
      this._settle.cancel();
    }
  }

  private _debouncer: Debouncer;
  private _settle: Debouncer;
  private _lastEdit = 0;
  private _active: Cell | null = null;
  private _isDisposed = false;
}
