/**
 * Which facts a text names: a deciding text (a check's evidence, the model's reasoning, a traceback)
 * names an entry by its expression, or a column or key by its label beside its owner, and a fact by
 * its key or a value it quotes. Line references are positions, never facts. The close matches the
 * probe found for what a cause names are here too ("Did you mean 'Age'?").
 */
import type { IAnalyzeResult } from '../contract/api';
import type { IRuntimeEntry, JSONValue } from '../contract/probe';
import { runtimeOf } from '../contract/probe';

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
export function valueTokens(
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
export function withoutLines(text: string): string {
  return text.replace(/\(?\blines? \d+(?:\s*(?:-|–|and|to)\s*\d+)?\)?/g, ' ');
}

/** An entry as the deciding texts may name it. */
export interface ITarget {
  expr: string;
  /** `Agee` of `df['Agee']` (and of `df.Agee`): texts often name a column or key alone. */
  label: string | null;
  /** The expression of the entry this one is a column/layer/key of. */
  parent: string | null;
  /** Missing, undefined or unread: its name alone says what matters. */
  flagged: boolean;
}

export function labelOf(expr: string, flagged: boolean): string | null {
  const subscript = expr.match(/\[(['"])(.+?)\1\]$/);
  if (subscript) {
    return subscript[2];
  }
  const attribute = expr.match(/\.([A-Za-z_]\w*)$/);
  return flagged && attribute ? attribute[1] : null;
}

export function namesEntry(text: string, target: ITarget): boolean {
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
export function score(
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
