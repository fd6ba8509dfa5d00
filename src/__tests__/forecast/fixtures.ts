/** Forecasts as the server gives them (`IForecast`, kernel/trial/forecast.py), for the tests. */
import type { IForecast, IForecastBasis } from '../../contract/api';

/** A forecast; an observed short cell unless `over` says otherwise. */
export function forecast(over: Partial<IForecast> = {}): IForecast {
  return {
    seconds: 0.4,
    seconds_low: 0.4,
    seconds_high: 0.4,
    at_least: false,
    basis: 'observed',
    projected_from: [],
    threads: null,
    peak_memory_mb: 850,
    memory_available_mb: 24576,
    gpu_peak_mb: null,
    gpu_available_mb: null,
    out_of_memory: false,
    runs_out_at: null,
    ...over
  };
}

/** One loop a projection read: 2 of 500 iterations of the loop at line 3 by default. */
export function loop(over: Partial<IForecastBasis> = {}): IForecastBasis {
  return {
    line: 3,
    kind: 'for',
    iterations: 2,
    total: 500,
    runs: 1,
    seconds_per_iteration: 1.44,
    memory_kb_per_iteration: 1024,
    ...over
  };
}

/** An observed cell of 0.4 s and 850 MB of 24 GB: nothing to say on the badge. */
export const SHORT = forecast();

/** 12 min whole, projected from 2 of 500 iterations; the kernel peaks at ~9.5 GB of 24 GB. */
export const LONG = forecast({
  seconds: 720,
  seconds_low: 576,
  seconds_high: 900,
  basis: 'projected',
  projected_from: [loop()],
  peak_memory_mb: 9728
});

/** A `while` loop of unknown length: at least 5 min; nothing known of the memory. */
export const AT_LEAST = forecast({
  seconds: 300,
  seconds_low: 300,
  seconds_high: null,
  at_least: true,
  basis: 'projected',
  projected_from: [
    loop({
      line: 2,
      kind: 'while',
      total: null,
      seconds_per_iteration: 0.5,
      memory_kb_per_iteration: 0
    })
  ],
  peak_memory_mb: null,
  memory_available_mb: null
});

/** Projected to need ~50 GB of 21 GB: it runs out at about iteration 180 of 500 (line 3). */
export const OUT_OF_MEMORY = forecast({
  seconds: 1200,
  seconds_low: 960,
  seconds_high: 1500,
  basis: 'projected',
  projected_from: [loop({ memory_kb_per_iteration: 102400 })],
  peak_memory_mb: 51200,
  memory_available_mb: 21504,
  out_of_memory: true,
  runs_out_at: { line: 3, iteration: 180, of: 500 }
});
