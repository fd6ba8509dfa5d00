/**
 * From the top on screen: the crash panel's section (the button, the progress bar while a
 * run goes, then one line per code cell) and the notebook toolbar's button.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  ReactWidget,
  ToolbarButtonComponent,
  UseSignal
} from '@jupyterlab/ui-components';
import React from 'react';

import type { INotebookCell, INotebookRun } from '../contract/api';
import { formatDuration } from '../badge/words';
import { cellWords, progressText, summaryText } from './words';
import { cellForecastText, runForecastText } from '../forecast/words';
import { craneIcon, observedIcon } from '../badge/icons';
import type { NotebookTop } from './run';

/** The first line of a cell's text that holds something. */
function firstLine(source: string): string {
  return source.split('\n').find(line => line.trim()) ?? '';
}

/** The time a run has taken: the page's clock while it runs, the server's once it ended. */
function elapsedOf(top: NotebookTop, run: INotebookRun): number {
  return run.state === 'running'
    ? Math.max(run.elapsed_ms, Date.now() - top.startedAt)
    : run.elapsed_ms;
}

/** The progress of a running run: a bar of the code cells done, the cell running, the time. */
function Progress(props: {
  trans: TranslationBundle;
  top: NotebookTop;
  run: INotebookRun | null;
}): React.ReactElement {
  const { trans, top, run } = props;
  const total = run?.total || top.sent.length;
  const done = run?.done ?? 0;
  const text = run
    ? progressText(trans, run, top.sent, id => top.numberOf(id))
    : trans.__('Sending the notebook’s code cells…');
  return (
    <div className="jp-Crane-top-progress" aria-live="polite">
      <progress
        className="jp-Crane-top-bar"
        max={Math.max(total, 1)}
        value={done}
        aria-label={trans.__('Code cells done: %1 of %2', done, total)}
      />
      <span className="jp-Crane-top-progress-text">
        {text}
        {run && ` · ${formatDuration(elapsedOf(top, run))}`}
      </span>
    </div>
  );
}

/** One code cell's line: its number, its outcome, its first line of code, what the outcome adds. */
function CellLine(props: {
  trans: TranslationBundle;
  top: NotebookTop;
  cell: INotebookCell;
  index: number;
  first: boolean;
  onReveal: (cellId: string) => void;
}): React.ReactElement {
  const { trans, top, cell, index } = props;
  const words = cellWords(trans, cell, top.kernelHasIt);
  const sent = top.sent[index];
  const cellId = cell.cell_id ?? sent?.cellId ?? null;
  const number = cellId ? top.numberOf(cellId) : null;
  const time =
    cell.elapsed_ms !== null && cell.status !== 'not_reached'
      ? formatDuration(cell.elapsed_ms)
      : '';
  // A shortened cell's time whole, projected from the iterations its quick run measured.
  const whole = cellForecastText(trans, cell.forecast);
  return (
    <li
      className={`jp-Crane-top-cell jp-mod-${cell.status}${props.first ? ' jp-mod-first-crash' : ''}`}
      data-crane-top-status={cell.status}
    >
      <button
        className="jp-Crane-top-go"
        disabled={number === null}
        title={number !== null ? trans.__('Go to cell %1', number) : ''}
        onClick={() => cellId && props.onReveal(cellId)}
      >
        <span className="jp-Crane-top-head">
          <span className="jp-Crane-top-number">
            {number !== null ? `[${number}]` : '–'}
          </span>
          {props.first && (
            <observedIcon.react tag="span" className="jp-Crane-level-icon" />
          )}
          <span className="jp-Crane-top-status">{words.status}</span>
          {time && <span className="jp-Crane-top-time">{time}</span>}
          {whole && (
            <span
              className="jp-Crane-top-forecast"
              title={trans.__(
                'A full run of this cell, projected from the iterations its quick run measured'
              )}
            >
              ({whole})
            </span>
          )}
        </span>
        {sent && (
          <code className="jp-Crane-top-source">{firstLine(sent.source)}</code>
        )}
        {words.detail && (
          <span className="jp-Crane-top-detail">{words.detail}</span>
        )}
      </button>
    </li>
  );
}

/** The result of an ended run: a sentence (and how long a full run takes), then one line per code cell. */
function Result(props: {
  trans: TranslationBundle;
  top: NotebookTop;
  run: INotebookRun;
  onReveal: (cellId: string) => void;
}): React.ReactElement {
  const { trans, top, run } = props;
  const failed = run.state === 'done' && run.first_crash !== null;
  const clean =
    run.state === 'done' &&
    run.cells.length > 0 &&
    run.cells.every(c => c.status === 'ran' || c.status === 'shortened');
  const level = failed ? 'will-crash' : clean ? 'no-crash' : 'error';
  const forecast = runForecastText(trans, run);
  return (
    <>
      <p
        className={`jp-Crane-top-summary jp-mod-${level}${top.stale ? ' jp-mod-stale' : ''}`}
      >
        {summaryText(trans, run, id => top.numberOf(id), top.kernelHasIt)}
        {forecast && (
          <span className="jp-Crane-top-forecast-summary"> {forecast}</span>
        )}
      </p>
      {top.stale && (
        <p className="jp-Crane-stale">
          {trans.__(
            'Outdated: the notebook’s code cells changed since this run (added, removed, moved or edited). Check again to know whether it runs as it is now.'
          )}
        </p>
      )}
      {run.cells.length > 0 && (
        <ol
          className={`jp-Crane-top-cells${top.stale ? ' jp-mod-stale' : ''}`}
          aria-label={trans.__('Code cells, from the top')}
        >
          {run.cells.map((cell, i) => (
            <CellLine
              key={`${i}-${cell.cell_id ?? ''}`}
              trans={trans}
              top={top}
              cell={cell}
              index={i}
              first={i === run.first_crash_index}
              onReveal={props.onReveal}
            />
          ))}
        </ol>
      )}
      {run.state === 'done' && run.message && (
        <p className="jp-Crane-hint jp-Crane-top-how">
          {trans.__('%1 in %2.', formatDuration(run.elapsed_ms), run.message)}
        </p>
      )}
      {hedged(run) && !top.stale && (
        <button
          className="jp-Button jp-mod-styled jp-Crane-top-full"
          title={trans.__(
            'Run every code cell again from the top with nothing cut, in a fresh sandboxed worker (up to an hour; Cancel stops it): its answer claims the crash or clears it'
          )}
          onClick={() => void top.start(true)}
        >
          {trans.__('Run in full to answer it')}
        </button>
      )}
    </>
  );
}

/**
 * Whether a quick run left a crash that a cut loop above may have caused (a run in full cuts nothing,
 * so it leaves none): a question only a full run answers.
 */
export function hedged(run: INotebookRun): boolean {
  return (
    run.state === 'done' &&
    run.cells.some(c => c.status === 'crashed' && c.after_cut)
  );
}

/**
 * The crash panel's section "From the top": the button (Cancel while a run goes), the progress bar,
 * the result.
 */
export function FromTopSection(props: {
  trans: TranslationBundle;
  top: NotebookTop;
  onStart: () => void;
  onReveal: (cellId: string) => void;
}): React.ReactElement {
  const { trans, top } = props;
  const run = top.run;
  const running = top.running;
  const why = running ? null : top.unavailable;
  return (
    <section className="jp-Crane-top" aria-busy={running}>
      <div className="jp-Crane-top-status-row">
        <h3>{trans.__('From the top')}</h3>
        <div className="jp-Crane-actions">
          <button
            className="jp-Button jp-mod-styled jp-mod-accept jp-Crane-top-run"
            disabled={running || !!why}
            title={
              why ??
              trans.__(
                'Run the notebook’s code cells in order in a fresh sandboxed worker of the kernel’s Python (quick mode); your kernel is not touched'
              )
            }
            onClick={props.onStart}
          >
            {running ? trans.__('Running…') : trans.__('Check from the top')}
          </button>
          {running && (
            <button
              className="jp-Button jp-mod-styled jp-Crane-top-cancel"
              onClick={() => void top.cancel()}
            >
              {trans.__('Cancel')}
            </button>
          )}
        </div>
      </div>
      {!run && !top.error && !running && (
        <p className="jp-Crane-hint">
          {why ??
            trans.__(
              'Will this notebook run in a fresh kernel? Its code cells run in order in a sandboxed worker with none of your kernel’s state, long loops cut; your kernel stays as it is.'
            )}
        </p>
      )}
      {top.error && <p className="jp-Crane-error">{top.error}</p>}
      {running && <Progress trans={trans} top={top} run={run} />}
      {run && !running && (
        <Result trans={trans} top={top} run={run} onReveal={props.onReveal} />
      )}
    </section>
  );
}

/**
 * The notebook toolbar's button: "From the top", and while a run goes its progress and Cancel.
 */
export class TopToolbarItem extends ReactWidget {
  constructor(
    private readonly _top: NotebookTop,
    private readonly _trans: TranslationBundle,
    private readonly _onStart: () => void
  ) {
    super();
    this.addClass('jp-Crane-top-toolbar');
  }

  protected render(): React.ReactElement {
    return (
      <UseSignal signal={this._top.changed}>{() => this._button()}</UseSignal>
    );
  }

  private _button(): React.ReactElement {
    const trans = this._trans;
    const top = this._top;
    if (top.running) {
      const run = top.run;
      return (
        <>
          <ToolbarButtonComponent
            icon={craneIcon}
            label={
              run && run.total
                ? trans.__('Running… %1/%2', run.done, run.total)
                : trans.__('Running…')
            }
            tooltip={trans.__('A run from the top is in progress')}
            enabled={false}
          />
          <ToolbarButtonComponent
            label={trans.__('Cancel')}
            tooltip={trans.__('Cancel the run from the top')}
            onClick={() => void top.cancel()}
          />
        </>
      );
    }
    return (
      <ToolbarButtonComponent
        icon={craneIcon}
        label={trans.__('From the top')}
        tooltip={
          top.unavailable ??
          trans.__(
            'Check the Notebook from the Top: will it run in a fresh kernel? Your kernel is not touched'
          )
        }
        enabled={!top.unavailable}
        onClick={this._onStart}
      />
    );
  }
}
