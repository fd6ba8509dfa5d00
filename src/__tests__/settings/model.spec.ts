import { DefaultSchemaValidator } from '@jupyterlab/settingregistry';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import {
  CraneSettings,
  defaultsOf,
  explicitKeys,
  readSettings,
  serverSchema
} from '../../settings/model';
import type { ICraneSettings } from '../../contract/tokens';
import { schema, serverConfig } from '../fixtures';

/** What JupyterLab's own validator says of a user settings file under `shown`. */
function errorsOf(
  shown: ISettingRegistry.ISchema,
  user: Record<string, unknown>
): unknown[] | null {
  const raw = JSON.stringify(user);
  return new DefaultSchemaValidator().validateData(
    {
      id: 'crane-jupyterlab:plugin',
      raw,
      schema: shown,
      data: { composite: {}, user: {} },
      version: '0'
    } as ISettingRegistry.IPlugin,
    true
  );
}

/** Every key of ICraneSettings: the schema must declare exactly these. */
const KEYS: (keyof ICraneSettings)[] = [
  'model',
  'autoCheck',
  'delay',
  'trial',
  'structural',
  'representation',
  'value',
  'docs',
  'votes',
  'guard',
  'maxColumns',
  'chain'
];

describe('the schema', () => {
  it('declares every setting with a title, a description and a default', () => {
    expect(Object.keys(schema.properties!).sort()).toEqual([...KEYS].sort());
    for (const spec of Object.values(schema.properties!)) {
      expect(spec.title).toBeTruthy();
      expect(spec.description).toBeTruthy();
      expect(spec.default).toBeDefined();
    }
    expect(schema.additionalProperties).toBe(false);
  });

  it('speaks to users, not in command ids, and carries the extension icon', () => {
    const text = JSON.stringify(schema.properties);
    expect(text).not.toMatch(/crane:/);
    expect(schema['jupyter.lab.setting-icon']).toBe('crane-jupyterlab:crane');
  });

  it("puts the cell's context menu items in one group of their own", () => {
    // JupyterLab orders context menu items by rank alone, across selectors, and the core ranks are
    // whole numbers (a separator at 20, then output scrolling at 21): items spread over whole ranks
    // interleave with the core's. One whole rank, our separator first, keeps them together.
    const items = (
      schema as unknown as {
        'jupyter.lab.menus': {
          context: { command?: string; type?: string; rank: number }[];
        };
      }
    )['jupyter.lab.menus'].context;
    const ordered = [...items].sort((a, b) => a.rank - b.rank);
    expect(ordered.map(i => i.command ?? i.type)).toEqual([
      'separator',
      'crane:check-cell',
      'crane:trial-run-cell'
    ]);
    const slots = new Set(items.map(i => Math.floor(i.rank)));
    expect(slots.size).toBe(1);
    expect(items.filter(i => Number.isInteger(i.rank))).toEqual([ordered[0]]);
  });
});

describe('defaultsOf / readSettings', () => {
  it('reads the defaults from the schema', () => {
    const defaults = defaultsOf(schema);
    for (const key of KEYS) {
      expect(defaults[key]).toEqual(schema.properties![key].default);
    }
  });

  it('keeps well-typed values and fills the rest with defaults', () => {
    expect(
      readSettings(schema, { delay: 250, value: false, trial: 'auto' })
    ).toEqual({
      ...defaultsOf(schema),
      delay: 250,
      value: false,
      trial: 'auto'
    });
  });

  it('ignores values of the wrong type, outside the choices, and unknown keys', () => {
    const settings = readSettings(schema, {
      delay: '5',
      guard: 1,
      trial: 'always',
      votes: 2,
      extra: true
    });
    expect(settings).toEqual(defaultsOf(schema));
    expect('extra' in settings).toBe(false);
  });

  it("lists the keys the user chose: set, and to another value than the server's", () => {
    expect(
      [...explicitKeys(schema, { value: false, votes: 3, nope: 1 })].sort()
    ).toEqual(['value', 'votes']);
    // JupyterLab's settings form writes every value it shows: the server's values are no choice.
    expect(
      [
        ...explicitKeys(
          schema,
          { trial: 'auto', votes: 3, delay: 1000 },
          { trial: 'auto', votes: 1 }
        )
      ].sort()
    ).toEqual(['delay', 'votes']);
  });
});

describe('serverSchema', () => {
  it('offers no model settings when the server has no model', () => {
    const shown = serverSchema(
      schema,
      serverConfig({ model: null, allowed_models: [], trial_available: false })
    );
    const keys = Object.keys(shown.properties!);
    for (const key of [
      'model',
      'votes',
      'structural',
      'representation',
      'value',
      'docs',
      'trial'
    ]) {
      expect(keys).not.toContain(key);
    }
    expect(keys).toEqual(
      expect.arrayContaining(['autoCheck', 'delay', 'guard', 'maxColumns'])
    );
    // A value the user set earlier stays valid in their file, an unknown key does not, and the form
    // offers no unlabelled "add a property" button (rjsf offers one exactly when
    // `additionalProperties` is set).
    expect(shown.additionalProperties).toBe(false);
    expect(errorsOf(shown, { model: 'openai/x', votes: 3 })).toBeNull();
    expect(errorsOf(shown, { nope: 1 })).not.toBeNull();
    // The schema as written is untouched.
    expect(Object.keys(schema.properties!)).toContain('model');
  });

  it('names the allowed models and the server defaults', () => {
    const shown = serverSchema(
      schema,
      serverConfig({
        allowed_models: ['openai/a', 'openai/b'],
        auto_check: false
      })
    );
    expect(shown.properties!.model.description).toContain(
      'This server allows: openai/a, openai/b'
    );
    expect(shown.properties!.trial.description).toContain('when I ask');
    expect(shown.properties!.autoCheck.description).toContain(
      "server's setting applies: off"
    );
    expect(shown.additionalProperties).toBe(false);
    expect(shown.patternProperties).toBeUndefined();
  });

  it("shows the server's values as the defaults, so the form shows what is in effect", () => {
    const shown = serverSchema(
      schema,
      serverConfig({
        trial: 'auto',
        auto_check: false,
        votes: 3,
        categories: 'SR',
        docs: true
      })
    );
    const props = shown.properties!;
    expect(props.trial.default).toBe('auto');
    expect(props.trial.description).toContain(
      "Until you choose, the server's setting applies: automatically."
    );
    expect(props.autoCheck.default).toBe(false);
    expect(props.votes.default).toBe(3);
    expect(props.structural.default).toBe(true);
    expect(props.value.default).toBe(false);
    expect(props.value.description).toContain("server's setting applies: off");
    expect(props.docs.default).toBe(true);
    // Defaults the form cannot show (2 votes are not offered) stay the schema's, unclaimed.
    const odd = serverSchema(schema, serverConfig({ votes: 2 })).properties!;
    expect(odd.votes.default).toBe(1);
    expect(odd.votes.description).not.toContain("server's setting");
    // The schema as written keeps its own defaults.
    expect(schema.properties!.trial.default).toBe('on-demand');
  });

  it('hides the trial setting where the server cannot or will not run trials', () => {
    expect(
      serverSchema(schema, serverConfig({ trial_available: false })).properties!
        .trial
    ).toBeUndefined();
    expect(
      serverSchema(schema, serverConfig({ trial: 'off' })).properties!.trial
    ).toBeUndefined();
  });

  it('leaves the schema alone without a server answer', () => {
    expect(serverSchema(schema, null)).toBe(schema);
  });
});

describe('CraneSettings', () => {
  const loaded = (user: Record<string, unknown>) =>
    ({
      composite: { ...defaultsOf(schema), ...user },
      user,
      changed: { connect: () => true, disconnect: () => true }
    }) as unknown as ISettingRegistry.ISettings;

  it("follows the server's auto-check default until the user chooses", () => {
    const settings = new CraneSettings(schema);
    settings.attach(loaded({}));
    expect(settings.current.autoCheck).toBe(true);
    settings.server = serverConfig({ auto_check: false });
    expect(settings.current.autoCheck).toBe(false);
    settings.attach(loaded({ autoCheck: true }));
    expect(settings.current.autoCheck).toBe(true);
  });

  it("keeps the user's explicit choice against the server", () => {
    const settings = new CraneSettings(schema);
    let changes = 0;
    settings.changed.connect(() => changes++);
    settings.attach(loaded({ autoCheck: false }));
    settings.server = serverConfig({ auto_check: true });
    expect(settings.current.autoCheck).toBe(false);
    expect(changes).toBe(2);
  });

  it("follows the server's trial mode until the user chooses; off where trials cannot run", () => {
    const settings = new CraneSettings(schema);
    settings.attach(loaded({}));
    settings.server = serverConfig({ trial: 'auto' });
    expect(settings.trialMode).toBe('auto');
    settings.attach(loaded({ trial: 'on-demand' }));
    expect(settings.trialMode).toBe('on-demand');
    settings.server = serverConfig({
      trial_available: false,
      trial_unavailable_reason: 'no OS sandbox (Landlock) on this kernel'
    });
    expect(settings.trialMode).toBe('off');
  });

  it('says where each value in effect comes from', () => {
    const settings = new CraneSettings(schema);
    settings.attach(loaded({}));
    expect(settings.originOf('trial')).toBe('default');
    settings.server = serverConfig({ trial: 'auto' });
    expect(settings.originOf('trial')).toBe('server');
    expect(settings.originOf('delay')).toBe('default');
    // The form saved everything it showed, the server's value among it: still the server's.
    settings.attach(loaded({ ...defaultsOf(schema), trial: 'auto' }));
    expect(settings.originOf('trial')).toBe('server');
    expect(settings.trialMode).toBe('auto');
    settings.attach(loaded({ trial: 'off' }));
    expect(settings.originOf('trial')).toBe('user');
    expect(settings.trialMode).toBe('off');
    // Votes and facts follow the server too until chosen.
    settings.server = serverConfig({ votes: 3, categories: 'SR' });
    expect(settings.current.votes).toBe(3);
    expect(settings.current.value).toBe(false);
    expect(settings.originOf('votes')).toBe('server');
  });

  it('knows whether a model may be asked', () => {
    const settings = new CraneSettings(schema);
    settings.server = serverConfig({ model: null, allowed_models: [] });
    expect(settings.hasModel).toBe(false);
    settings.server = serverConfig();
    expect(settings.hasModel).toBe(true);
  });
});
