import type { IAnalyzeResult } from '../../contract/api';
import type { ICheckRecord } from '../../contract/tokens';
import {
  asksBeforeRun,
  cellView,
  isStale,
  overrules,
  pushHistory
} from '../../badge/verdict';
import {
  blockedTrial,
  checksCrash,
  finishedTrial,
  modelCrash,
  observedCrash,
  modelNoCrash,
  noModelCrash,
  noModelNoCrash
} from '../fixtures';

function record(partial: Partial<ICheckRecord> = {}): ICheckRecord {
  return {
    cellId: 'c1',
    source: "df['Agee']",
    epoch: 3,
    phase: 'done',
    startedAt: 0,
    sent: {},
    ...partial
  };
}

const done = (result: IAnalyzeResult) => record({ result });

describe('cellView', () => {
  const src = "df['Agee']";

  it('shows nothing before the first check', () => {
    expect(cellView(undefined, 'x', 0)).toEqual({
      state: 'none',
      stale: false
    });
  });

  it('maps answers to the three levels and the check states', () => {
    expect(cellView(record({ phase: 'checking' }), src, 3).state).toBe(
      'checking'
    );
    expect(cellView(done(checksCrash), src, 3).state).toBe('will-crash');
    expect(cellView(done(noModelCrash), src, 3).state).toBe('will-crash');
    expect(cellView(done(modelCrash), src, 3).state).toBe('may-crash');
    expect(cellView(done(modelNoCrash), src, 3).state).toBe('no-crash');
    expect(cellView(done(noModelNoCrash), src, 3).state).toBe('no-crash');
    const failed: IAnalyzeResult = {
      ...modelNoCrash,
      status: 'llm_error',
      verdict: null
    };
    expect(cellView(done(failed), src, 3).state).toBe('error');
    expect(
      cellView(record({ phase: 'failed', error: 'HTTP 500' }), src, 3).state
    ).toBe('error');
    expect(cellView(record({ phase: 'busy' }), src, 3).state).toBe('busy');
  });

  it('marks a verdict stale when the text or the kernel epoch changed', () => {
    const r = done(checksCrash);
    expect(cellView(r, src, 3).stale).toBe(false);
    expect(cellView(r, "df['Age']", 3)).toEqual({
      state: 'will-crash',
      stale: true
    });
    expect(cellView(r, src, 4).stale).toBe(true);
    // A check in flight is never shown as stale: its answer is what matters.
    expect(cellView(record({ phase: 'checking' }), 'other', 9).stale).toBe(
      false
    );
  });

  it('shows a run outcome for the text that ran, even after the run outdated the kernel', () => {
    const run = { ename: 'KeyError', evalue: "'Agee'", at: 5 };
    const confirmed = record({
      result: checksCrash,
      run: { ...run, kind: 'confirmed' }
    });
    expect(cellView(confirmed, src, 7)).toEqual({
      state: 'confirmed',
      stale: false
    });
    const missed = record({
      result: modelNoCrash,
      run: { ...run, kind: 'missed' }
    });
    expect(cellView(missed, src, 7).state).toBe('missed');
    // Edited since: back to the (outdated) verdict.
    expect(cellView(confirmed, "df['Age']", 7)).toEqual({
      state: 'will-crash',
      stale: true
    });
  });
});

describe('isStale / asksBeforeRun', () => {
  it('the guard asks on the last warning for this very text, outdated or being re-checked', () => {
    const crash = done(checksCrash);
    expect(isStale(crash, "df['Agee']", 3)).toBe(false);
    expect(asksBeforeRun(crash, "df['Agee']", 3)).toBe(true);
    expect(asksBeforeRun(done(modelCrash), "df['Agee']", 3)).toBe(true);
    expect(asksBeforeRun(crash, "df['Agee'] ", 3)).toBe(false);
    // Another cell ran since, and a re-check is in flight: still a warning to ask on.
    expect(asksBeforeRun(crash, "df['Agee']", 4)).toBe(true);
    const rechecking = { ...crash, pending: { what: 'recheck', epoch: 4 } };
    expect(asksBeforeRun(rechecking as ICheckRecord, "df['Agee']", 4)).toBe(
      true
    );
    expect(asksBeforeRun(done(modelNoCrash), "df['Agee']", 3)).toBe(false);
    expect(asksBeforeRun(undefined, '', 0)).toBe(false);
    // Ran and crashed: the traceback is there, no question.
    const ran = record({
      result: checksCrash,
      run: { kind: 'confirmed', ename: 'KeyError', evalue: "'Agee'", at: 1 }
    });
    expect(asksBeforeRun(ran, "df['Agee']", 5)).toBe(false);
  });
});

describe('overrules: a warning is never lost to weaker evidence', () => {
  const at = (result: IAnalyzeResult, epoch: number, tier?: 'checks') =>
    record({ result, epoch, ...(tier ? { tier } : {}) });

  it('a crash seen in a trial gives way only to a trial that ran the cell to its end, at the kernel as it is', () => {
    const seen = at(observedCrash, 3);
    expect(overrules(at(finishedTrial, 4), seen, 4)).toBe(true);
    // The re-check could not run a trial: the model or the checks alone cannot clear it.
    expect(overrules(at(blockedTrial, 4), seen, 4)).toBe(false);
    expect(overrules(at(noModelNoCrash, 4), seen, 4)).toBe(false);
    // Outdated on arrival (a run started while it was checking): not even a finished trial.
    expect(overrules(at(finishedTrial, 4), seen, 5)).toBe(false);
    // Older than the warning.
    expect(overrules(at(finishedTrial, 2), seen, 3)).toBe(false);
  });

  it("the checks' and the model's warnings give way to a full check of the kernel as it is now", () => {
    const certain = at(checksCrash, 3);
    expect(overrules(at(noModelNoCrash, 4), certain, 4)).toBe(true);
    expect(overrules(at(modelNoCrash, 4), at(modelCrash, 3), 4)).toBe(true);
    // The checks' first answer is not a full check: the trial or the model may still warn.
    expect(overrules(at(noModelNoCrash, 4, 'checks'), certain, 4)).toBe(false);
  });

  it('a newer warning always replaces an older one; a failure or an empty answer never does', () => {
    const seen = at(observedCrash, 3);
    expect(overrules(at(modelCrash, 4), seen, 4)).toBe(true);
    expect(overrules(at(checksCrash, 3, 'checks'), seen, 3)).toBe(true);
    expect(
      overrules(
        record({ phase: 'failed', error: 'HTTP 500', epoch: 4 }),
        seen,
        4
      )
    ).toBe(false);
    const noVerdict: IAnalyzeResult = {
      ...modelNoCrash,
      status: 'llm_error',
      verdict: null
    };
    expect(overrules(at(noVerdict, 4), seen, 4)).toBe(false);
  });

  it("a run's outcome gives way only to a check of the kernel after it", () => {
    const ran = record({
      result: checksCrash,
      epoch: 3,
      run: { kind: 'confirmed', ename: 'KeyError', evalue: "'Agee'", at: 1 }
    });
    expect(overrules(at(noModelNoCrash, 3), ran, 4)).toBe(false);
    expect(overrules(at(noModelNoCrash, 4), ran, 4)).toBe(true);
  });
});

describe('pushHistory', () => {
  it('keeps the newest first, bounded, and replaces an entry for the same text', () => {
    let history: ICheckRecord[] = [];
    history = pushHistory(
      history,
      record({ cellId: 'a', source: '1', startedAt: 1 })
    );
    history = pushHistory(
      history,
      record({ cellId: 'b', source: '2', startedAt: 2 })
    );
    history = pushHistory(
      history,
      record({ cellId: 'a', source: '1', startedAt: 3 })
    );
    expect(history.map(r => r.startedAt)).toEqual([3, 2]);
    for (let i = 0; i < 20; i++) {
      history = pushHistory(
        history,
        record({ cellId: `c${i}`, source: `${i}` }),
        5
      );
    }
    expect(history).toHaveLength(5);
    expect(history[0].cellId).toBe('c19');
  });
});
