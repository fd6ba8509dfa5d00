import { nullTranslator } from '@jupyterlab/translation';

import {
  badgeLine,
  basisLines,
  basisText,
  cellForecastText,
  rangeText,
  runForecastText,
  timeText
} from '../../forecast/words';
import { doneRun, outcome } from '../fromtop/fixtures';
import {
  AT_LEAST,
  LONG,
  OUT_OF_MEMORY,
  SHORT,
  forecast,
  loop
} from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

describe('the time', () => {
  it('says a projected time with "~", its range, and "at least" for a lower bound', () => {
    expect(timeText(trans, SHORT)).toBe('0.4 s');
    expect(timeText(trans, LONG)).toBe('~12 min');
    expect(rangeText(LONG)).toBe('9.6–15 min');
    expect(rangeText(SHORT)).toBe('');
    expect(rangeText(forecast({ seconds_low: 40, seconds_high: 90 }))).toBe(
      '40 s–1.5 min'
    );
    expect(timeText(trans, AT_LEAST)).toBe('at least ~5 min');
    expect(rangeText(AT_LEAST)).toBe('');
    expect(timeText(trans, forecast({ seconds: null }))).toBe('');
  });
});

describe('the badge line', () => {
  it('is there only for a long or tight cell', () => {
    expect(badgeLine(trans, null)).toBeNull();
    expect(badgeLine(trans, SHORT)).toBeNull();
  });

  it('says how long a long cell takes and what its memory peaks at', () => {
    expect(badgeLine(trans, LONG)).toEqual({
      text: 'Takes ~12 min · peaks at ~9.5 GB of 24 GB',
      outOfMemory: false
    });
    expect(badgeLine(trans, forecast({ seconds: 42 }))?.text).toBe(
      'Takes 42 s · peaks at 850 MB of 24 GB'
    );
  });

  it('says "at least", and leaves the memory out when it is not known', () => {
    expect(badgeLine(trans, AT_LEAST)?.text).toBe('Takes at least ~5 min');
  });

  it('says a tight peak of a quick cell', () => {
    expect(
      badgeLine(trans, forecast({ seconds: 3, peak_memory_mb: 20480 }))?.text
    ).toBe('Takes 3 s · peaks at 20 GB of 24 GB');
    expect(
      badgeLine(trans, forecast({ seconds: null, peak_memory_mb: 20480 }))?.text
    ).toBe('Peaks at 20 GB of 24 GB');
    expect(
      badgeLine(
        trans,
        forecast({ seconds: 3, gpu_peak_mb: 76800, gpu_available_mb: 81920 })
      )?.text
    ).toBe(
      'Takes 3 s · peaks at 850 MB of 24 GB · GPU memory peaks at 75 GB of 80 GB'
    );
  });

  it('words a run out of memory as a projection, with where it runs out', () => {
    expect(badgeLine(trans, OUT_OF_MEMORY)).toEqual({
      text: 'Projected to run out of memory: needs ~50 GB, 21 GB available; at about iteration 180 of 500 (line 3)',
      outOfMemory: true
    });
    expect(
      badgeLine(trans, { ...OUT_OF_MEMORY, runs_out_at: null })?.text
    ).toBe('Projected to run out of memory: needs ~50 GB, 21 GB available');
  });

  it('says GPU memory, with its numbers, where the GPU is what runs out', () => {
    const gpu = {
      ...OUT_OF_MEMORY,
      peak_memory_mb: 9728,
      gpu_peak_mb: 51200,
      gpu_available_mb: 21504
    };
    expect(badgeLine(trans, gpu)).toEqual({
      text: 'Projected to run out of GPU memory: needs ~50 GB, 21 GB available; at about iteration 180 of 500 (line 3)',
      outOfMemory: true
    });
    expect(
      badgeLine(trans, { ...gpu, peak_memory_mb: 30720, runs_out_at: null })
        ?.text
    ).toBe(
      'Projected to run out of memory and GPU memory: needs ~30 GB, 21 GB available; GPU memory needs ~50 GB, 21 GB available'
    );
    // a GPU that fits beside a kernel whose memory runs out: the kernel's numbers only
    expect(
      badgeLine(trans, {
        ...OUT_OF_MEMORY,
        gpu_peak_mb: 1024,
        gpu_available_mb: 81920
      })?.text
    ).toBe(
      'Projected to run out of memory: needs ~50 GB, 21 GB available; at about iteration 180 of 500 (line 3)'
    );
  });
});

describe('the basis', () => {
  it('says an observed forecast was observed in the trial run', () => {
    expect(basisLines(trans, SHORT)).toEqual(['observed in its trial run']);
  });

  it('says each loop a projection read, with its time and memory per iteration', () => {
    expect(basisLines(trans, LONG)).toEqual([
      'projected from 2 of 500 iterations of the loop at line 3 (1.4 s and 1 MB each)'
    ]);
    expect(
      basisText(
        trans,
        loop({ seconds_per_iteration: 0.0213, memory_kb_per_iteration: 0 })
      )
    ).toBe(
      'projected from 2 of 500 iterations of the loop at line 3 (0.021 s each)'
    );
    expect(basisLines(trans, AT_LEAST)).toEqual([
      'projected from 2 iterations of the loop at line 2 (0.5 s each)'
    ]);
    expect(
      basisText(trans, loop({ runs: 2, iterations: 4, total: 100, line: 5 }))
    ).toBe(
      'projected from 4 of 200 iterations of the loop at line 5, over 2 runs of it (1.4 s and 1 MB each)'
    );
    expect(
      basisText(trans, loop({ kind: 'fit', iterations: 2, total: 50, line: 7 }))
    ).toBe(
      'projected from 2 of 50 epochs of the fit at line 7 (1.4 s and 1 MB each)'
    );
    expect(
      basisText(
        trans,
        loop({
          kind: 'rows',
          iterations: 1000,
          total: 100000,
          seconds_per_iteration: null,
          memory_kb_per_iteration: null
        })
      )
    ).toBe('projected from 1000 of 100000 rows of the library call at line 3');
  });

  it("says when the times were scaled from the trial's one thread to the kernel's", () => {
    const threads = { trial: 1, kernel: 8, share: 0.94 };
    expect(
      basisLines(trans, forecast({ basis: 'projected', threads }))
    ).toEqual([
      'its trial ran it whole',
      "torch's compute, 94 % of its trial's time, ran there on one thread; the kernel runs it on 8, taken as faster"
    ]);
    expect(
      basisLines(
        trans,
        forecast({ basis: 'projected', projected_from: [loop()], threads })
      )[1]
    ).toContain('the kernel runs it on 8');
  });

  it('says a projection without a loop to name plainly', () => {
    expect(
      basisLines(trans, forecast({ basis: 'projected', projected_from: [] }))
    ).toEqual(["projected from the first iterations of the trial's loops"]);
  });
});

describe('a run from the top', () => {
  const cells = [outcome('c0', 'ran'), outcome('c1', 'shortened')];

  it('says how long a full run takes, and what it peaks at', () => {
    expect(runForecastText(trans, doneRun(cells))).toBe('');
    expect(
      runForecastText(trans, {
        ...doneRun(cells),
        forecast: forecast({
          seconds: 1500,
          basis: 'projected',
          peak_memory_mb: null
        })
      })
    ).toBe('A full run takes ~25 min.');
    expect(
      runForecastText(trans, {
        ...doneRun(cells),
        forecast: { ...LONG, at_least: true, seconds: 1500 }
      })
    ).toBe('A full run takes at least ~25 min and peaks at ~9.5 GB of 24 GB.');
  });

  it('says how long it takes to where it stops, and nothing while it runs', () => {
    const crashed = doneRun([
      outcome('c0', 'ran'),
      outcome('c1', 'crashed', { exception: 'NameError' })
    ]);
    expect(
      runForecastText(trans, {
        ...crashed,
        forecast: forecast({ seconds: 90, peak_memory_mb: null })
      })
    ).toBe('A full run gets there in 1.5 min.');
    expect(
      runForecastText(trans, {
        ...doneRun(cells),
        state: 'running',
        forecast: LONG
      })
    ).toBe('');
  });

  it('words a run out of memory as a projection', () => {
    expect(
      runForecastText(trans, { ...doneRun(cells), forecast: OUT_OF_MEMORY })
    ).toBe(
      'A full run is projected to run out of memory: needs ~50 GB, 21 GB available.'
    );
  });

  it("says a shortened cell's projected time whole", () => {
    expect(cellForecastText(trans, LONG)).toBe('~12 min whole');
    expect(cellForecastText(trans, AT_LEAST)).toBe('at least ~5 min whole');
    expect(cellForecastText(trans, SHORT)).toBe('');
    expect(cellForecastText(trans, null)).toBe('');
  });
});
