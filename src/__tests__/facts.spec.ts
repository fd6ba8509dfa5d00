import type { IAnalyzeResult } from '../api';
import {
  decidingTexts,
  decisiveRows,
  factsByObject,
  factsOf,
  formatValue,
  names
} from '../facts';
import { runtimeOf } from '../probe';
import {
  checksCrash,
  modelCrash,
  observedCrash,
  syntaxError,
  unfitted
} from './fixtures';

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

describe('formatValue', () => {
  it('renders compact, bounded values', () => {
    expect(formatValue('abc')).toBe('abc');
    expect(formatValue({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(formatValue('y'.repeat(200), 10)).toHaveLength(10);
  });
});
