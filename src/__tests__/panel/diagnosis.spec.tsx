import { nullTranslator } from '@jupyterlab/translation';
import React from 'react';

import type { IAnalyzeResult } from '../../contract/api';
import type { ICheckRecord } from '../../contract/tokens';
import { cellView } from '../../badge/verdict';
import { Diagnosis } from '../../panel/diagnosis';
import {
  blockedTrial,
  checksCrash,
  modelCrash,
  noModelCrash,
  observedCrash
} from '../fixtures';
import { rendered, texts } from '../harness';

const trans = nullTranslator.load('crane_jupyterlab');

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

  it('says what a package install in the cell was answered with', async () => {
    const { node, dispose } = await diagnosis({
      ...observedCrash,
      trial: {
        ...observedCrash.trial!,
        installs:
          'the install was answered from this environment, not run: already installed: numpy 2.4.6'
      }
    });
    const trial = node.querySelector('.jp-Crane-trial')!;
    expect(texts(trial as HTMLElement, '.jp-Crane-pair')).toContain(
      'Installsthe install was answered from this environment, not run: already installed: numpy 2.4.6'
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
