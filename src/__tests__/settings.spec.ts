import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import schema from '../../schema/plugin.json';
import {
  CraneSettings,
  DEFAULT_SETTINGS,
  explicitKeys,
  readSettings
} from '../settings';
import type { IServerConfig } from '../tokens';

describe('readSettings', () => {
  it('fills defaults and keeps well-typed values', () => {
    const settings = readSettings({
      delay: 250,
      value: false,
      model: 'openai/x'
    });
    expect(settings).toEqual({
      ...DEFAULT_SETTINGS,
      delay: 250,
      value: false,
      model: 'openai/x'
    });
  });

  it('ignores values of the wrong type and unknown keys', () => {
    const settings = readSettings({ delay: '5', guard: 1, extra: true });
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect('extra' in settings).toBe(false);
  });
});

describe('explicitKeys', () => {
  it('lists the keys the user layer sets', () => {
    expect(
      [...explicitKeys({ value: false, votes: 3, nope: 1 })].sort()
    ).toEqual(['value', 'votes']);
  });
});

describe('DEFAULT_SETTINGS', () => {
  it('matches the defaults of schema/plugin.json', () => {
    const defaults: Record<string, unknown> = {};
    for (const [key, spec] of Object.entries(schema.properties)) {
      defaults[key] = spec.default;
    }
    expect(defaults).toEqual(DEFAULT_SETTINGS);
    expect(schema.additionalProperties).toBe(false);
  });
});

describe('CraneSettings auto-check', () => {
  const server = (autoCheck: boolean): IServerConfig => ({
    model: null,
    allowed_models: [],
    categories: 'SRV',
    votes: 1,
    temperature: 0,
    auto_check: autoCheck,
    docs: false,
    key_configured: false
  });
  const loaded = (user: Record<string, unknown>) =>
    ({
      composite: { ...DEFAULT_SETTINGS, ...user },
      user,
      changed: { connect: () => true, disconnect: () => true }
    }) as unknown as ISettingRegistry.ISettings;

  it("follows the server's default until the user chooses", () => {
    const settings = new CraneSettings();
    settings.attach(loaded({}));
    expect(settings.current.autoCheck).toBe(true);
    settings.server = server(false);
    expect(settings.current.autoCheck).toBe(false);
    settings.attach(loaded({ autoCheck: true }));
    expect(settings.current.autoCheck).toBe(true);
  });

  it("keeps the user's explicit choice against the server", () => {
    const settings = new CraneSettings();
    let changes = 0;
    settings.changed.connect(() => changes++);
    settings.attach(loaded({ autoCheck: false }));
    settings.server = server(true);
    expect(settings.current.autoCheck).toBe(false);
    expect(changes).toBe(2);
  });
});
