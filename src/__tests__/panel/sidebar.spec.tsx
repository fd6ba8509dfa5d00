import type { INotebookTracker } from '@jupyterlab/notebook';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import React from 'react';

import type { IAnalyzeResult } from '../../contract/api';
import { Diagnosis } from '../../panel/diagnosis';
import { formatDuration } from '../../badge/words';
import { CellChecks } from '../../badge/model';
import { CraneSettings } from '../../settings/model';
import { trialModeText } from '../../panel/notices';
import { CraneSidebar, SidebarModel } from '../../panel/sidebar';
import { SessionStats } from '../../editing/stats';
import type { ICheckRecord } from '../../contract/tokens';
import { cellView } from '../../badge/verdict';
import type { CraneWatcher, NotebookWatcher } from '../../editing/watcher';
import {
  blockedTrial,
  checksCrash,
  modelCrash,
  noModelCrash,
  observedCrash,
  schema,
  serverConfig
} from '../fixtures';
import { rendered, settle, texts } from '../harness';

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

/** Render the diagnosis of `result` for a cell of `source`. */
function diagnosis(
  result: IAnalyzeResult,
  source = "df['Agee'].mean()"
): Promise<{ node: HTMLElement; dispose: () => void }> {
  const r = record(result, source);
  return rendered(
    <Diagnosis
      trans={trans}
      record={r}
      view={cellView(r, source, 0)}
      source={source}
      serverCategories="SRV"
    />
  );
}

describe('the diagnosis', () => {
  it('leads with the cause, its line, and the facts the check used', async () => {
    const { node, dispose } = await diagnosis(checksCrash);
    const sections = [...node.children].map(e => e.className);
    expect(sections.slice(0, 3)).toEqual([
      'jp-Crane-cause',
      'jp-Crane-runtime',
      'jp-Crane-details'
    ]);
    // The probe's close match of the missing column is said in the cause.
    expect(texts(node, '.jp-Crane-cause-text')).toEqual([
      "KeyError: df has no column 'Agee' (line 1). Did you mean 'Age'?"
    ]);
    expect(texts(node, '.jp-Crane-cause-line')).toEqual([
      "Line 1: df['Agee'].mean()"
    ]);
    expect(texts(node, '.jp-Crane-decisive li')).toEqual([
      "df['Agee'] does not exist",
      "df.columns = ['Age', 'Fare', 'Survived']"
    ]);
    // Then the facts by object: the decisive ones first and highlighted, their object open.
    const first = node.querySelector('.jp-Crane-object')!;
    expect(first.hasAttribute('open')).toBe(true);
    expect(texts(first as HTMLElement, 'li').slice(0, 2)).toEqual([
      "columns: ['Age', 'Fare', 'Survived']",
      "df['Agee'] does not exist"
    ]);
    const decisive = [...first.querySelectorAll('li')].map(li =>
      li.classList.contains('jp-mod-decisive')
    );
    expect(decisive.slice(0, 3)).toEqual([true, true, false]);
    expect(decisive.filter(Boolean)).toHaveLength(2);
    dispose();
  });

  it('shows the details that mean something: no model, tokens or votes when the checks decided', async () => {
    const { node, dispose } = await diagnosis(noModelCrash);
    const rows = texts(node, '.jp-Crane-details dt');
    expect(rows).toEqual(['Time']);
    expect(node.textContent).not.toContain('Tokens');
    dispose();
  });

  it('names the model, its tokens and the facts sent when the model decided', async () => {
    const { node, dispose } = await diagnosis(modelCrash);
    expect(texts(node, '.jp-Crane-details dt')).toEqual([
      'Model',
      'Time',
      'Tokens',
      'Sent'
    ]);
    expect(texts(node, '.jp-Crane-cause-text')).toEqual([
      'The target cell reads something the kernel does not have, so it raises a KeyError.'
    ]);
    // The facts its reasoning names are the decisive ones.
    expect(texts(node, '.jp-Crane-decisive li')[0]).toBe(
      "df['Agee'] does not exist"
    );
    // The rest of the reasoning is one click away, not repeated.
    expect(node.querySelector('.jp-Crane-reasoning')).not.toBeNull();
    dispose();
  });

  it('shows an observed crash: the exception and line once, then outcome, time, sandbox', async () => {
    const { node, dispose } = await diagnosis(
      observedCrash,
      "x = 1\ntotal = df['Agee'].mean()"
    );
    expect(texts(node, '.jp-Crane-cause-text')).toEqual([
      "KeyError: 'Agee'. Did you mean 'Age'?"
    ]);
    expect(texts(node, '.jp-Crane-cause-line')).toEqual([
      "Line 2: total = df['Agee'].mean()"
    ]);
    const trial = node.querySelector('.jp-Crane-trial')!;
    expect(texts(trial as HTMLElement, '.jp-Crane-pair')).toEqual([
      'Outcomecrashed',
      'Ran for13 ms',
      'Extra memory3.5 MB',
      'Sandboxlandlock, seccomp, netns'
    ]);
    // The cause says the exception: once in the whole panel, its message and line too.
    const whole = node.textContent ?? '';
    expect(whole.split("KeyError: 'Agee'")).toHaveLength(2);
    expect(whole.split("total = df['Agee'].mean()")).toHaveLength(2);
    expect(trial.querySelector('.jp-Crane-frames')).toBeNull();
    dispose();
  });

  it('lists the frames of an observed crash when they go through more than its line', async () => {
    const deep: IAnalyzeResult = {
      ...observedCrash,
      trial: {
        ...observedCrash.trial!,
        line: 2,
        frames: [
          { line: 4, text: 'total = mean_of(df)' },
          { line: 2, text: "return frame['Agee'].mean()" }
        ]
      }
    };
    const { node, dispose } = await diagnosis(
      deep,
      "def mean_of(frame):\n    return frame['Agee'].mean()\n\ntotal = mean_of(df)"
    );
    expect(texts(node, '.jp-Crane-frames li')).toEqual([
      'line 4: total = mean_of(df)',
      "line 2: return frame['Agee'].mean()"
    ]);
    dispose();
  });

  it('opens the facts of the objects the crashing line uses, though the message names none of their facts', async () => {
    const shapes: IAnalyzeResult = {
      ...observedCrash,
      runtime: {
        objects: [
          {
            expr: 'model',
            type: 'torch.nn.Linear',
            facts: [{ key: 'in_features', value: 20, cat: 'S' }]
          },
          {
            expr: 'x',
            type: 'torch.Tensor',
            facts: [{ key: 'shape', value: [4, 10], cat: 'S' }]
          },
          {
            expr: 'unused',
            type: 'int',
            facts: [{ key: 'value', value: 3, cat: 'V' }]
          }
        ]
      },
      trial: {
        ...observedCrash.trial!,
        exception: 'RuntimeError',
        message: 'mat1 and mat2 shapes cannot be multiplied (4x10 and 20x5)',
        line: 1,
        frames: [{ line: 1, text: 'out = model(x)' }]
      }
    };
    const { node, dispose } = await diagnosis(shapes, 'out = model(x)');
    const open = [...node.querySelectorAll('.jp-Crane-object')].map(d => [
      d.querySelector('summary code')!.textContent,
      d.hasAttribute('open')
    ]);
    expect(open).toEqual([
      ['model', true],
      ['x', true],
      ['unused', false]
    ]);
    // The numbers the message compares ("4x10 and 20x5") single out the shape and in_features.
    expect(texts(node, '.jp-Crane-decisive li')).toEqual([
      'model in_features: 20',
      'x shape: [4, 10]'
    ]);
    dispose();
  });

  it('heads an object with its type and its relation to the cell in words', async () => {
    const related: IAnalyzeResult = {
      ...checksCrash,
      runtime: {
        objects: [
          {
            expr: 'm',
            type: 'sklearn.ensemble._forest.RandomForestClassifier',
            facts: [{ key: 'fitted', value: false, cat: 'V' }]
          },
          {
            expr: 'X',
            type: 'numpy.ndarray',
            via: 'm',
            relation: 'built',
            facts: [{ key: 'shape', value: [4, 2], cat: 'S' }]
          }
        ]
      }
    };
    const { node, dispose } = await diagnosis(related);
    const summaries = [...node.querySelectorAll('.jp-Crane-object summary')];
    expect(summaries.map(s => s.textContent)).toEqual([
      'm sklearn RandomForestClassifier',
      'X NumPy array; m was built from it'
    ]);
    // The whole type stays in the title, for a header the panel is too narrow for.
    expect(summaries[0].getAttribute('title')).toBe(
      'm sklearn.ensemble._forest.RandomForestClassifier'
    );
    dispose();
  });

  it('says why a blocked trial did not decide and what decided instead, once', async () => {
    const { node, dispose } = await diagnosis(blockedTrial);
    const trial = node.querySelector('.jp-Crane-trial')!;
    expect(texts(trial as HTMLElement, '.jp-Crane-trial-fallback')).toEqual([
      'The trial run stopped by the sandbox: writing /home/user/out.csv was refused. ' +
        'The verdict falls back to the checks and the model.'
    ]);
    expect(
      (trial.textContent ?? '').split('writing /home/user/out.csv')
    ).toHaveLength(2);
    expect(texts(trial as HTMLElement, '.jp-Crane-pair dt')).toEqual([
      'Ran for',
      'Extra memory',
      'Sandbox'
    ]);
    // What was tried is said once, under the level (the panel's header): not again here.
    expect(node.querySelector('.jp-Crane-cause')).toBeNull();
    dispose();
  });
});

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

describe('formatDuration', () => {
  it('says durations the way people do', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(35.4)).toBe('35 ms');
    expect(formatDuration(0.3)).toBe('under 1 ms');
    expect(formatDuration(2400)).toBe('2.4 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(185_000)).toBe('3 min 5 s');
    expect(formatDuration(3_720_000)).toBe('1 h 2 min');
  });
});
