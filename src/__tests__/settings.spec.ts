import schema from '../../schema/plugin.json';
import { DEFAULT_SETTINGS, explicitKeys, readSettings } from '../settings';

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
