/**
 * Crash checking of notebooks: when to check a cell, and the requests. What the user's runs mean
 * for the warnings (`runs.ts`), the kernel's activity (`kernel.ts`) and the badges (`badges.ts`)
 * are layers of their own; this module connects them to the verdict state (`model.ts`) and the
 * session statistics (`stats.ts`).
 */
import type { Cell, ICellModel } from '@jupyterlab/cells';
import { CodeCell } from '@jupyterlab/cells';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type {
  CellList,
  INotebookModel,
  Notebook,
  NotebookPanel
} from '@jupyterlab/notebook';
import type { IObservableList } from '@jupyterlab/observables';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import type {
  IAnalyzeRequest,
  IAnalyzeResult,
  IFix,
  IStatusReply
} from './api';
import { BadgeLayer } from './badges';
import { KernelActivity } from './kernel';
import { assess } from './levels';
import { CellChecks } from './model';
import { CraneRequestError, requestAPI } from './request';
import { RunOutcomes } from './runs';
import { Debouncer, Generations } from './schedule';
import type { CraneSettings } from './settings';
import { SessionStats } from './stats';
import type { ICellChecks, ICheckRecord, ICraneVerdicts } from './tokens';
import { isWarning, offeredFix, requestPlan } from './verdict';

/**
 * How long a cell's text must stay unchanged before its full check (the trial run, the model) starts
 * and a syntax error is said: the checks' first answer comes after the shorter `delay`.
 */
export const SETTLE_MS = 1000;

/** Class on the notebook node while the crash guard is on; the guarded Shift-Enter binds to it. */
export const GUARDED_CLASS = 'jp-Crane-guarded';

/** What every notebook watcher shares. */
export interface IWatcherOptions {
  settings: CraneSettings;
  trans: TranslationBundle;
  /** Reveal the sidebar (a click on a badge). */
  openSidebar: () => void;
}

/**
 * Adds crash checking to every notebook: one `NotebookWatcher` per panel, created through
 * `docRegistry.addWidgetExtension('Notebook', ...)`.
 */
export class CraneWatcher
  implements
    DocumentRegistry.IWidgetExtension<NotebookPanel, INotebookModel>,
    ICraneVerdicts
{
  constructor(private readonly _options: IWatcherOptions) {}

  createNew(panel: NotebookPanel): IDisposable {
    const watcher = new NotebookWatcher(panel, this._options);
    this._watchers.set(panel, watcher);
    panel.disposed.connect(this._onPanelDisposed, this);
    return watcher;
  }

  forPanel(panel: NotebookPanel): ICellChecks | undefined {
    return this._watchers.get(panel)?.checks;
  }

  /** The watcher of a panel, for the commands and the sidebar. */
  watcherFor(panel: NotebookPanel | null): NotebookWatcher | undefined {
    return panel ? this._watchers.get(panel) : undefined;
  }

  private _onPanelDisposed(panel: Widget): void {
    this._watchers.delete(panel as NotebookPanel);
  }

  private _watchers = new WeakMap<NotebookPanel, NotebookWatcher>();
}

/**
 * Crash checking of one notebook: debounced auto-checks of the active cell, the requests (answers
 * of superseded requests are dropped per cell), and the outcome of the user's runs.
 */
export class NotebookWatcher implements IDisposable {
  readonly checks = new CellChecks();
  readonly stats = new SessionStats();

  constructor(
    readonly panel: NotebookPanel,
    private readonly _options: IWatcherOptions
  ) {
    this._debouncer = new Debouncer(
      () => this._onQuiet(),
      _options.settings.current.delay
    );
    this._settle = new Debouncer(
      () => this._onSettled(),
      Math.max(_options.settings.current.delay, SETTLE_MS)
    );
    const notebook = panel.content;
    this._badges = new BadgeLayer(
      notebook,
      this.checks,
      _options.trans,
      _options.openSidebar,
      (cellId, fix) => this.applyFix(cellId, fix)
    );
    this._kernel = new KernelActivity(panel.sessionContext);
    this._runs = new RunOutcomes(
      notebook,
      this._kernel,
      this.checks,
      this.stats
    );
    this._kernel.reset.connect(this._onKernelReset, this);
    this._kernel.idle.connect(this._onIdle, this);
    notebook.activeCellChanged.connect(this._onActiveCellChanged, this);
    notebook.modelChanged.connect(this._onModelChanged, this);
    this._onModelChanged(notebook);
    _options.settings.changed.connect(this._onSettingsChanged, this);
    this.checks.changed.connect(this._onRecordChanged, this);
    this.stats.changed.connect(this._onStatsChanged, this);
    this._onSettingsChanged();
    this._onActiveCellChanged(notebook, notebook.activeCell);
  }

  /** Emits after each change the sidebar shows (a check, a run, the statistics). */
  get updated(): ISignal<this, string> {
    return this._updated;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The badges of this notebook. */
  get badges(): BadgeLayer {
    return this._badges;
  }

  /** The notebook's active code cell, if any. */
  get activeCodeCell(): CodeCell | null {
    const cell = this.panel.content.activeCell;
    return cell instanceof CodeCell ? cell : null;
  }

  /** The last check of `cell`. */
  recordOf(cell: Cell): ICheckRecord | undefined {
    return this.checks.get(cell.model.id);
  }

  /**
   * Replace a cell's text with a verified fix, in one undo step, when the cell still holds the text
   * the fix was made for; the new text is then checked as any edit is. Returns whether it applied.
   */
  applyFix(cellId: string, fix: IFix): boolean {
    const cell = this.panel.content.widgets.find(c => c.model.id === cellId);
    const source = cell?.model.sharedModel.getSource();
    if (
      !cell ||
      source === undefined ||
      !offeredFix(this.checks.get(cellId), source)
    ) {
      return false;
    }
    cell.model.sharedModel.setSource(fix.source);
    return true;
  }

  /** Make the cell with `cellId` the active cell and scroll to it (a history entry was clicked). */
  async reveal(cellId: string): Promise<void> {
    const notebook = this.panel.content;
    const index = notebook.widgets.findIndex(c => c.model.id === cellId);
    if (index >= 0) {
      notebook.activeCellIndex = index;
      await notebook.scrollToCell(notebook.widgets[index]);
    }
  }

  /**
   * Check `cell` now; with `trial`, also run it in a sandboxed fork of the kernel (the "Trial-Run
   * Cell" command); with `typing`, as the automatic check after a pause (code still being typed gets
   * no verdict, and a syntax error waits until the text settled); `tier` "checks" asks for the
   * checks' quick first answer only. Resolves when the answer is in (or dropped); never rejects.
   */
  async check(
    cell: Cell,
    trial = false,
    typing = false,
    tier: 'checks' | 'full' = 'full'
  ): Promise<void> {
    if (this._isDisposed || cell.model.type !== 'code') {
      return;
    }
    const settings = this._options.settings;
    const cellId = cell.model.id;
    const source = cell.model.sharedModel.getSource();
    const kernel = this.panel.sessionContext.session?.kernel;
    const plan = requestPlan(
      settings.current,
      settings.explicit,
      settings.server,
      trial
    );
    const base = {
      cellId,
      source,
      epoch: this.checks.epoch,
      startedAt: Date.now(),
      sent: plan.settings,
      tier
    };
    if (!kernel) {
      this.checks.set({
        ...base,
        phase: 'failed',
        error: this._options.trans.__('The notebook has no kernel.')
      });
      return;
    }
    const generation = this._generations.next(cellId);
    const previous = this.checks.get(cellId);
    this.checks.begin({ ...base, phase: 'checking' }, this._pendingWhat(cell));
    const body: IAnalyzeRequest = {
      kernel_id: kernel.id,
      source,
      cell_id: cellId,
      settings: plan.settings,
      ...(typing ? { typing: true } : {}),
      ...(tier === 'checks' ? { tier } : {})
    };
    try {
      const answer = await requestAPI<IAnalyzeResult | IStatusReply>(
        'analyze',
        { method: 'POST', body: JSON.stringify(body) }
      );
      if (!this._isCurrent(cellId, generation)) {
        return;
      }
      if (answer.status === 'superseded') {
        // A newer request for this kernel (maybe another cell) overtook this one.
        this._restore(cellId, previous);
        return;
      }
      const result = answer as IAnalyzeResult;
      if (
        answer.status === 'incomplete' ||
        (typing &&
          result.verdict?.source === 'syntax' &&
          Date.now() - this._lastEdit < SETTLE_MS)
      ) {
        // Half-typed code: no verdict, no badge, no new entry in the history (the next pause asks
        // again); the cell's earlier entries stay. A syntax error is said once the text settled.
        this.checks.clear(cellId);
        return;
      }
      this._finished({ ...base, phase: 'done', result });
    } catch (error) {
      if (!this._isCurrent(cellId, generation)) {
        return;
      }
      if (error instanceof CraneRequestError && error.status === 409) {
        // User code is running: check again once the kernel is idle.
        this.checks.begin({ ...base, phase: 'busy' }, 'busy');
        return;
      }
      const message =
        error instanceof Error ? error.message : String(error ?? '');
      this._finished({ ...base, phase: 'failed', error: message });
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
    this._cells?.changed.disconnect(this._onCellsChanged, this);
    this._runs.dispose();
    this._kernel.dispose();
    this._badges.dispose();
    this.panel.content.node.classList.remove(GUARDED_CLASS);
    this.checks.dispose();
    this.stats.dispose();
    Signal.clearData(this);
  }

  private _isCurrent(cellId: string, generation: number): boolean {
    return !this._isDisposed && this._generations.isCurrent(cellId, generation);
  }

  private _restore(cellId: string, previous: ICheckRecord | undefined): void {
    if (previous) {
      this.checks.set({ ...previous, pending: undefined });
    } else {
      this.checks.delete(cellId);
    }
    if (this.activeCodeCell?.model.id === cellId) {
      this._schedule();
    }
  }

  /** A check finished: store it, count it, and remember a warning until the user acts on it. */
  private _finished(record: ICheckRecord): void {
    const shown = this.checks.finish(record);
    this.stats.checked();
    const assessment = record.result ? assess(record.result) : null;
    if (shown && assessment && isWarning(assessment.level)) {
      this.stats.warned(
        record.cellId,
        record.source,
        assessment.basis === 'trial' || assessment.basis === 'quick'
          ? 'observed'
          : 'predicted'
      );
    }
  }

  private _onRecordChanged(sender: CellChecks, cellId: string): void {
    this._updated.emit(cellId);
  }

  private _onStatsChanged(): void {
    this._updated.emit('');
  }

  // ---- notebook structure --------------------------------------------------------------------

  private _onModelChanged(notebook: Notebook): void {
    this._cells?.changed.disconnect(this._onCellsChanged, this);
    this._cells = notebook.model?.cells ?? null;
    this._cells?.changed.connect(this._onCellsChanged, this);
  }

  private _onCellsChanged(
    sender: CellList,
    change: IObservableList.IChangedArgs<ICellModel>
  ): void {
    if (change.type !== 'remove' && change.type !== 'set') {
      return;
    }
    // `oldValues` of a removal may hold disposed models: compare ids with the cells left instead.
    const alive = new Set<string>();
    for (const model of sender) {
      alive.add(model.id);
    }
    for (const cellId of this.checks.cellIds()) {
      if (!alive.has(cellId)) {
        this._forget(cellId);
      }
    }
    for (const cellId of this.stats.kernelRuns.keys()) {
      if (!alive.has(cellId)) {
        this.stats.deleted(cellId);
      }
    }
  }

  private _forget(cellId: string): void {
    this._generations.drop(cellId);
    this._badges.forget(cellId);
    this.checks.delete(cellId);
    this.stats.deleted(cellId);
  }

  // ---- active cell and auto-check ------------------------------------------------------------

  private _onActiveCellChanged(notebook: Notebook, cell: Cell | null): void {
    this._setActive(cell);
    this._schedule();
  }

  private _setActive(cell: Cell | null): void {
    this._active?.model.contentChanged.disconnect(this._onActiveContent, this);
    this._active = cell;
    cell?.model.contentChanged.connect(this._onActiveContent, this);
  }

  private _onActiveContent(): void {
    this._lastEdit = Date.now();
    this._schedule();
  }

  /**
   * (Re)start the quiet periods of the checks the active cell still needs; with `restart` false
   * (the kernel went idle, maybe after our own probe), leave a quiet period already running alone.
   */
  private _schedule(restart = true): void {
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

  private _onIdle(): void {
    this._schedule(false);
  }

  /** What a second tier adds to the checks' first answer: a trial run, the model, or nothing. */
  private _fullAdds(): { trial: boolean; model: boolean } {
    const settings = this._options.settings;
    const config = settings.server;
    const plan = requestPlan(settings.current, settings.explicit, config);
    return {
      trial:
        config?.trial_available !== false &&
        (plan.settings.trial ?? config?.trial === 'auto'),
      model: !!(plan.settings.model ?? config?.model)
    };
  }

  /** What a check of `cell` starting now adds to the verdict standing for its text. */
  private _pendingWhat(cell: Cell): 'recheck' | 'trial' | 'model' {
    const source = cell.model.sharedModel.getSource();
    const standing = this.checks.standing(cell.model.id, source);
    if (standing?.tier !== 'checks' || standing.epoch !== this.checks.epoch) {
      return 'recheck';
    }
    return this._fullAdds().trial ? 'trial' : 'model';
  }

  /**
   * The active code cell if it has text and lacks a verdict of `tier` for its text and the kernel's
   * state, with no check in flight for it. A cell whose text ran is not checked again (its outcome
   * says more than a prediction) until its text or the kernel's session changes; nor is a warning
   * that a check of this kernel state already failed to clear.
   */
  private _needsCheck(tier: 'checks' | 'full'): CodeCell | null {
    const cell = this.activeCodeCell;
    if (!cell) {
      return null;
    }
    const source = cell.model.sharedModel.getSource();
    if (!source.trim()) {
      return null;
    }
    const epoch = this.checks.epoch;
    const record = this.checks.get(cell.model.id);
    if (!record || record.source !== source) {
      return cell;
    }
    if (record.run) {
      return null;
    }
    const adds = this._fullAdds();
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
      const adds = this._fullAdds();
      void this.check(
        cell,
        false,
        true,
        adds.trial || adds.model ? 'checks' : 'full'
      );
    }
  }

  /** The text settled: the full check (the trial run, the model), and a syntax error said. */
  private _onSettled(): void {
    const cell = this._needsCheck('full');
    if (cell && !this._waitForKernel(cell)) {
      void this.check(cell, false, true, 'full');
    }
  }

  /**
   * While user code runs, the probe would queue behind it in the kernel: wait until it finished
   * (`idle` schedules the check again), and say so on the badge. A verdict for this very text stays
   * shown instead, marked as waiting: a warning is never replaced by a wait.
   */
  private _waitForKernel(cell: Cell): boolean {
    if (!this._kernel.busy) {
      return false;
    }
    this.checks.begin(
      {
        cellId: cell.model.id,
        source: cell.model.sharedModel.getSource(),
        epoch: this.checks.epoch,
        phase: 'busy',
        startedAt: Date.now(),
        sent: {}
      },
      'busy'
    );
    return true;
  }

  // ---- the kernel ----------------------------------------------------------------------------

  /** The kernel restarted: every verdict is outdated, and no clean run speaks for its text any more. */
  private _onKernelReset(): void {
    this._runs.clear();
    this.checks.dropPassed();
    this.checks.bumpEpoch();
    this.stats.kernelReset();
    this._schedule();
  }

  // ---- settings ------------------------------------------------------------------------------

  private _onSettingsChanged(): void {
    const settings = this._options.settings.current;
    this._debouncer.delay = settings.delay;
    this._settle.delay = Math.max(settings.delay, SETTLE_MS);
    this.panel.content.node.classList.toggle(GUARDED_CLASS, settings.guard);
    if (!settings.autoCheck) {
      this._debouncer.cancel();
      this._settle.cancel();
    }
  }

  private _debouncer: Debouncer;
  private _settle: Debouncer;
  private _lastEdit = 0;
  private _generations = new Generations();
  private _badges: BadgeLayer;
  private _kernel: KernelActivity;
  private _runs: RunOutcomes;
  private _active: Cell | null = null;
  private _cells: CellList | null = null;
  private _isDisposed = false;
  private _updated = new Signal<this, string>(this);
}
