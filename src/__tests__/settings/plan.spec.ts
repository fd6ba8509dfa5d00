import schema from '../../../schema/plugin.json';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import type { ICraneSettings } from '../../contract/tokens';
import { defaultsOf } from '../../settings/model';
import { categoriesOf, requestPlan } from '../../settings/plan';
import { serverConfig } from '../fixtures';

const DEFAULTS = defaultsOf(schema as unknown as ISettingRegistry.ISchema);

describe('requestPlan', () => {
  const config = serverConfig({
    allowed_models: ['openai/a', 'openai/b'],
    votes: 3
  });
  const settings = (over: Partial<ICraneSettings> = {}): ICraneSettings => ({
    ...DEFAULTS,
    ...over
  });

  it('sends nothing the user left at its default', () => {
    expect(requestPlan(settings(), new Set(), config)).toEqual({
      settings: {},
      refusedModel: null
    });
  });

  it('sends explicit choices, categories in canonical order', () => {
    const plan = requestPlan(
      settings({ value: false, docs: true, votes: 5, maxColumns: 40 }),
      new Set(['value', 'docs', 'votes', 'maxColumns'] as const),
      config
    );
    expect(plan.settings).toEqual({
      categories: 'SR',
      docs: true,
      votes: 5,
      max_columns: 40
    });
  });

  it('sends an allowed model and withholds a refused one', () => {
    expect(
      requestPlan(settings({ model: 'openai/b' }), new Set(), config).settings
        .model
    ).toBe('openai/b');
    const refused = requestPlan(
      settings({ model: ' openai/z ' }),
      new Set(),
      config
    );
    expect(refused.settings.model).toBeUndefined();
    expect(refused.refusedModel).toBe('openai/z');
    expect(
      requestPlan(settings({ model: 'x/y' }), new Set(), null).settings.model
    ).toBe('x/y');
  });

  it('asks for a trial run on command, with every check in "automatically", never when off', () => {
    const explicit = new Set(['trial'] as const);
    expect(
      requestPlan(settings(), new Set(), config, true).settings.trial
    ).toBe(true);
    // Left alone, the server's mode decides.
    expect(
      requestPlan(settings(), new Set(), config).settings.trial
    ).toBeUndefined();
    expect(
      requestPlan(settings({ trial: 'auto' }), explicit, config).settings.trial
    ).toBe(true);
    expect(
      requestPlan(settings({ trial: 'on-demand' }), explicit, config).settings
        .trial
    ).toBe(false);
    expect(
      requestPlan(settings({ trial: 'off' }), explicit, config).settings.trial
    ).toBe(false);
    // A server that cannot run trials is not asked for one.
    const unable = { ...config, trial_available: false };
    expect(
      requestPlan(settings({ trial: 'auto' }), explicit, unable).settings.trial
    ).toBeUndefined();
  });

  it('can switch every category off', () => {
    const plan = requestPlan(
      settings({ structural: false, representation: false, value: false }),
      new Set(['structural'] as const),
      config
    );
    expect(plan.settings.categories).toBe('');
  });
});

describe('categoriesOf', () => {
  it('lists the enabled categories in S, R, V order', () => {
    expect(
      categoriesOf({ structural: true, representation: true, value: true })
    ).toBe('SRV');
    expect(
      categoriesOf({ structural: false, representation: true, value: true })
    ).toBe('RV');
  });
});
