/**
 * Pure functions over check records and server answers: the badge state, the staleness rule, the
 * request settings, the grouping of runtime facts. Unit-tested without a browser.
 */
import type {
  FactCategory,
  IAnalyzeSettings,
  ICheckRecord,
  ICraneSettings,
  IRuntime,
  IRuntimeEntry,
  IServerConfig,
  JSONValue
} from './tokens';

/** What a cell's badge shows. */
export type BadgeState =
  'none' | 'checking' | 'crash' | 'ok' | 'error' | 'limited' | 'busy';

/** A badge state, and whether the verdict no longer matches the cell or the kernel. */
export interface IBadgeView {
  state: BadgeState;
  stale: boolean;
}

/**
 * Whether a record was made for other text or another kernel state than the current ones.
 */
export function isStale(
  record: ICheckRecord,
  source: string,
  epoch: number
): boolean {
  return record.source !== source || record.epoch !== epoch;
}

/**
 * The badge of a cell, from its last check record and the cell's current text and kernel epoch.
 */
export function badgeView(
  record: ICheckRecord | undefined,
  source: string,
  epoch: number
): IBadgeView {
  if (!record) {
    return { state: 'none', stale: false };
  }
  const stale = isStale(record, source, epoch);
  switch (record.phase) {
    case 'checking':
      return { state: 'checking', stale: false };
    case 'busy':
      return { state: 'busy', stale };
    case 'failed':
      return { state: 'error', stale };
  }
  const result = record.result;
  if (!result) {
    return { state: 'error', stale };
  }
  if (result.verdict?.detection) {
    return { state: 'crash', stale };
  }
  if (result.status === 'llm_error' || !result.verdict) {
    return { state: 'error', stale };
  }
  if (result.status === 'no_model') {
    // Only certain crashes are checked without a model: "no crash" means "none certain".
    return { state: 'limited', stale };
  }
  return { state: 'ok', stale };
}

/**
 * Whether running the cell now should ask for confirmation: its verdict is a crash and still fresh.
 */
export function isFreshCrash(
  record: ICheckRecord | undefined,
  source: string,
  epoch: number
): boolean {
  const view = badgeView(record, source, epoch);
  return view.state === 'crash' && !view.stale;
}

/**
 * The first sentence or line of `text`, at most `max` characters.
 */
export function oneLine(text: string, max = 140): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  const sentence = flat.match(/^.*?[.!?](?=\s|$)/);
  const first = sentence ? sentence[0] : flat;
  return first.length > max
    ? first.slice(0, max - 1).replace(/\s+$/, '') + '…'
    : first;
}

/** The enabled fact categories, in canonical order (e.g. `"SR"`). */
export function categoriesOf(
  settings: Pick<ICraneSettings, 'structural' | 'representation' | 'value'>
): string {
  return (
    (settings.structural ? 'S' : '') +
    (settings.representation ? 'R' : '') +
    (settings.value ? 'V' : '')
  );
}

/** The settings a request carries, and why any of the user's choices were not sent. */
export interface IRequestPlan {
  settings: IAnalyzeSettings;
  /** The user's model, when the server does not allow it (the server's default is used). */
  refusedModel: string | null;
}

/**
 * Build the request settings. Only what the user set explicitly overrides the server's defaults,
 * so an administrator's configuration holds for everything the user left alone; a model the
 * server does not allow is not sent (the server would refuse the request).
 */
export function requestPlan(
  settings: ICraneSettings,
  explicit: ReadonlySet<keyof ICraneSettings>,
  config: IServerConfig | null
): IRequestPlan {
  const out: IAnalyzeSettings = {};
  let refusedModel: string | null = null;
  const model = settings.model.trim();
  if (model) {
    if (!config || config.allowed_models.includes(model)) {
      out.model = model;
    } else {
      refusedModel = model;
    }
  }
  if (
    explicit.has('structural') ||
    explicit.has('representation') ||
    explicit.has('value')
  ) {
    out.categories = categoriesOf(settings);
  }
  if (explicit.has('docs')) {
    out.docs = settings.docs;
  }
  if (explicit.has('votes')) {
    out.votes = settings.votes;
  }
  if (explicit.has('maxColumns')) {
    out.max_columns = settings.maxColumns;
  }
  return { settings: out, refusedModel };
}

/** One runtime fact, ready to display. */
export interface IFactRow {
  expr: string;
  key: string;
  value: string;
}

/** Facts grouped by category, plus what the probe flagged outside the categories. */
export interface IFactGroups {
  S: IFactRow[];
  R: IFactRow[];
  V: IFactRow[];
  /** Missing attributes/keys, undefined names, failed summarizers. */
  notes: string[];
}

/**
 * A compact, bounded rendering of a fact value.
 */
export function formatValue(value: JSONValue, max = 80): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/**
 * Group the probe's facts by category, keeping only `categories` (the ones that were sent).
 * Children (columns, layers) are walked up to `depth` levels.
 */
export function groupFacts(
  runtime: IRuntime | null | undefined,
  categories = 'SRV',
  depth = 2
): IFactGroups {
  const groups: IFactGroups = { S: [], R: [], V: [], notes: [] };
  if (!runtime) {
    return groups;
  }
  const visit = (entry: IRuntimeEntry, level: number): void => {
    if (entry.missing) {
      groups.notes.push(`${entry.expr}: missing`);
    }
    if (entry.error) {
      groups.notes.push(`${entry.expr}: ${entry.error}`);
    }
    for (const fact of entry.facts ?? []) {
      if (isCategory(fact.cat) && categories.includes(fact.cat)) {
        groups[fact.cat].push({
          expr: entry.expr,
          key: fact.key,
          value: formatValue(fact.value)
        });
      }
    }
    if (level < depth) {
      for (const child of entry.children ?? []) {
        visit(child, level + 1);
      }
    }
  };
  for (const entry of runtime.objects ?? []) {
    visit(entry, 1);
  }
  for (const name of runtime.undefined ?? []) {
    groups.notes.push(`${name}: undefined`);
  }
  if (runtime.syntax_error) {
    const e = runtime.syntax_error;
    groups.notes.push(`syntax error, line ${e.line}: ${e.msg}`);
  }
  return groups;
}

function isCategory(value: string): value is FactCategory {
  return value === 'S' || value === 'R' || value === 'V';
}

/** Votes for a crash out of all votes, e.g. `[2, 3]`; null without votes. */
export function voteSplit(votes: readonly boolean[]): [number, number] | null {
  return votes.length ? [votes.filter(Boolean).length, votes.length] : null;
}

/**
 * Add a finished check to a notebook's history: newest first, at most `max`, and a re-check of the
 * same text replaces the older entry.
 */
export function pushHistory(
  history: readonly ICheckRecord[],
  record: ICheckRecord,
  max = 10
): ICheckRecord[] {
  const rest = history.filter(
    r => !(r.cellId === record.cellId && r.source === record.source)
  );
  return [record, ...rest].slice(0, max);
}
