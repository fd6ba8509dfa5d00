import { nullTranslator } from '@jupyterlab/translation';

import type { INotebookCell } from '../../contract/api';
import {
  badgeWords,
  cellWords,
  crashCause,
  progressText,
  summaryText
} from '../../fromtop/words';
import { doneRun, outcome } from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

const NAME_ERROR = outcome('c2', 'crashed', {
  exception: 'NameError',
  message: "name 'df_clean' is not defined",
  line: 1,
  hidden: true
});

/** The cells' numbers in the notebook: c1 is cell 2 (a markdown cell comes first). */
const numberOf = (id: string) => ({ c0: 1, c1: 2, c2: 3 })[id] ?? null;

describe('cellWords', () => {
  it('says each status in words', () => {
    const words = (c: INotebookCell) => cellWords(trans, c);
    expect(words(outcome('c', 'ran'))).toEqual({ status: 'ran', detail: '' });
    expect(words(outcome('c', 'shortened')).status).toBe('shortened');
    expect(words(outcome('c', 'shortened')).detail).toMatch(
      /cut to their first iterations or a sample.*not claimed/
    );
    expect(
      words(
        outcome('c', 'blocked', {
          reason: 'the sandbox refused to start a program (curl).'
        })
      )
    ).toEqual({
      status: 'blocked by the sandbox',
      detail: 'the sandbox refused to start a program (curl)'
    });
    expect(
      words(outcome('c', 'unavailable', { reason: 'no sandbox' }))
    ).toEqual({ status: 'could not run', detail: 'no sandbox' });
    expect(words(outcome('c', 'timed_out')).status).toBe('timed out');
    expect(words(outcome('c', 'out_of_memory')).status).toBe(
      'ran out of memory'
    );
    expect(words(outcome('c', 'not_reached'))).toEqual({
      status: 'not reached',
      detail: ''
    });
  });

  it('gives a crash its exception and line, and the hidden state while the kernel holds it', () => {
    expect(cellWords(trans, NAME_ERROR)).toEqual({
      status: 'crashed',
      detail:
        "NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no longer defines it"
    });
    expect(cellWords(trans, NAME_ERROR, false).detail).toBe(
      "NameError: name 'df_clean' is not defined (line 1)"
    );
    expect(
      cellWords(trans, { ...NAME_ERROR, hidden: false, line: null }).detail
    ).toBe("NameError: name 'df_clean' is not defined");
  });

  it('claims no crash after a cut loop', () => {
    const words = cellWords(
      trans,
      outcome('c', 'crashed', {
        exception: 'IndexError',
        message: 'list index out of range',
        line: 3,
        after_cut: true
      })
    );
    expect(words.status).toBe('crashed after a cut');
    expect(words.detail).toMatch(/may come from the cut: not claimed/);
  });

  it("skips a library's wrapper paragraph and cuts a long message", () => {
    expect(
      crashCause({
        exception: 'ValueError',
        message:
          'Exception encountered when calling Sequential.call().\n\nInput 0 is incompatible'
      })
    ).toBe('ValueError: Input 0 is incompatible');
    expect(
      crashCause({ exception: 'E', message: 'x'.repeat(400) }).length
    ).toBe(300);
    expect(crashCause({ exception: null, message: null })).toBe('Exception');
  });
});

describe('summaryText, progressText, badgeWords', () => {
  it('names the cell where the notebook fails from the top', () => {
    const run = doneRun([
      outcome('c0', 'ran'),
      outcome('c1', 'shortened'),
      NAME_ERROR
    ]);
    expect(summaryText(trans, run, numberOf)).toBe(
      "Fails from the top at cell 3: NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no longer defines it"
    );
    // A cell no longer in the notebook: its place among the code cells.
    expect(summaryText(trans, run, () => null)).toMatch(/^.* at code cell 3:/);
  });

  it('says a notebook runs from the top, and how many cells were shortened', () => {
    expect(summaryText(trans, doneRun([outcome('c0', 'ran')]), numberOf)).toBe(
      'Runs from the top: all 1 code cells ran without an error.'
    );
    expect(
      summaryText(
        trans,
        doneRun([outcome('c0', 'ran'), outcome('c1', 'shortened')]),
        numberOf
      )
    ).toMatch(/all 2 code cells ran without an error, 1 of them shortened/);
  });

  it('says where a run stopped without a crash to claim', () => {
    const run = doneRun([
      outcome('c0', 'ran'),
      outcome('c1', 'blocked', { reason: 'the sandbox refused to connect' }),
      outcome('c2', 'not_reached')
    ]);
    expect(summaryText(trans, run, numberOf)).toBe(
      'Stopped at cell 2 (blocked by the sandbox: the sandbox refused to connect); the cells after it were not checked.'
    );
  });

  it('says a run went on to the end past the cells it could not run', () => {
    const run = doneRun([
      outcome('c0', 'ran'),
      outcome('c1', 'blocked', {
        reason: "the sandbox refused to let 'wget' reach the network"
      }),
      outcome('c2', 'ran'),
      outcome('c3', 'unavailable', { reason: 'it reads data' })
    ]);
    expect(summaryText(trans, run, numberOf)).toBe(
      'Ran to the end without a crash it could claim; 2 code cells could not be checked here, ' +
        "the first cell 2 (blocked by the sandbox: the sandbox refused to let 'wget' reach the network)."
    );
  });

  it('says a run was cancelled, or failed, in words', () => {
    const run = doneRun([outcome('c0', 'ran')]);
    expect(
      summaryText(trans, { ...run, state: 'cancelled', done: 1 }, numberOf)
    ).toBe('Cancelled after 1 of 1 code cells.');
    expect(
      summaryText(
        trans,
        { ...run, state: 'error', message: 'the kernel died' },
        numberOf
      )
    ).toBe('The run from the top failed: the kernel died');
  });

  it('follows a running run: starting, then the cell running', () => {
    const sent = [
      { cellId: 'c0', source: 'a' },
      { cellId: 'c1', source: 'b' }
    ];
    const run = { ...doneRun([]), state: 'running' as const, total: 2 };
    expect(progressText(trans, { ...run, done: 0 }, sent, numberOf)).toMatch(
      /^Starting a fresh worker/
    );
    expect(
      progressText(trans, { ...run, done: 1, running: 1 }, sent, numberOf)
    ).toBe('Cell 2 running (1 of 2 code cells done)');
  });

  it('words the badge of the first crash', () => {
    const words = badgeWords(trans, NAME_ERROR);
    expect(words.label).toBe('Fails from the top');
    expect(words.cause).toBe(
      "NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no longer defines it"
    );
  });
});
