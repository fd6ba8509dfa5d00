import type { CodeCell } from '@jupyterlab/cells';
import type { Notebook } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import { AutoCheck, SETTLE_MS } from '../../editing/autocheck';
import type { KernelActivity } from '../../contract/kernel';
import { CellChecks } from '../../badge/model';
import { CraneSettings } from '../../settings/model';
import type { IServerConfig } from '../../contract/tokens';
import { schema } from '../fixtures';
import { notebookWith } from '../harness';

/** The kernel's activity, as far as the automatic check reads it. */
class FakeActivity {
  busy = false;
  readonly idle = new Signal<this, void>(this);
}

/** A server that runs a trial with every full check: the full tier adds something. */
const TRIAL_SERVER = {
  auto_check: true,
  votes: 1,
  docs: false,
  categories: 'SRV',
  trial: 'auto',
  trial_available: true,
  model: null,
  allowed_models: []
} as unknown as IServerConfig;

describe('AutoCheck', () => {
  let notebook: Notebook;
  let kernel: FakeActivity;
  let checks: CellChecks;
  let settings: CraneSettings;
  let auto: AutoCheck;
  let started: [string, 'checks' | 'full'][];

  beforeEach(() => {
    jest.useFakeTimers();
    notebook = notebookWith(['x = 1', 'y = 2']);
    notebook.activeCellIndex = 0;
    kernel = new FakeActivity();
    checks = new CellChecks();
    settings = new CraneSettings(schema);
    started = [];
    auto = new AutoCheck({
      notebook,
      kernel: kernel as unknown as KernelActivity,
      checks,
      settings,
      // As the watcher does: the check is in flight from its start.
      check: (cell: CodeCell, tier) => {
        started.push([cell.model.id, tier]);
        checks.begin(
          {
            cellId: cell.model.id,
            source: cell.model.sharedModel.getSource(),
            epoch: checks.epoch,
            phase: 'checking',
            startedAt: Date.now(),
            sent: {},
            tier
          },
          'recheck'
        );
      }
    });
  });

  afterEach(() => {
    auto.dispose();
    checks.dispose();
    settings.dispose();
    notebook.dispose();
    jest.useRealTimers();
  });

  const delay = () => settings.current.delay;

  it('checks the active cell once its text paused, in one tier when the full check adds nothing', () => {
    jest.advanceTimersByTime(delay() - 1);
    expect(started).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(started).toEqual([['cell-0', 'full']]);
    jest.advanceTimersByTime(SETTLE_MS);
    expect(started).toEqual([['cell-0', 'full']]);
  });

  it('asks for the checks first, and the full check once the text settled', () => {
    settings.server = TRIAL_SERVER;
    auto.schedule();
    jest.advanceTimersByTime(delay());
    expect(started).toEqual([['cell-0', 'checks']]);
    jest.advanceTimersByTime(SETTLE_MS - delay());
    expect(started).toEqual([
      ['cell-0', 'checks'],
      ['cell-0', 'full']
    ]);
  });

  it('restarts the quiet period on each edit, and records when the text changed', () => {
    const cell = notebook.widgets[0];
    jest.advanceTimersByTime(delay() - 10);
    cell.model.sharedModel.setSource('x = 2');
    expect(auto.lastEdit).toBe(Date.now());
    jest.advanceTimersByTime(delay() - 10);
    expect(started).toEqual([]);
    jest.advanceTimersByTime(10);
    expect(started).toEqual([['cell-0', 'full']]);
  });

  it('waits for an idle kernel, saying so on the record', () => {
    kernel.busy = true;
    jest.advanceTimersByTime(SETTLE_MS);
    expect(started).toEqual([]);
    expect(checks.get('cell-0')?.phase).toBe('busy');
    kernel.busy = false;
    kernel.idle.emit();
    jest.advanceTimersByTime(delay());
    expect(started).toEqual([['cell-0', 'full']]);
  });

  it('checks nothing with auto-check off, nor an empty cell, nor after dispose', () => {
    settings.server = { ...TRIAL_SERVER, auto_check: false };
    notebook.widgets[0].model.sharedModel.setSource('x = 2');
    jest.advanceTimersByTime(SETTLE_MS);
    expect(started).toEqual([]);
    settings.server = TRIAL_SERVER;
    notebook.widgets[1].model.sharedModel.setSource('  ');
    notebook.activeCellIndex = 1;
    jest.advanceTimersByTime(SETTLE_MS);
    expect(started).toEqual([]);
    notebook.activeCellIndex = 0;
    auto.dispose();
    jest.advanceTimersByTime(SETTLE_MS);
    expect(started).toEqual([]);
  });
});
