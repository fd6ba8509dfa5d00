/**
 * The checks of one notebook's cells: one request per check (`POST /crane/analyze`), with the cells
 * below when a trial runs (the chain); an answer that a newer request of the same cell superseded is
 * dropped; the answer is stored in the verdict state (`badge/model.ts`) and counted in the session
 * figures (`stats.ts`).
 */
import type { Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';

import type {
  IAnalyzeRequest,
  IAnalyzeResult,
  IStatusReply
} from '../contract/api';
import { CraneRequestError, requestAPI } from '../contract/request';
import type { ICheckRecord } from '../contract/tokens';
import { assess } from '../badge/levels';
import type { CellChecks } from '../badge/model';
import { isWarning } from '../badge/verdict';
import type { ChainLayer } from '../below/layer';
import type { CraneSettings } from '../settings/model';
import { requestPlan } from '../settings/plan';
import { fullAdds, SETTLE_MS } from './autocheck';
import { Generations } from './schedule';
import type { SessionStats } from './stats';

/** What the checks of one notebook read and write. */
export interface ICellCheckerOptions {
  panel: NotebookPanel;
  checks: CellChecks;
  stats: SessionStats;
  chain: ChainLayer;
  settings: CraneSettings;
  trans: TranslationBundle;
  /** When the user last edited the active cell (a syntax error is said once the text settled). */
  lastEdit: () => number;
  /** A superseded check gave a cell its earlier record back: its check may be due again. */
  restored: (cellId: string) => void;
}

/**
 * Checks the cells of one notebook, one request per check; the answers of superseded requests are
 * dropped per cell.
 */
export class CellChecker {
  constructor(private readonly _options: ICellCheckerOptions) {}

  /**
   * Check `cell` now (see `NotebookWatcher.check`). Resolves when the answer is in (or dropped);
   * never rejects.
   */
  async check(
    cell: Cell,
    trial = false,
    typing = false,
    tier: 'checks' | 'full' = 'full',
    chain = true
  ): Promise<void> {
    if (this._isDisposed || cell.model.type !== 'code') {
      return;
    }
    const settings = this._options.settings;
    const cellId = cell.model.id;
    const source = cell.model.sharedModel.getSource();
    const kernel = this._options.panel.sessionContext.session?.kernel;
    const plan = requestPlan(
      settings.current,
      settings.explicit,
      settings.server,
      trial
    );
    const base = {
      cellId,
      source,
      epoch: this._options.checks.epoch,
      startedAt: Date.now(),
      sent: plan.settings,
      tier
    };
    if (!kernel) {
      this._options.checks.set({
        ...base,
        phase: 'failed',
        error: this._options.trans.__('The notebook has no kernel.')
      });
      return;
    }
    const generation = this._generations.next(cellId);
    const previous = this._options.checks.get(cellId);
    this._options.checks.begin(
      { ...base, phase: 'checking' },
      this._pendingWhat(cell)
    );
    // The cells below go with the full tier when a trial runs (the chain, below/chain.ts).
    const below =
      chain && tier === 'full'
        ? this._options.chain.request(cell, plan.settings.trial)
        : null;
    const body: IAnalyzeRequest = {
      kernel_id: kernel.id,
      source,
      cell_id: cellId,
      settings: plan.settings,
      ...(typing ? { typing: true } : {}),
      ...(tier === 'checks' ? { tier } : {}),
      ...(below?.fields ?? {})
    };
    const token = below
      ? this._options.chain.begin(cellId, source, base.epoch, below)
      : 0;
    let answered: IAnalyzeResult | null = null;
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
          Date.now() - this._options.lastEdit() < SETTLE_MS)
      ) {
        // Half-typed code: no verdict, no badge, no new entry in the history (the next pause asks
        // again); the cell's earlier entries stay. A syntax error is said once the text settled.
        this._options.checks.clear(cellId);
        return;
      }
      this._finished({ ...base, phase: 'done', result });
      answered = result;
    } catch (error) {
      if (!this._isCurrent(cellId, generation)) {
        return;
      }
      if (error instanceof CraneRequestError && error.status === 409) {
        // User code is running: check again once the kernel is idle.
        this._options.checks.begin({ ...base, phase: 'busy' }, 'busy');
        return;
      }
      const message =
        error instanceof Error ? error.message : String(error ?? '');
      this._finished({ ...base, phase: 'failed', error: message });
    } finally {
      if (below) {
        this._options.chain.finish(token, answered);
      }
    }
  }

  /** Forget a cell (deleted): an answer still in flight for it is dropped. */
  forget(cellId: string): void {
    this._generations.drop(cellId);
  }

  /** The notebook closed: no answer is stored any more. */
  dispose(): void {
    this._isDisposed = true;
  }

  private _isCurrent(cellId: string, generation: number): boolean {
    return !this._isDisposed && this._generations.isCurrent(cellId, generation);
  }

  private _restore(cellId: string, previous: ICheckRecord | undefined): void {
    if (previous) {
      this._options.checks.set({ ...previous, pending: undefined });
    } else {
      this._options.checks.delete(cellId);
    }
    this._options.restored(cellId);
  }

  /** What a check of `cell` starting now adds to the verdict standing for its text. */
  private _pendingWhat(cell: Cell): 'recheck' | 'trial' | 'model' {
    const source = cell.model.sharedModel.getSource();
    const standing = this._options.checks.standing(cell.model.id, source);
    if (
      standing?.tier !== 'checks' ||
      standing.epoch !== this._options.checks.epoch
    ) {
      return 'recheck';
    }
    return fullAdds(this._options.settings).trial ? 'trial' : 'model';
  }

  /** A check finished: store it, count it, and remember a warning until the user acts on it. */
  private _finished(record: ICheckRecord): void {
    const shown = this._options.checks.finish(record);
    this._options.stats.checked();
    const assessment = record.result ? assess(record.result) : null;
    if (shown && assessment && isWarning(assessment.level)) {
      this._options.stats.warned(
        record.cellId,
        record.source,
        assessment.basis === 'trial' || assessment.basis === 'quick'
          ? 'observed'
          : 'predicted'
      );
    }
  }

  private _generations = new Generations();
  private _isDisposed = false;
}
