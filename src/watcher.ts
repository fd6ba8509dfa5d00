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
import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel } from '@jupyterlab/services';
import { KernelMessage } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';
import type { PanelLayout, Widget } from '@lumino/widgets';

import { CellBadge } from './badge';
import { CellChecks } from './model';
import { CraneRequestError, requestAPI } from './request';
import { Debouncer, Generations } from './schedule';
import type { CraneSettings } from './settings';
import type {
  IAnalyzeRequest,
  IAnalyzeResult,
  ICellChecks,
  ICheckRecord,
  ICraneVerdicts
} from './tokens';
import { badgeView, isStale, requestPlan } from './verdict';

/** Class on the notebook node while the crash guard is on; the guarded Shift-Enter binds to it. */
export const GUARDED_CLASS = 'jp-Crane-guarded';

const INPUT_WRAPPER_CLASS = 'jp-Cell-inputWrapper';

/** Kernel states after which nothing checked before still holds. */
const RESET_STATES: ReadonlySet<string> = new Set([
  'restarting',
  'autorestarting',
  'dead',
  'starting'
]);

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

interface IBadgeSlot {
  cell: Cell;
  badge: CellBadge;
}

/**
 * Crash checking of one notebook: debounced auto-checks of the active cell, the kernel epoch, the
 * badges, and the requests (answers of superseded requests are dropped per cell).
 */
export class NotebookWatcher implements IDisposable {
  readonly checks = new CellChecks();

  constructor(
    readonly panel: NotebookPanel,
    private readonly _options: IWatcherOptions
  ) {
    this._debouncer = new Debouncer(
      () => this._onQuiet(),
      _options.settings.current.delay
    );
    const notebook = panel.content;
    notebook.activeCellChanged.connect(this._onActiveCellChanged, this);
    notebook.modelChanged.connect(this._onModelChanged, this);
    this._onModelChanged(notebook);
    const session = panel.sessionContext;
    session.kernelChanged.connect(this._onKernelChanged, this);
    session.statusChanged.connect(this._onStatusChanged, this);
    this._connectKernel(session.session?.kernel ?? null);
    _options.settings.changed.connect(this._onSettingsChanged, this);
    this.checks.changed.connect(this._onRecordChanged, this);
    this.checks.epochChanged.connect(this._renderAll, this);
    this._onSettingsChanged();
    this._onActiveCellChanged(notebook, notebook.activeCell);
  }

  /** Emits after each finished or started check of any cell (for the sidebar). */
  get updated(): ISignal<this, string> {
    return this._updated;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
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
   * Check `cell` now. Resolves when the answer is in (or dropped); never rejects.
   */
  async check(cell: Cell): Promise<void> {
    if (this._isDisposed || cell.model.type !== 'code') {
      return;
    }
    const cellId = cell.model.id;
    const source = cell.model.sharedModel.getSource();
    const kernel = this.panel.sessionContext.session?.kernel;
    const plan = requestPlan(
      this._options.settings.current,
      this._options.settings.explicit,
      this._options.settings.server
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
      settings: plan.settings
    };
    try {
      const result = await requestAPI<IAnalyzeResult>('analyze', {
        method: 'POST',
        body: JSON.stringify(body)
      });
      if (!this._isCurrent(cellId, generation)) {
        return;
      }
      if (result.status === 'superseded') {
        // A newer request for this kernel (maybe another cell) overtook this one.
        this._restore(cellId, previous);
        return;
      }
      this.checks.set({ ...base, phase: 'done', result });
    } catch (error) {
      if (!this._isCurrent(cellId, generation)) {
        return;
      }
      if (error instanceof CraneRequestError && error.status === 409) {
        // User code is running: check again once the kernel is idle.
        this._waitingForIdle = true;
        this.checks.set({ ...base, phase: 'busy' });
        return;
      }
      const message =
        error instanceof Error ? error.message : String(error ?? '');
      this.checks.set({ ...base, phase: 'failed', error: message });
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._debouncer.cancel();
    this._setActive(null);
    for (const slot of this._slots.values()) {
      slot.cell.model.contentChanged.disconnect(this._onCellContent, this);
      slot.badge.dispose();
    }
    this._slots.clear();
    this.panel.content.node.classList.remove(GUARDED_CLASS);
    this.checks.dispose();
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
  }

  private _forget(cellId: string): void {
    this._generations.drop(cellId);
    const slot = this._slots.get(cellId);
    if (slot) {
      slot.cell.model.contentChanged.disconnect(this._onCellContent, this);
      slot.badge.dispose();
      this._slots.delete(cellId);
    }
    this.checks.delete(cellId);
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
      !this._options.settings.current.autoCheck ||
      this._needsCheck() === null
    ) {
      this._debouncer.cancel();
      return;
    }
    this._debouncer.trigger();
  }

  /** The active code cell if it has text and no fresh verdict (nor a check in flight for it). */
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
    return isStale(record, source, this.checks.epoch) ? cell : null;
  }

  private _onQuiet(): void {
    const cell = this._needsCheck();
    if (!cell) {
      return;
    }
    // The probe would queue behind user code in the kernel: wait until it finished.
    if (this._userRuns.size > 0) {
      this._waitingForIdle = true;
      return;
    }
    void this.check(cell);
  }

  // ---- kernel epoch --------------------------------------------------------------------------

  private _onKernelChanged(
    sender: ISessionContext,
    args: { newValue: Kernel.IKernelConnection | null }
  ): void {
    this._connectKernel(args.newValue);
    this.checks.bumpEpoch();
    this._schedule();
  }

  private _connectKernel(kernel: Kernel.IKernelConnection | null): void {
    this._userRuns.clear();
    this._kernel?.iopubMessage.disconnect(this._onIOPub, this);
    this._kernel = kernel;
    kernel?.iopubMessage.connect(this._onIOPub, this);
  }

  private _onIOPub(
    sender: Kernel.IKernelConnection,
    msg: KernelMessage.IIOPubMessage
  ): void {
    // Our probe runs silently and publishes no execute_input: this is user code, from any client.
    if (KernelMessage.isExecuteInputMsg(msg)) {
      this._userRuns.add(msg.parent_header.msg_id ?? '');
      this.checks.bumpEpoch();
    } else if (
      KernelMessage.isStatusMsg(msg) &&
      msg.content.execution_state === 'idle' &&
      this._userRuns.delete(msg.parent_header.msg_id ?? '')
    ) {
      // That user execution finished.
      if (this._userRuns.size === 0) {
        this._waitingForIdle = false;
        this._schedule();
      }
    }
  }

  private _onStatusChanged(
    sender: ISessionContext,
    status: Kernel.Status
  ): void {
    if (RESET_STATES.has(status)) {
      this._userRuns.clear();
      this.checks.bumpEpoch();
      this._waitingForIdle = true;
    } else if (
      status === 'idle' &&
      this._waitingForIdle &&
      this._userRuns.size === 0
    ) {
      this._waitingForIdle = false;
      this._schedule();
    }
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

  // ---- badges --------------------------------------------------------------------------------

  private _onRecordChanged(sender: CellChecks, cellId: string): void {
    this._render(cellId);
    this._updated.emit(cellId);
  }

  private _renderAll(): void {
    for (const cellId of this._slots.keys()) {
      this._render(cellId);
    }
    this._updated.emit('');
  }

  private _onCellContent(model: ICellModel): void {
    this._render(model.id);
  }

  private _render(cellId: string): void {
    const slot = this._slots.get(cellId) ?? this._attach(cellId);
    if (!slot) {
      return;
    }
    const record = this.checks.get(cellId);
    const source = slot.cell.model.sharedModel.getSource();
    slot.badge.render(badgeView(record, source, this.checks.epoch), record);
  }

  /** Create the badge of a cell once it has a record; waits for windowed cells to render. */
  private _attach(cellId: string): IBadgeSlot | null {
    if (this.panel.isDisposed || !this.checks.get(cellId)) {
      return null;
    }
    const cell = this.panel.content.widgets.find(w => w.model.id === cellId);
    if (!cell) {
      return null;
    }
    const badge = new CellBadge(this._options.trans, this._options.openSidebar);
    const slot = { cell, badge };
    this._slots.set(cellId, slot);
    cell.model.contentChanged.connect(this._onCellContent, this);
    cell.disposed.connect(this._onCellDisposed, this);
    cell.ready
      .then(() => {
        if (badge.isDisposed || cell.isDisposed) {
          return;
        }
        const layout = cell.layout as PanelLayout;
        const index = layout.widgets.findIndex(w =>
          w.hasClass(INPUT_WRAPPER_CLASS)
        );
        layout.insertWidget(index + 1, badge);
        this._render(cellId);
      })
      .catch(reason => console.error('crane: cannot attach a badge', reason));
    return slot;
  }

  private _onCellDisposed(cell: Widget): void {
    for (const [cellId, slot] of this._slots) {
      if (slot.cell === cell) {
        slot.cell.model.contentChanged.disconnect(this._onCellContent, this);
        slot.badge.dispose();
        this._slots.delete(cellId);
        // A cell replaced in place (e.g. a type change) keeps its id: show the badge again.
        this._render(cellId);
      }
    }
  }

  private _debouncer: Debouncer;
  private _generations = new Generations();
  private _slots = new Map<string, IBadgeSlot>();
  private _active: Cell | null = null;
  private _cells: CellList | null = null;
  private _kernel: Kernel.IKernelConnection | null = null;
  /** Ids of the user executions (any client's) the kernel is running or has queued to start. */
  private _userRuns = new Set<string>();
  private _waitingForIdle = false;
  private _isDisposed = false;
  private _updated = new Signal<this, string>(this);
}
