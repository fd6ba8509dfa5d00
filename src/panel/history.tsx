/**
 * The notebook's recent checks and crashes in the panel, newest first: each goes to its cell.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import { StateLabel } from '../badge/label';
import { cellView } from '../badge/verdict';
import { describeCell } from '../badge/words';
import type { NotebookWatcher } from '../editing/watcher';

/** The history: one entry per checked text of a cell, with its level, its time and its cause. */
export function RecentChecks(props: {
  trans: TranslationBundle;
  watcher: NotebookWatcher;
}): React.ReactElement | null {
  const { trans, watcher } = props;
  const history = watcher.checks.history;
  if (!history.length) {
    return null;
  }
  return (
    <section className="jp-Crane-history">
      <h3>{trans.__('Recent checks and crashes')}</h3>
      <ol>
        {history.map(r => {
          const view = cellView(r, r.source, r.epoch);
          const d = describeCell(
            trans,
            view,
            r,
            id => watcher.chain?.numberOf(id) ?? null
          );
          const firstLine =
            r.source.split('\n').find(line => line.trim()) ?? '';
          return (
            <li
              key={`${r.cellId}-${r.startedAt}`}
              className={`jp-Crane-history-entry jp-mod-${view.state}`}
            >
              <button
                className="jp-Crane-history-go"
                title={trans.__('Go to the cell')}
                onClick={() => void watcher.reveal(r.cellId)}
              >
                <span className="jp-Crane-history-head">
                  <StateLabel trans={trans} state={view.state} record={r} />
                  <span className="jp-Crane-history-time">
                    {new Date(r.run?.at ?? r.startedAt).toLocaleTimeString()}
                  </span>
                </span>
                <code className="jp-Crane-history-source">{firstLine}</code>
                {d.cause && (
                  <span className="jp-Crane-history-cause">{d.cause}</span>
                )}
              </button>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
