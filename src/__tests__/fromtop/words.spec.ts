import { nullTranslator } from '@jupyterlab/translation';

import type { INotebookCell } from '../../contract/api';
import {
  badgeWords,
  cellWords,
  codeCells,
  crashCause,
  MAX_CELLS,
  progressText,
  sameCells,
  summaryText,
  topRequest
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

describe('topRequest', () => {
  const cells = [
    { id: 'md', type: 'markdown', source: '# Title' },
    { id: 'c1', type: 'code', source: 'import pandas as pd' },
    { id: 'raw', type: 'raw', source: 'raw' },
    { id: 'c2', type: 'code', source: 'df_clean.head()' }
  ];

  it("sends the code cells in order, with the model's ids, and no settings unless asked", () => {
    const plan = topRequest(trans, 'k1', cells);
    expect(plan).toEqual({
      request: {
        kernel_id: 'k1',
        cells: [
          { cell_id: 'c1', source: 'import pandas as pd' },
          { cell_id: 'c2', source: 'df_clean.head()' }
        ]
      },
      sent: [
        { cellId: 'c1', source: 'import pandas as pd' },
        { cellId: 'c2', source: 'df_clean.head()' }
      ]
    });
    const full = topRequest(trans, 'k1', cells, { full: true });
    expect(typeof full !== 'string' && full.request.settings).toEqual({
      full: true
    });
  });

  it('sends an id longer than the server takes as null, keeping the order', () => {
    const long = 'x'.repeat(201);
    const plan = topRequest(trans, 'k1', [
      { id: long, type: 'code', source: 'a = 1' }
    ]);
    expect(typeof plan !== 'string' && plan.request.cells[0].cell_id).toBe(
      null
    );
    expect(typeof plan !== 'string' && plan.sent[0].cellId).toBe(long);
  });

  it('says why nothing can be sent', () => {
    expect(topRequest(trans, 'k1', cells.slice(0, 1))).toBe(
      'The notebook has no code cells.'
    );
    const many = Array.from({ length: MAX_CELLS + 1 }, (_, i) => ({
      id: `c${i}`,
      type: 'code',
      source: ''
    }));
    expect(topRequest(trans, 'k1', many)).toMatch(/at most 1000/);
    const big = [{ id: 'c', type: 'code', source: 'x'.repeat(1_000_001) }];
    expect(topRequest(trans, 'k1', big)).toMatch(/too much code/);
  });
});

describe('sameCells (staleness)', () => {
  const sent = codeCells([
    { id: 'c1', type: 'code', source: 'df_clean = df.dropna()' },
    { id: 'm', type: 'markdown', source: 'note' },
    { id: 'c2', type: 'code', source: 'df_clean.head()' }
  ]);

  it('holds while the code cells are those sent; markdown may change', () => {
    const now = codeCells([
      { id: 'c1', type: 'code', source: 'df_clean = df.dropna()' },
      { id: 'm2', type: 'markdown', source: 'another note' },
      { id: 'c2', type: 'code', source: 'df_clean.head()' }
    ]);
    expect(sameCells(sent, now)).toBe(true);
  });

  it('fails when a code cell is edited, added, removed, moved or turned into markdown', () => {
    const [a, b] = sent;
    expect(sameCells(sent, [a, { ...b, source: 'df.head()' }])).toBe(false);
    expect(sameCells(sent, [a, b, { cellId: 'c3', source: '' }])).toBe(false);
    expect(sameCells(sent, [b])).toBe(false);
    expect(sameCells(sent, [b, a])).toBe(false);
    expect(
      sameCells(
        sent,
        codeCells([
          { id: 'c1', type: 'markdown', source: a.source },
          { id: 'c2', type: 'code', source: b.source }
        ])
      )
    ).toBe(false);
  });
});

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
