/**
 * The chain of one notebook, plugged into its watcher: the fields a full check adds to its
 * request (the code cells below, the text the kernel last ran of the cell), the claims its answer
 * makes on the cells below, and keeping them current as cells are edited, moved, deleted and run.
 * The rules themselves are `chain.ts`.
 */
import type { Cell } from '@jupyterlab/cells';
import type { CellList, Notebook } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

import type { IAnalyzeResult } from '../contract/api';
import type {
  IChainAnswer,
  IChainRequest,
  ICellPlace,
  ICellText
} from './chain';
import {
  afterOriginRun,
  chainRequest,
  claimRecord,
  downstreamOf,
  mergeChain,
  originOf,
  staleClaims,
  wantsChain
} from './chain';
import type { IDownstream } from '../badge/claim';
import { isObserved } from '../badge/claim';
import type { IRunEnd, KernelActivity } from '../contract/kernel';
import type { CellChecks } from '../badge/model';
import type { CraneSettings } from '../settings/model';
import type { ICheckRecord } from '../contract/tokens';

/** What the chain of one notebook reads and starts. */
export interface IChainLayerOptions {
  notebook: Notebook;
  checks: CellChecks;
  kernel: KernelActivity;
  settings: CraneSettings;
  /** Check a cell again on the kernel as it is: its own full check, with a trial when `trial`. */
  recheck: (cell: Cell, trial: boolean) => Promise<void>;
  /** A claim went on display: a warning given (for the session figures). */
  warned?: (cellId: string, source: string, observed: boolean) => void;
}

/** A request with the chain in flight. */
interface IInFlight extends Omit<IChainAnswer, 'below'> {
  token: number;
  /** The claims it marked "checking again…". */
  marked: string[];
}

/**
 * The chain of one notebook: the request's fields, the claims its answers make, and keeping them
 * current as cells are edited, moved, deleted and run.
 */
export class ChainLayer implements IDisposable {
  constructor(private readonly _options: IChainLayerOptions) {
    const { notebook, kernel, checks, settings } = _options;
    kernel.runFinished.connect(this._onRunFinished, this);
    checks.changed.connect(this._onRecordChanged, this);
    settings.changed.connect(this._onSettingsChanged, this);
    notebook.modelChanged.connect(this._onModelChanged, this);
    this._onModelChanged(notebook);
  }

  /** Claims came or went, or cells moved: the badges naming cells are drawn again. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** A cell's number as the user reads it: its position in the notebook, from 1. */
  numberOf(cellId: string): number | null {
    const cells = this._options.notebook.model?.cells;
    if (!cells) {
      return null;
    }
    for (let i = 0; i < cells.length; i++) {
      if (cells.get(i).id === cellId) {
        return i + 1;
      }
    }
    return null;
  }

  /** The crash below `cellId` its badge names, while the cell holds the text that caused it. */
  downstream(cellId: string): IDownstream | null {
    const cells = this._options.notebook.model?.cells;
    if (!this._claimed.size || !cells) {
      return null;
    }
    for (let i = 0; i < cells.length; i++) {
      const m = cells.get(i);
      if (m.id === cellId) {
        return downstreamOf(
          this._records(),
          cellId,
          m.sharedModel.getSource(),
          id => this.numberOf(id)
        );
      }
    }
    return null;
  }

  /** Whether a cell's text is no longer what the last chain of `originId` ran (or it is gone). */
  changedSince(originId: string, cellId: string): boolean {
    const sent = this._sent.get(originId)?.get(cellId);
    return sent !== undefined && this._places().get(cellId)?.source !== sent;
  }

  /**
   * The fields a full check of `cell` adds for the chain, or null: the code cells below it, and the
   * text the kernel last ran of it (the names it no longer binds are hidden state below).
   */
  request(
    cell: Cell,
    planned: boolean | null | undefined
  ): IChainRequest | null {
    const settings = this._options.settings;
    const cells = this._options.notebook.model?.cells;
    if (
      !cells ||
      !wantsChain(settings.current.chain, settings.server, planned)
    ) {
      return null;
    }
    const texts: ICellText[] = [];
    for (let i = 0; i < cells.length; i++) {
      const m = cells.get(i);
      texts.push({ id: m.id, type: m.type, source: m.sharedModel.getSource() });
    }
    return chainRequest(texts, cell.model.id, this._lastRun.get(cell.model.id));
  }

  /**
   * A check of `originId` with the chain starts: its claims about this very text stay on display,
   * marked "checking again…", until the answer. Returns the token `finish` takes.
   */
  begin(
    originId: string,
    source: string,
    epoch: number,
    request: IChainRequest
  ): number {
    const token = ++this._token;
    const checks = this._options.checks;
    const marked: string[] = [];
    for (const r of this._claims()) {
      if (r.chain!.originId === originId && r.chain!.originSource === source) {
        checks.begin(
          { ...r, phase: 'checking', epoch, tier: 'full' },
          'recheck'
        );
        marked.push(r.cellId);
      }
    }
    this._inflight.set(originId, {
      token,
      originId,
      originSource: source,
      origin: originOf(this._lastRun.get(originId), source),
      epoch,
      sent: request.sent,
      marked
    });
    return token;
  }

  /** The check of `token` ended: apply its chain (`result` null: superseded, failed, dropped). */
  finish(token: number, result: IAnalyzeResult | null): void {
    const request = [...this._inflight.values()].find(r => r.token === token);
    if (!request || this._isDisposed) {
      return; // a newer check of the same cell owns its claims now
    }
    this._inflight.delete(request.originId);
    const checks = this._options.checks;
    for (const cellId of request.marked) {
      if (checks.get(cellId)?.pending?.what === 'recheck') {
        checks.amend(cellId, { pending: undefined });
      }
    }
    if (!result?.below) {
      return;
    }
    const actions = mergeChain(
      { ...request, below: result.below },
      { epoch: checks.epoch, cells: this._places(), records: this._records() }
    );
    for (const action of actions) {
      switch (action.kind) {
        case 'claim': {
          const record = claimRecord(action.cell, request.epoch, action.claim);
          if (checks.finish(record)) {
            this._options.warned?.(
              record.cellId,
              record.source,
              isObserved(action.claim.outcome)
            );
          }
          break;
        }
        case 'withdraw':
          checks.withdraw(action.cellId);
          break;
        case 'unresolved':
          checks.amend(action.cellId, {
            rechecked: { epoch: request.epoch, tier: 'full' }
          });
          break;
      }
    }
    this._sent.set(
      request.originId,
      new Map(request.sent.map(c => [c.cellId, c.source]))
    );
    this._changed.emit();
  }

  /** The kernel restarted: what it last ran of each cell is forgotten. */
  reset(): void {
    this._lastRun.clear();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    const { notebook, kernel, checks, settings } = this._options;
    kernel.runFinished.disconnect(this._onRunFinished, this);
    checks.changed.disconnect(this._onRecordChanged, this);
    settings.changed.disconnect(this._onSettingsChanged, this);
    notebook.modelChanged.disconnect(this._onModelChanged, this);
    this._setModel(null);
    Signal.clearData(this);
  }

  // ---- keeping the claims current ----------------------------------------------------------

  private _records(): ICheckRecord[] {
    const checks = this._options.checks;
    return checks
      .cellIds()
      .map(id => checks.get(id))
      .filter((r): r is ICheckRecord => !!r);
  }

  /** Claims standing on their cells (a run's outcome on a claim is the run's). */
  private _claims(): ICheckRecord[] {
    return this._records().filter(r => r.chain && !r.run);
  }

  private _places(): Map<string, ICellPlace> {
    const out = new Map<string, ICellPlace>();
    const cells = this._options.notebook.model?.cells;
    for (let i = 0; cells && i < cells.length; i++) {
      const m = cells.get(i);
      out.set(m.id, { index: i, source: m.sharedModel.getSource() });
    }
    return out;
  }

  private _onModelChanged(notebook: Notebook): void {
    this._setModel(notebook.model?.cells ?? null);
    this._audit();
  }

  private _setModel(cells: CellList | null): void {
    this._model?.contentChanged.disconnect(this._audit, this);
    this._cells?.changed.disconnect(this._onCellsChanged, this);
    this._cells = cells;
    this._model = cells ? this._options.notebook.model : null;
    this._model?.contentChanged.connect(this._audit, this);
    this._cells?.changed.connect(this._onCellsChanged, this);
  }

  private _onCellsChanged(): void {
    this._audit();
    if (this._claimed.size) {
      this._changed.emit(); // the cells' numbers moved
    }
  }

  /** Withdraw the claims a change of the notebook made stale (any cell's text, the cells' order). */
  private _audit(): void {
    if (this._isDisposed || !this._claimed.size) {
      return;
    }
    for (const cellId of staleClaims(this._records(), this._places())) {
      this._options.checks.withdraw(cellId);
    }
  }

  private _onRecordChanged(sender: CellChecks, cellId: string): void {
    const claimed = !!sender.get(cellId)?.chain;
    if (claimed || this._claimed.has(cellId)) {
      if (claimed) {
        this._claimed.add(cellId);
      } else {
        this._claimed.delete(cellId);
      }
      this._changed.emit();
    }
  }

  private _onSettingsChanged(): void {
    if (this._options.settings.current.chain) {
      return;
    }
    for (const r of this._claims()) {
      this._options.checks.withdraw(r.cellId); // the user turned the chain off
    }
  }

  /** The cell of a run: by the id this page sent, else (another client ran it) by its text. */
  private _cellIdOf(run: IRunEnd): string | null {
    const places = this._places();
    if (run.cellId !== null) {
      return places.has(run.cellId) ? run.cellId : null;
    }
    for (const [cellId, place] of places) {
      if (place.source === run.code) {
        return cellId;
      }
    }
    return null;
  }

  private _onRunFinished(sender: KernelActivity, run: IRunEnd): void {
    const cellId = this._cellIdOf(run);
    if (!cellId) {
      return;
    }
    this._lastRun.set(cellId, run.code);
    const checks = this._options.checks;
    const actions = afterOriginRun(
      this._records(),
      cellId,
      run.code,
      run.error !== null
    );
    for (const id of actions.withdraw) {
      checks.withdraw(id);
    }
    for (const id of actions.recheck) {
      const current = checks.get(id);
      if (current?.chain) {
        checks.amend(id, { chain: { ...current.chain, applied: true } });
      }
    }
    if (actions.recheck.length) {
      void this._recheck(actions.recheck);
    }
  }

  /** Check the claimed cells again, one after the other (one trial at a time per kernel). */
  private async _recheck(cellIds: string[]): Promise<void> {
    const trial = this._options.settings.trialMode !== 'off';
    for (const cellId of cellIds) {
      const record = this._options.checks.get(cellId);
      const cell = this._options.notebook.widgets.find(
        c => c.model.id === cellId
      );
      if (
        this._isDisposed ||
        !cell ||
        !record?.chain ||
        cell.model.sharedModel.getSource() !== record.source
      ) {
        continue;
      }
      await this._options.recheck(cell, trial);
    }
  }

  private _lastRun = new Map<string, string>();
  private _inflight = new Map<string, IInFlight>();
  private _sent = new Map<string, Map<string, string>>();
  private _claimed = new Set<string>();
  private _token = 0;
  private _cells: CellList | null = null;
  private _model: Notebook['model'] = null;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}
