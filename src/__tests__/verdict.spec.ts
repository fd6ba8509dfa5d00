import type {
  IAnalyzeResult,
  ICheckRecord,
  ICraneSettings,
  IRuntime,
  IServerConfig,
  IVerdict
} from '../tokens';
import {
  badgeView,
  categoriesOf,
  formatValue,
  groupFacts,
  isFreshCrash,
  isStale,
  oneLine,
  pushHistory,
  requestPlan,
  voteSplit
} from '../verdict';
import { DEFAULT_SETTINGS } from '../settings';

function verdict(detection: boolean, reasoning = 'because'): IVerdict {
  return {
    detection,
    reasoning,
    source: 'llm',
    votes: [detection],
    findings: []
  };
}

function result(
  status: IAnalyzeResult['status'],
  v: IVerdict | null
): IAnalyzeResult {
  return {
    status,
    verdict: v,
    runtime: null,
    runtime_text: '',
    executed_cells: 2,
    model: 'openai/stub',
    timing: { extraction_ms: 10, llm_ms: 20, total_ms: 35 },
    tokens: { prompt: 100, completion: 20 }
  };
}

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

describe('badgeView', () => {
  it('shows nothing before the first check', () => {
    expect(badgeView(undefined, 'x', 0)).toEqual({
      state: 'none',
      stale: false
    });
  });

  it('maps the answer to a state', () => {
    const src = "df['Agee']";
    expect(badgeView(record({ phase: 'checking' }), src, 3).state).toBe(
      'checking'
    );
    expect(
      badgeView(record({ result: result('ok', verdict(true)) }), src, 3).state
    ).toBe('crash');
    expect(
      badgeView(record({ result: result('ok', verdict(false)) }), src, 3).state
    ).toBe('ok');
    expect(
      badgeView(record({ result: result('llm_error', null) }), src, 3).state
    ).toBe('error');
    expect(
      badgeView(record({ result: result('llm_error', verdict(false)) }), src, 3)
        .state
    ).toBe('error');
    // A certain crash found by the checks still counts when the model failed.
    expect(
      badgeView(record({ result: result('llm_error', verdict(true)) }), src, 3)
        .state
    ).toBe('crash');
    expect(
      badgeView(record({ result: result('no_model', verdict(false)) }), src, 3)
        .state
    ).toBe('limited');
    expect(
      badgeView(record({ result: result('no_model', verdict(true)) }), src, 3)
        .state
    ).toBe('crash');
    expect(
      badgeView(record({ phase: 'failed', error: 'HTTP 500' }), src, 3).state
    ).toBe('error');
    expect(badgeView(record({ phase: 'busy' }), src, 3).state).toBe('busy');
  });

  it('marks a verdict stale when the text or the kernel epoch changed', () => {
    const r = record({ result: result('ok', verdict(true)) });
    expect(badgeView(r, "df['Agee']", 3).stale).toBe(false);
    expect(badgeView(r, "df['Age']", 3)).toEqual({
      state: 'crash',
      stale: true
    });
    expect(badgeView(r, "df['Agee']", 4)).toEqual({
      state: 'crash',
      stale: true
    });
    // A check in flight is never shown as stale: its answer is what matters.
    expect(badgeView(record({ phase: 'checking' }), 'other', 9).stale).toBe(
      false
    );
  });
});

describe('isStale / isFreshCrash', () => {
  it('only a crash for the current text and epoch is fresh', () => {
    const crash = record({ result: result('ok', verdict(true)) });
    expect(isStale(crash, "df['Agee']", 3)).toBe(false);
    expect(isFreshCrash(crash, "df['Agee']", 3)).toBe(true);
    expect(isFreshCrash(crash, "df['Agee'] ", 3)).toBe(false);
    expect(isFreshCrash(crash, "df['Agee']", 4)).toBe(false);
    expect(
      isFreshCrash(
        record({ result: result('ok', verdict(false)) }),
        "df['Agee']",
        3
      )
    ).toBe(false);
    expect(isFreshCrash(undefined, '', 0)).toBe(false);
  });
});

describe('oneLine', () => {
  it('keeps the first sentence', () => {
    expect(
      oneLine("KeyError: 'Agee' is not a column. The frame has Age.")
    ).toBe("KeyError: 'Agee' is not a column.");
  });

  it('flattens whitespace and bounds the length', () => {
    expect(oneLine('a\n  b')).toBe('a b');
    const long = oneLine('x'.repeat(300), 50);
    expect(long).toHaveLength(50);
    expect(long.endsWith('…')).toBe(true);
  });

  it('does not cut at a dot inside a token', () => {
    expect(oneLine('np.mean fails on strings')).toBe(
      'np.mean fails on strings'
    );
  });
});

describe('requestPlan', () => {
  const config: IServerConfig = {
    model: 'openai/a',
    allowed_models: ['openai/a', 'openai/b'],
    categories: 'SRV',
    votes: 3,
    temperature: 0,
    auto_check: true,
    docs: false,
    key_configured: true
  };
  const settings = (over: Partial<ICraneSettings> = {}): ICraneSettings => ({
    ...DEFAULT_SETTINGS,
    ...over
  });

  it('sends nothing the user left at its default', () => {
    expect(requestPlan(settings(), new Set(), config)).toEqual({
      settings: {},
      refusedModel: null
    });
  });

  it('sends explicit choices, categories in canonical order', () => {
    const plan = requestPlan(
      settings({ value: false, docs: true, votes: 5, maxColumns: 40 }),
      new Set(['value', 'docs', 'votes', 'maxColumns'] as const),
      config
    );
    expect(plan.settings).toEqual({
      categories: 'SR',
      docs: true,
      votes: 5,
      max_columns: 40
    });
  });

  it('sends an allowed model and withholds a refused one', () => {
    expect(
      requestPlan(settings({ model: 'openai/b' }), new Set(), config).settings
        .model
    ).toBe('openai/b');
    const refused = requestPlan(
      settings({ model: ' openai/z ' }),
      new Set(),
      config
    );
    expect(refused.settings.model).toBeUndefined();
    expect(refused.refusedModel).toBe('openai/z');
  });

  it('sends the model when the server configuration is unknown', () => {
    expect(
      requestPlan(settings({ model: 'x/y' }), new Set(), null).settings.model
    ).toBe('x/y');
  });

  it('can switch every category off', () => {
    const plan = requestPlan(
      settings({ structural: false, representation: false, value: false }),
      new Set(['structural'] as const),
      config
    );
    expect(plan.settings.categories).toBe('');
  });
});

describe('categoriesOf', () => {
  it('lists the enabled categories in S, R, V order', () => {
    expect(
      categoriesOf({ structural: true, representation: true, value: true })
    ).toBe('SRV');
    expect(
      categoriesOf({ structural: false, representation: true, value: true })
    ).toBe('RV');
  });
});

describe('groupFacts', () => {
  const runtime: IRuntime = {
    undefined: ['clean_text'],
    syntax_error: null,
    objects: [
      {
        expr: 'df',
        type: 'pandas.DataFrame',
        facts: [
          { cat: 'S', key: 'shape', value: [891, 12] },
          { cat: 'R', key: 'columns', value: ['Age', 'Fare'] }
        ],
        children: [
          {
            expr: "df['Age']",
            type: 'pandas.Series',
            facts: [
              { cat: 'R', key: 'dtype', value: 'float64' },
              { cat: 'V', key: 'nan', value: 177 }
            ],
            children: [
              {
                expr: 'deep',
                type: 'int',
                facts: [{ cat: 'V', key: 'v', value: 1 }]
              }
            ]
          }
        ]
      },
      { expr: "df['Agee']", type: 'pandas.Series', facts: [], missing: true }
    ]
  };

  it('groups facts by category and collects the notes', () => {
    const groups = groupFacts(runtime);
    expect(groups.S).toEqual([{ expr: 'df', key: 'shape', value: '[891,12]' }]);
    expect(groups.R.map(r => r.key)).toEqual(['columns', 'dtype']);
    expect(groups.V).toEqual([{ expr: "df['Age']", key: 'nan', value: '177' }]);
    expect(groups.notes).toEqual([
      "df['Agee']: missing",
      'clean_text: undefined'
    ]);
  });

  it('keeps only the categories that were sent', () => {
    const groups = groupFacts(runtime, 'SR');
    expect(groups.V).toEqual([]);
    expect(groups.S).toHaveLength(1);
  });

  it('walks children to the given depth', () => {
    expect(groupFacts(runtime, 'V', 3).V.map(r => r.expr)).toEqual([
      "df['Age']",
      'deep'
    ]);
  });

  it('copes with no runtime and with a syntax error', () => {
    expect(groupFacts(null)).toEqual({ S: [], R: [], V: [], notes: [] });
    const groups = groupFacts({
      syntax_error: { line: 2, col: 1, msg: 'invalid syntax' }
    });
    expect(groups.notes).toEqual(['syntax error, line 2: invalid syntax']);
  });
});

describe('formatValue / voteSplit', () => {
  it('renders compact, bounded values', () => {
    expect(formatValue('abc')).toBe('abc');
    expect(formatValue({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(formatValue('y'.repeat(200), 10)).toHaveLength(10);
  });

  it('counts the votes for a crash', () => {
    expect(voteSplit([true, false, true])).toEqual([2, 3]);
    expect(voteSplit([])).toBeNull();
  });
});

describe('pushHistory', () => {
  it('keeps the newest first, bounded, and replaces a re-check of the same text', () => {
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
