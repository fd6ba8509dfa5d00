/**
 * A forecast in words: how long a cell takes whole and what the kernel's memory peaks at, before it
 * runs, from what its trial run measured (`IForecast`). "~" marks a number projected from the first
 * iterations of loops the trial cut; an observed one has none. A forecast is never a crash claim: a
 * cell projected to run out of memory is said to be projected to, in the "may crash" level's look,
 * never as an observed crash. The numbers' formats are `format.ts`; the panel's section `view.tsx`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { IForecast, IForecastBasis, INotebookRun } from '../contract/api';
import {
  approx,
  formatKilobytes,
  formatMegabytes,
  formatRate,
  formatSeconds,
  isNotable
} from './format';

/** "~12 min", "at least ~5 min", "42 s": the forecast's time, '' when it has none. */
export function timeText(
  trans: TranslationBundle,
  forecast: IForecast
): string {
  if (forecast.seconds === null) {
    return '';
  }
  const time = approx(forecast) + formatSeconds(forecast.seconds);
  return forecast.at_least ? trans.__('at least %1', time) : time;
}

/** "9.6–15 min", "40 s–1.5 min": the range of a projected time, '' when it is one number. */
export function rangeText(forecast: IForecast): string {
  const { seconds_low: low, seconds_high: high } = forecast;
  if (forecast.at_least || low === null || high === null) {
    return '';
  }
  const a = formatSeconds(low);
  const b = formatSeconds(high);
  if (a === b) {
    return '';
  }
  const unit = (s: string) => s.slice(s.lastIndexOf(' '));
  return unit(a) === unit(b)
    ? `${a.slice(0, a.lastIndexOf(' '))}–${b}`
    : `${a}–${b}`;
}

/** "~9.5 GB of 24 GB": a peak against what is available ('' unless both are known). */
function peakOf(
  trans: TranslationBundle,
  forecast: IForecast,
  peak: number | null,
  available: number | null
): string {
  return peak !== null && available !== null
    ? trans.__(
        '%1 of %2',
        approx(forecast) + formatMegabytes(peak),
        formatMegabytes(available)
      )
    : '';
}

/** "at about iteration 180 of 500 (line 3)": where a cell projected to run out of memory would. */
export function runsOutText(
  trans: TranslationBundle,
  forecast: IForecast
): string {
  const at = forecast.runs_out_at;
  if (!at) {
    return '';
  }
  const where = trans.__('at about iteration %1 of %2', at.iteration, at.of);
  return at.line ? trans.__('%1 (line %2)', where, at.line) : where;
}

/** "needs ~50 GB, 21 GB available": what a cell projected to run out of memory needs. */
export function needsText(
  trans: TranslationBundle,
  forecast: IForecast
): string {
  return needs(
    trans,
    forecast,
    forecast.peak_memory_mb,
    forecast.memory_available_mb
  );
}

/** "needs ~50 GB, 21 GB available" of one memory: the kernel's, or the GPU's. */
function needs(
  trans: TranslationBundle,
  forecast: IForecast,
  peak: number | null,
  available: number | null
): string {
  if (peak === null) {
    return '';
  }
  const at = approx(forecast) + formatMegabytes(peak);
  return available !== null
    ? trans.__('needs %1, %2 available', at, formatMegabytes(available))
    : trans.__('needs %1', at);
}

/** Whether a projected peak is past what is available (both known). */
function past(peak: number | null, available: number | null): boolean {
  return peak !== null && available !== null && peak > available;
}

/**
 * "Projected to run out of memory: needs ~50 GB, 21 GB available; at about iteration 180 of 500", or
 * "Projected to run out of GPU memory: ..." with the GPU's numbers where the GPU's memory runs out (both
 * numbers where both do).
 */
export function outOfMemoryText(
  trans: TranslationBundle,
  forecast: IForecast
): string {
  const gpu = past(forecast.gpu_peak_mb, forecast.gpu_available_mb);
  const ram = past(forecast.peak_memory_mb, forecast.memory_available_mb);
  const gpuNeeds = needs(
    trans,
    forecast,
    forecast.gpu_peak_mb,
    forecast.gpu_available_mb
  );
  const where = runsOutText(trans, forecast);
  const join = (...parts: string[]) => parts.filter(Boolean).join('; ');
  if (gpu && ram) {
    return trans.__(
      'Projected to run out of memory and GPU memory: %1',
      join(
        needsText(trans, forecast),
        trans.__('GPU memory %1', gpuNeeds),
        where
      )
    );
  }
  if (gpu) {
    return trans.__(
      'Projected to run out of GPU memory: %1',
      join(gpuNeeds, where)
    );
  }
  const rest = join(needsText(trans, forecast), where);
  return rest
    ? trans.__('Projected to run out of memory: %1', rest)
    : trans.__('Projected to run out of memory');
}

/** The badge's line of a forecast: its text, and whether it is a projected run out of memory. */
export interface IForecastLine {
  text: string;
  outOfMemory: boolean;
}

/**
 * The badge's extra line, only for a cell that is long or tight (`isNotable`): "Takes ~12 min · peaks
 * at ~9.5 GB of 24 GB", "Takes at least ~5 min", "Projected to run out of memory: needs ~50 GB,
 * 21 GB available; at about iteration 180 of 500 (line 3)". Null for any other cell.
 */
export function badgeLine(
  trans: TranslationBundle,
  forecast: IForecast | null | undefined
): IForecastLine | null {
  if (!forecast || !isNotable(forecast)) {
    return null;
  }
  if (forecast.out_of_memory) {
    return { text: outOfMemoryText(trans, forecast), outOfMemory: true };
  }
  const parts: string[] = [];
  const time = timeText(trans, forecast);
  if (time) {
    parts.push(trans.__('Takes %1', time));
  }
  const memory = peakOf(
    trans,
    forecast,
    forecast.peak_memory_mb,
    forecast.memory_available_mb
  );
  if (memory) {
    parts.push(
      parts.length
        ? trans.__('peaks at %1', memory)
        : trans.__('Peaks at %1', memory)
    );
  }
  const gpu = peakOf(
    trans,
    forecast,
    forecast.gpu_peak_mb,
    forecast.gpu_available_mb
  );
  if (gpu) {
    parts.push(trans.__('GPU memory peaks at %1', gpu));
  }
  return parts.length ? { text: parts.join(' · '), outOfMemory: false } : null;
}

/** The panel's row of a memory peak: "~9.5 GB of 24 GB available", "~9.5 GB"; '' when unknown. */
export function peakText(
  trans: TranslationBundle,
  forecast: IForecast,
  peak: number | null,
  available: number | null
): string {
  if (peak === null) {
    return '';
  }
  const at = approx(forecast) + formatMegabytes(peak);
  return available !== null
    ? trans.__('%1 of %2 available', at, formatMegabytes(available))
    : at;
}

/** What a loop's kind is called, and what its iterations are. */
function loopNames(
  trans: TranslationBundle,
  entry: IForecastBasis
): { what: string; unit: string } {
  switch (entry.kind) {
    case 'comprehension':
      return {
        what: trans.__('the comprehension'),
        unit: trans.__('iterations')
      };
    case 'fit':
      // Keras' fit is timed by its epochs; a library's fit run on a sample of its rows is not.
      return entry.seconds_per_iteration !== null
        ? { what: trans.__('the fit'), unit: trans.__('epochs') }
        : { what: trans.__('the fit'), unit: trans.__('rows') };
    case 'rows':
      return { what: trans.__('the library call'), unit: trans.__('rows') };
    case 'minimize':
      return { what: trans.__('the optimizer'), unit: trans.__('iterations') };
    default:
      return { what: trans.__('the loop'), unit: trans.__('iterations') };
  }
}

/**
 * One loop a projection read, in words: "projected from 2 of 500 iterations of the loop at line 3
 * (0.021 s and 1 MB each)".
 */
export function basisText(
  trans: TranslationBundle,
  entry: IForecastBasis
): string {
  const { what, unit } = loopNames(trans, entry);
  const iterations = entry.iterations ?? 0;
  const runs = Math.max(entry.runs ?? 1, 1);
  const count =
    entry.total !== null
      ? trans.__('%1 of %2 %3', iterations, entry.total * runs, unit)
      : trans.__('%1 %2', iterations, unit);
  const where = entry.line ? trans.__('%1 at line %2', what, entry.line) : what;
  let text = trans.__('projected from %1 of %2', count, where);
  if (runs > 1) {
    text = trans.__('%1, over %2 runs of it', text, runs);
  }
  const each: string[] = [];
  if (entry.seconds_per_iteration !== null) {
    each.push(formatRate(entry.seconds_per_iteration));
  }
  if (entry.memory_kb_per_iteration) {
    each.push(formatKilobytes(entry.memory_kb_per_iteration));
  }
  return each.length
    ? trans.__('%1 (%2 each)', text, each.join(trans.__(' and ')))
    : text;
}

/**
 * The threads a forecast was scaled over: "torch's compute, 94 % of its trial's time, ran there on one
 * thread; the kernel runs it on 8, taken as faster"; '' when it was not.
 */
export function threadsText(
  trans: TranslationBundle,
  forecast: IForecast
): string {
  const threads = forecast.threads ?? null;
  if (!threads) {
    return '';
  }
  const share = Math.round(threads.share * 100);
  return threads.trial === 1
    ? trans.__(
        "torch's compute, %1 % of its trial's time, ran there on one thread; the kernel runs it on %2, taken as faster",
        share,
        threads.kernel
      )
    : trans.__(
        "torch's compute, %1 % of its trial's time, ran there on %2 threads; the kernel runs it on %3, taken as faster",
        share,
        threads.trial,
        threads.kernel
      );
}

/**
 * Where a forecast's numbers come from: "observed in its trial run", or one line per loop, and one for
 * the threads it was scaled over.
 */
export function basisLines(
  trans: TranslationBundle,
  forecast: IForecast
): string[] {
  if (forecast.basis === 'observed') {
    return [trans.__('observed in its trial run')];
  }
  const lines = forecast.projected_from.map(entry => basisText(trans, entry));
  const threads = threadsText(trans, forecast);
  if (threads) {
    return [
      ...(lines.length ? lines : [trans.__('its trial ran it whole')]),
      threads
    ];
  }
  return lines.length
    ? lines
    : [trans.__("projected from the first iterations of the trial's loops")];
}

/** A shortened cell's time whole, in a run from the top: "~12 min whole"; '' when not projected. */
export function cellForecastText(
  trans: TranslationBundle,
  forecast: IForecast | null | undefined
): string {
  if (!forecast || forecast.basis !== 'projected') {
    return '';
  }
  const time = timeText(trans, forecast);
  return time ? trans.__('%1 whole', time) : '';
}

/**
 * The run from the top's forecast, in one sentence after its summary: "A full run takes ~25 min.",
 * "A full run takes at least ~25 min and peaks at ~9.5 GB of 24 GB."; "gets there" where the run
 * stopped at a cell; '' for a run without one, or not done.
 */
export function runForecastText(
  trans: TranslationBundle,
  run: INotebookRun
): string {
  const forecast = run.forecast ?? null;
  if (run.state !== 'done' || !forecast) {
    return '';
  }
  if (forecast.out_of_memory) {
    const needs = needsText(trans, forecast);
    return needs
      ? trans.__('A full run is projected to run out of memory: %1.', needs)
      : trans.__('A full run is projected to run out of memory.');
  }
  const time = timeText(trans, forecast);
  if (!time) {
    return '';
  }
  const whole = run.cells.every(
    c => c.status === 'ran' || c.status === 'shortened'
  );
  const memory = peakOf(
    trans,
    forecast,
    forecast.peak_memory_mb,
    forecast.memory_available_mb
  );
  if (whole) {
    return memory
      ? trans.__('A full run takes %1 and peaks at %2.', time, memory)
      : trans.__('A full run takes %1.', time);
  }
  return memory
    ? trans.__('A full run gets there in %1 and peaks at %2.', time, memory)
    : trans.__('A full run gets there in %1.', time);
}
