/**
 * The runtime facts of a check, arranged for reading: grouped by the object they describe, the
 * decisive ones first. A fact is decisive when the text that decided the verdict names it: the
 * evidence of a deterministic check, the model's reasoning, or an observed traceback.
 */
import type { IAnalyzeResult } from '../contract/api';
import type {
  FactCategory,
  IRuntime,
  IRuntimeEntry,
  JSONValue
} from '../contract/probe';
import { runtimeOf } from '../contract/probe';

/** Why an entry has no facts of its own. */
export type EntryFlag = 'missing' | 'undefined' | 'error';

/** One fact, ready to display. */
export interface IFactRow {
  /** The expression the fact describes (`df`, `df['Age']`, `model.fc`). */
  expr: string;
  key: string;
  value: string;
  cat: FactCategory | null;
  /** Set instead of a key/value: the expression is missing, undefined, or was not read. */
  flag: EntryFlag | null;
  decisive: boolean;
}

/** The facts of one object the cell uses (with its columns, layers, ...). */
export interface IObjectFacts {
  expr: string;
  type: string;
  /** How this object relates to one of the cell (`built`, `fitted`, `read`) and which. */
  via: string | null;
  relation: string | null;
  rows: IFactRow[];
  /** Whether any of its rows is decisive. */
  decisive: boolean;
  /** Whether the text that decided names the object itself (`model` and `x` in the crashing line
   * `out = model(x)`): its facts are the context of the cause, even when no single one is named. */
  involved: boolean;
}

/** A value as Python prints it (the cell's language): 'Age' quoted, None, nested lists. */
function pythonic(value: JSONValue): string {
  if (value === null) {
    return 'None';
  }
  if (typeof value === 'string') {
    return `'${value}'`;
  }
  if (Array.isArray(value)) {
    return `[${value.map(pythonic).join(', ')}]`;
  }
  if (typeof value === 'object') {
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : pythonic(v)}`)
      .join(', ');
  }
  return String(value);
}

/** Kinds of 1-D data (the probe's vocabulary) in words. */
const KIND_WORDS: { [kind: string]: string } = {
  'few-valued': 'few distinct values',
  'many-valued': 'many distinct values',
  'all-nan': 'all NaN'
};

/**
 * A fact's value in words, bounded; null when it says nothing worth a line: an empty list or mapping,
 * a list of Nones (`index_names: [None]`, an unnamed index). Empty NaN counts say "no NaN"; dtype
 * counts read "1 int64, 1 str column".
 */
export function factValue(
  key: string,
  value: JSONValue,
  max = 80
): string | null {
  const bound = (text: string) =>
    text.length > max ? text.slice(0, max - 1) + '…' : text;
  if (typeof value === 'string') {
    return bound(key === 'kind' ? (KIND_WORDS[value] ?? value) : value);
  }
  if (Array.isArray(value)) {
    return value.every(v => v === null) ? null : bound(pythonic(value));
  }
  if (value === null || typeof value !== 'object') {
    return bound(pythonic(value));
  }
  const entries = Object.entries(value);
  if (key === 'nan_columns' && !entries.length) {
    return 'no NaN';
  }
  if (!entries.length) {
    return null;
  }
  if (key === 'dtypes' && entries.every(([, n]) => typeof n === 'number')) {
    // "1 int64, 2 str columns": the noun agrees with the last count, as a person says it.
    const last = entries[entries.length - 1][1] as number;
    const counts = entries.map(([dtype, n]) => `${n} ${dtype}`).join(', ');
    return bound(`${counts} ${last === 1 ? 'column' : 'columns'}`);
  }
  return bound(pythonic(value));
}

/**
 * The texts that decided a verdict, in which decisive facts are named: a check's evidence (the
 * facts it used), an observed crash's message and frames, or the model's reasoning.
 */
export function decidingTexts(result: IAnalyzeResult | undefined): string[] {
  const verdict = result?.verdict;
  if (!verdict) {
    return [];
  }
  switch (verdict.source) {
    case 'checks':
    case 'syntax':
      return ([] as string[]).concat(
        ...verdict.findings.map(f => [...f.evidence, f.message])
      );
    case 'trial':
    case 'quick':
    case 'quick_may': {
      const trial = result?.trial;
      return trial
        ? [trial.message ?? '', ...trial.frames.map(f => f.text)]
        : [verdict.reasoning];
    }
    case 'llm':
      return [verdict.reasoning];
  }
}

/** One spelling for matching: quotes unified, code marks and extra spaces dropped. */
export function normalize(text: string): string {
  return text.replace(/"/g, "'").replace(/`/g, '').replace(/\s+/g, ' ');
}

const IDENT = /[A-Za-z0-9_]/;

/**
 * Whether `text` names `token` as a whole: `df` in "df['Age'] is missing" and in "df.columns",
 * not in "pdf" nor in "df2". An expression preceded by a dot is an attribute of something else.
 */
export function names(text: string, token: string, isExpr = true): boolean {
  if (!token) {
    return false;
  }
  let from = 0;
  for (;;) {
    const at = text.indexOf(token, from);
    if (at < 0) {
      return false;
    }
    const before = at > 0 ? text[at - 1] : ' ';
    const after = text[at + token.length] ?? ' ';
    const startsWord = IDENT.test(token[0]);
    const endsWord = IDENT.test(token[token.length - 1]);
    const okBefore =
      !startsWord || (!IDENT.test(before) && !(isExpr && before === '.'));
    const okAfter = !endsWord || !IDENT.test(after);
    if (okBefore && okAfter) {
      return true;
    }
    from = at + 1;
  }
}

/** Spellings specific enough to identify a fact when a text quotes its value: numbers, short words,
 * and a shape as Python prints it (`[null, 4]` is "(None, 4)"). */
function quotable(value: JSONValue): string[] {
  if (typeof value === 'number') {
    return [String(value)];
  }
  if (typeof value === 'string' && value.length >= 2 && value.length <= 40) {
    return [value];
  }
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.length <= 8 &&
    value.every(v => v === null || typeof v === 'number')
  ) {
    const items = value.map(v => (v === null ? 'None' : String(v)));
    return [`(${items.join(', ')}${items.length === 1 ? ',' : ''})`];
  }
  return [];
}

/** The numbers and words inside a value, for a message that compares parts of it: the 5 of a shape
 * `[120, 5]` in "found shape=(None, 5)". 0 and 1 are left out: every message has them (axis 1,
 * input 0), so they identify nothing. */
function valueTokens(
  value: JSONValue,
  out: Set<string> = new Set()
): Set<string> {
  if (out.size >= 50) {
    return out;
  }
  if (typeof value === 'number') {
    if (Math.abs(value) >= 2) {
      out.add(String(value));
    }
  } else if (typeof value === 'string') {
    if (value.length >= 2 && value.length <= 40) {
      out.add(value);
    }
  } else if (Array.isArray(value)) {
    value.forEach(v => valueTokens(v, out));
  } else if (value !== null && typeof value === 'object') {
    Object.keys(value).forEach(k => valueTokens(k, out));
  }
  return out;
}

/** A text without its line references ("(line 3)"): a line number is a position, not a fact, and
 * would match any fact whose value happens to be that number. */
function withoutLines(text: string): string {
  return text.replace(/\(?\blines? \d+(?:\s*(?:-|–|and|to)\s*\d+)?\)?/g, ' ');
}

/** An entry as the deciding texts may name it. */
interface ITarget {
  expr: string;
  /** `Agee` of `df['Agee']` (and of `df.Agee`): texts often name a column or key alone. */
  label: string | null;
  /** The expression of the entry this one is a column/layer/key of. */
  parent: string | null;
  /** Missing, undefined or unread: its name alone says what matters. */
  flagged: boolean;
}

function labelOf(expr: string, flagged: boolean): string | null {
  const subscript = expr.match(/\[(['"])(.+?)\1\]$/);
  if (subscript) {
    return subscript[2];
  }
  const attribute = expr.match(/\.([A-Za-z_]\w*)$/);
  return flagged && attribute ? attribute[1] : null;
}

function namesEntry(text: string, target: ITarget): boolean {
  if (names(text, normalize(target.expr))) {
    return true;
  }
  if (!target.label || !names(text, target.label, false)) {
    return false;
  }
  // A label on its own names an entry the kernel lacks; any other only beside its owner.
  return (
    target.flagged ||
    (target.parent !== null && names(text, normalize(target.parent)))
  );
}

/**
 * How precisely `text` names a fact: 3 for an entry the kernel lacks (named at all), 2 when it names
 * the entry, the key and the value, 1 the entry and the key or the value, 0 not at all.
 */
function score(
  text: string,
  target: ITarget,
  key: string | null,
  value: JSONValue | null
): number {
  if (!namesEntry(text, target)) {
    return 0;
  }
  if (key === null) {
    return 3;
  }
  const byKey = names(text, key, false);
  const byValue =
    value !== null &&
    quotable(value).some(q => names(text, normalize(q), false));
  return byKey && byValue ? 2 : byKey || byValue ? 1 : 0;
}

/** A row before the deciding texts are weighed. */
interface IScoredRow {
  row: IFactRow;
  target: ITarget;
  fact: { key: string; value: JSONValue; cat: string } | null;
}

/**
 * Mark the decisive rows: for each deciding text, the rows it names most precisely. A text that
 * quotes a whole runtime line names many facts loosely and the one that matters precisely (a
 * missing column), so only its best matches count; each check's evidence line is a text of its own.
 */
function markDecisive(scored: IScoredRow[], texts: string[]): void {
  for (const text of texts) {
    const scores = scored.map(s =>
      score(text, s.target, s.fact?.key ?? null, s.fact?.value ?? null)
    );
    const best = Math.max(0, ...scores);
    if (best > 0) {
      scores.forEach((value, i) => {
        if (value === best) {
          scored[i].row.decisive = true;
        }
      });
    }
  }
}

/** An observed crash, as the facts are weighed against it: the exception's message and the lines of
 * the cell it went through. */
export interface ICrashText {
  message: string;
  lines: string[];
}

/** The crash a trial run observed, when it decided the verdict. */
export function crashText(
  result: IAnalyzeResult | undefined
): ICrashText | null {
  const source = result?.verdict?.source;
  const trial = result?.trial;
  if (
    !trial ||
    trial.status !== 'crashed' ||
    !(source === 'trial' || source === 'quick' || source === 'quick_may')
  ) {
    return null;
  }
  return {
    message: trial.message ?? '',
    lines: trial.frames.map(f => f.text)
  };
}

/**
 * Mark the decisive rows of an observed crash: what the failing line names and the kernel lacks, and
 * the facts of the objects the line names whose values the message compares ("expected shape (None,
 * 4), found (None, 5)": the model's `input_shape` and the array's `shape`). The line's own numbers are
 * the call's arguments (`epochs=3`), not what failed, so values count only in the message. A value
 * fact (a NaN count, a maximum) counts only when the message names its key ("contains NaN") and it
 * is there (a count above 0), since its number alone may match by chance (a maximum of 5).
 */
function markObserved(scored: IScoredRow[], crash: ICrashText): void {
  // PyTorch writes shapes as "4x10": apart, so each number is a word of its own.
  const message = normalize(withoutLines(crash.message)).replace(
    /(\d)x(?=\d)/g,
    '$1 x '
  );
  const texts = [message, ...crash.lines.map(normalize)];
  for (const s of scored) {
    if (!s.fact) {
      s.row.decisive = texts.some(t => namesEntry(t, s.target));
      continue;
    }
    if (!texts.some(t => names(t, normalize(s.target.expr)))) {
      continue;
    }
    const compared = [...valueTokens(s.fact.value)].some(t =>
      names(message, normalize(t), false)
    );
    if (s.fact.cat !== 'V') {
      s.row.decisive = compared;
      continue;
    }
    const value = s.fact.value;
    const keyed = names(message.toLowerCase(), s.fact.key.toLowerCase(), false);
    s.row.decisive =
      keyed &&
      (compared || value === true || (typeof value === 'number' && value > 0));
  }
}

/**
 * The probe's facts grouped by object, in the order the cell uses them, except that objects with a
 * decisive fact come first and, within an object, decisive facts come first. Children (columns,
 * layers) are walked up to `depth` levels; undefined names form groups of their own. With `crash`, the
 * decisive facts are those of the observed crash (see `markObserved`); otherwise those the texts name.
 */
export function factsByObject(
  runtime: IRuntime | null,
  texts: readonly string[],
  depth = 2,
  crash: ICrashText | null = null
): IObjectFacts[] {
  if (!runtime) {
    return [];
  }
  const scored: IScoredRow[] = [];
  const rowsOf = (
    entry: IRuntimeEntry,
    level: number,
    parent: string | null
  ): IFactRow[] => {
    const rows: IFactRow[] = [];
    const flag: EntryFlag | null = entry.missing
      ? 'missing'
      : entry.error
        ? 'error'
        : null;
    const target: ITarget = {
      expr: entry.expr,
      label: labelOf(normalize(entry.expr), flag !== null),
      parent,
      flagged: flag !== null
    };
    if (flag) {
      const row: IFactRow = {
        expr: entry.expr,
        key: '',
        value: flag === 'error' ? String(entry.error) : '',
        cat: null,
        flag,
        decisive: false
      };
      rows.push(row);
      scored.push({ row, target, fact: null });
    }
    for (const fact of entry.facts ?? []) {
      const value = factValue(fact.key, fact.value);
      if (value === null) {
        continue;
      }
      const row: IFactRow = {
        expr: entry.expr,
        key: fact.key,
        value,
        cat: isCategory(fact.cat) ? fact.cat : null,
        flag: null,
        decisive: false
      };
      rows.push(row);
      scored.push({ row, target, fact });
    }
    if (level < depth) {
      for (const child of entry.children ?? []) {
        rows.push(...rowsOf(child, level + 1, entry.expr));
      }
    }
    return rows;
  };
  const grouped: {
    expr: string;
    type: string;
    entry: IRuntimeEntry | null;
    rows: IFactRow[];
  }[] = [];
  for (const entry of runtime.objects ?? []) {
    grouped.push({
      expr: entry.expr,
      type: entry.type,
      entry,
      rows: rowsOf(entry, 1, null)
    });
  }
  for (const name of runtime.undefined ?? []) {
    const row: IFactRow = {
      expr: name,
      key: '',
      value: '',
      cat: null,
      flag: 'undefined',
      decisive: false
    };
    scored.push({
      row,
      target: { expr: name, label: null, parent: null, flagged: true },
      fact: null
    });
    grouped.push({ expr: name, type: '', entry: null, rows: [row] });
  }
  const normalized = texts.map(normalize);
  if (crash) {
    markObserved(scored, crash);
  } else {
    markDecisive(scored, normalized.map(withoutLines));
  }
  const groups: IObjectFacts[] = grouped.map(g => ({
    expr: g.expr,
    type: g.type,
    via: g.entry?.via ?? null,
    relation: g.entry?.relation ?? null,
    rows: decisiveFirst(g.rows),
    decisive: g.rows.some(r => r.decisive),
    involved: normalized.some(text => names(text, normalize(g.expr)))
  }));
  return decisiveFirst(groups);
}

/** Types a reader knows by another name. */
const TYPE_WORDS: { [type: string]: string } = {
  'numpy.ndarray': 'NumPy array',
  'pandas.DataFrame': 'pandas DataFrame',
  'pandas.Series': 'pandas Series'
};

/**
 * A type in a few words: "NumPy array", "sklearn RandomForestClassifier" for
 * `sklearn.ensemble._forest.RandomForestClassifier` (the library and the class; the module path
 * between them says nothing to a reader and makes the header too long for the panel).
 */
export function typeWords(type: string): string {
  if (TYPE_WORDS[type]) {
    return TYPE_WORDS[type];
  }
  const parts = type.split('.');
  return parts.length > 1 ? `${parts[0]} ${parts[parts.length - 1]}` : type;
}

/** The decisive rows of all groups, in display order. */
export function decisiveRows(groups: readonly IObjectFacts[]): IFactRow[] {
  return ([] as IFactRow[]).concat(
    ...groups.map(g => g.rows.filter(r => r.decisive))
  );
}

/** The facts of a server answer, grouped (see `factsByObject`). */
export function factsOf(result: IAnalyzeResult | undefined): IObjectFacts[] {
  return result
    ? factsByObject(
        runtimeOf(result),
        decidingTexts(result),
        2,
        crashText(result)
      )
    : [];
}

/**
 * The close matches the probe found for what `cause` names and the kernel lacks: `['Age']` for
 * "KeyError: 'Agee'" when `df['Agee']` is missing and `Age` is a column. The probe puts them in a
 * `close` fact; they belong in the cause ("Did you mean 'Age'?"), where the user reads.
 */
export function closeMatches(
  result: IAnalyzeResult | undefined,
  cause: string
): string[] {
  const runtime = runtimeOf(result);
  const text = normalize(cause);
  const found: string[] = [];
  const visit = (entry: IRuntimeEntry, parent: string | null): void => {
    const close = entry.facts?.find(f => f.key === 'close')?.value;
    const target: ITarget = {
      expr: entry.expr,
      label: labelOf(normalize(entry.expr), true),
      parent,
      flagged: true
    };
    if (entry.missing && Array.isArray(close) && namesEntry(text, target)) {
      found.push(...close.filter((c): c is string => typeof c === 'string'));
    }
    (entry.children ?? []).forEach(child => visit(child, entry.expr));
  };
  (runtime?.objects ?? []).forEach(entry => visit(entry, null));
  return [...new Set(found)].slice(0, 3);
}

/** Stable partition: decisive items first. */
function decisiveFirst<T extends { decisive: boolean }>(items: T[]): T[] {
  return [...items.filter(i => i.decisive), ...items.filter(i => !i.decisive)];
}

function isCategory(value: string): value is FactCategory {
  return value === 'S' || value === 'R' || value === 'V';
}
