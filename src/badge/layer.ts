/**
 * The badge layer of one notebook: a `CellBadge` under the input of every cell that has a check
 * record, kept in step with the records, the cells' text and the kernel epoch.
 *
 * Placement uses public APIs only: the badge goes into the cell's layout right after the widget that
 * holds the cell's input area (`cell.inputArea.parent`), once the cell has rendered (`cell.ready`;
 * windowed notebooks render cells late).
 */
import type { Cell, ICellModel } from '@jupyterlab/cells';
import type { Notebook } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';
import type { PanelLayout, Widget } from '@lumino/widgets';

import { CellBadge } from './widget';
import type { IDownstream } from './claim';
import type { CellChecks } from './model';
import type { IFix } from '../contract/api';
import { cellView, offeredFix } from './verdict';

interface IBadgeSlot {
  cell: Cell;
  badge: CellBadge;
}

/** What the badges read of the chain (`below/layer.ts`), and going to a cell it names. */
export interface IChainView {
  numberOf(cellId: string): number | null;
  downstream(cellId: string): IDownstream | null;
  reveal(cellId: string): void;
}

/**
 * Puts the crash badges of one notebook's cells in place and keeps them current.
 */
export class BadgeLayer implements IDisposable {
  constructor(
    private readonly _notebook: Notebook,
    private readonly _checks: CellChecks,
    private readonly _trans: TranslationBundle,
    private readonly _openSidebar: () => void,
    private readonly _applyFix: (cellId: string, fix: IFix) => void = () => {},
    private readonly _chain: IChainView | null = null
  ) {
    _checks.changed.connect(this._onRecordChanged, this);
    _checks.epochChanged.connect(this.renderAll, this);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The badge of a cell, if it has one. */
  badgeOf(cellId: string): CellBadge | undefined {
    return this._slots.get(cellId)?.badge;
  }

  /** Render every badge again (the epoch changed, the language changed, ...). */
  renderAll(): void {
    for (const cellId of this._slots.keys()) {
      this._render(cellId);
    }
  }

  /** Remove the badge of a cell (deleted from the notebook). */
  forget(cellId: string): void {
    const slot = this._slots.get(cellId);
    if (slot) {
      this._release(slot);
      this._slots.delete(cellId);
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._checks.changed.disconnect(this._onRecordChanged, this);
    this._checks.epochChanged.disconnect(this.renderAll, this);
    for (const slot of this._slots.values()) {
      this._release(slot);
    }
    this._slots.clear();
  }

  private _onRecordChanged(sender: CellChecks, cellId: string): void {
    if (!this._checks.get(cellId)) {
      this.forget(cellId);
      return;
    }
    this._render(cellId);
  }

  private _onCellContent(model: ICellModel): void {
    this._render(model.id);
  }

  private _render(cellId: string): void {
    if (this._isDisposed) {
      return;
    }
    const slot = this._slots.get(cellId) ?? this._attach(cellId);
    if (!slot) {
      return;
    }
    const record = this._checks.get(cellId);
    const source = slot.cell.model.sharedModel.getSource();
    const chain = this._chain;
    slot.badge.render(
      cellView(record, source, this._checks.epoch),
      record,
      offeredFix(record, source),
      chain
        ? {
            numberOf: id => chain.numberOf(id),
            downstream: chain.downstream(cellId)
          }
        : {}
    );
  }

  /** Create the badge of a cell that has a record; it is placed once the cell has rendered. */
  private _attach(cellId: string): IBadgeSlot | null {
    if (this._notebook.isDisposed || !this._checks.get(cellId)) {
      return null;
    }
    const cell = this._notebook.widgets.find(w => w.model.id === cellId);
    if (!cell) {
      return null;
    }
    const badge = new CellBadge(
      this._trans,
      this._openSidebar,
      fix => this._applyFix(cellId, fix),
      id => this._chain?.reveal(id)
    );
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
        const input = cell.inputArea?.parent ?? null;
        const index = input ? layout.widgets.indexOf(input) : -1;
        // Without an input area (never expected for a code cell), the badge goes first.
        layout.insertWidget(index + 1, badge);
        this._render(cellId);
      })
      .catch(reason => console.error('crane: cannot attach a badge', reason));
    return slot;
  }

  private _release(slot: IBadgeSlot): void {
    slot.cell.model.contentChanged.disconnect(this._onCellContent, this);
    slot.cell.disposed.disconnect(this._onCellDisposed, this);
    slot.badge.dispose();
  }

  private _onCellDisposed(cell: Widget): void {
    for (const [cellId, slot] of this._slots) {
      if (slot.cell === cell) {
        this._release(slot);
        this._slots.delete(cellId);
        // A cell replaced in place (e.g. a type change) keeps its id: show the badge again.
        this._render(cellId);
      }
    }
  }

  private _slots = new Map<string, IBadgeSlot>();
  private _isDisposed = false;
}
