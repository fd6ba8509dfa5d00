import type { IAnalyzeResult } from '../../contract/api';
import {
  decidingTexts,
  decisiveRows,
  factsByObject,
  factsOf
} from '../../facts/group';
import { names } from '../../facts/naming';
import { factValue } from '../../facts/values';
import { runtimeOf } from '../../contract/probe';
import {
  checksCrash,
  modelCrash,
  observedCrash,
  syntaxError,
  unfitted
} from '../fixtures';

/** "expr key" of each row, "expr !flag" for flagged ones. */
function labels(rows: { expr: string; key: string; flag: string | null }[]) {
  return rows.map(r =>
    r.flag ? `${r.expr} !${r.flag}` : `${r.expr} ${r.key}`
  );
}

describe('names', () => {
  it('matches whole expressions only', () => {
    expect(names("df['Agee'] does not exist", 'df')).toBe(true);
    expect(names('df.columns = [...]', 'df')).toBe(true);
    expect(names('pdf is empty', 'df')).toBe(false);
    expect(names('df2 is empty', 'df')).toBe(false);
    // An attribute of another object is not the object.
    expect(names('self.df is empty', 'df')).toBe(false);
    // A key may follow a dot: df.columns names "columns".
    expect(names('df.columns = [...]', 'columns', false)).toBe(true);
    expect(names("x['a'] is missing", "x['a']")).toBe(true);
    expect(names('anything', '')).toBe(false);
  });
});

describe('decidingTexts', () => {
  it("is a check's evidence, an observed traceback, or the model's reasoning", () => {
    expect(decidingTexts(checksCrash)).toEqual([
      "df['Agee'] does not exist",
      "df.columns = ['Age', 'Fare', 'Survived']",
      "KeyError: df has no column 'Agee' (line 1)."
    ]);
    expect(decidingTexts(observedCrash)).toEqual([
      "'Agee'",
      "total = df['Agee'].mean()"
    ]);
    expect(decidingTexts(modelCrash)).toEqual([modelCrash.verdict!.reasoning]);
    expect(decidingTexts(undefined)).toEqual([]);
  });
});

describe('factsByObject: decisive facts first', () => {
  it("puts the facts a check used first (a missing column, the frame's columns)", () => {
    const groups = factsOf(checksCrash);
    expect(groups[0].expr).toBe('df');
    expect(groups[0].decisive).toBe(true);
    expect(labels(decisiveRows(groups))).toEqual([
      'df columns',
      "df['Agee'] !missing"
    ]);
    // Decisive rows lead their object; the others keep the probe's order after them.
    expect(labels(groups[0].rows.slice(0, 3))).toEqual([
      'df columns',
      "df['Agee'] !missing",
      'df shape'
    ]);
  });

  it('highlights the fitted state of an unfitted estimator', () => {
    const groups = factsOf(unfitted);
    expect(groups.map(g => [g.expr, g.decisive])).toEqual([
      ['rf', true],
      ['X', false],
      ['df', false]
    ]);
    expect(labels(decisiveRows(groups))).toEqual(['rf class', 'rf fitted']);
  });

  it("moves the objects the model's reasoning names before the others", () => {
    const reasoned: IAnalyzeResult = {
      ...unfitted,
      verdict: {
        ...modelCrash.verdict!,
        reasoning:
          "`df['Age']` has 1 missing value (nan: 1), so the model's fit on it raises a ValueError."
      }
    };
    const groups = factsOf(reasoned);
    // df was the third object the probe described; its decisive column moves it first.
    expect(groups.map(g => g.expr)).toEqual(['df', 'rf', 'X']);
    expect(labels(groups[0].rows.slice(0, 1))).toEqual(["df['Age'] nan"]);
    expect(labels(decisiveRows(groups))).toEqual(["df['Age'] nan"]);
  });

  it('recognizes a column the model names on its own when the kernel lacks it', () => {
    // The stub quotes the runtime line: "..., Agee MISSING (close: 'Age')".
    const rows = decisiveRows(factsOf(modelCrash));
    // It quotes a whole runtime line (every column's facts); only the missing column counts.
    expect(labels(rows)).toEqual(["df['Agee'] !missing"]);
  });

  it('finds the frame of an observed crash through the frame text', () => {
    expect(labels(decisiveRows(factsOf(observedCrash)))).toContain(
      "df['Agee'] !missing"
    );
  });

  it('groups undefined names of their own and copes with nothing', () => {
    const groups = factsByObject({ undefined: ['clean_text'], objects: [] }, [
      'NameError: clean_text is not defined'
    ]);
    expect(groups).toHaveLength(1);
    expect(groups[0].rows[0]).toMatchObject({
      expr: 'clean_text',
      flag: 'undefined',
      decisive: true
    });
    expect(factsByObject(null, [])).toEqual([]);
    expect(factsOf(syntaxError).every(g => !g.decisive)).toBe(true);
  });

  it('walks children to the given depth', () => {
    const runtime = runtimeOf(checksCrash);
    const shallow = factsByObject(runtime, [], 1);
    expect(shallow[0].rows.every(r => r.expr === 'df')).toBe(true);
  });
});

describe('factValue: values in words', () => {
  it('leaves out empty structures and lists of Nones, says NaN counts and dtype counts in words', () => {
    expect(factValue('index_names', [null])).toBeNull();
    expect(factValue('index_names', [null, 'city'])).toBe("[None, 'city']");
    expect(factValue('non_numeric_columns', {})).toBeNull();
    expect(factValue('close', [])).toBeNull();
    expect(factValue('nan_columns', {})).toBe('no NaN');
    expect(factValue('nan_columns', { Age: 177 })).toBe('Age: 177');
    expect(factValue('dtypes', { int64: 1, str: 1 })).toBe(
      '1 int64, 1 str column'
    );
    expect(factValue('dtypes', { float64: 1, object: 3 })).toBe(
      '1 float64, 3 object columns'
    );
    expect(factValue('columns', ['Age', 'Fare'])).toBe("['Age', 'Fare']");
    expect(factValue('kind', 'few-valued')).toBe('few distinct values');
    expect(factValue('value', null)).toBe('None');
    expect(factValue('repr', 'y'.repeat(200), 10)).toHaveLength(10);
  });

  it('drops the rows of empty facts from the groups', () => {
    const groups = factsByObject(
      {
        objects: [
          {
            expr: 'df',
            type: 'pandas.DataFrame',
            facts: [
              { cat: 'S', key: 'shape', value: [2, 2] },
              { cat: 'S', key: 'index_names', value: [null] },
              { cat: 'V', key: 'nan_columns', value: {} }
            ]
          }
        ]
      },
      []
    );
    expect(groups[0].rows.map(r => `${r.key}: ${r.value}`)).toEqual([
      'shape: [2, 2]',
      'nan_columns: no NaN'
    ]);
  });
});

/** `model.fit(X, y, epochs=3)` at line 3: a Keras model built for 4 input columns, an array of 5. */
function kerasFit(
  verdict: Partial<NonNullable<IAnalyzeResult['verdict']>>,
  message: string | null
): IAnalyzeResult {
  return {
    ...observedCrash,
    runtime: {
      objects: [
        {
          expr: 'model',
          type: 'keras.src.models.sequential.Sequential',
          facts: [
            { cat: 'R', key: 'class', value: 'Sequential' },
            { cat: 'V', key: 'built', value: true },
            { cat: 'S', key: 'input_shape', value: [null, 4] },
            { cat: 'S', key: 'output_shape', value: [null, 3] },
            { cat: 'S', key: 'last_units', value: 3 },
            { cat: 'V', key: 'compiled', value: true }
          ],
          children: [
            {
              expr: 'model.layers[0]',
              type: 'keras.src.layers.core.dense.Dense',
              facts: [
                { cat: 'R', key: 'name', value: 'dense' },
                { cat: 'S', key: 'units', value: 16 }
              ]
            }
          ]
        },
        {
          expr: 'X',
          type: 'numpy.ndarray',
          facts: [
            { cat: 'S', key: 'shape', value: [120, 5] },
            { cat: 'R', key: 'dtype', value: 'float64' },
            { cat: 'V', key: 'min', value: 0.1 },
            { cat: 'V', key: 'max', value: 5 }
          ]
        },
        {
          expr: 'y',
          type: 'numpy.ndarray',
          facts: [{ cat: 'S', key: 'shape', value: [120, 3] }]
        }
      ]
    },
    verdict: { ...observedCrash.verdict!, ...verdict },
    trial: {
      ...observedCrash.trial!,
      exception: 'ValueError',
      message,
      line: 3,
      frames: [{ line: 3, text: 'model.fit(X, y, epochs=3)' }]
    }
  };
}

describe('decisive facts of a shape mismatch (what the failing line compares)', () => {
  it.each([
    'Input 0 of layer "dense" is incompatible with the layer: expected axis -1 of input shape to have value 4, but received input with shape (None, 5)',
    'Input 0 of layer "sequential" is incompatible with the layer: expected shape=(None, 4), found shape=(None, 5)'
  ])(
    "an observed crash: the model's input_shape and the array's shape, not the last layer's units (%s)",
    message => {
      const rows = labels(decisiveRows(factsOf(kerasFit({}, message))));
      expect(rows).toEqual(['model input_shape', 'X shape']);
      // epochs=3 on the line is an argument, not the compared 3 of last_units or of y's shape.
      expect(rows).not.toContain('model last_units');
      expect(rows).not.toContain('y shape');
      // X's maximum happens to be 5: a value fact counts only when the message names it.
      expect(rows).not.toContain('X max');
    }
  );

  it("a check's finding: its message's line number is no fact", () => {
    const checked = kerasFit(
      {
        source: 'checks',
        findings: [
          {
            rule: 'shape-mismatch',
            message:
              'ValueError: model expects inputs of shape (None, 4) but X has shape (120, 5): its first ' +
              'layer (Dense) needs 4 values on the last axis, not 5 (line 3).',
            evidence: [
              'model.input_shape = (None, 4)',
              'X.shape = (120, 5)',
              'first layer: Dense'
            ],
            line: 3
          }
        ]
      },
      null
    );
    const rows = labels(decisiveRows(factsOf(checked)));
    expect(rows).toEqual(['model input_shape', 'X shape']);
  });

  it('a crash that names a NaN count: the value fact whose key the message names, when there is one', () => {
    const withNaN = (count: number) => {
      const result = kerasFit({}, 'Input X contains NaN.');
      const objects = (result.runtime as { objects: { facts: unknown[] }[] })
        .objects;
      objects[1].facts.push({ cat: 'V', key: 'nan', value: count });
      return labels(decisiveRows(factsOf(result)));
    };
    expect(withNaN(7)).toEqual(['X nan']);
    expect(withNaN(0)).toEqual([]);
  });
});
