import { nullTranslator } from '@jupyterlab/translation';

import type { IBelowOutcome } from '../../contract/api';
import type { IChainClaim } from '../../contract/tokens';
import {
  claimDescription,
  claimLevel,
  downstreamLead,
  downstreamLevel,
  downstreamText
} from '../../badge/claim';
import { cellView } from '../../badge/verdict';
import { describeText } from '../../badge/widget';
import { describeCell } from '../../badge/words';
import { claimRecord, downstreamOf } from '../../below/chain';
import { outcomeText, unboundText } from '../../below/view';
import { belowOutcome as outcome } from '../fixtures';
import { BELOW, claim, EDIT } from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

describe('what a claim says', () => {
  const numberOf = (id: string) => ({ e: 2, d: 6 })[id] ?? null;

  function sentence(c: IChainClaim): string {
    const record = claimRecord({ cellId: 'd', source: BELOW }, 0, c);
    return describeText(
      trans,
      describeCell(trans, cellView(record, BELOW, 0), record, numberOf)
    );
  }

  it('an observed crash after an edit: will crash, blamed on the edit, with its line and what it reads', () => {
    expect(claimLevel(outcome())).toBe('will-crash');
    expect(sentence(claim())).toBe(
      "Will crash after your edit of cell 2 (observed in a trial run): KeyError: 'age' (line 1, reads df)"
    );
    const d = { cellId: 'd', number: 6, observed: true, cause: '' };
    expect(downstreamText(trans, d)).toBe('and cell 6 below would then crash');
    expect(downstreamLead(trans, d)).toBe('Cell 6 below would then crash');
    expect(downstreamLevel(d)).toBe('will-crash');
  });

  it('a crash that may come from a loop cut short is at most "may crash"', () => {
    const afterCut = claim({ outcome: outcome({ after_cut: true }) });
    expect(claimLevel(afterCut.outcome)).toBe('may-crash');
    expect(sentence(afterCut)).toMatch(
      /^May crash after your edit of cell 2 \(seen in a trial run after a loop above it was cut short; the crash may depend on how many iterations ran\)/
    );
    const quick = (crash: 'certain' | 'depends') =>
      outcome({
        quick: { k: 2, loops: [], cut: true, crash, skipped_asserts: [] }
      });
    expect(claimLevel(quick('depends'))).toBe('may-crash');
    expect(claimLevel(quick('certain'))).toBe('will-crash');
    const d = { cellId: 'd', number: 6, observed: false, cause: '' };
    expect(downstreamText(trans, d)).toBe('and cell 6 below may then crash');
    expect(downstreamLead(trans, d)).toBe('Cell 6 below may then crash');
    expect(downstreamLevel(d)).toBe('may-crash');
  });

  it('a cell that crashes without the edit too is not blamed on it', () => {
    const anyway = claim({ outcome: outcome({ without_edit: true }) });
    expect(sentence(anyway)).toContain(
      '(observed in a trial run; it crashes with or without this edit)'
    );
    const records = [claimRecord({ cellId: 'd', source: BELOW }, 0, anyway)];
    expect(downstreamOf(records, 'e', EDIT, numberOf)).toBeNull();
  });

  it('says after what: an edit, a first run, a run again; a cell it cannot number', () => {
    expect(
      claimDescription(trans, claim({ origin: 'new' }), numberOf).after
    ).toBe('after cell 2 runs');
    expect(
      claimDescription(trans, claim({ origin: 'same' }), numberOf).after
    ).toBe('after cell 2 runs again');
    expect(claimDescription(trans, claim()).after).toBe(
      'after your edit of a cell above'
    );
  });

  it('words every outcome of the chain', () => {
    const words = (over: Partial<IBelowOutcome>) =>
      outcomeText(
        trans,
        outcome({
          exception: null,
          message: null,
          line: null,
          reads: [],
          ...over
        })
      );
    expect(words({ status: 'finished' })).toBe('ran to its end');
    expect(words({ status: 'shortened' })).toBe(
      'ran to its end with its long loops cut short (a quick step)'
    );
    expect(
      words({
        status: 'skipped',
        reason:
          'it reads nothing the chain changed, and the kernel already ran this same text.'
      })
    ).toBe(
      'skipped: it reads nothing the chain changed, and the kernel already ran this same text'
    );
    expect(
      words({
        status: 'not_reached',
        reason: 'an earlier cell below did not run to its end'
      })
    ).toBe('not reached: an earlier cell below did not run to its end');
    expect(
      words({
        status: 'blocked',
        reason: 'the sandbox refused to connect to 10.0.0.1:80'
      })
    ).toBe(
      'blocked by the sandbox: the sandbox refused to connect to 10.0.0.1:80'
    );
    expect(words({ status: 'timed_out' })).toBe('timed out');
    expect(outcomeText(trans, outcome())).toBe(
      "crashed: KeyError: 'age' (line 1, reads df)"
    );
    expect(outcomeText(trans, outcome({ without_edit: true }))).toBe(
      "crashed: KeyError: 'age' (line 1, reads df); it crashes with or without this edit"
    );
    expect(unboundText(trans, ['upper_limit'], 6)).toBe(
      "reads `upper_limit`, which cell 6 no longer defines: it runs only on the kernel's old value and fails from the top"
    );
  });
});
