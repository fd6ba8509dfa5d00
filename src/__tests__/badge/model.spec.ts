import type { IAnalyzeResult } from '../../contract/api';
import { CellChecks } from '../../badge/model';
import type { ICheckRecord } from '../../contract/tokens';
import { cellView } from '../../badge/verdict';
import {
  blockedTrial,
  finishedTrial,
  noModelNoCrash,
  observedCrash
} from '../fixtures';

function record(cellId: string, phase: ICheckRecord['phase']): ICheckRecord {
  return { cellId, source: 'x = 1', epoch: 0, phase, startedAt: 0, sent: {} };
}

describe('CellChecks', () => {
  it('stores records, signals the cell, and keeps finished checks in the history', () => {
    const checks = new CellChecks();
    const changed: string[] = [];
    checks.changed.connect((_, id) => changed.push(id));
    checks.set(record('a', 'checking'));
    expect(checks.history).toHaveLength(0);
    checks.set(record('a', 'done'));
    checks.set(record('b', 'failed'));
    expect(changed).toEqual(['a', 'a', 'b']);
    expect(checks.get('a')?.phase).toBe('done');
    expect(checks.history.map(r => r.cellId)).toEqual(['b', 'a']);
    checks.dispose();
  });

  it('forgets a deleted cell everywhere', () => {
    const checks = new CellChecks();
    checks.set(record('a', 'done'));
    checks.delete('a');
    expect(checks.get('a')).toBeUndefined();
    expect(checks.history).toHaveLength(0);
    checks.dispose();
  });

  it('clears a cell still being typed without losing its history', () => {
    const checks = new CellChecks();
    const changed: string[] = [];
    checks.set(record('a', 'done'));
    checks.changed.connect((_, id) => changed.push(id));
    checks.clear('a');
    expect(checks.get('a')).toBeUndefined();
    expect(checks.history.map(r => r.cellId)).toEqual(['a']);
    expect(changed).toEqual(['a']);
    checks.dispose();
  });

  it('bumps the epoch and disconnects on dispose', () => {
    const checks = new CellChecks();
    const epochs: number[] = [];
    checks.epochChanged.connect((_, e) => epochs.push(e));
    checks.bumpEpoch();
    checks.bumpEpoch();
    expect(checks.epoch).toBe(2);
    expect(epochs).toEqual([1, 2]);
    checks.dispose();
    expect(checks.isDisposed).toBe(true);
    checks.bumpEpoch();
    expect(epochs).toEqual([1, 2]);
  });

  describe('a verdict state that cannot lose a warning', () => {
    const SRC = 'total = df[10].sum()';
    const checkOf = (
      epoch: number,
      result?: IAnalyzeResult,
      extra: Partial<ICheckRecord> = {}
    ): ICheckRecord => ({
      cellId: 'a',
      source: SRC,
      epoch,
      phase: result ? 'done' : 'checking',
      startedAt: epoch,
      sent: {},
      ...(result ? { result } : {}),
      ...extra
    });

    it('a re-check in flight keeps the warning shown; a weaker answer leaves it, marked; a finished trial clears it', () => {
      const checks = new CellChecks();
      checks.finish(checkOf(0, observedCrash));
      checks.bumpEpoch(); // another cell ran
      checks.begin(checkOf(1), 'recheck');
      const during = checks.get('a')!;
      expect(cellView(during, SRC, 1)).toMatchObject({
        state: 'will-crash',
        pending: 'recheck'
      });
      // The re-check could not run a trial: the warning stands, outdated and marked re-checked.
      expect(checks.finish(checkOf(1, blockedTrial))).toBe(false);
      const kept = checks.get('a')!;
      expect(kept.result).toBe(observedCrash);
      expect(kept.pending).toBeUndefined();
      expect(kept.rechecked).toEqual({ epoch: 1, tier: 'full' });
      expect(cellView(kept, SRC, 1)).toEqual({
        state: 'will-crash',
        stale: true,
        unresolved: true
      });
      // The history keeps the warning, not the weaker entry.
      expect(checks.history).toHaveLength(1);
      expect(checks.history[0].result).toBe(observedCrash);
      // A trial that ran the cell to its end at this kernel state overrules it.
      expect(checks.finish(checkOf(1, finishedTrial))).toBe(true);
      expect(cellView(checks.get('a'), SRC, 1).state).toBe('no-crash');
      checks.dispose();
    });

    it('the warning comes back when the text does (typed away, then undone)', () => {
      const checks = new CellChecks();
      checks.finish(checkOf(0, observedCrash));
      checks.begin({ ...checkOf(0), source: SRC + '\n' }, 'recheck');
      expect(checks.get('a')?.phase).toBe('checking');
      checks.begin(checkOf(0), 'recheck');
      expect(checks.get('a')?.result).toBe(observedCrash);
      checks.dispose();
    });

    it('an answer outdated by a run that started meanwhile never replaces the run', () => {
      const checks = new CellChecks();
      checks.begin(checkOf(0), 'recheck'); // a check in flight ...
      checks.bumpEpoch(); // ... when the run starts
      checks.set({
        ...checkOf(0),
        phase: 'done',
        run: { kind: 'passed', ename: '', evalue: '', at: 1 }
      });
      expect(checks.finish(checkOf(0, noModelNoCrash))).toBe(false);
      expect(cellView(checks.get('a'), SRC, 1).state).toBe('passed');
      expect(checks.history).toHaveLength(0);
      // A check of the kernel after the run (asked for explicitly) does replace it.
      expect(checks.finish(checkOf(1, observedCrash))).toBe(true);
      checks.dispose();
    });

    it('a clean run forgets the warning and leaves the history alone; a restart forgets the clean run', () => {
      const checks = new CellChecks();
      checks.finish(checkOf(0, observedCrash));
      checks.set({
        ...checkOf(0, observedCrash),
        run: { kind: 'passed', ename: '', evalue: '', at: 1 }
      });
      expect(cellView(checks.get('a'), SRC, 1).state).toBe('passed');
      expect(checks.history.map(r => r.run)).toEqual([undefined]);
      expect(checks.standing('a', SRC)?.run?.kind).toBe('passed');
      checks.dropPassed();
      expect(checks.get('a')).toBeUndefined();
      expect(checks.standing('a', SRC)).toBeUndefined();
      // A no-crash verdict replaces a no-crash verdict as before.
      checks.finish(checkOf(1, noModelNoCrash));
      expect(checks.finish(checkOf(1, blockedTrial))).toBe(true);
      checks.dispose();
    });
  });
});
