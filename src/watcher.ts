/**
 * Crash checking of notebooks: when to check a cell, the requests, and what the user's runs mean
 * for the warnings. The kernel's activity (`kernel.ts`) and the badges (`badges.ts`) are layers of
 * their own; this module connects them to the verdict state (`model.ts`) and the session
 * statistics (`stats.ts`).
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

import type { IAnalyzeRequest, IAnalyzeResult, IStatusReply } from './api';
import { BadgeLayer } from './badges';
import type { IRunEnd, IRunStart } from './kernel';
import { KernelActivity } from './kernel';
import { assess } from './levels';
import { CellChecks } from './model';
import { CraneRequestError, requestAPI } from './request';
import { Debouncer, Generations } from './schedule';
import type { CraneSettings } from './settings';
import { SessionStats } from './stats';
import type { ICellChecks, ICheckRecord, ICraneVerdicts } from './tokens';
import { cellView, isStale, isWarning, requestPlan } from './verdict';

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

/** A user run in progress: the cell's record when it started, to judge the warning by. */
interface IRunWatch {
  cellId: string | null;
  record: ICheckRecord | undefined;
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
    const notebook = panel.content;
    this._badges = new BadgeLayer(
      notebook,
      this.checks,
      _options.trans,
      _options.openSidebar
    );
    this._kernel = new KernelActivity(panel.sessionContext);
    this._kernel.runStarted.connect(this._onRunStarted, this);
    this._kernel.runFinished.connect(this._onRunFinished, this);
    this._kernel.reset.connect(this._onKernelReset, this);
    this._kernel.idle.connect(this._schedule, this);
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
   * no verdict). Resolves when the answer is in (or dropped); never rejects.
   */
  async check(cell: Cell, trial = false, typing = false): Promise<void> {
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
      sent: plan.settings
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
    this.checks.set({ ...base, phase: 'checking' });
    const body: IAnalyzeRequest = {
      kernel_id: kernel.id,
      source,
      cell_id: cellId,
      settings: plan.settings,
      ...(typing ? { typing: true } : {})
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
      if (answer.status === 'incomplete') {
        // Half-typed code: no verdict, no badge, no new entry in the history (the next pause asks
        // again); the cell's earlier entries stay.
        this.checks.clear(cellId);
        return;
      }
      this._finished({
        ...base,
        phase: 'done',
        result: answer as IAnalyzeResult
      });
    } catch (error) {
      if (!this._isCurrent(cellId, generation)) {
        return;
      }
      if (error instanceof CraneRequestError && error.status === 409) {
        // User code is running: check again once the kernel is idle.
        this.checks.set({ ...base, phase: 'busy' });
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
    this._setActive(null);
    this._cells?.changed.disconnect(this._onCellsChanged, this);
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
      this.checks.set(previous);
    } else {
      this.checks.delete(cellId);
    }
    if (this.activeCodeCell?.model.id === cellId) {
      this._schedule();
    }
  }

  /** A check finished: store it, count it, and remember a warning until the user acts on it. */
  private _finished(record: ICheckRecord): void {
    this.checks.set(record);
    this.stats.checked();
    const assessment = record.result ? assess(record.result) : null;
    if (assessment && isWarning(assessment.level)) {
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
    this._schedule();
  }

  /** Restart the quiet period if the active cell needs a verdict. */
  private _schedule(): void {
    if (
      this._isDisposed ||
      !this._options.settings.current.autoCheck ||
      this._needsCheck() === null
    ) {
      this._debouncer.cancel();
      return;
    }
    this._debouncer.trigger();
  }

  /**
   * The active code cell if it has text and no fresh verdict (nor a check in flight for it). A cell
   * whose text ran and crashed is not checked again: its traceback says more than a prediction.
   */
  private _needsCheck(): CodeCell | null {
    const cell = this.activeCodeCell;
    if (!cell) {
      return null;
    }
    const source = cell.model.sharedModel.getSource();
    if (!source.trim()) {
      return null;
    }
    const record = this.checks.get(cell.model.id);
    if (!record || record.phase === 'busy') {
      return cell;
    }
    if (record.run && record.source === source) {
      return null;
    }
    return isStale(record, source, this.checks.epoch) ? cell : null;
  }

  private _onQuiet(): void {
    const cell = this._needsCheck();
    if (!cell) {
      return;
    }
    if (this._kernel.busy) {
      // The probe would queue behind user code in the kernel: wait until it finished (`idle`
      // schedules the check again), and say so on the badge. A verdict for this very text stays
      // shown (outdated) instead: a warning is never replaced by a wait.
      const source = cell.model.sharedModel.getSource();
      const record = this.checks.get(cell.model.id);
      if (!record || record.source !== source) {
        this.checks.set({
          cellId: cell.model.id,
          source,
          epoch: this.checks.epoch,
          phase: 'busy',
          startedAt: Date.now(),
          sent: {}
        });
      }
      return;
    }
    void this.check(cell, false, true);
  }

  // ---- the user's runs -----------------------------------------------------------------------

  /** Find the cell of a run: by the id this page sent, else (another client ran it) by its text. */
  private _cellIdOf(run: IRunStart): string | null {
    const cells = this.panel.content.widgets;
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
    // What the cell showed when it started, before this run outdates every verdict.
    this._runs.set(run.msgId, {
      cellId,
      record: cellId ? this.checks.get(cellId) : undefined
    });
    this.checks.bumpEpoch();
  }

  private _onRunFinished(sender: KernelActivity, run: IRunEnd): void {
    const watch = this._runs.get(run.msgId);
    this._runs.delete(run.msgId);
    const cellId = watch?.cellId ?? null;
    if (!cellId) {
      return;
    }
    const record = watch?.record;
    this.stats.ran(cellId, run.code, run.elapsedMs, run.error !== null);
    if (!run.error || !record || record.source !== run.code) {
      return;
    }
    // The cell ran the very text that was checked, and crashed: the warning was right, or missed.
    const state = cellView(record, run.code, record.epoch).state;
    let kind: 'confirmed' | 'missed' | null = null;
    if (isWarning(state)) {
      kind = 'confirmed';
    } else if (state === 'no-crash') {
      kind = 'missed';
      this.stats.missed();
    }
    const current = this.checks.get(cellId);
    if (kind && current && current.source === run.code) {
      this.checks.set({
        ...current,
        // The record the user saw when the run started, not a check started since.
        ...record,
        run: {
          kind,
          ename: run.error.ename,
          evalue: run.error.evalue,
          at: Date.now()
        }
      });
    }
  }

  private _onKernelReset(): void {
    this._runs.clear();
    this.checks.bumpEpoch();
    this.stats.kernelReset();
    this._schedule();
  }

  // ---- settings ------------------------------------------------------------------------------

  private _onSettingsChanged(): void {
    const settings = this._options.settings.current;
    this._debouncer.delay = settings.delay;
    this.panel.content.node.classList.toggle(GUARDED_CLASS, settings.guard);
    if (!settings.autoCheck) {
      this._debouncer.cancel();
    }
  }

  private _debouncer: Debouncer;
  private _generations = new Generations();
  private _badges: BadgeLayer;
  private _kernel: KernelActivity;
  private _runs = new Map<string, IRunWatch>();
  private _active: Cell | null = null;
  private _cells: CellList | null = null;
  private _isDisposed = false;
  private _updated = new Signal<this, string>(this);
}
