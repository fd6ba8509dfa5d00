import { CellChecks } from '../model';
import type { ICheckRecord } from '../tokens';

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
});
