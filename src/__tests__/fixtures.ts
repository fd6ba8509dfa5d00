/**
 * Server answers (and the settings schema) for the unit tests. The first ones were RECORDED from a real jupyter_server with the
 * crane extension, a real kernel and the UI tests' stub model (ui-tests/crane_stub.py), for cells
 * run on this state (recorded.json):
 *
 *   df = pd.DataFrame({'Age': [22.0, 38.0, None, 35.0], 'Fare': [7.25, 71.3, 8.05, 53.1],
 *                      'Survived': [0, 1, 1, 1]})
 *   X = df[['Fare']]; rf = RandomForestClassifier(n_estimators=5)
 *
 * The trial-run answers follow the contract of crane_jupyterlab/api.py (TrialOutcome), written by
 * hand until the server side of trial runs exists.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import schemaJSON from '../../schema/plugin.json';
import type {
  IAnalyzeResult,
  IBelowOutcome,
  ITrialOutcome
} from '../contract/api';
import type { IServerConfig } from '../contract/tokens';
import recorded from './recorded.json';

/** The extension's settings schema, as `CraneSettings` takes it. */
export const schema = schemaJSON as unknown as ISettingRegistry.ISchema;

/** `df['Agee'].mean()`, a model configured: the checks decide, certain. */
export const checksCrash = recorded.checksCrash as unknown as IAnalyzeResult;

/** `rf.predict(X)`: the checks find the unfitted estimator. */
export const unfitted = recorded.unfitted as unknown as IAnalyzeResult;

/** `df['Age'].mean(\nprint(1`: a syntax error. */
export const syntaxError = recorded.syntaxError as unknown as IAnalyzeResult;

/** `df['Age'].mean()`: the model finds no crash. */
export const modelNoCrash = recorded.modelNoCrash as unknown as IAnalyzeResult;

/** A function of the cell reads `df['Agee']`: the checks cannot be sure, the model predicts a crash. */
export const modelCrash = recorded.modelCrash as unknown as IAnalyzeResult;

/** `df['Age'].mean()` without a model: no certain crash. */
export const noModelNoCrash =
  recorded.noModelNoCrash as unknown as IAnalyzeResult;

/** `df['Agee'].mean()` without a model: the checks decide. */
export const noModelCrash = recorded.noModelCrash as unknown as IAnalyzeResult;

/** A trial run of `df['Agee'].mean()` (line 2 of the cell) crashed: observed, certain. */
export const observedCrash: IAnalyzeResult = {
  ...checksCrash,
  verdict: {
    ...checksCrash.verdict!,
    reasoning: "KeyError: 'Agee' (line 2), observed in a trial run.",
    source: 'trial',
    findings: []
  },
  trial: {
    status: 'crashed',
    exception: 'KeyError',
    message: "'Agee'",
    line: 2,
    frames: [{ line: 2, text: "total = df['Agee'].mean()" }],
    elapsed_ms: 12.5,
    sandbox: 'landlock+seccomp+netns',
    reason: null,
    extra_memory_mb: 3.5,
    writes: null,
    installs: null,
    quick: null,
    progress: null,
    worker: null,
    below: [],
    forecast: null
  }
};

/** A quick trial (the epoch loop cut after 2 of 100 iterations) saw the evaluation line crash; `crash`
 * says whether that depends on the cut, and `source` follows it (quick or quick_may). */
export function quickCrash(
  crash: 'certain' | 'depends' | 'shortened',
  source: 'quick' | 'quick_may' | 'checks' = crash === 'certain'
    ? 'quick'
    : 'quick_may'
): IAnalyzeResult {
  return {
    ...checksCrash,
    verdict: {
      ...checksCrash.verdict!,
      detection: source !== 'checks',
      reasoning: 'The cell raised RuntimeError in a quick trial.',
      source,
      findings: []
    },
    trial: {
      status: 'crashed',
      exception: 'RuntimeError',
      message: 'mat1 and mat2 shapes cannot be multiplied (2400x19 and 20x128)',
      line: 14,
      frames: [{ line: 14, text: 'test_pred = model(X_test).argmax(1)' }],
      elapsed_ms: 900,
      sandbox: 'landlock+seccomp+netns',
      reason: null,
      extra_memory_mb: 30,
      writes: null,
      installs: null,
      quick: {
        k: 2,
        cut: true,
        crash,
        skipped_asserts: [],
        loops: [
          {
            line: 2,
            kind: 'for',
            iterations: 2,
            runs: 1,
            cut: true,
            total: 100,
            seconds: null,
            full_s: null
          },
          {
            line: 5,
            kind: 'for',
            iterations: 600,
            runs: 2,
            cut: false,
            total: 300,
            seconds: null,
            full_s: null
          }
        ]
      },
      progress: null,
      worker: null,
      below: [],
      forecast: null
    }
  };
}

/** A trial run outcome other than a crash. */
export function trialOutcome(
  status: ITrialOutcome['status'],
  reason: string | null
): ITrialOutcome {
  return {
    status,
    exception: null,
    message: null,
    line: null,
    frames: [],
    elapsed_ms: status === 'unavailable' ? null : 5000,
    sandbox: status === 'unavailable' ? null : 'landlock+seccomp+netns',
    reason,
    extra_memory_mb: status === 'unavailable' ? null : 2,
    writes: null,
    installs: null,
    quick: null,
    progress: null,
    worker: null,
    below: [],
    forecast: null
  };
}

/** The trial was stopped by the sandbox (the cell writes a file): the model decided instead. */
export const blockedTrial: IAnalyzeResult = {
  ...modelNoCrash,
  trial: trialOutcome('blocked', 'writing /home/user/out.csv was refused')
};

/** The trial ran to its end: no crash, observed. */
export const finishedTrial: IAnalyzeResult = {
  ...modelNoCrash,
  verdict: {
    ...modelNoCrash.verdict!,
    source: 'trial',
    reasoning: 'The cell ran to its end in a trial run.',
    votes: []
  },
  trial: { ...trialOutcome('finished', null), elapsed_ms: 41 }
};

/** A server's configuration: a model, trial runs on demand; `over` changes any part. */
export function serverConfig(over: Partial<IServerConfig> = {}): IServerConfig {
  return {
    model: 'openai/a',
    allowed_models: ['openai/a'],
    categories: 'SRV',
    votes: 1,
    temperature: 0,
    auto_check: true,
    docs: false,
    key_configured: true,
    missing_env: [],
    trial: 'on-demand',
    trial_available: true,
    trial_unavailable_reason: null,
    ...over
  };
}

/** What the chain met in one cell below: a crash by default. */
export function belowOutcome(over: Partial<IBelowOutcome> = {}): IBelowOutcome {
  return {
    cell_id: 'd',
    status: 'crashed',
    exception: 'KeyError',
    message: "'age'",
    line: 1,
    reads: ['df'],
    elapsed_ms: 12,
    reason: null,
    after_cut: false,
    quick: null,
    without_edit: false,
    unbound: [],
    forecast: null,
    installs: null,
    ...over
  };
}
