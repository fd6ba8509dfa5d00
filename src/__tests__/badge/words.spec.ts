import { nullTranslator } from '@jupyterlab/translation';

import type { IAnalyzeResult } from '../../contract/api';
import type { ICheckRecord } from '../../contract/tokens';
import {
  causeText,
  describeCell,
  formatDuration,
  stateLabel
} from '../../badge/words';
import {
  checksCrash,
  modelNoCrash,
  noModelCrash,
  syntaxError
} from '../fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

function done(result: IAnalyzeResult, extra: Partial<ICheckRecord> = {}) {
  return {
    cellId: 'c',
    source: 'x',
    epoch: 1,
    phase: 'done' as const,
    startedAt: 0,
    sent: {},
    result,
    ...extra
  };
}

describe('describe', () => {
  it('writes each state the same way for every view', () => {
    const d = describeCell(
      trans,
      { state: 'will-crash', stale: false },
      done(noModelCrash)
    );
    expect(d.label).toBe('Will crash');
    expect(d.basis).toBe('certain: deterministic check (no model configured)');
    expect(d.cause).toBe(
      "KeyError: df has no column 'Agee' (line 1). Did you mean 'Age'?"
    );
    expect(
      describeCell(
        trans,
        { state: 'will-crash', stale: false },
        done(syntaxError)
      ).basis
    ).toBe('certain: syntax error');
  });

  it('describes a confirmed and a missed crash by the real exception', () => {
    const run = { ename: 'KeyError', evalue: "'Agee'", at: 1 };
    const confirmed = describeCell(
      trans,
      { state: 'confirmed', stale: false },
      done(checksCrash, { run: { ...run, kind: 'confirmed' } })
    );
    expect(confirmed.label).toBe('Crashed as warned');
    // The label says it all: no reason beside it.
    expect(confirmed.basis).toBe('');
    expect(confirmed.cause).toBe("KeyError: 'Agee'");
    const missed = describeCell(
      trans,
      { state: 'missed', stale: false },
      done(modelNoCrash, {
        run: { kind: 'missed', ename: 'KeyError', evalue: '10', at: 1 }
      })
    );
    expect(missed.label).toBe('Crashed without a warning');
    expect(missed.basis).toBe('the check had found no crash');
  });

  it('names every state', () => {
    expect(stateLabel(trans, 'may-crash')).toBe('May crash');
    expect(stateLabel(trans, 'no-crash')).toBe('No crash found');
    expect(stateLabel(trans, 'busy')).toContain('idle');
  });
});

describe('causeText: close matches in the cause', () => {
  /** checksCrash with the missing column's close matches replaced. */
  function withClose(close: string[]): IAnalyzeResult {
    const runtime = JSON.parse(JSON.stringify(checksCrash.runtime));
    for (const child of runtime.objects[0].children) {
      if (child.missing) {
        child.facts = [{ cat: 'S', key: 'close', value: close }];
      }
    }
    return { ...checksCrash, runtime };
  }

  it('asks "Did you mean" for what the cause names and the kernel lacks', () => {
    const cause = { cause: "KeyError: 'Agee'" };
    expect(causeText(trans, cause, checksCrash)).toBe(
      "KeyError: 'Agee'. Did you mean 'Age'?"
    );
    expect(causeText(trans, cause, withClose(['Age', 'age', 'Aged']))).toBe(
      "KeyError: 'Agee'. Did you mean 'Age', 'age' or 'Aged'?"
    );
  });

  it('adds nothing without close matches, for another name, or when the cause asks already', () => {
    expect(causeText(trans, { cause: "KeyError: 'Agee'" }, withClose([]))).toBe(
      "KeyError: 'Agee'"
    );
    expect(causeText(trans, { cause: "KeyError: 'Fare2'" }, checksCrash)).toBe(
      "KeyError: 'Fare2'"
    );
    const asked = "NameError: name 'Agee' is not defined. Did you mean: 'Age'?";
    expect(causeText(trans, { cause: asked }, checksCrash)).toBe(asked);
  });
});

describe('formatDuration', () => {
  it('says durations the way people do', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(35.4)).toBe('35 ms');
    expect(formatDuration(0.3)).toBe('under 1 ms');
    expect(formatDuration(2400)).toBe('2.4 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(185_000)).toBe('3 min 5 s');
    expect(formatDuration(3_720_000)).toBe('1 h 2 min');
  });
});
