import type { Notebook } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import type { IAnalyzeResult } from '../../contract/api';
import type { IRunEnd, IRunStart, KernelActivity } from '../../contract/kernel';
import { CellChecks } from '../../badge/model';
import { RunOutcomes } from '../../editing/runs';
import { SessionStats } from '../../editing/stats';
import { checksCrash, noModelNoCrash } from '../fixtures';
import { notebookWith } from '../harness';

/** The kernel's activity, as far as the runs read it: the test emits the runs. */
class FakeActivity {
  readonly runStarted = new Signal<this, IRunStart>(this);
  readonly runFinished = new Signal<this, IRunEnd>(this);
}

const KEY_ERROR = { ename: 'KeyError', evalue: "'Agee'" };

describe('RunOutcomes', () => {
  let notebook: Notebook;
  let kernel: FakeActivity;
  let checks: CellChecks;
  let stats: SessionStats;
  let runs: RunOutcomes;

  beforeEach(() => {
    notebook = notebookWith(["df['Agee'].mean()", 'x = 1']);
    kernel = new FakeActivity();
    checks = new CellChecks();
    stats = new SessionStats();
    runs = new RunOutcomes(
      notebook,
      kernel as unknown as KernelActivity,
      checks,
      stats
    );
  });

  afterEach(() => {
    runs.dispose();
    checks.dispose();
    stats.dispose();
    notebook.dispose();
  });

  function checked(cellId: string, source: string, result: IAnalyzeResult) {
    checks.finish({
      cellId,
      source,
      epoch: checks.epoch,
      phase: 'done',
      startedAt: 0,
      sent: {},
      result
    });
  }

  function run(
    msgId: string,
    cellId: string | null,
    code: string,
    error: IRunEnd['error']
  ) {
    kernel.runStarted.emit({ msgId, cellId, code });
    kernel.runFinished.emit({ msgId, cellId, code, elapsedMs: 5, error });
  }

  it('confirms a warning when the checked text crashes, and outdates the verdicts', () => {
    const code = "df['Agee'].mean()";
    checked('cell-0', code, checksCrash);
    const epoch = checks.epoch;
    run('m1', 'cell-0', code, KEY_ERROR);
    expect(checks.epoch).toBe(epoch + 1);
    expect(checks.get('cell-0')?.run).toMatchObject({
      kind: 'confirmed',
      ...KEY_ERROR
    });
    expect(stats.figures.missed).toBe(0);
  });

  it('counts a crash the check did not find as missed', () => {
    checked('cell-1', 'x = 1', noModelNoCrash);
    run('m1', 'cell-1', 'x = 1', KEY_ERROR);
    expect(checks.get('cell-1')?.run?.kind).toBe('missed');
    expect(stats.figures.missed).toBe(1);
  });

  it('judges nothing when the text that ran is not the text checked', () => {
    checked('cell-0', "df['Agee']", checksCrash);
    run('m1', 'cell-0', "df['Agee'].mean()", KEY_ERROR);
    expect(checks.get('cell-0')?.run).toBeUndefined();
  });

  it('marks a clean run as passed, and forgets it when the same text crashes later', () => {
    run('m1', 'cell-1', 'x = 1', null);
    expect(checks.get('cell-1')?.run?.kind).toBe('passed');
    run('m2', 'cell-1', 'x = 1', KEY_ERROR);
    expect(checks.get('cell-1')).toBeUndefined();
  });

  it("finds another client's run by its text", () => {
    run('m1', null, 'x = 1', null);
    expect(checks.get('cell-1')?.run?.kind).toBe('passed');
  });

  it('forgets the runs in flight on clear, and every run once disposed', () => {
    const code = "df['Agee'].mean()";
    checked('cell-0', code, checksCrash);
    kernel.runStarted.emit({ msgId: 'm1', cellId: 'cell-0', code });
    runs.clear();
    kernel.runFinished.emit({
      msgId: 'm1',
      cellId: 'cell-0',
      code,
      elapsedMs: 5,
      error: KEY_ERROR
    });
    expect(checks.get('cell-0')?.run).toBeUndefined();
    runs.dispose();
    run('m2', 'cell-1', 'x = 1', null);
    expect(checks.get('cell-1')).toBeUndefined();
  });
});
