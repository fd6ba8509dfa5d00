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
import type { ITarget } from './naming';
import {
  labelOf,
  names,
  namesEntry,
  normalize,
  score,
  valueTokens,
  withoutLines
} from './naming';
import { factValue } from './values';

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

/** Stable partition: decisive items first. */
function decisiveFirst<T extends { decisive: boolean }>(items: T[]): T[] {
  return [...items.filter(i => i.decisive), ...items.filter(i => !i.decisive)];
}

function isCategory(value: string): value is FactCategory {
  return value === 'S' || value === 'R' || value === 'V';
}
