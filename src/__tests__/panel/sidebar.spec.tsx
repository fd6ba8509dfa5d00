import type { INotebookTracker } from '@jupyterlab/notebook';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { IAnalyzeResult } from '../../contract/api';
import type { ICheckRecord } from '../../contract/tokens';
import { CellChecks } from '../../badge/model';
import { SessionStats } from '../../editing/stats';
import type { CraneWatcher, NotebookWatcher } from '../../editing/watcher';
import { trialModeText } from '../../panel/notices';
import { CraneSidebar, SidebarModel } from '../../panel/sidebar';
import { CraneSettings } from '../../settings/model';
import { checksCrash, schema, serverConfig } from '../fixtures';
import { settle } from '../harness';

/** A server that cannot run trials. */
const NO_TRIALS = { trial: 'off', trial_available: false } as const;

const trans = nullTranslator.load('crane_jupyterlab');

/** A notebook tracker with one notebook open, whose watcher is `watcher`. */
function trackerOf(current: unknown): INotebookTracker {
  const owner = {};
  return {
    currentWidget: current,
    currentChanged: new Signal(owner),
    activeCellChanged: new Signal(owner)
  } as unknown as INotebookTracker;
}

async function sidebarWith(
  settings: CraneSettings,
  watcher?: Partial<NotebookWatcher>
): Promise<CraneSidebar> {
  const watchers = {
    watcherFor: () => watcher
  } as unknown as CraneWatcher;
  const sidebar = new CraneSidebar(
    new SidebarModel(trackerOf(watcher ? {} : null), watchers, settings),
    trans
  );
  Widget.attach(sidebar, document.body);
  sidebar.update();
  await settle();
  return sidebar;
}

function record(result: IAnalyzeResult, source: string): ICheckRecord {
  return {
    cellId: 'c',
    source,
    epoch: 0,
    phase: 'done',
    startedAt: 0,
    sent: {},
    result
  };
}

describe('CraneSidebar', () => {
  it('says once, briefly, that there is no model, and how to add one in place', async () => {
    const settings = new CraneSettings(schema);
    settings.server = serverConfig({
      ...NO_TRIALS,
      model: null,
      allowed_models: []
    });
    const sidebar = await sidebarWith(settings);
    const notices = sidebar.node.querySelectorAll('.jp-Crane-notice');
    expect(notices).toHaveLength(2);
    expect(notices[0].textContent).toBe(
      'No model is configured: only certain crashes are reported.'
    );
    // Explained here, not behind a link: the trait and the environment variable to set.
    const how = notices[1] as HTMLDetailsElement;
    expect(how.tagName).toBe('DETAILS');
    expect(how.querySelector('summary')!.textContent).toBe(
      'How to add a model'
    );
    expect(how.textContent).toContain('CRANE_MODEL=openai/gpt-4o-mini');
    expect(how.textContent).toContain('c.CraneExtension.model');
    expect(sidebar.node.querySelector('a[href^="http"]')).toBeNull();
    expect(sidebar.node.textContent).toContain('Open a notebook');
    sidebar.dispose();
    settings.dispose();
  });

  it('reflects a model the server does not allow instead of using it', async () => {
    const settings = new CraneSettings(schema);
    const user = { model: 'openai/not-allowed' };
    settings.attach({
      composite: user,
      user,
      changed: new Signal({})
    } as unknown as ISettingRegistry.ISettings);
    settings.server = serverConfig(NO_TRIALS);
    const sidebar = await sidebarWith(settings);
    const text = sidebar.node.textContent ?? '';
    expect(text).toContain(
      'The server does not allow the model openai/not-allowed; its default is used.'
    );
    expect(text).not.toContain('No model is configured');
    sidebar.dispose();
    settings.dispose();
  });

  it("shows the notebook's session figures and history", async () => {
    const settings = new CraneSettings(schema);
    const stats = new SessionStats();
    const checks = new CellChecks();
    stats.ran('a', 'load()', 65_000, false);
    stats.checked();
    stats.warned('b', "df['Agee']", 'predicted');
    stats.ran('b', "df['Age']", 10, false);
    checks.set({
      ...record(checksCrash, "df['Agee'].mean()\n"),
      cellId: 'b',
      run: { kind: 'confirmed', ename: 'KeyError', evalue: "'Agee'", at: 1 }
    });
    const sidebar = await sidebarWith(settings, {
      activeCodeCell: null,
      stats,
      checks,
      updated: new Signal({})
    } as unknown as NotebookWatcher);
    const stat = (name: string) =>
      sidebar.node.querySelector(`[data-crane-stat="${name}"]`)?.textContent;
    expect(stat('checks')).toBe('1');
    expect(stat('warnings')).toBe('1');
    expect(stat('confirmed')).toBe('0'); // said even at 0: no counter reads as a failure
    expect(stat('caught')).toBe('1 (observed 0, predicted 1)');
    // Each figure has its one-line definition at hand.
    for (const dt of Array.from(
      sidebar.node.querySelectorAll('.jp-Crane-stats dt')
    )) {
      expect(dt.getAttribute('title')).toMatch(/\.$/);
    }
    expect(
      sidebar.node.querySelector('.jp-Crane-stats')!.textContent
    ).toContain('Crashes avoided');
    expect(stat('saved')).toBe('1 min 5 s');
    expect(sidebar.node.querySelector('.jp-Crane-help')!.textContent).toContain(
      'restart'
    );
    const entry = sidebar.node.querySelector('.jp-Crane-history-entry')!;
    expect(entry.classList.contains('jp-mod-confirmed')).toBe(true);
    expect(entry.textContent).toContain('Crashed as warned');
    // The whole first line of the source, not one character of it.
    expect(entry.querySelector('code')!.textContent).toBe("df['Agee'].mean()");
    sidebar.dispose();
    settings.dispose();
  });
});

describe('trialModeText', () => {
  it('says the trial mode in effect and whose setting it is', () => {
    const settings = new CraneSettings(schema);
    const attach = (user: Record<string, unknown>) =>
      settings.attach({
        composite: user,
        user,
        changed: new Signal({})
      } as unknown as ISettingRegistry.ISettings);
    attach({});
    expect(trialModeText(trans, settings)).toBe('Trial runs: when you ask');
    settings.server = serverConfig({ trial: 'auto' });
    expect(trialModeText(trans, settings)).toBe(
      "Trial runs: with every check (the server's setting)"
    );
    attach({ trial: 'on-demand' });
    expect(trialModeText(trans, settings)).toBe(
      'Trial runs: when you ask (your setting)'
    );
    settings.server = serverConfig({ trial: 'off' });
    expect(trialModeText(trans, settings)).toBe(
      "Trial runs: off (the server's setting)"
    );
    settings.server = serverConfig({
      trial_available: false,
      trial_unavailable_reason: 'no seccomp user notification (Linux < 5.5)'
    });
    expect(trialModeText(trans, settings)).toBe(
      'Trial runs are not possible here: no seccomp user notification (Linux < 5.5)'
    );
    settings.dispose();
  });
});
