/**
 * A forecast's numbers as a user reads them: durations in s, min and h, sizes in MB and GB, rounded
 * to what a forecast can know (two figures at most). Pure, no words but the units; the sentences
 * are `words.ts`.
 */
import type { IForecast } from '../contract/api';

/** `value` with one decimal under 10, none from 10 up; a trailing ".0" dropped ("5", "2.5", "12"). */
function figures(value: number): string {
  const rounded =
    value < 9.95 ? Math.round(value * 10) / 10 : Math.round(value);
  return String(rounded);
}

/** Seconds in words: "0.4 s", "42 s", "2.5 min", "12 min", "1.5 h", "30 h". */
export function formatSeconds(seconds: number): string {
  if (!(seconds > 0)) {
    return '0 s';
  }
  if (seconds < 0.05) {
    return 'under 0.1 s';
  }
  if (Math.round(seconds) < 60) {
    return `${figures(seconds)} s`;
  }
  const minutes = seconds / 60;
  if (Math.round(minutes) < 60) {
    return `${figures(minutes)} min`;
  }
  return `${figures(seconds / 3600)} h`;
}

/** A short time per iteration: "0.021 s", "1.5 s", "under 1 ms"; from a minute up as `formatSeconds`. */
export function formatRate(seconds: number): string {
  if (!(seconds > 0)) {
    return '0 s';
  }
  if (seconds < 0.001) {
    return 'under 1 ms';
  }
  if (seconds < 60) {
    return `${Number(seconds.toPrecision(2))} s`;
  }
  return formatSeconds(seconds);
}

/** Megabytes (MiB, as the server counts them) in words: "0.5 MB", "850 MB", "9.5 GB", "24 GB". */
export function formatMegabytes(mb: number): string {
  if (!(mb > 0)) {
    return '0 MB';
  }
  if (mb < 0.05) {
    return 'under 0.1 MB';
  }
  if (Math.round(mb) < 1000) {
    return `${figures(mb)} MB`;
  }
  return `${figures(mb / 1024)} GB`;
}

/** Kilobytes per iteration in words: "12 kB", "1 MB", "2.5 GB". */
export function formatKilobytes(kb: number): string {
  if (kb > 0 && Math.round(kb) < 1000) {
    return kb < 0.05 ? 'under 0.1 kB' : `${figures(kb)} kB`;
  }
  return formatMegabytes(kb / 1024);
}

/** A cell takes long from this many seconds on. */
export const LONG_SECONDS = 30;

/** A peak is tight from this share of the memory available on. */
export const TIGHT_SHARE = 0.8;

/** Whether a forecast's time is long enough to say before the cell runs. */
export function isLong(forecast: IForecast): boolean {
  return forecast.seconds !== null && forecast.seconds >= LONG_SECONDS;
}

/** Whether the kernel's memory (or the GPU's) peaks near what it has, or past it. */
export function isTight(forecast: IForecast): boolean {
  const near = (peak: number | null, available: number | null) =>
    peak !== null &&
    available !== null &&
    available > 0 &&
    peak >= TIGHT_SHARE * available;
  return (
    forecast.out_of_memory ||
    near(forecast.peak_memory_mb, forecast.memory_available_mb) ||
    near(forecast.gpu_peak_mb, forecast.gpu_available_mb)
  );
}

/** Whether a forecast is worth a line on the badge: the cell is long or tight. */
export function isNotable(forecast: IForecast | null | undefined): boolean {
  return !!forecast && (isLong(forecast) || isTight(forecast));
}

/** "~" before a projected number, nothing before an observed one. */
export function approx(forecast: Pick<IForecast, 'basis'>): string {
  return forecast.basis === 'projected' ? '~' : '';
}
