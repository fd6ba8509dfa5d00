import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';

import type { ICraneSettings, IServerConfig } from './tokens';

/** Defaults, identical to schema/plugin.json (used until the registry answers, or without one). */
export const DEFAULT_SETTINGS: Readonly<ICraneSettings> = {
  model: '',
  autoCheck: true,
  delay: 1000,
  structural: true,
  representation: true,
  value: true,
  docs: false,
  votes: 1,
  guard: false,
  maxColumns: 20
};

const KEYS = Object.keys(DEFAULT_SETTINGS) as (keyof ICraneSettings)[];

/**
 * Read a settings object into the typed interface; a value of the wrong type falls back to the
 * default rather than reaching the request.
 */
export function readSettings(
  composite: ReadonlyPartialJSONObject
): ICraneSettings {
  const out: Record<string, unknown> = { ...DEFAULT_SETTINGS };
  for (const key of KEYS) {
    const value = composite[key];
    if (typeof value === typeof DEFAULT_SETTINGS[key]) {
      out[key] = value;
    }
  }
  return out as unknown as ICraneSettings;
}

/** The keys the user set explicitly (present in the user layer of the settings). */
export function explicitKeys(
  user: ReadonlyPartialJSONObject
): Set<keyof ICraneSettings> {
  return new Set(KEYS.filter(key => user[key] !== undefined));
}

/**
 * The user's settings and the server's configuration, in one place every part reads.
 */
export class CraneSettings {
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

  /** Follow a loaded settings object (and its later changes). */
  attach(settings: ISettingRegistry.ISettings): void {
    this._settings?.changed.disconnect(this._onSettings, this);
    this._settings = settings;
    settings.changed.connect(this._onSettings, this);
    this._onSettings(settings);
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _onSettings(settings: ISettingRegistry.ISettings): void {
    this._read = readSettings(settings.composite);
    this._explicit = explicitKeys(settings.user);
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

  private _read: ICraneSettings = { ...DEFAULT_SETTINGS };
  private _current: ICraneSettings = { ...DEFAULT_SETTINGS };
  private _explicit = new Set<keyof ICraneSettings>();
  private _server: IServerConfig | null = null;
  private _settings: ISettingRegistry.ISettings | null = null;
  private _changed = new Signal<this, void>(this);
}
