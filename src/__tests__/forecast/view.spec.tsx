import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import React from 'react';

import type { IAnalyzeResult, IForecast } from '../../contract/api';
import type { ICheckRecord } from '../../contract/tokens';
import { maybeIcon, observedIcon } from '../../badge/icons';
import { cellView } from '../../badge/verdict';
import { CellBadge } from '../../badge/widget';
import type { NotebookTop } from '../../fromtop/run';
import { FromTopSection } from '../../fromtop/view';
import { Diagnosis } from '../../panel/diagnosis';
import {
  checksCrash,
  finishedTrial,
  modelCrash,
  noModelNoCrash,
  observedCrash
} from '../fixtures';
import { doneRun, outcome } from '../fromtop/fixtures';
import { rendered, texts } from '../harness';
import { AT_LEAST, LONG, OUT_OF_MEMORY, SHORT } from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

function done(result: IAnalyzeResult): ICheckRecord {
  return {
    cellId: 'c',
    source: 'src',
    epoch: 1,
    phase: 'done',
    startedAt: 0,
    sent: {},
    result
  };
}

/** `result` with `forecast`. */
function withForecast(
  result: IAnalyzeResult,
  forecast: IForecast | null
): IAnalyzeResult {
  return { ...result, forecast };
}

describe('the badge', () => {
  let badge: CellBadge;
  beforeEach(() => {
    badge = new CellBadge(trans, () => undefined);
  });
  afterEach(() => badge.dispose());

  function show(result: IAnalyzeResult): HTMLElement {
    const record = done(result);
    badge.render(cellView(record, 'src', 1), record);
    return badge.node.querySelector<HTMLElement>('.jp-Crane-badge-forecast')!;
  }

  it('has no forecast line without a forecast (a server of before them too)', () => {
    expect(show(noModelNoCrash).hidden).toBe(true);
    expect(show(withForecast(noModelNoCrash, null)).hidden).toBe(true);
  });

  it('has no line for an observed short cell', () => {
    expect(show(withForecast(finishedTrial, SHORT)).hidden).toBe(true);
  });

  it('adds the line to "No crash found", which keeps its green level', () => {
    const line = show(withForecast(noModelNoCrash, LONG));
    expect(line.hidden).toBe(false);
    expect(line.textContent).toBe('Takes ~12 min · peaks at ~9.5 GB of 24 GB');
    expect(badge.state).toBe('no-crash');
    expect(badge.hasClass('jp-mod-no-crash')).toBe(true);
    expect(line.classList.contains('jp-mod-may-crash')).toBe(false);
    expect(line.querySelector('svg')).toBeNull();
    // The verdict's own sentence is unchanged.
    expect(badge.node.querySelector('.jp-Crane-badge-text')!.textContent).toBe(
      'No crash found (tried: the deterministic checks (no model configured))'
    );
  });

  it('says "at least" for a lower bound, under a cell that may crash', () => {
    const line = show(withForecast(modelCrash, AT_LEAST));
    expect(badge.state).toBe('may-crash');
    expect(line.textContent).toBe('Takes at least ~5 min');
  });

  it('shows a projected run out of memory in the "may crash" look, never as observed', () => {
    const line = show(withForecast(noModelNoCrash, OUT_OF_MEMORY));
    expect(line.textContent).toBe(
      'Projected to run out of memory: needs ~50 GB, 21 GB available; at about iteration 180 of 500 (line 3)'
    );
    expect(line.classList.contains('jp-mod-may-crash')).toBe(true);
    expect(line.classList.contains('jp-mod-will-crash')).toBe(false);
    expect(line.classList.contains('jp-mod-observed')).toBe(false);
    const svg = line.querySelector('svg')!.outerHTML;
    const icon = (name: string) => {
      const host = document.createElement('span');
      (name === 'maybe' ? maybeIcon : observedIcon).element({
        container: host,
        tag: 'span'
      });
      return host.querySelector('svg')!.outerHTML;
    };
    expect(svg).toBe(icon('maybe'));
    expect(svg).not.toBe(icon('observed'));
    // A forecast is no crash claim: the badge's level stays what the check found.
    expect(badge.state).toBe('no-crash');
    expect(badge.hasClass('jp-mod-observed')).toBe(false);
  });

  it('says nothing of time under a cell that will crash, and drops the line when it goes', () => {
    expect(show(withForecast(checksCrash, LONG)).hidden).toBe(true);
    expect(show(withForecast(noModelNoCrash, OUT_OF_MEMORY)).hidden).toBe(
      false
    );
    const line = show(withForecast(noModelNoCrash, LONG));
    expect(line.classList.contains('jp-mod-may-crash')).toBe(false);
    expect(line.querySelector('svg')).toBeNull();
    expect(show(noModelNoCrash).hidden).toBe(true);
  });
});

/** Render the diagnosis of `result`. */
function diagnosis(
  result: IAnalyzeResult
): Promise<{ node: HTMLElement; dispose: () => void }> {
  const r = done(result);
  return rendered(
    <Diagnosis
      trans={trans}
      record={r}
      view={cellView(r, 'src', 1)}
      source="src"
      serverCategories="SRV"
    />
  );
}

/** The section's rows, "Label: value" each. */
function rows(node: HTMLElement): string[] {
  return [...node.querySelectorAll('.jp-Crane-forecast .jp-Crane-pair')].map(
    p =>
      `${p.querySelector('dt')!.textContent}: ${p.querySelector('dd')!.textContent}`
  );
}

describe('the diagnosis', () => {
  it('has no "Before it runs" without a forecast', async () => {
    const { node, dispose } = await diagnosis(noModelNoCrash);
    expect(node.querySelector('.jp-Crane-forecast')).toBeNull();
    dispose();
  });

  it('says an observed cell’s time and peak, observed in its trial run', async () => {
    const { node, dispose } = await diagnosis(
      withForecast(finishedTrial, SHORT)
    );
    expect(texts(node, '.jp-Crane-forecast h3')).toEqual(['Before it runs']);
    expect(rows(node)).toEqual([
      'Time: 0.4 s',
      'Memory peak: 850 MB of 24 GB available',
      'Basis: observed in its trial run'
    ]);
    // Before the trial run's section.
    const sections = [...node.children].map(e => e.className);
    expect(sections.indexOf('jp-Crane-forecast')).toBe(
      sections.indexOf('jp-Crane-trial jp-mod-finished') - 1
    );
    dispose();
  });

  it('says a long projected cell’s range and each loop it was projected from', async () => {
    const { node, dispose } = await diagnosis(
      withForecast(noModelNoCrash, LONG)
    );
    expect(rows(node)).toEqual([
      'Time: ~12 min (9.6–15 min)',
      'Memory peak: ~9.5 GB of 24 GB available',
      'Basis: projected from 2 of 500 iterations of the loop at line 3 (1.4 s and 1 MB each)'
    ]);
    dispose();
  });

  it('lists the loops one per line', async () => {
    const { node, dispose } = await diagnosis(
      withForecast(noModelNoCrash, {
        ...LONG,
        projected_from: [...LONG.projected_from, ...AT_LEAST.projected_from]
      })
    );
    expect(texts(node, '.jp-Crane-forecast-basis li')).toEqual([
      'projected from 2 of 500 iterations of the loop at line 3 (1.4 s and 1 MB each)',
      'projected from 2 iterations of the loop at line 2 (0.5 s each)'
    ]);
    dispose();
  });

  it('says "at least" for a lower bound', async () => {
    const { node, dispose } = await diagnosis(
      withForecast(noModelNoCrash, AT_LEAST)
    );
    expect(rows(node)).toEqual([
      'Time: at least ~5 min',
      'Basis: projected from 2 iterations of the loop at line 2 (0.5 s each)'
    ]);
    dispose();
  });

  it('says a projected run out of memory in the "may crash" look, as a projection', async () => {
    const { node, dispose } = await diagnosis(
      withForecast(noModelNoCrash, OUT_OF_MEMORY)
    );
    const section = node.querySelector('.jp-Crane-forecast')!;
    expect(section.classList.contains('jp-mod-may-crash')).toBe(true);
    expect(section.classList.contains('jp-mod-will-crash')).toBe(false);
    expect(texts(node, '.jp-Crane-forecast-oom')).toEqual([
      'Projected to run out of memory: needs ~50 GB, 21 GB available; at about iteration 180 of 500 (line 3)'
    ]);
    expect(texts(node, '.jp-Crane-forecast .jp-Crane-hint')).toEqual([
      'A projection from what its trial run measured, not a crash seen.'
    ]);
    expect(rows(node)[1]).toBe('Memory peak: ~50 GB of 21 GB available');
    dispose();
  });

  it('leaves out the short time to an observed crash, and says a long one as such', async () => {
    let { node, dispose } = await diagnosis(withForecast(observedCrash, SHORT));
    expect(node.querySelector('.jp-Crane-forecast')).toBeNull();
    dispose();
    ({ node, dispose } = await diagnosis(
      withForecast(observedCrash, { ...SHORT, seconds: 95 })
    ));
    expect(rows(node)[0]).toBe('Until its crash: 1.6 min');
    dispose();
  });
});

describe('the run from the top', () => {
  function fakeTop(run: ReturnType<typeof doneRun>): NotebookTop {
    return {
      run,
      running: false,
      stale: false,
      error: null,
      unavailable: null,
      kernelHasIt: true,
      startedAt: Date.now(),
      sent: [
        { cellId: 'c0', source: 'import pandas as pd' },
        { cellId: 'c1', source: 'for i in range(500): train(i)' }
      ],
      numberOf: (id: string) => ({ c0: 1, c1: 2 })[id] ?? null,
      changed: new Signal<unknown, void>({}),
      cancel: jest.fn(async () => undefined),
      start: jest.fn(async () => undefined)
    } as unknown as NotebookTop;
  }

  async function summary(
    run: ReturnType<typeof doneRun>
  ): Promise<{ node: HTMLElement; dispose: () => void }> {
    return rendered(
      <FromTopSection
        trans={trans}
        top={fakeTop(run)}
        onStart={() => undefined}
        onReveal={() => undefined}
      />
    );
  }

  const cells = [
    outcome('c0', 'ran'),
    outcome('c1', 'shortened', { elapsed_ms: 1200, forecast: LONG })
  ];

  it('says how long a full run takes in its summary', async () => {
    const { node, dispose } = await summary({
      ...doneRun(cells),
      forecast: { ...LONG, seconds: 1500, peak_memory_mb: null }
    });
    expect(texts(node, '.jp-Crane-top-summary')).toEqual([
      'Runs from the top: all 2 code cells ran without an error, 1 of them shortened (long loops or library calls cut). A full run takes ~25 min.'
    ]);
    expect(texts(node, '.jp-Crane-top-forecast')).toEqual(['(~12 min whole)']);
    dispose();
  });

  it('says nothing more without a forecast', async () => {
    const { node, dispose } = await summary(doneRun([outcome('c0', 'ran')]));
    expect(texts(node, '.jp-Crane-top-summary')).toEqual([
      'Runs from the top: all 1 code cells ran without an error.'
    ]);
    expect(node.querySelector('.jp-Crane-top-forecast')).toBeNull();
    dispose();
  });
});
