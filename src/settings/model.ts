/**
 * The user's settings (schema/plugin.json) and the server's configuration (`GET /crane/config`), in
 * one place every part reads. Defaults come from the schema itself; what the settings editor offers
 * follows what the server allows (`serverSchema`).
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type {
  PartialJSONObject,
  ReadonlyPartialJSONObject
} from '@lumino/coreutils';
import { JSONExt } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

import type {
  ICraneSettings,
  IServerConfig,
  TrialMode
} from '../contract/tokens';

type Schema = ISettingRegistry.ISchema;

/** Settings that only matter when a model is asked. */
const MODEL_KEYS: readonly (keyof ICraneSettings)[] = [
  'model',
  'votes',
  'structural',
  'representation',
  'value',
  'docs'
];

/** Words for the server's values, as the settings offer them. */
const TRIAL_WORDS: Record<TrialMode, string> = {
  off: 'off',
  'on-demand': 'when I ask',
  auto: 'automatically'
};

/** The settings whose value, left alone, is the server's. */
export type ServerBacked =
  | 'autoCheck'
  | 'trial'
  | 'votes'
  | 'docs'
  | 'structural'
  | 'representation'
  | 'value';

/**
 * What the server does for each setting the user leaves alone (`GET /crane/config`). No trial mode
 * where the server cannot or will not run trials: the setting is not offered then.
 */
export function serverValues(
  config: IServerConfig
): Partial<Pick<ICraneSettings, ServerBacked>> {
  const out: Partial<Pick<ICraneSettings, ServerBacked>> = {
    autoCheck: config.auto_check,
    votes: config.votes,
    docs: config.docs,
    structural: config.categories.includes('S'),
    representation: config.categories.includes('R'),
    value: config.categories.includes('V')
  };
  if (config.trial_available && config.trial !== 'off') {
    out.trial = config.trial;
  }
  return out;
}

/** A server value in the words of the settings page. */
function valueWords(value: unknown): string {
  if (typeof value === 'boolean') {
    return value ? 'on' : 'off';
  }
  if (typeof value === 'string' && value in TRIAL_WORDS) {
    return TRIAL_WORDS[value as TrialMode];
  }
  return String(value);
}

/**
 * The defaults of the settings, read from the schema's `default`s.
 */
export function defaultsOf(schema: Schema): ICraneSettings {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema.properties ?? {})) {
    out[key] = spec.default;
  }
  return out as unknown as ICraneSettings;
}

/** Whether `value` may stand for the setting `key` of `schema` (type and allowed values). */
function fits(schema: Schema, key: string, value: unknown): boolean {
  const spec = schema.properties?.[key];
  if (!spec || value === undefined) {
    return false;
  }
  if (typeof value !== typeof spec.default) {
    return false;
  }
  const options = Array.isArray(spec.oneOf)
    ? (spec.oneOf as { const?: unknown }[]).map(o => o.const)
    : null;
  const allowed: unknown[] | null = Array.isArray(spec.enum)
    ? spec.enum
    : options;
  return !allowed || allowed.includes(value);
}

/**
 * Read a settings object into the typed interface; a value of the wrong type falls back to the
 * default rather than reaching the request.
 */
export function readSettings(
  schema: Schema,
  composite: ReadonlyPartialJSONObject
): ICraneSettings {
  const out = defaultsOf(schema) as unknown as Record<string, unknown>;
  for (const key of Object.keys(out)) {
    if (fits(schema, key, composite[key])) {
      out[key] = composite[key];
    }
  }
  return out as unknown as ICraneSettings;
}

/**
 * The keys the user chose: present in the user layer of the settings and, for a setting the server
 * has a value for (`server`), set to another value than the server's. JupyterLab's settings form
 * writes every value it shows into the user layer, the server's values among them (they are its
 * defaults, see `serverSchema`): those are no choice.
 */
export function explicitKeys(
  schema: Schema,
  user: ReadonlyPartialJSONObject,
  server: Partial<ICraneSettings> = {}
): Set<keyof ICraneSettings> {
  return new Set(
    (Object.keys(schema.properties ?? {}) as (keyof ICraneSettings)[]).filter(
      key =>
        user[key] !== undefined &&
        (server[key] === undefined ||
          !JSONExt.deepEqual(
            user[key] as PartialJSONObject,
            server[key] as unknown as PartialJSONObject
          ))
    )
  );
}

/**
 * The schema the settings editor shows on this server: no model settings without a model, no
 * trial or chain setting where trials cannot run, the allowed models named, and the server's own
 * values as the defaults, so the form shows what is in effect (JupyterLab marks a value the user
 * changed) and each description says what the server does. Removed settings stay valid in the
 * user's file (a `patternProperties` entry each; `additionalProperties` would make the form offer an
 * unlabelled "add a property" button) and are ignored.
 */
export function serverSchema(
  schema: Schema,
  config: IServerConfig | null
): Schema {
  if (!config) {
    return schema;
  }
  const out = JSONExt.deepCopy(
    schema as unknown as PartialJSONObject
  ) as Schema;
  const properties = out.properties ?? {};
  const removed: string[] = [];
  const remove = (key: string) => {
    if (key in properties) {
      delete properties[key];
      removed.push(key);
    }
  };
  if (!config.model && config.allowed_models.length === 0) {
    MODEL_KEYS.forEach(remove);
  } else if (properties.model) {
    properties.model.description =
      `${properties.model.description ?? ''} This server allows: ` +
      (config.allowed_models.join(', ') || config.model || '');
  }
  if (!config.trial_available || config.trial === 'off') {
    remove('trial');
    remove('chain'); // the cells below run only in a trial
  }
  for (const [key, value] of Object.entries(serverValues(config))) {
    const spec = properties[key];
    if (!spec || !fits(out, key, value)) {
      continue;
    }
    spec.default = value;
    spec.description =
      `${spec.description ?? ''} Until you choose, the server's setting applies: ` +
      `${valueWords(value)}.`;
  }
  if (removed.length) {
    out.patternProperties = {
      [`^(${removed.join('|')})$`]: {}
    };
  }
  return out;
}

/**
 * The user's settings and the server's configuration.
 */
export class CraneSettings {
  /**
   * @param schema the settings schema as written (schema/plugin.json): it gives the defaults
   */
  constructor(private readonly _schema: Schema) {
    this._read = defaultsOf(_schema);
    this._current = { ...this._read };
  }

  /** Emits whenever the settings or the server configuration change. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get current(): Readonly<ICraneSettings> {
    return this._current;
  }

  /** Settings the user chose; the rest follow the server's values (or the schema's defaults). */
  get explicit(): ReadonlySet<keyof ICraneSettings> {
    return this._explicit;
  }

  /** `GET /crane/config`, or null until it answered (or when it failed). */
  get server(): IServerConfig | null {
    return this._server;
  }
  set server(value: IServerConfig | null) {
    this._server = value;
    this._update();
  }

  /** Whether a model may be asked (the server has one, or allows some). */
  get hasModel(): boolean {
    const server = this._server;
    return !server || !!server.model || server.allowed_models.length > 0;
  }

  /**
   * The trial mode in effect: the user's choice, else the server's; `off` where the server cannot
   * run trials.
   */
  get trialMode(): TrialMode {
    const server = this._server;
    if (server && (!server.trial_available || server.trial === 'off')) {
      return 'off';
    }
    return this._current.trial;
  }

  /**
   * Where the value in effect of `key` comes from: the user's choice, the server's configuration,
   * or the schema's default (no server answer, or a setting the server has no value for).
   */
  originOf(key: keyof ICraneSettings): 'user' | 'server' | 'default' {
    if (this._explicit.has(key)) {
      return 'user';
    }
    return this._server && key in serverValues(this._server)
      ? 'server'
      : 'default';
  }

  /** Follow a loaded settings object (and its later changes). */
  attach(settings: ISettingRegistry.ISettings): void {
    this._settings?.changed.disconnect(this._onSettings, this);
    this._settings = settings;
    settings.changed.connect(this._onSettings, this);
    this._onSettings(settings);
  }

  dispose(): void {
    this._settings?.changed.disconnect(this._onSettings, this);
    Signal.clearData(this);
  }

  private _onSettings(settings: ISettingRegistry.ISettings): void {
    this._read = readSettings(this._schema, settings.composite);
    this._user = settings.user;
    this._update();
  }

  /** What the user left alone follows the server (an administrator may turn auto-check off to save
   * model calls, run trials with every check, ...). */
  private _update(): void {
    const server = this._server ? serverValues(this._server) : {};
    this._explicit = explicitKeys(this._schema, this._user, server);
    const current = { ...this._read } as Record<string, unknown>;
    for (const [key, value] of Object.entries(server)) {
      if (
        !this._explicit.has(key as keyof ICraneSettings) &&
        fits(this._schema, key, value)
      ) {
        current[key] = value;
      }
    }
    this._current = current as unknown as ICraneSettings;
    this._changed.emit();
  }

  private _read: ICraneSettings;
  private _current: ICraneSettings;
  private _user: ReadonlyPartialJSONObject = {};
  private _explicit = new Set<keyof ICraneSettings>();
  private _server: IServerConfig | null = null;
  private _settings: ISettingRegistry.ISettings | null = null;
  private _changed = new Signal<this, void>(this);
}
