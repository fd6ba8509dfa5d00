import { nullTranslator } from '@jupyterlab/translation';
import React from 'react';

import type { IBelowOutcome } from '../../contract/api';
import { CellBadge } from '../../badge/widget';
import { claimRecord } from '../../below/chain';
import { ChainSection, ClaimSection } from '../../below/view';
import type { IChainClaim } from '../../contract/tokens';
import { cellView } from '../../badge/verdict';
import { belowOutcome, checksCrash, finishedTrial } from '../fixtures';
import { rendered, texts } from '../harness';

const trans = nullTranslator.load('crane_jupyterlab');
const NUMBERS: Record<string, number> = { e: 2, x: 3, y: 4, d: 6 };
const numberOf = (id: string) => NUMBERS[id] ?? null;

function outcome(over: Partial<IBelowOutcome>): IBelowOutcome {
  return {
    cell_id: 'x',
    status: 'finished',
    exception: null,
    message: null,
    line: null,
    reads: [],
    elapsed_ms: 4,
    reason: null,
    after_cut: false,
    quick: null,
    without_edit: null,
    unbound: [],
    forecast: null,
    installs: null,
    ...over
  };
}

const CRASH = belowOutcome();

describe('the chain in the panel', () => {
  it('lists each cell below with its outcome in words and its time, each a link to the cell', async () => {
    const went: string[] = [];
    const { node, dispose } = await rendered(
      <ChainSection
        trans={trans}
        numberOf={numberOf}
        reveal={id => went.push(id)}
        originId="e"
        changedSince={id => id === 'y'}
        result={{
          ...finishedTrial,
          timing: { ...finishedTrial.timing, below_ms: 1250 },
          below: [
            outcome({ unbound: ['upper_limit'] }),
            outcome({
              cell_id: 'y',
              status: 'skipped',
              elapsed_ms: null,
              reason:
                'it reads nothing the chain changed, and the kernel already ran this same text'
            }),
            CRASH
          ]
        }}
      />
    );
    expect(texts(node, '.jp-Crane-chain-intro')[0]).toContain(
      'each as a quick step (1.3 s in all)'
    );
    expect(texts(node, '.jp-Crane-chain-entry')).toEqual([
      "cell 3: ran to its end (4 ms)reads upper_limit, which cell 2 no longer defines: it runs only on the kernel's old value and fails from the top",
      'cell 4: skipped: it reads nothing the chain changed, and the kernel already ran this same text (changed since)',
      "cell 6: crashed: KeyError: 'age' (line 1, reads df) (12 ms)"
    ]);
    (node.querySelectorAll('.jp-Crane-chain-go')[2] as HTMLElement).click();
    expect(went).toEqual(['d']);
    dispose();
  });

  it('says why the chain did not run when the edited cell did not run to its end', async () => {
    const reason = 'the edited cell did not run to its end in the trial';
    const { node, dispose } = await rendered(
      <ChainSection
        trans={trans}
        numberOf={numberOf}
        reveal={() => undefined}
        originId="e"
        result={{
          ...finishedTrial,
          below: [outcome({ status: 'not_reached', reason, elapsed_ms: null })]
        }}
      />
    );
    expect(texts(node, '.jp-Crane-chain-intro')).toEqual([
      `The trial did not run the cells below: ${reason}.`
    ]);
    dispose();
  });

  it("the claimed cell's diagnosis: after which edit, the line, what it reads, whom to blame", async () => {
    const claim: IChainClaim = {
      originId: 'e',
      originSource: 'df = 1',
      origin: 'edited',
      outcome: CRASH
    };
    const went: string[] = [];
    const { node, dispose } = await rendered(
      <ClaimSection
        trans={trans}
        numberOf={numberOf}
        reveal={id => went.push(id)}
        claim={claim}
        source={"df['age'].mean()"}
      />
    );
    expect(texts(node, '.jp-Crane-claim-after')).toEqual([
      'After your edit of cell 2:'
    ]);
    expect(texts(node, '.jp-Crane-cause-text')).toEqual(["KeyError: 'age'"]);
    expect(texts(node, '.jp-Crane-cause-line')).toEqual([
      "Line 1: df['age'].mean()"
    ]);
    const notes = texts(node, '.jp-Crane-claim-note').join(' ');
    expect(notes).toContain('It reads df, which the chain changed.');
    expect(notes).toContain('the edit is what breaks it');
    (node.querySelector('.jp-Crane-chain-origin') as HTMLElement).click();
    expect(went).toEqual(['e']);
    dispose();
  });
});

describe('the badges of the chain', () => {
  const edited = {
    cellId: 'e',
    source: 'df = 1',
    epoch: 0,
    phase: 'done' as const,
    startedAt: 0,
    sent: {},
    result: finishedTrial
  };
  const textOf = (badge: CellBadge) =>
    badge.node.querySelector('.jp-Crane-badge-text')!.textContent;
  const below = (observed: boolean) => ({
    cellId: 'd',
    number: 6,
    observed,
    cause: "KeyError: 'age'"
  });

  it("the edited cell's badge leads with the crash below, at its level, and its link goes there without opening the panel", () => {
    let opened = 0;
    const went: string[] = [];
    const badge = new CellBadge(
      trans,
      () => (opened += 1),
      undefined,
      id => went.push(id)
    );
    badge.render(cellView(edited, 'df = 1', 0), edited, null, {
      numberOf,
      downstream: below(true)
    });
    // What the user must act on comes first, in the colour of a certain crash; what was tried for
    // the cell itself follows.
    expect(textOf(badge)).toMatch(
      /^Cell 6 below would then crash: KeyError: 'age'\. No crash found in this cell itself \(tried: .*\)$/
    );
    expect(badge.state).toBe('will-crash');
    expect(badge.node.dataset.craneState).toBe('will-crash');
    expect(badge.hasClass('jp-mod-will-crash')).toBe(true);
    expect(badge.hasClass('jp-mod-no-crash')).toBe(false);
    expect(badge.hasClass('jp-mod-observed')).toBe(true);
    expect(badge.hasClass('jp-mod-leads-below')).toBe(true);
    expect(badge.isHidden).toBe(false);
    const link = badge.node.querySelector(
      '.jp-Crane-badge-below-go'
    ) as HTMLElement;
    expect(link.textContent).toBe('Cell 6 below would then crash');
    expect(link.title).toBe('Go to cell 6');
    link.click();
    expect(went).toEqual(['d']);
    expect(opened).toBe(0);
    // Without a crash below (the cell was edited again), the cell's own verdict is all it says.
    badge.render(cellView(edited, 'df = 1', 0), edited, null, { numberOf });
    expect(badge.node.querySelector('.jp-Crane-badge-below-go')).toBeNull();
    expect(textOf(badge)).toMatch(/^No crash found \(tried: .*\)$/);
    expect(badge.state).toBe('no-crash');
    expect(badge.hasClass('jp-mod-will-crash')).toBe(false);
    expect(badge.hasClass('jp-mod-leads-below')).toBe(false);
    badge.dispose();
  });

  it('a crash below that may come from a loop cut short gives the edited cell\'s badge the "may crash" level', () => {
    const badge = new CellBadge(trans, () => undefined);
    badge.render(cellView(edited, 'df = 1', 0), edited, null, {
      numberOf,
      downstream: below(false)
    });
    expect(textOf(badge)).toMatch(
      /^Cell 6 below may then crash: KeyError: 'age'\. No crash found in this cell itself/
    );
    expect(badge.state).toBe('may-crash');
    expect(badge.hasClass('jp-mod-may-crash')).toBe(true);
    expect(badge.hasClass('jp-mod-observed')).toBe(false);
    badge.dispose();
  });

  it("the crash below never outranks the cell's own outcome: a warning of its own leads, a clean run hides the badge", () => {
    const badge = new CellBadge(trans, () => undefined);
    const warned = { ...edited, result: checksCrash };
    badge.render(cellView(warned, 'df = 1', 0), warned, null, {
      numberOf,
      downstream: below(true)
    });
    expect(badge.state).toBe('will-crash');
    expect(textOf(badge)).toMatch(
      /^Will crash .*; and cell 6 below would then crash$/
    );
    expect(badge.hasClass('jp-mod-leads-below')).toBe(false);
    const ran = {
      ...edited,
      run: { kind: 'passed' as const, ename: '', evalue: '', at: 1 }
    };
    badge.render(cellView(ran, 'df = 1', 0), ran, null, {
      numberOf,
      downstream: below(true)
    });
    expect(badge.state).toBe('passed');
    expect(badge.isHidden).toBe(true);
    badge.dispose();
  });

  it("the claimed cell's badge: will crash after the edit, with the observed icon", () => {
    const badge = new CellBadge(trans, () => undefined);
    const claimed = claimRecord({ cellId: 'd', source: "df['age']" }, 0, {
      originId: 'e',
      originSource: 'df = 1',
      origin: 'edited',
      outcome: CRASH
    });
    badge.render(cellView(claimed, "df['age']", 0), claimed, null, {
      numberOf
    });
    expect(badge.hasClass('jp-mod-observed')).toBe(true);
    expect(badge.node.querySelector('.jp-Crane-badge-text')!.textContent).toBe(
      "Will crash after your edit of cell 2 (observed in a trial run): KeyError: 'age' (line 1, reads df)"
    );
    badge.dispose();
  });
});
