/**
 * A trial run in the diagnosis: what happened, how long, in which sandbox, and what decided instead
 * when it could not decide.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { IAnalyzeResult, ITrialWorker } from '../contract/api';
import {
  isInconclusive,
  loopsText,
  progressText,
  trialFallbackText,
  trialStatusLabel
} from '../badge/trial';
import { formatDuration } from '../badge/words';
import { Pairs } from './pairs';

/** Where a worker trial ran: a copy of the cell's inputs in a fresh process, and why not a fork. */
function workerText(trans: TranslationBundle, worker: ITrialWorker): string {
  const copied =
    worker.names !== null && worker.inputs_mb !== null
      ? trans._n(
          "a fresh process, on a copy of the cell's input (%1 name, %2 MB)",
          "a fresh process, on a copy of the cell's inputs (%1 names, %2 MB)",
          worker.names,
          worker.inputs_mb.toFixed(1)
        )
      : trans.__("a fresh process, on a copy of the cell's inputs");
  return worker.reason ? `${copied}: ${worker.reason}` : copied;
}

/**
 * The trial run's outcome: what happened, how long, in which sandbox, and what decided instead. An
 * observed crash's exception and line are the cause above, said once; the frames only when they go
 * through more than the crashing line (a function the cell defines).
 */
export function TrialSection(props: {
  trans: TranslationBundle;
  result: IAnalyzeResult;
}): React.ReactElement | null {
  const { trans, result } = props;
  const trial = result.trial;
  if (!trial) {
    return null;
  }
  const verdict = result.verdict;
  const inconclusive = isInconclusive(trial);
  const rows: [string, React.ReactNode][] = [];
  if (!inconclusive || !verdict) {
    rows.push([trans.__('Outcome'), trialStatusLabel(trans, trial.status)]);
  }
  if (trial.elapsed_ms !== null) {
    rows.push([trans.__('Ran for'), formatDuration(trial.elapsed_ms)]);
  }
  if (trial.extra_memory_mb !== null) {
    rows.push([
      trans.__('Extra memory'),
      trans.__('%1 MB', trial.extra_memory_mb.toFixed(1))
    ]);
  }
  if (trial.writes) {
    rows.push([trans.__('Files'), trial.writes]);
  }
  if (trial.installs) {
    rows.push([trans.__('Installs'), trial.installs]);
  }
  if (trial.quick?.cut) {
    rows.push([
      trans.__('Quick trial'),
      loopsText(
        trans,
        trial.quick.loops.filter(l => l.cut)
      )
    ]);
  }
  const progress = progressText(trans, trial);
  if (progress) {
    rows.push([trans.__('Got through'), progress]);
  }
  if (trial.worker) {
    rows.push([trans.__('Ran in'), workerText(trans, trial.worker)]);
  }
  if (trial.sandbox) {
    // 'seccomp+landlock+netns' as words, so a narrow panel breaks it between them.
    rows.push([trans.__('Sandbox'), trial.sandbox.split('+').join(', ')]);
  }
  if (
    trial.reason &&
    trial.status !== 'crashed' &&
    !(inconclusive && verdict)
  ) {
    rows.push([trans.__('Why'), trial.reason]);
  }
  const frames =
    trial.status === 'crashed' && trial.frames.length > 1 ? trial.frames : [];
  return (
    <div className={`jp-Crane-trial jp-mod-${trial.status}`}>
      <h3>{trans.__('Trial run')}</h3>
      {inconclusive && verdict && (
        <p className="jp-Crane-trial-fallback">
          {trialFallbackText(trans, trial, verdict.source)}
        </p>
      )}
      <Pairs rows={rows} />
      {frames.length > 0 && (
        <>
          <h4>{trans.__('Where it went, in the cell')}</h4>
          <ol className="jp-Crane-frames">
            {frames.map((f, i) => (
              <li key={i}>
                {trans.__('line %1', f.line)}: <code>{f.text}</code>
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}
