import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel } from '@jupyterlab/services';
import type { KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import type { IRunEnd, IRunStart } from '../../contract/kernel';
import { KernelActivity, plainText } from '../../contract/kernel';

/** A kernel connection whose messages the test sends. */
class FakeKernel {
  readonly iopubMessage = new Signal<this, KernelMessage.IIOPubMessage>(this);
  readonly anyMessage = new Signal<this, Kernel.IAnyMessageArgs>(this);
}

/** A session context holding `kernel`. */
class FakeSession {
  constructor(public kernel: FakeKernel | null) {}
  readonly kernelChanged = new Signal<this, { newValue: FakeKernel | null }>(
    this
  );
  readonly statusChanged = new Signal<this, Kernel.Status>(this);
  get session() {
    return { kernel: this.kernel };
  }
}

const SESSION = 'client';

function header(
  msgType: string,
  msgId: string,
  date: string
): KernelMessage.IHeader {
  return {
    msg_type: msgType,
    msg_id: msgId,
    date,
    session: SESSION,
    username: 'u',
    version: '5.3'
  } as KernelMessage.IHeader;
}

function iopub(
  msgType: string,
  parent: string,
  content: object,
  date = '2026-01-01T00:00:00.000Z'
): KernelMessage.IIOPubMessage {
  return {
    channel: 'iopub',
    header: header(msgType, `${msgType}-${parent}`, date),
    parent_header: header('execute_request', parent, date),
    metadata: {},
    content,
    buffers: []
  } as unknown as KernelMessage.IIOPubMessage;
}

function request(msgId: string, cellId?: string): Kernel.IAnyMessageArgs {
  return {
    direction: 'send',
    msg: {
      channel: 'shell',
      header: header('execute_request', msgId, ''),
      parent_header: {},
      metadata: cellId ? { cellId } : {},
      content: { code: 'x', silent: false }
    } as unknown as KernelMessage.IMessage
  };
}

function setup() {
  const kernel = new FakeKernel();
  const session = new FakeSession(kernel);
  const activity = new KernelActivity(session as unknown as ISessionContext);
  const started: IRunStart[] = [];
  const finished: IRunEnd[] = [];
  let resets = 0;
  let idles = 0;
  activity.runStarted.connect((_, run) => started.push(run));
  activity.runFinished.connect((_, run) => finished.push(run));
  activity.reset.connect(() => resets++);
  activity.idle.connect(() => idles++);
  return {
    kernel,
    session,
    activity,
    started,
    finished,
    counts: () => ({ resets, idles })
  };
}

describe('KernelActivity', () => {
  it("times a cell's run by the kernel's clock and names its cell", () => {
    const { kernel, activity, started, finished, counts } = setup();
    kernel.anyMessage.emit(request('m1', 'cell-1'));
    kernel.iopubMessage.emit(
      iopub(
        'execute_input',
        'm1',
        { code: 'df.mean()', execution_count: 1 },
        '2026-01-01T00:00:01.000Z'
      )
    );
    expect(started).toEqual([
      { msgId: 'm1', cellId: 'cell-1', code: 'df.mean()' }
    ]);
    expect(activity.busy).toBe(true);
    kernel.iopubMessage.emit(
      iopub(
        'status',
        'm1',
        { execution_state: 'idle' },
        '2026-01-01T00:00:03.500Z'
      )
    );
    expect(finished).toEqual([
      {
        msgId: 'm1',
        cellId: 'cell-1',
        code: 'df.mean()',
        elapsedMs: 2500,
        error: null
      }
    ]);
    expect(activity.busy).toBe(false);
    expect(counts().idles).toBe(1);
  });

  it('reports the exception a run raised', () => {
    const { kernel, finished } = setup();
    kernel.anyMessage.emit(request('m2', 'cell-2'));
    kernel.iopubMessage.emit(
      iopub('execute_input', 'm2', { code: "df['Agee']", execution_count: 2 })
    );
    kernel.iopubMessage.emit(
      iopub('error', 'm2', {
        ename: 'KeyError',
        evalue: "'Agee'",
        traceback: []
      })
    );
    kernel.iopubMessage.emit(
      iopub('status', 'm2', { execution_state: 'idle' })
    );
    expect(finished[0].error).toEqual({ ename: 'KeyError', evalue: "'Agee'" });
  });

  it("reads a message's words without its terminal codes (Keras bolds names)", () => {
    const { kernel, finished } = setup();
    kernel.anyMessage.emit(request('m3', 'cell-3'));
    kernel.iopubMessage.emit(
      iopub('execute_input', 'm3', {
        code: 'model.fit(X, y)',
        execution_count: 3
      })
    );
    kernel.iopubMessage.emit(
      iopub('error', 'm3', {
        ename: 'ValueError',
        evalue:
          'Input 0 of layer \x1b[1m"dense"\x1b[0m is incompatible: ' +
          '\x1b]8;;https://keras.io\x07docs\x1b]8;;\x07',
        traceback: []
      })
    );
    kernel.iopubMessage.emit(
      iopub('status', 'm3', { execution_state: 'idle' })
    );
    expect(finished[0].error).toEqual({
      ename: 'ValueError',
      evalue: 'Input 0 of layer "dense" is incompatible: docs'
    });
    expect(plainText('no codes here')).toBe('no codes here');
  });

  it('ignores silent executions (no execute_input), such as the probe', () => {
    const { kernel, started, finished, counts } = setup();
    kernel.iopubMessage.emit(
      iopub('status', 'probe', { execution_state: 'busy' })
    );
    kernel.iopubMessage.emit(
      iopub('status', 'probe', { execution_state: 'idle' })
    );
    expect(started).toEqual([]);
    expect(finished).toEqual([]);
    expect(counts().idles).toBe(0);
  });

  it("sees other clients' runs, without a cell id", () => {
    const { kernel, started } = setup();
    kernel.iopubMessage.emit(
      iopub('execute_input', 'other', { code: '1+1', execution_count: 3 })
    );
    expect(started[0].cellId).toBeNull();
  });

  it('reports a restart and a new kernel as resets, and forgets runs in progress', () => {
    const { kernel, session, activity, finished, counts } = setup();
    kernel.iopubMessage.emit(
      iopub('execute_input', 'm3', { code: 'x', execution_count: 4 })
    );
    session.statusChanged.emit('restarting');
    expect(counts().resets).toBe(1);
    expect(activity.busy).toBe(false);
    kernel.iopubMessage.emit(
      iopub('status', 'm3', { execution_state: 'idle' })
    );
    expect(finished).toEqual([]);
    session.statusChanged.emit('idle');
    expect(counts().idles).toBe(1);

    const other = new FakeKernel();
    session.kernelChanged.emit({ newValue: other });
    expect(counts().resets).toBe(2);
    // The old kernel's messages no longer count.
    kernel.iopubMessage.emit(
      iopub('execute_input', 'm4', { code: 'y', execution_count: 1 })
    );
    expect(activity.busy).toBe(false);
    other.iopubMessage.emit(
      iopub('execute_input', 'm5', { code: 'z', execution_count: 1 })
    );
    expect(activity.busy).toBe(true);
  });

  it('disconnects on dispose', () => {
    const { kernel, activity, started } = setup();
    activity.dispose();
    kernel.iopubMessage.emit(
      iopub('execute_input', 'm6', { code: 'x', execution_count: 1 })
    );
    expect(started).toEqual([]);
    expect(activity.isDisposed).toBe(true);
  });
});
