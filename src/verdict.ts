/**
 * Pure functions over check records and server answers: what a cell shows, the staleness rule, the
 * request settings, the history. Unit-tested without a browser.
 */
import type { IAnalyzeSettings } from './api';
import type { CellState } from './levels';
import { assess } from './levels';
import type { ICheckRecord, ICraneSettings, IServerConfig } from './tokens';

/** What a cell shows, and whether the verdict no longer matches the cell or the kernel. */
export interface ICellView {
  state: CellState;
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
 * What a cell shows, from its last check record and the cell's current text and kernel epoch.
 */
export function cellView(
  record: ICheckRecord | undefined,
  source: string,
  epoch: number
): ICellView {
  if (!record) {
    return { state: 'none', stale: false };
  }
  if (record.run && record.source === source) {
    // The run's traceback is the truth about this text: not outdated by the run that produced it.
    return { state: record.run.kind, stale: false };
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
  const assessment = record.result ? assess(record.result) : null;
  return { state: assessment ? assessment.level : 'error', stale };
}

/** Whether the record warns of a crash (will or may crash). */
export function isWarning(state: CellState): boolean {
  return state === 'will-crash' || state === 'may-crash';
}

/**
 * Whether running the cell now should ask for confirmation: it will or may crash, and the verdict
 * is fresh.
 */
export function isFreshWarning(
  record: ICheckRecord | undefined,
  source: string,
  epoch: number
): boolean {
  const view = cellView(record, source, epoch);
  return isWarning(view.state) && !view.stale;
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
 * server does not allow is not sent (the server would refuse the request). `trialNow` is the
 * "Trial-Run Cell" command: a trial with this check, whatever the mode.
 */
export function requestPlan(
  settings: ICraneSettings,
  explicit: ReadonlySet<keyof ICraneSettings>,
  config: IServerConfig | null,
  trialNow = false
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
  // Left alone, the server's trial mode decides (null); a server that cannot run trials is not
  // asked for one.
  if (trialNow) {
    out.trial = true;
  } else if (
    explicit.has('trial') &&
    config?.trial_available !== false &&
    config?.trial !== 'off'
  ) {
    out.trial = settings.trial === 'auto';
  }
  return { settings: out, refusedModel };
}

/**
 * Add a finished check (or a crash) to a notebook's history: newest first, at most `max`, and an
 * entry for the same text of the same cell replaces the older one.
 */
export function pushHistory(
  history: readonly ICheckRecord[],
  record: ICheckRecord,
  max = 12
): ICheckRecord[] {
  const rest = history.filter(
    r => !(r.cellId === record.cellId && r.source === record.source)
  );
  return [record, ...rest].slice(0, max);
}
