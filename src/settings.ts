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

import type { ICraneSettings, IServerConfig, TrialMode } from './tokens';

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

/** Words for the server's trial modes, as the settings offer them. */
const TRIAL_WORDS: Record<TrialMode, string> = {
  off: 'off',
  'on-demand': 'when I ask',
  auto: 'automatically'
};

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

/** The keys the user set explicitly (present in the user layer of the settings). */
export function explicitKeys(
  schema: Schema,
  user: ReadonlyPartialJSONObject
): Set<keyof ICraneSettings> {
  return new Set(
    Object.keys(schema.properties ?? {}).filter(
      key => user[key] !== undefined
    ) as (keyof ICraneSettings)[]
  );
}

/**
 * The schema the settings editor shows on this server: no model settings without a model, no
 * trial setting where trials cannot run, the allowed models and the server's own defaults named.
 * Removed settings stay valid in the user's file (`additionalProperties` is relaxed for them) and
 * are ignored.
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
  } else if (properties.trial) {
    properties.trial.description =
      `${properties.trial.description ?? ''} Until you choose, the server's setting applies: ` +
      `${TRIAL_WORDS[config.trial]}.`;
  }
  if (properties.autoCheck) {
    properties.autoCheck.description =
      `${properties.autoCheck.description ?? ''} Until you choose, the server's setting applies: ` +
      `${config.auto_check ? 'on' : 'off'}.`;
  }
  if (removed.length) {
    out.additionalProperties = true;
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

  /** Settings the user set explicitly; the rest follow the server's defaults. */
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
    if (this._explicit.has('trial') || !server) {
      return this._current.trial;
    }
    return server.trial;
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
    this._explicit = explicitKeys(this._schema, settings.user);
    this._update();
  }

  /** Auto-check follows the server's default (an administrator may turn it off to save model calls)
   * unless the user chose explicitly. */
  private _update(): void {
    const autoCheck =
      this._explicit.has('autoCheck') || !this._server
        ? this._read.autoCheck
        : this._server.auto_check;
    this._current = { ...this._read, autoCheck };
    this._changed.emit();
  }

  private _read: ICraneSettings;
  private _current: ICraneSettings;
  private _explicit = new Set<keyof ICraneSettings>();
  private _server: IServerConfig | null = null;
  private _settings: ISettingRegistry.ISettings | null = null;
  private _changed = new Signal<this, void>(this);
}
