import type { ISessionContext } from '@jupyterlab/apputils';
import type { Notebook } from '@jupyterlab/notebook';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import type { PanelLayout } from '@lumino/widgets';

import type { INotebookRequest, INotebookRun } from '../../contract/api';
import { CraneRequestError } from '../../contract/request';
import { TopBadge } from '../../fromtop/badge';
import { NotebookTop } from '../../fromtop/run';
import { notebookOf } from '../harness';
import { doneRun, outcome } from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

/** The notebook's kernel, as far as the runs read it. */
class FakeSession {
  session: { kernel: { id: string } | null } | null = { kernel: { id: 'k1' } };
  readonly statusChanged = new Signal<this, string>(this);
  readonly kernelChanged = new Signal<this, void>(this);
}

/** The server: takes a run, answers each GET with the next of `states`, and DELETE with a cancel. */
class FakeServer {
  constructor(public states: INotebookRun[]) {}
  posted: INotebookRequest[] = [];
  calls: string[] = [];
  refuse: CraneRequestError | null = null;

  request = async <T>(endPoint: string, init: RequestInit = {}): Promise<T> => {
    const method = init.method ?? 'GET';
    this.calls.push(`${method} ${endPoint}`);
    if (method === 'POST') {
      if (this.refuse) {
        throw this.refuse;
      }
      this.posted.push(JSON.parse(init.body as string) as INotebookRequest);
      return { id: 'r1' } as T;
    }
    if (method === 'DELETE') {
      return { ...this.states[0], state: 'cancelled', done: 1 } as T;
    }
    const next = this.states.length > 1 ? this.states.shift()! : this.states[0];
    return next as T;
  };
}

/** Wait until `cond` holds (the runs poll every millisecond here). */
async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) {
      return;
    }
    await new Promise(resolve => setTimeout(resolve, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const SOURCES: [string, string][] = [
  ['code', 'import pandas as pd'],
  ['markdown', '# Clean'],
  ['code', 'df_clean.head()'],
  ['code', 'df_clean.describe()']
];

const RUNNING: INotebookRun = {
  ...doneRun([]),
  state: 'running',
  done: 1,
  total: 3,
  running: 1
};

const DONE = doneRun([
  outcome('c0', 'ran'),
  outcome('c2', 'crashed', {
    exception: 'NameError',
    message: "name 'df_clean' is not defined",
    line: 1,
    hidden: true
  }),
  outcome('c3', 'not_reached')
]);

describe('NotebookTop', () => {
  let notebook: Notebook;
  let session: FakeSession;
  let server: FakeServer;
  let top: NotebookTop;
  let opened = 0;

  beforeEach(() => {
    notebook = notebookOf(SOURCES, 'c');
    session = new FakeSession();
    server = new FakeServer([RUNNING, RUNNING, DONE]);
    top = new NotebookTop({
      notebook,
      session: session as unknown as ISessionContext,
      trans,
      openSidebar: () => opened++,
      request: server.request,
      pollMs: 1
    });
  });

  afterEach(() => {
    top.dispose();
    notebook.dispose();
  });

  const badge = (): TopBadge | undefined =>
    (notebook.widgets[2].layout as PanelLayout).widgets.find(
      w => w instanceof TopBadge
    ) as TopBadge | undefined;

  it('sends the code cells in order, follows the run, and badges the first crash', async () => {
    const changes: boolean[] = [];
    top.changed.connect(() => changes.push(top.running));
    await top.start();
    expect(server.posted).toEqual([
      {
        kernel_id: 'k1',
        cells: [
          { cell_id: 'c0', source: 'import pandas as pd' },
          { cell_id: 'c2', source: 'df_clean.head()' },
          { cell_id: 'c3', source: 'df_clean.describe()' }
        ]
      }
    ]);
    expect(top.running).toBe(true);
    await until(() => !top.running, 'the run to end');
    expect(server.calls.filter(c => c === 'GET notebook/r1')).toHaveLength(3);
    expect(top.run?.state).toBe('done');
    expect(changes[0]).toBe(true);
    expect(top.stale).toBe(false);
    await notebook.widgets[2].ready;
    await until(() => !!badge()?.node.isConnected, 'the badge');
    const widgets = (notebook.widgets[2].layout as PanelLayout).widgets;
    expect(widgets.indexOf(badge()!)).toBe(
      widgets.indexOf(notebook.widgets[2].inputArea!.parent!) + 1
    );
    expect(badge()!.node.textContent).toContain(
      "Fails from the top: NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no longer defines it"
    );
    badge()!.node.click();
    expect(opened).toBe(1);
    expect(top.numberOf('c2')).toBe(3);
  });

  it('marks the result outdated and drops the badge when a code cell is edited', async () => {
    await top.start();
    await until(() => !top.running && !!badge(), 'the badge');
    notebook.model!.cells.get(0).sharedModel.setSource('import pandas');
    await until(() => top.stale, 'the result to go out of date');
    expect(badge()).toBeUndefined();
    // The result stays, marked outdated, until the next run.
    expect(top.run?.state).toBe('done');
  });

  it('keeps the result when a markdown cell changes, drops it when a cell is added', async () => {
    await top.start();
    await until(() => !top.running, 'the run to end');
    notebook.model!.cells.get(1).sharedModel.setSource('# Cleaning');
    top.compare();
    expect(top.stale).toBe(false);
    // yjs warns about reads before the new cell joins the document; harmless here.
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    notebook.model!.sharedModel.insertCell(4, {
      cell_type: 'code',
      source: 'x = 1'
    });
    warn.mockRestore();
    top.compare();
    expect(top.stale).toBe(true);
  });

  it('cancels a run: DELETE, and no more polls', async () => {
    server.states = [RUNNING];
    await top.start();
    await until(
      () => server.calls.includes('GET notebook/r1'),
      'the first poll'
    );
    await top.cancel();
    expect(server.calls).toContain('DELETE notebook/r1');
    expect(top.running).toBe(false);
    expect(top.run?.state).toBe('cancelled');
    const polls = server.calls.length;
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(server.calls.length).toBe(polls);
  });

  it('runs in full when asked: nothing cut, the longest budget the server takes', async () => {
    await top.start(true);
    expect(server.posted).toHaveLength(1);
    expect((server.posted[0] as { settings?: unknown }).settings).toEqual({
      full: true,
      budget_s: 3600
    });
    await until(() => !top.running, 'the run to end');
  });

  it('runs one at a time: a second start while one runs sends nothing', async () => {
    server.states = [RUNNING];
    await top.start();
    await top.start();
    expect(server.posted).toHaveLength(1);
    expect(top.unavailable).toBe('A run from the top is in progress.');
    await top.cancel();
  });

  it('says why the server did not take a run (409: one runs for this kernel)', async () => {
    server.refuse = new CraneRequestError(
      'http',
      'a run from the top is in progress for this kernel (ab12)',
      409,
      { status: 'busy' }
    );
    await top.start();
    expect(top.running).toBe(false);
    expect(top.error).toMatch(/^A run from the top is already in progress/);
  });

  it('needs a kernel and a sandbox', async () => {
    session.session = null;
    expect(top.unavailable).toMatch(/no kernel/);
    await top.start();
    expect(server.calls).toEqual([]);
    expect(top.error).toMatch(/no kernel/);
  });

  it('drops the hidden-state words once the kernel restarted', async () => {
    await top.start();
    await until(() => !top.running && !!badge(), 'the badge');
    session.statusChanged.emit('restarting');
    expect(top.kernelHasIt).toBe(false);
    expect(badge()!.node.textContent).not.toContain('your kernel has it');
    expect(badge()!.node.textContent).toContain(
      "Fails from the top: NameError: name 'df_clean' is not defined"
    );
  });

  it('ends the run as an error when the server no longer knows it', async () => {
    server.request = async <T>(endPoint: string, init: RequestInit = {}) => {
      if (init.method === 'POST') {
        return { id: 'r1' } as T;
      }
      throw new CraneRequestError('http', "no run 'r1'", 404);
    };
    top.dispose();
    top = new NotebookTop({
      notebook,
      session: session as unknown as ISessionContext,
      trans,
      openSidebar: () => undefined,
      request: server.request,
      pollMs: 1
    });
    await top.start();
    await until(() => !top.running, 'the run to end');
    expect(top.run?.state).toBe('error');
    expect(top.run?.message).toMatch(/no longer knows this run/);
  });
});
