/**
 * Crash checking of notebooks: one `NotebookWatcher` per notebook, which puts its layers together
 * and follows its cells coming and going. The requests are `check.ts`; when the active cell is
 * checked by itself is `autocheck.ts`; what the user's runs mean for the warnings is `runs.ts`; the
 * kernel's activity is `contract/kernel.ts`; the cells below a checked cell are the chain
 * (`below/layer.ts`) and the badges are `badge/layer.ts`. This module connects them to the verdict
 * state (`badge/model.ts`) and the session figures (`stats.ts`).
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

import type { IFix } from '../contract/api';
import type {
  ICellChecks,
  ICheckRecord,
  ICraneVerdicts
} from '../contract/tokens';
import { BadgeLayer } from '../badge/layer';
import { CellChecks } from '../badge/model';
import { offeredFix } from '../badge/verdict';
import { ChainLayer } from '../below/layer';
import type { CraneSettings } from '../settings/model';
import { AutoCheck } from './autocheck';
import { CellChecker } from './check';
import { KernelActivity } from '../contract/kernel';
import { RunOutcomes } from './runs';
import { SessionStats } from './stats';

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
 * Crash checking of one notebook: its checks (`check.ts`), started by the automatic check of the
 * active cell or by a command; the badges, the chain, and the outcomes of the user's runs.
 */
export class NotebookWatcher implements IDisposable {
  readonly checks = new CellChecks();
  readonly stats = new SessionStats();

  constructor(
    readonly panel: NotebookPanel,
    private readonly _options: IWatcherOptions
  ) {
    const notebook = panel.content;
    this._badges = new BadgeLayer(
      notebook,
      this.checks,
      _options.trans,
      _options.openSidebar,
      (cellId, fix) => this.applyFix(cellId, fix),
      {
        numberOf: cellId => this._chain.numberOf(cellId),
        downstream: cellId => this._chain.downstream(cellId),
        reveal: cellId => void this.reveal(cellId)
      }
    );
    this._kernel = new KernelActivity(panel.sessionContext);
    this._runs = new RunOutcomes(
      notebook,
      this._kernel,
      this.checks,
      this.stats
    );
    // After the runs: a run's outcome is on its record before the chain re-checks what it claimed.
    this._chain = new ChainLayer({
      notebook,
      checks: this.checks,
      kernel: this._kernel,
      settings: _options.settings,
      recheck: (cell, trial) => this.check(cell, trial, false, 'full', false),
      warned: (cellId, source, observed) =>
        this.stats.warned(cellId, source, observed ? 'observed' : 'predicted')
    });
    this._chain.changed.connect(this._onChainChanged, this);
    this._checker = new CellChecker({
      panel,
      checks: this.checks,
      stats: this.stats,
      chain: this._chain,
      settings: _options.settings,
      trans: _options.trans,
      lastEdit: () => this._auto.lastEdit,
      restored: cellId => {
        if (this.activeCodeCell?.model.id === cellId) {
          this._auto.schedule();
        }
      }
    });
    this._kernel.reset.connect(this._onKernelReset, this);
    notebook.modelChanged.connect(this._onModelChanged, this);
    this._onModelChanged(notebook);
    _options.settings.changed.connect(this._onSettingsChanged, this);
    this.checks.changed.connect(this._onRecordChanged, this);
    this.stats.changed.connect(this._onStatsChanged, this);
    this._onSettingsChanged();
    // Last: it schedules the first check of the active cell.
    this._auto = new AutoCheck({
      notebook,
      kernel: this._kernel,
      checks: this.checks,
      settings: _options.settings,
      check: (cell, tier) => void this.check(cell, false, true, tier)
    });
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

  /** The chain of this notebook: the cells below a checked cell, the claims about them. */
  get chain(): ChainLayer {
    return this._chain;
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
   * checks' quick first answer only; `chain` false sends no cells below even when a trial runs (a
   * re-check of a claim). Resolves when the answer is in (or dropped); never rejects.
   */
  async check(
    cell: Cell,
    trial = false,
    typing = false,
    tier: 'checks' | 'full' = 'full',
    chain = true
  ): Promise<void> {
    await this._checker.check(cell, trial, typing, tier, chain);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._auto.dispose();
    this._checker.dispose();
    this._cells?.changed.disconnect(this._onCellsChanged, this);
    this._chain.dispose();
    this._runs.dispose();
    this._kernel.dispose();
    this._badges.dispose();
    this.panel.content.node.classList.remove(GUARDED_CLASS);
    this.checks.dispose();
    this.stats.dispose();
    Signal.clearData(this);
  }

  private _onRecordChanged(sender: CellChecks, cellId: string): void {
    this._updated.emit(cellId);
  }

  private _onStatsChanged(): void {
    this._updated.emit('');
  }

  /** Claims came or went, or cells moved: the badges that name cells are drawn again. */
  private _onChainChanged(): void {
    this._badges.renderAll();
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
    this._checker.forget(cellId);
    this._badges.forget(cellId);
    this.checks.delete(cellId);
    this.stats.deleted(cellId);
  }

  // ---- the kernel ----------------------------------------------------------------------------

  /** The kernel restarted: every verdict is outdated, and no clean run speaks for its text any more. */
  private _onKernelReset(): void {
    this._runs.clear();
    this._chain.reset();
    this.checks.dropPassed();
    this.checks.bumpEpoch();
    this.stats.kernelReset();
    this._auto.schedule();
  }

  // ---- settings ------------------------------------------------------------------------------

  private _onSettingsChanged(): void {
    const settings = this._options.settings.current;
    this.panel.content.node.classList.toggle(GUARDED_CLASS, settings.guard);
  }

  private _badges: BadgeLayer;
  private _kernel: KernelActivity;
  private _runs: RunOutcomes;
  private _chain: ChainLayer;
  private _checker: CellChecker;
  private _auto: AutoCheck;
  private _cells: CellList | null = null;
  private _isDisposed = false;
  private _updated = new Signal<this, string>(this);
}
