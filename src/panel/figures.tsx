/**
 * The session figures of one notebook in the panel: checks done, warnings given and confirmed,
 * crashes avoided, the time saved, and how they are counted (`editing/stats.ts` counts them).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { ISessionFigures } from '../editing/stats';
import { formatDuration } from '../badge/words';

/** One session figure: its term, with the one-line definition on hover, and its value. */
function figure(
  stat: string,
  term: string,
  definition: string,
  value: React.ReactNode,
  extra: Record<string, number> = {}
): React.ReactElement {
  return (
    <>
      <dt title={definition}>{term}</dt>
      <dd data-crane-stat={stat} {...extra}>
        {value}
      </dd>
    </>
  );
}

/** The figures since the notebook was opened, each defined on hover. */
export function SessionFigures(props: {
  trans: TranslationBundle;
  figures: Readonly<ISessionFigures>;
}): React.ReactElement {
  const { trans, figures } = props;
  const caught = figures.caught.observed + figures.caught.predicted;
  return (
    <section className="jp-Crane-stats">
      <h3>{trans.__('Since this notebook was opened')}</h3>
      <dl>
        {figure(
          'checks',
          trans.__('Checks done'),
          trans.__('Cells checked, each time a check finished.'),
          figures.checks
        )}
        {figure(
          'warnings',
          trans.__('Warnings given'),
          trans.__(
            'Cells warned as will or may crash (each text of a cell once).'
          ),
          figures.warnings
        )}
        {figure(
          'confirmed',
          trans.__('Warnings confirmed by a run'),
          trans.__(
            'Warned cells you then ran unchanged, which crashed as warned.'
          ),
          figures.confirmed
        )}
        {figure(
          'caught',
          trans.__('Crashes avoided'),
          trans.__(
            'Warned cells you fixed before they ran, or did not run at all.'
          ),
          caught > 0
            ? `${caught} ` +
                trans.__(
                  '(observed %1, predicted %2)',
                  figures.caught.observed,
                  figures.caught.predicted
                )
            : caught
        )}
        {figure(
          'saved',
          trans.__('Time saved (estimate)'),
          trans.__(
            'For each crash avoided, the time to re-run the cells the kernel had run.'
          ),
          formatDuration(figures.savedMs),
          { 'data-ms': Math.round(figures.savedMs) }
        )}
        {figures.missed > 0 &&
          figure(
            'missed',
            trans.__('Crashes missed'),
            trans.__('Cells that crashed although their check found no crash.'),
            figures.missed
          )}
      </dl>
      <details className="jp-Crane-help">
        <summary>{trans.__('How these are counted')}</summary>
        <p>
          {trans.__(
            'A warning is given when a check says a cell will or may crash; it is confirmed when you run that very text and it crashes. A warning that was right is no failure: the crash was seen before it cost anything.'
          )}
        </p>
        <p>
          {trans.__(
            'A crash is avoided when a cell was warned and you then either edited it and it ran without an error, or did not run it: you deleted it, or restarted the kernel first. Observed: a trial run saw the crash; predicted: the checks or the model foresaw it.'
          )}
        </p>
        <p>
          {trans.__(
            'Time saved is an estimate: a crash half-way through a cell can leave the kernel half-changed, and the safe way back is to restart it and run again every cell it had run. So each caught crash counts the last run time of every cell run since the kernel started. Not counted: the crashed run itself, reading the traceback, debugging. Without a restart you save less; after a long hunt for the cause, more.'
          )}
        </p>
        <p>
          {trans.__(
            'Run times come from the kernel messages. These figures stay in this browser tab and are never sent anywhere.'
          )}
        </p>
      </details>
    </section>
  );
}
