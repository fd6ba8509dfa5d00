/**
 * The settings at activation: the server's configuration (`GET /crane/config`, or none when the
 * server extension does not answer in time), then the user's settings, loaded with the schema this
 * server allows (`serverSchema`).
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { PartialJSONObject } from '@lumino/coreutils';
import { JSONExt } from '@lumino/coreutils';

import { requestAPI } from '../contract/request';
import type { IServerConfig } from '../contract/tokens';
import { CraneSettings, serverSchema } from './model';

/** How long activation waits for `GET /crane/config` before going on without it. */
const CONFIG_TIMEOUT_MS = 10_000;

/** The server's configuration, or null when the server extension does not answer. */
export async function fetchConfig(): Promise<IServerConfig | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>(resolve => {
    timer = setTimeout(() => resolve(null), CONFIG_TIMEOUT_MS);
  });
  const config = requestAPI<IServerConfig>('config').catch(reason => {
    console.warn('crane: the server extension did not answer', reason);
    return null;
  });
  try {
    return await Promise.race([config, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Load the settings of `pluginId` with the schema this server allows (see `serverSchema`). Resolves
 * with the settings, whose defaults come from the schema as written.
 */
export async function loadSettings(
  registry: ISettingRegistry,
  pluginId: string,
  config: IServerConfig | null
): Promise<CraneSettings> {
  let written: ISettingRegistry.ISchema | null = null;
  registry.transform(pluginId, {
    fetch: plugin => {
      written ??= JSONExt.deepCopy(
        plugin.schema as unknown as PartialJSONObject
      ) as ISettingRegistry.ISchema;
      return { ...plugin, schema: serverSchema(written, config) };
    }
  });
  try {
    const loaded = await registry.load(pluginId);
    const settings = new CraneSettings(written ?? loaded.schema);
    settings.server = config;
    settings.attach(loaded);
    return settings;
  } catch (reason) {
    if (!written) {
      throw reason;
    }
    // The user's settings file is invalid: keep working with the defaults.
    console.error(
      'crane: cannot load the settings; using the defaults',
      reason
    );
    const settings = new CraneSettings(written);
    settings.server = config;
    return settings;
  }
}
