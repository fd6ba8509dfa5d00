import { nullTranslator } from '@jupyterlab/translation';

import {
  codeCells,
  MAX_CELLS,
  sameCells,
  topRequest
} from '../../fromtop/request';

const trans = nullTranslator.load('crane_jupyterlab');

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
