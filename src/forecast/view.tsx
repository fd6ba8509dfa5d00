/**
 * The diagnosis' section "Before it runs": how long the cell takes whole (its range, or "at least"),
 * what the kernel's memory peaks at against what it has, and where the numbers come from (observed
 * in its trial run, or projected from the first iterations of loops the trial cut, one line each).
 * A cell projected to run out of memory says so in the "may crash" level's look: a projection, never
 * an observed crash.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { IForecast } from '../contract/api';
import { maybeIcon } from '../badge/icons';
import { Pairs } from '../panel/pairs';
import { isNotable } from './format';
import {
  basisLines,
  outOfMemoryText,
  peakText,
  rangeText,
  timeText
} from './words';

/**
 * Whether the diagnosis shows a forecast: always, but for a crash the trial saw early (its time is
 * the time to the crash, which the cause says better), unless it is long or tight.
 */
export function showsForecast(
  forecast: IForecast | null | undefined,
  crashed: boolean
): forecast is IForecast {
  return !!forecast && (!crashed || isNotable(forecast));
}

/** "Before it runs": the forecast's time, memory and basis. `crashed`: the trial saw a crash. */
export function ForecastSection(props: {
  trans: TranslationBundle;
  forecast: IForecast | null | undefined;
  crashed?: boolean;
}): React.ReactElement | null {
  const { trans, forecast } = props;
  const crashed = props.crashed ?? false;
  if (!showsForecast(forecast, crashed)) {
    return null;
  }
  const rows: [string, React.ReactNode][] = [];
  const time = timeText(trans, forecast);
  if (time) {
    const range = rangeText(forecast);
    rows.push([
      crashed ? trans.__('Until its crash') : trans.__('Time'),
      range ? trans.__('%1 (%2)', time, range) : time
    ]);
  }
  const memory = peakText(
    trans,
    forecast,
    forecast.peak_memory_mb,
    forecast.memory_available_mb
  );
  if (memory) {
    rows.push([trans.__('Memory peak'), memory]);
  }
  const gpu = peakText(
    trans,
    forecast,
    forecast.gpu_peak_mb,
    forecast.gpu_available_mb
  );
  if (gpu) {
    rows.push([trans.__('GPU memory peak'), gpu]);
  }
  const basis = basisLines(trans, forecast);
  rows.push([
    trans.__('Basis'),
    basis.length === 1 ? (
      basis[0]
    ) : (
      <ul className="jp-Crane-forecast-basis">
        {basis.map((line, i) => (
          <li key={i}>{line}</li>
        ))}
      </ul>
    )
  ]);
  return (
    <div
      className={`jp-Crane-forecast${forecast.out_of_memory ? ' jp-mod-may-crash' : ''}`}
    >
      <h3>{trans.__('Before it runs')}</h3>
      {forecast.out_of_memory && (
        <p className="jp-Crane-forecast-oom">
          <maybeIcon.react tag="span" className="jp-Crane-level-icon" />
          {outOfMemoryText(trans, forecast)}
        </p>
      )}
      <Pairs rows={rows} />
      {forecast.out_of_memory && (
        <p className="jp-Crane-hint">
          {trans.__(
            'A projection from what its trial run measured, not a crash seen.'
          )}
        </p>
      )}
    </div>
  );
}
