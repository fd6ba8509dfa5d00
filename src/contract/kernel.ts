/**
 * What the notebook's kernel is doing, read from its messages: when user code starts and ends (from
 * any client), how long each run took and whether it raised, and when the kernel was replaced or
 * restarted. The crash checks use it to stay out of the kernel's way and to know when a verdict is
 * outdated; the session statistics use the run times and the crashes.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel } from '@jupyterlab/services';
import { KernelMessage } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

/**
 * Terminal control sequences (colours, hyperlinks) that libraries put in their messages (Keras bolds a
 * layer's name); the kernel's error messages carry them. A person reads the words, never the codes.
 */
const TERMINAL =
  // eslint-disable-next-line no-control-regex
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/** `text` without terminal control sequences. */
export function plainText(text: string): string {
  return text.includes('\x1b') ? text.replace(TERMINAL, '') : text;
}

/** Kernel states after which nothing checked before still holds. */
const RESET_STATES: ReadonlySet<string> = new Set([
  'restarting',
  'autorestarting',
  'dead',
  'starting'
]);

/** A user execution the kernel started. */
export interface IRunStart {
  msgId: string;
  /** The notebook cell, when this page sent the request (JupyterLab puts it in the metadata). */
  cellId: string | null;
  code: string;
}

/** A user execution the kernel finished. */
export interface IRunEnd extends IRunStart {
  /** From the kernel's own clock (execute_input to idle), or this page's when a date is missing. */
  elapsedMs: number;
  /** The exception it raised, if any. */
  error: { ename: string; evalue: string } | null;
}

interface IRun extends IRunStart {
  /** Start by the kernel's clock (null: no date) and by this page's. */
  started: number | null;
  startedHere: number;
  error: IRunEnd['error'];
}

/** Milliseconds of an ISO date of a message header, or null. */
function dateOf(msg: KernelMessage.IMessage): number | null {
  const parsed = Date.parse(msg.header.date);
  return Number.isNaN(parsed) ? null : parsed;
}

/**
 * Tracks the user executions of one notebook's kernel, whichever kernel the session holds.
 */
export class KernelActivity implements IDisposable {
  constructor(private readonly _session: ISessionContext) {
    _session.kernelChanged.connect(this._onKernelChanged, this);
    _session.statusChanged.connect(this._onStatusChanged, this);
    this._connect(_session.session?.kernel ?? null);
  }

  /** User code started (it may change the kernel's state). */
  get runStarted(): ISignal<this, IRunStart> {
    return this._runStarted;
  }

  /** User code finished, with its run time and exception. */
  get runFinished(): ISignal<this, IRunEnd> {
    return this._runFinished;
  }

  /** The kernel was replaced, restarted or died: its state is gone. */
  get reset(): ISignal<this, void> {
    return this._reset;
  }

  /** The kernel is idle and runs no user code: a good moment to check. */
  get idle(): ISignal<this, void> {
    return this._idle;
  }

  /** Whether user code is running or queued to start. */
  get busy(): boolean {
    return this._runs.size > 0;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._connect(null);
    this._session.kernelChanged.disconnect(this._onKernelChanged, this);
    this._session.statusChanged.disconnect(this._onStatusChanged, this);
    Signal.clearData(this);
  }

  private _onKernelChanged(
    sender: ISessionContext,
    args: { newValue: Kernel.IKernelConnection | null }
  ): void {
    this._connect(args.newValue);
    this._reset.emit();
  }

  private _onStatusChanged(
    sender: ISessionContext,
    status: Kernel.Status
  ): void {
    if (RESET_STATES.has(status)) {
      this._runs.clear();
      this._requests.clear();
      this._reset.emit();
    } else if (status === 'idle' && this._runs.size === 0) {
      this._idle.emit();
    }
  }

  private _connect(kernel: Kernel.IKernelConnection | null): void {
    this._runs.clear();
    this._requests.clear();
    this._kernel?.iopubMessage.disconnect(this._onIOPub, this);
    this._kernel?.anyMessage.disconnect(this._onAnyMessage, this);
    this._kernel = kernel;
    kernel?.iopubMessage.connect(this._onIOPub, this);
    kernel?.anyMessage.connect(this._onAnyMessage, this);
  }

  /** Requests this page sends carry the cell's id; replies carry the exception too. */
  private _onAnyMessage(
    sender: Kernel.IKernelConnection,
    args: Kernel.IAnyMessageArgs
  ): void {
    const msg = args.msg;
    if (args.direction === 'send') {
      if (msg.header.msg_type === 'execute_request') {
        const cellId = (msg.metadata as { cellId?: unknown }).cellId;
        if (typeof cellId === 'string') {
          this._requests.set(msg.header.msg_id, cellId);
        }
      }
      return;
    }
    if (
      msg.channel !== 'shell' ||
      !KernelMessage.isExecuteReplyMsg(msg as KernelMessage.IShellMessage)
    ) {
      return;
    }
    const parent = msg.parent_header.msg_id ?? '';
    // A request aborted after an earlier error never starts: forget it.
    this._requests.delete(parent);
    const content = (msg as KernelMessage.IExecuteReplyMsg).content;
    const run = this._runs.get(parent);
    if (run && !run.error && content.status === 'error') {
      run.error = { ename: content.ename, evalue: plainText(content.evalue) };
    }
  }

  private _onIOPub(
    sender: Kernel.IKernelConnection,
    msg: KernelMessage.IIOPubMessage
  ): void {
    const parent = msg.parent_header.msg_id ?? '';
    // Silent executions (our probe, other tools) publish no execute_input: this is user code.
    if (KernelMessage.isExecuteInputMsg(msg)) {
      const run: IRun = {
        msgId: parent,
        cellId: this._requests.get(parent) ?? null,
        code: msg.content.code,
        started: dateOf(msg),
        startedHere: Date.now(),
        error: null
      };
      this._requests.delete(parent);
      this._runs.set(parent, run);
      this._runStarted.emit({
        msgId: run.msgId,
        cellId: run.cellId,
        code: run.code
      });
      return;
    }
    const run = this._runs.get(parent);
    if (!run) {
      return;
    }
    if (KernelMessage.isErrorMsg(msg)) {
      run.error = {
        ename: msg.content.ename,
        evalue: plainText(msg.content.evalue)
      };
    } else if (
      KernelMessage.isStatusMsg(msg) &&
      msg.content.execution_state === 'idle'
    ) {
      this._runs.delete(parent);
      // Both ends by the same clock: the kernel's where it dates its messages, else this page's.
      const ended = dateOf(msg);
      const elapsed =
        ended !== null && run.started !== null
          ? ended - run.started
          : Date.now() - run.startedHere;
      this._runFinished.emit({
        msgId: run.msgId,
        cellId: run.cellId,
        code: run.code,
        elapsedMs: Math.max(0, elapsed),
        error: run.error
      });
      if (this._runs.size === 0) {
        this._idle.emit();
      }
    }
  }

  private _kernel: Kernel.IKernelConnection | null = null;
  /** msg_id → cell id of the execute requests this page sent that have not started yet. */
  private _requests = new Map<string, string>();
  /** The user executions started and not finished, by msg_id. */
  private _runs = new Map<string, IRun>();
  private _isDisposed = false;
  private _runStarted = new Signal<this, IRunStart>(this);
  private _runFinished = new Signal<this, IRunEnd>(this);
  private _reset = new Signal<this, void>(this);
  private _idle = new Signal<this, void>(this);
}
