/**
 * The settings a check's request carries: only what the user set explicitly overrides the server's
 * defaults, and a model the server does not allow is not sent. Pure, unit-tested without a browser.
 */
import type { IAnalyzeSettings } from '../contract/api';
import type { ICraneSettings, IServerConfig } from '../contract/tokens';

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
