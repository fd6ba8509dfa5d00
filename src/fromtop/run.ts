/**
 * From the top, one notebook's runs: starting one (`POST /crane/notebook`), following it
 * (`GET /crane/notebook/{id}` every `POLL_MS` while it runs), cancelling it (`DELETE`), the result kept
 * with the notebook while its code cells are the ones that ran, and the badge on the first crash.
 * What is sent is `request.ts`, the words `words.ts`, the panel section and the toolbar button
 * `view.tsx`; `extension.ts` gives every notebook its runs.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { INotebookModel, Notebook } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

import type { INotebookRun } from '../contract/api';
import { CraneRequestError, requestAPI } from '../contract/request';
import { FirstCrashBadge } from './badge';
import type { ISentCell } from './request';
import {
  cellTexts,
  codeCells,
  hasEnded,
  pendingRun,
  sameCells,
  topRequest
} from './request';
import { followError, startError } from './words';

/** Pause between two reads of a running run: its progress bar moves at this pace. */
/** A full run's budget: the most the server takes (api.py's NotebookSettings), Cancel stops it sooner. */
export const FULL_BUDGET_S = 3600;

export const POLL_MS = 300;
/** Reads of a running run that may fail in a row (a network blip) before it is given up. */
const MAX_FAILURES = 5;
/** After a change of the notebook's content, the pause before its code cells are compared. */
const COMPARE_MS = 50;

/** Calls the server extension (`requestAPI`; tests inject a fake). */
export type RequestFn = <T>(endPoint: string, init?: RequestInit) => Promise<T>;

/** What one notebook's runs need. */
export interface INotebookTopOptions {
  notebook: Notebook;
  /** The notebook's kernel: the run starts from its Python; a restart ends the run. */
  session: ISessionContext;
  trans: TranslationBundle;
  /** Reveal the crash panel (a click on the badge). */
  openSidebar: () => void;
  /** Why no run can start on this server (no sandbox), or null. */
  unavailable?: () => string | null;
  request?: RequestFn;
  pollMs?: number;
}

/**
 * The run from the top of one notebook: at most one at a time, its progress while it runs, then its
 * result until the notebook's code cells change (added, removed, moved, or their text edited): the
 * result is then outdated and its badge goes.
 */
export class NotebookTop implements IDisposable {
  constructor(private readonly _options: INotebookTopOptions) {
    this._request = _options.request ?? requestAPI;
    this._badge = new FirstCrashBadge(
      _options.notebook,
      _options.trans,
      _options.openSidebar
    );
    _options.notebook.modelChanged.connect(this._onModelChanged, this);
    this._onModelChanged();
    _options.session.statusChanged.connect(this._onKernelStatus, this);
    _options.session.kernelChanged.connect(this._onKernelChanged, this);
  }

  /** Emits when the run moves on, ends, or goes out of date. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Whether a run is starting or running. */
  get running(): boolean {
    return this._starting || (this._run !== null && !hasEnded(this._run));
  }

  /** The last run (as the server last described it), or null. */
  get run(): INotebookRun | null {
    return this._run;
  }

  /** The code cells the last run was sent. */
  get sent(): readonly ISentCell[] {
    return this._sent;
  }

  /** Why the last run could not start or could not be followed, or null. */
  get error(): string | null {
    return this._error;
  }

  /** Whether the code cells changed since the last run was sent. */
  get stale(): boolean {
    return this._stale;
  }

  /**
   * Whether the live kernel is still the one the run compared its crash with (`hidden`): after a
   * restart it holds nothing from a deleted cell any more.
   */
  get kernelHasIt(): boolean {
    return this._kernelHasIt;
  }

  /** When the last run started (the page's clock, ms), for the time it has taken so far. */
  get startedAt(): number {
    return this._startedAt;
  }

  /** Why no run can start now, or null. */
  get unavailable(): string | null {
    const trans = this._options.trans;
    if (this.running) {
      return trans.__('A run from the top is in progress.');
    }
    const why = this._options.unavailable?.() ?? null;
    if (why) {
      return why;
    }
    return this._kernelId()
      ? null
      : trans.__('The notebook has no kernel: start one first.');
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

  /**
   * Start a run of the notebook's code cells from the top, unless one is in progress. Resolves once
   * the server took it (or refused it); the run goes on, followed until it ends. `full`: nothing cut,
   * with the longest budget the server takes (what answers a crash a cut loop may have caused).
   */
  async start(full = false): Promise<void> {
    if (this.running || this._isDisposed) {
      return;
    }
    const trans = this._options.trans;
    const why = this.unavailable;
    const kernelId = this._kernelId();
    const plan =
      why ??
      topRequest(
        trans,
        kernelId ?? '',
        cellTexts(this._options.notebook),
        full ? { full: true, budget_s: FULL_BUDGET_S } : undefined
      );
    const generation = ++this._generation;
    this._stale = false;
    this._kernelHasIt = true;
    this._run = null;
    if (typeof plan === 'string') {
      this._sent = [];
      this._error = plan;
      this._update();
      return;
    }
    this._sent = plan.sent;
    this._error = null;
    this._starting = true;
    this._startedAt = Date.now();
    this._update();
    let id: string;
    try {
      const reply = await this._request<{ id: string }>('notebook', {
        method: 'POST',
        body: JSON.stringify(plan.request)
      });
      id = reply.id;
    } catch (reason) {
      if (generation === this._generation) {
        this._starting = false;
        this._error = startError(trans, reason);
        this._update();
      }
      return;
    }
    if (generation !== this._generation || this._isDisposed) {
      // Cancelled (or the notebook closed) while the server took it.
      void this._delete(id);
      return;
    }
    this._starting = false;
    this._run = pendingRun(id, kernelId ?? '', plan.sent.length);
    this._update();
    void this._follow(id, generation);
  }

  /** Cancel the run in progress (`DELETE`): the worker stops, the kernel is untouched. */
  async cancel(): Promise<void> {
    if (!this.running) {
      return;
    }
    this._generation++;
    this._starting = false;
    const run = this._run;
    if (!run) {
      // The server has not answered the POST yet: `start` deletes the run when it does.
      this._run = {
        ...pendingRun('', this._options.session.session?.kernel?.id ?? '', 0),
        state: 'cancelled',
        total: this._sent.length
      };
      this._update();
      return;
    }
    this._run = { ...run, state: 'cancelled', running: null };
    this._update();
    const reply = await this._delete(run.id);
    if (reply && this._run?.id === run.id) {
      this._run = reply.state === 'running' ? this._run : reply;
      this._update();
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    if (this._run && !hasEnded(this._run)) {
      // A run outlives no notebook.
      void this._delete(this._run.id);
    }
    this._isDisposed = true;
    this._generation++;
    clearTimeout(this._compareTimer);
    this._options.notebook.modelChanged.disconnect(this._onModelChanged, this);
    this._model?.contentChanged.disconnect(this._onContentChanged, this);
    this._options.session.statusChanged.disconnect(this._onKernelStatus, this);
    this._options.session.kernelChanged.disconnect(this._onKernelChanged, this);
    this._badge.dispose();
    Signal.clearData(this);
  }

  /** Read the run until it ends, every `pollMs`. */
  private async _follow(id: string, generation: number): Promise<void> {
    const trans = this._options.trans;
    const pause = this._options.pollMs ?? POLL_MS;
    let failures = 0;
    while (generation === this._generation && !this._isDisposed) {
      await new Promise(resolve => setTimeout(resolve, pause));
      if (generation !== this._generation || this._isDisposed) {
        return;
      }
      try {
        const run = await this._request<INotebookRun>(`notebook/${id}`);
        if (generation !== this._generation || this._isDisposed) {
          return;
        }
        failures = 0;
        this._run = run;
        this._update();
        if (hasEnded(run)) {
          return;
        }
      } catch (reason) {
        if (generation !== this._generation) {
          return;
        }
        const gone =
          reason instanceof CraneRequestError && reason.status === 404;
        if (gone || ++failures >= MAX_FAILURES) {
          this._run = {
            ...(this._run ?? pendingRun(id, '', this._sent.length)),
            state: 'error',
            running: null,
            message: followError(trans, reason)
          };
          this._update();
          return;
        }
      }
    }
  }

  private async _delete(id: string): Promise<INotebookRun | null> {
    try {
      return await this._request<INotebookRun>(`notebook/${id}`, {
        method: 'DELETE'
      });
    } catch (reason) {
      console.warn('crane: cannot cancel the run from the top', reason);
      return null;
    }
  }

  private _kernelId(): string | null {
    return this._options.session.session?.kernel?.id ?? null;
  }

  private _onModelChanged(): void {
    this._model?.contentChanged.disconnect(this._onContentChanged, this);
    this._model = this._options.notebook.model;
    this._model?.contentChanged.connect(this._onContentChanged, this);
    this._onContentChanged();
  }

  /** Any change of the notebook (text, outputs, cells): compare its code cells, once it settles. */
  private _onContentChanged(): void {
    if (this._stale || !this._sent.length) {
      return;
    }
    clearTimeout(this._compareTimer);
    this._compareTimer = setTimeout(() => this.compare(), COMPARE_MS);
  }

  /** Mark the result outdated when the code cells are no longer those the run was sent. */
  compare(): void {
    if (this._isDisposed || this._stale || !this._sent.length) {
      return;
    }
    if (!sameCells(this._sent, codeCells(cellTexts(this._options.notebook)))) {
      this._stale = true;
      this._update();
    }
  }

  private _onKernelStatus(
    sender: ISessionContext,
    status: ISessionContext['kernelDisplayStatus']
  ): void {
    if (status === 'restarting' || status === 'autorestarting') {
      this._kernelReplaced();
    }
    this._kernelPresence();
  }

  private _onKernelChanged(): void {
    this._kernelReplaced();
    this._kernelPresence();
  }

  /** The kernel restarted or another took its place: it no longer holds the hidden state. */
  private _kernelReplaced(): void {
    if (this._run && hasEnded(this._run) && this._kernelHasIt) {
      this._kernelHasIt = false;
      this._update();
    }
  }

  /** A kernel came or went: whether a run can start changed (the buttons follow). */
  private _kernelPresence(): void {
    const has = this._kernelId() !== null;
    if (has !== this._hadKernel) {
      this._hadKernel = has;
      this._changed.emit();
    }
  }

  private _update(): void {
    this._renderBadge();
    this._changed.emit();
  }

  /** The badge on the first crash, while the result is current; none otherwise. */
  private _renderBadge(): void {
    const run = this._run;
    const current = run && run.state === 'done' && !this._stale;
    this._badge.show(current ? run.first_crash : null, this._kernelHasIt);
  }

  private _request: RequestFn;
  private _run: INotebookRun | null = null;
  private _sent: ISentCell[] = [];
  private _error: string | null = null;
  private _stale = false;
  private _kernelHasIt = true;
  private _starting = false;
  private _hadKernel = false;
  private _startedAt = 0;
  private _generation = 0;
  private _model: INotebookModel | null = null;
  private _compareTimer: ReturnType<typeof setTimeout> | undefined;
  private _badge: FirstCrashBadge;
  private _changed = new Signal<this, void>(this);
  private _isDisposed = false;
}
