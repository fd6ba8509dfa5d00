import { nullTranslator } from '@jupyterlab/translation';

import type { IAnalyzeResult } from '../../contract/api';
import type { ICheckRecord } from '../../contract/tokens';
import {
  absentNames,
  assess,
  firstSentence,
  levelOf,
  plain
} from '../../badge/levels';
import { progressText, trialFallbackText } from '../../badge/trial';
import { basisLabel, describeCell } from '../../badge/words';
import {
  blockedTrial,
  checksCrash,
  finishedTrial,
  modelCrash,
  modelNoCrash,
  noModelCrash,
  noModelNoCrash,
  observedCrash,
  quickCrash,
  syntaxError,
  trialOutcome,
  unfitted
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

describe('level mapping', () => {
  it('makes certain sources "will crash" and the model\'s "may crash"', () => {
    expect(levelOf({ detection: true, source: 'trial' })).toBe('will-crash');
    expect(levelOf({ detection: true, source: 'syntax' })).toBe('will-crash');
    expect(levelOf({ detection: true, source: 'checks' })).toBe('will-crash');
    expect(levelOf({ detection: true, source: 'llm' })).toBe('may-crash');
    for (const source of ['trial', 'syntax', 'checks', 'llm'] as const) {
      expect(levelOf({ detection: false, source })).toBe('no-crash');
    }
  });

  it('reads every recorded answer to the level a user should see', () => {
    const levels = [
      checksCrash,
      unfitted,
      syntaxError,
      noModelCrash,
      observedCrash,
      modelCrash,
      modelNoCrash,
      noModelNoCrash,
      finishedTrial,
      blockedTrial
    ].map(r => assess(r)?.level);
    expect(levels).toEqual([
      'will-crash',
      'will-crash',
      'will-crash',
      'will-crash',
      'will-crash',
      'may-crash',
      'no-crash',
      'no-crash',
      'no-crash',
      'no-crash'
    ]);
  });

  it('has no verdict when the model failed and nothing was certain', () => {
    expect(
      assess({
        ...modelNoCrash,
        status: 'llm_error',
        verdict: null,
        error: { kind: 'timeout', message: 'no answer within 60 s' }
      })
    ).toBeNull();
  });
});

describe('assess', () => {
  it("takes a check's cause and line from its finding", () => {
    const a = assess(checksCrash)!;
    expect(a.basis).toBe('checks');
    expect(a.cause).toBe("KeyError: df has no column 'Agee' (line 1).");
    expect(a.line).toBe(1);
    expect(a.votes).toBeNull();
  });

  it('shows an observed crash as the real exception, message and line', () => {
    const a = assess(observedCrash)!;
    expect(a.basis).toBe('trial');
    expect(a.cause).toBe("KeyError: 'Agee'");
    expect(a.line).toBe(2);
    expect(basisLabel(trans, a)).toBe('observed in a trial run');
  });

  it("gives a prediction's vote split", () => {
    const voted: IAnalyzeResult = {
      ...modelCrash,
      verdict: { ...modelCrash.verdict!, votes: [true, false, true] }
    };
    const a = assess(voted)!;
    expect(a.votes).toEqual([2, 3]);
    expect(basisLabel(trans, a)).toBe("the model's prediction, 2 of 3 votes");
    expect(basisLabel(trans, assess(modelCrash)!)).toBe(
      "the model's prediction"
    );
    expect(a.cause).toBe(
      'The target cell reads something the kernel does not have, so it raises a KeyError.'
    );
  });

  it('says what was tried before "no crash found"', () => {
    expect(basisLabel(trans, assess(noModelNoCrash)!)).toBe(
      'tried: the deterministic checks'
    );
    expect(basisLabel(trans, assess(modelNoCrash)!)).toBe(
      'tried: the deterministic checks and the model'
    );
    expect(basisLabel(trans, assess(finishedTrial)!)).toBe(
      'tried: a trial run (it ran without error) and the deterministic checks'
    );
  });

  it('says why an inconclusive trial did not decide, and what did instead', () => {
    const a = assess(blockedTrial)!;
    expect(a.trialFallback?.status).toBe('blocked');
    expect(trialFallbackText(trans, a.trialFallback!, a.basis)).toBe(
      'The trial run stopped by the sandbox: writing /home/user/out.csv was refused. ' +
        'The verdict falls back to the checks and the model.'
    );
    const timedOut: IAnalyzeResult = {
      ...noModelNoCrash,
      trial: trialOutcome('timed_out', null)
    };
    expect(
      trialFallbackText(trans, assess(timedOut)!.trialFallback!, 'checks')
    ).toBe(
      'The trial run timed out. The verdict falls back to the deterministic checks.'
    );
    // The badge, the panel and the guard name it in a few words.
    expect(basisLabel(trans, a)).toBe(
      'tried: the deterministic checks and the model; trial run blocked by the sandbox'
    );
    expect(basisLabel(trans, assess(timedOut)!, true)).toBe(
      'tried: the deterministic checks (no model configured); trial run timed out'
    );
    const outOfMemory = {
      ...checksCrash,
      trial: trialOutcome('out_of_memory', null)
    };
    expect(basisLabel(trans, assess(outOfMemory)!)).toBe(
      'certain: deterministic check; trial run out of memory'
    );
    // A crash or a finished run is not a fallback.
    expect(assess(observedCrash)!.trialFallback).toBeNull();
    expect(assess(finishedTrial)!.trialFallback).toBeNull();
  });

  it('never hides a name the kernel lacks behind "no crash found"', () => {
    const withMissing: IAnalyzeResult = {
      ...noModelNoCrash,
      runtime: {
        undefined: ['clean_text'],
        objects: [
          {
            expr: 'df',
            type: 'pandas.DataFrame',
            facts: [],
            children: [{ expr: "df['x']", type: '', facts: [], missing: true }]
          }
        ]
      }
    };
    expect(absentNames(withMissing)).toEqual(['clean_text', "df['x']"]);
    expect(assess(withMissing)!.notes).toEqual(['clean_text', "df['x']"]);
    expect(assess(noModelNoCrash)!.notes).toEqual([]);
  });
});

describe('text helpers', () => {
  it('drops code marks and keeps the first sentence', () => {
    expect(plain('`rf` is not fitted')).toBe('rf is not fitted');
    expect(
      firstSentence("KeyError: 'Agee' is not a column. The frame has Age.")
    ).toBe("KeyError: 'Agee' is not a column.");
    expect(firstSentence('np.mean fails on strings')).toBe(
      'np.mean fails on strings'
    );
    // Keras: the first line alone, then a block of the call's arguments.
    expect(
      firstSentence(
        'ValueError: Input 0 of layer "dense" is incompatible with the layer: expected axis -1 of ' +
          'input shape to have value 4, but received input with shape (None, 5)\n\n' +
          'Arguments received by Sequential.call():\n  • inputs=tf.Tensor(shape=(None, 5))\n' +
          '  • training=True (line 3), observed in a trial run.'
      )
    ).toBe(
      'ValueError: Input 0 of layer "dense" is incompatible with the layer: expected axis -1 of ' +
        'input shape to have value 4, but received input with shape (None, 5)'
    );
    const long = firstSentence('x'.repeat(300), 50);
    expect(long).toHaveLength(50);
    expect(long.endsWith('…')).toBe(true);
  });

  describe('quick trials (loops cut short)', () => {
    it('a crash that does not depend on the cut is its own "will crash" level, with the real exception and line', () => {
      const result = quickCrash('certain');
      expect(levelOf(result.verdict!)).toBe('will-crash');
      const a = assess(result)!;
      expect(a.cause).toBe(
        'RuntimeError: mat1 and mat2 shapes cannot be multiplied (2400x19 and 20x128)'
      );
      expect(a.line).toBe(14);
      const d = describeCell(
        trans,
        { state: 'will-crash', stale: false },
        done(result)
      );
      // The qualifier is said with what it qualifies, never alone.
      expect(d.label).toBe('Will crash');
      expect(d.basis).toBe(
        'seen in a quick trial, loops cut to their first 2 iterations; the crash does not depend on how many ran'
      );
      // Apart from a full trial's observed crash.
      expect(
        describeCell(
          trans,
          { state: 'will-crash', stale: false },
          done(observedCrash)
        ).label
      ).toBe('Will crash');
      expect(basisLabel(trans, a)).toBe(
        'seen in a quick trial, loops cut short; the crash does not depend on how many ran'
      );
    });

    it('a crash that may depend on the cut is "may crash", never certain', () => {
      const result = quickCrash('depends');
      expect(levelOf(result.verdict!)).toBe('may-crash');
      const d = describeCell(
        trans,
        { state: 'may-crash', stale: false },
        done(result)
      );
      expect(d.label).toBe('May crash');
      expect(d.basis).toBe(
        'seen in a quick trial, loops cut to their first 2 iterations; the crash may depend on how many ran'
      );
      expect(d.line).toBe(14);
    });

    it('says when long library calls ran on a sample of their rows, alone or beside cut loops', () => {
      const result = quickCrash('depends');
      const quick = result.trial!.quick!;
      const fit = {
        line: 3,
        kind: 'fit',
        iterations: 1,
        runs: 1,
        cut: true,
        total: null,
        seconds: null,
        full_s: null
      };
      const state = { state: 'may-crash' as const, stale: false };
      result.trial = {
        ...result.trial!,
        quick: { ...quick, loops: [fit] }
      };
      expect(describeCell(trans, state, done(result)).basis).toBe(
        'seen in a quick trial, long library calls run on a sample of their rows; the crash may depend on how many ran'
      );
      result.trial = {
        ...result.trial!,
        quick: { ...quick, loops: [...quick.loops, fit] }
      };
      expect(describeCell(trans, state, done(result)).basis).toBe(
        'seen in a quick trial, loops cut short and long library calls run on a sample of their rows; the crash may depend on how many ran'
      );
    });

    it('a shortened run that finished, or failed as shortened runs do, is no verdict of its own', () => {
      const finished = quickCrash('certain', 'checks');
      finished.trial = {
        ...finished.trial!,
        status: 'finished',
        exception: null,
        message: null,
        line: null,
        frames: []
      };
      finished.verdict = { ...finished.verdict!, detection: false };
      const a = assess(finished)!;
      expect(a.level).toBe('no-crash');
      expect(a.tried).not.toContain('trial'); // not "it ran without error"
      expect(a.trialFallback).not.toBeNull();
      expect(trialFallbackText(trans, a.trialFallback!, a.basis)).toBe(
        'The trial run: the first 2 iterations of its long loops ran without an error ' +
          '(a quick trial: the rest did not run). The verdict falls back to the deterministic checks.'
      );
      const shortened = quickCrash('shortened', 'checks');
      shortened.verdict = { ...shortened.verdict!, detection: false };
      expect(assess(shortened)!.trialFallback).not.toBeNull();
      expect(progressText(trans, shortened.trial!)).toContain(
        'which a shortened run does by itself'
      );
    });

    it('a timed-out full trial says how far it got', () => {
      const timedOut: IAnalyzeResult = {
        ...noModelNoCrash,
        trial: {
          ...trialOutcome('timed_out', 'the cell ran past the 5 s budget'),
          progress: {
            line: 6,
            elapsed_ms: 5000,
            loops: [
              {
                line: 3,
                kind: 'for',
                iterations: 3,
                runs: 1,
                cut: false,
                total: 12,
                seconds: null,
                full_s: null
              }
            ]
          }
        }
      };
      expect(progressText(trans, timedOut.trial!)).toBe(
        'ran 5 s: 3 of 12 iterations of the loop at line 3 without an error (line 6)'
      );
      expect(
        trialFallbackText(trans, assess(timedOut)!.trialFallback!, 'checks')
      ).toBe(
        'The trial run timed out: the cell ran past the 5 s budget. It ran 5 s: 3 of 12 iterations ' +
          'of the loop at line 3 without an error (line 6). The verdict falls back to the deterministic checks.'
      );
    });
  });
});
