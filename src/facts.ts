/**
 * The runtime facts of a check, arranged for reading: grouped by the object they describe, the
 * decisive ones first. A fact is decisive when the text that decided the verdict names it: the
 * evidence of a deterministic check, the model's reasoning, or an observed traceback.
 */
import type { IAnalyzeResult } from './api';
import type { FactCategory, IRuntime, IRuntimeEntry, JSONValue } from './probe';
import { runtimeOf } from './probe';

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

/**
 * A compact, bounded rendering of a fact value.
 */
export function formatValue(value: JSONValue, max = 80): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
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

/** Values specific enough to identify a fact when a text quotes them (numbers, short words). */
function quotable(value: JSONValue): string | null {
  if (typeof value === 'number') {
    return String(value);
  }
  if (typeof value === 'string' && value.length >= 2 && value.length <= 40) {
    return value;
  }
  return null;
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
  const quoted = value === null ? null : quotable(value);
  const byKey = names(text, key, false);
  const byValue = quoted !== null && names(text, normalize(quoted), false);
  return byKey && byValue ? 2 : byKey || byValue ? 1 : 0;
}

/** A row before the deciding texts are weighed. */
interface IScoredRow {
  row: IFactRow;
  target: ITarget;
  fact: { key: string; value: JSONValue } | null;
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

/**
 * The probe's facts grouped by object, in the order the cell uses them, except that objects with a
 * decisive fact come first and, within an object, decisive facts come first. Children (columns,
 * layers) are walked up to `depth` levels; undefined names form groups of their own.
 */
export function factsByObject(
  runtime: IRuntime | null,
  texts: readonly string[],
  depth = 2
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
      const row: IFactRow = {
        expr: entry.expr,
        key: fact.key,
        value: formatValue(fact.value),
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
  markDecisive(scored, normalized);
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

/** The decisive rows of all groups, in display order. */
export function decisiveRows(groups: readonly IObjectFacts[]): IFactRow[] {
  return ([] as IFactRow[]).concat(
    ...groups.map(g => g.rows.filter(r => r.decisive))
  );
}

/** The facts of a server answer, grouped (see `factsByObject`). */
export function factsOf(result: IAnalyzeResult | undefined): IObjectFacts[] {
  return result ? factsByObject(runtimeOf(result), decidingTexts(result)) : [];
}

/** Stable partition: decisive items first. */
function decisiveFirst<T extends { decisive: boolean }>(items: T[]): T[] {
  return [...items.filter(i => i.decisive), ...items.filter(i => !i.decisive)];
}

function isCategory(value: string): value is FactCategory {
  return value === 'S' || value === 'R' || value === 'V';
}
