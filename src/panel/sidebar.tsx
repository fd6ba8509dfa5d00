import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { VDomModel, VDomRenderer } from '@jupyterlab/ui-components';
import React from 'react';

import { ChainSection, ClaimSection } from '../below/view';
import { Diagnosis, formatDuration, StateLabel } from './diagnosis';
import { craneIcon } from '../badge/icons';
import { describeCell } from '../badge/levels';
import type { CraneSettings } from '../settings/model';
import type { ISessionFigures } from '../editing/stats';
import { currencyNote } from '../badge/widget';
import type { NotebookTop, TopRuns } from '../fromtop/run';
import { FromTopSection } from '../fromtop/view';
import { cellView } from '../badge/verdict';
import type { CraneWatcher, NotebookWatcher } from '../editing/watcher';

/** A command line, not words: never translated. */
const MODEL_EXAMPLE =
  'CRANE_MODEL=openai/gpt-4o-mini OPENAI_API_KEY=… jupyter lab';

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

/**
 * The trial mode in effect and where it comes from: "Trial runs: with every check (the server's
 * setting)", or why none can run here.
 */
export function trialModeText(
  trans: TranslationBundle,
  settings: CraneSettings
): string {
  const server = settings.server;
  if (server && !server.trial_available) {
    return trans.__(
      'Trial runs are not possible here: %1',
      server.trial_unavailable_reason ?? trans.__('no sandbox')
    );
  }
  const mode = settings.trialMode;
  const what =
    mode === 'auto'
      ? trans.__('with every check')
      : mode === 'on-demand'
        ? trans.__('when you ask')
        : trans.__('off');
  // A server that runs no trials removes the setting: its "off" is the server's.
  const origin =
    server?.trial === 'off' ? 'server' : settings.originOf('trial');
  switch (origin) {
    case 'user':
      return trans.__('Trial runs: %1 (your setting)', what);
    case 'server':
      return trans.__("Trial runs: %1 (the server's setting)", what);
    default:
      return trans.__('Trial runs: %1', what);
  }
}

/**
 * What the sidebar shows: the active cell of the current notebook and that notebook's checks.
 */
export class SidebarModel extends VDomModel {
  constructor(
    private readonly _tracker: INotebookTracker,
    private readonly _watchers: CraneWatcher,
    readonly settings: CraneSettings,
    private readonly _tops: TopRuns | null = null
  ) {
    super();
    _tracker.currentChanged.connect(this._onCurrentChanged, this);
    _tracker.activeCellChanged.connect(this._emit, this);
    settings.changed.connect(this._emit, this);
    this._onCurrentChanged();
  }

  /** The watcher of the current notebook. */
  get watcher(): NotebookWatcher | undefined {
    return this._watcher;
  }

  /** The runs from the top of the current notebook (toprun.ts). */
  get top(): NotebookTop | undefined {
    return this._top;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._watcher?.updated.disconnect(this._emit, this);
    this._top?.changed.disconnect(this._emit, this);
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._tracker.activeCellChanged.disconnect(this._emit, this);
    this.settings.changed.disconnect(this._emit, this);
    super.dispose();
  }

  private _onCurrentChanged(): void {
    this._watcher?.updated.disconnect(this._emit, this);
    this._watcher = this._watchers.watcherFor(this._tracker.currentWidget);
    this._watcher?.updated.connect(this._emit, this);
    this._top?.changed.disconnect(this._emit, this);
    this._top = this._tops?.forPanel(this._tracker.currentWidget);
    this._top?.changed.connect(this._emit, this);
    this._emit();
  }

  private _emit(): void {
    this.stateChanged.emit();
  }

  private _watcher: NotebookWatcher | undefined;
  private _top: NotebookTop | undefined;
}

/**
 * The diagnosis panel in the right sidebar.
 */
export class CraneSidebar extends VDomRenderer<SidebarModel> {
  constructor(
    model: SidebarModel,
    private readonly _trans: TranslationBundle
  ) {
    super(model);
    this.id = 'jp-crane-sidebar';
    this.addClass('jp-Crane-sidebar');
    this.title.icon = craneIcon;
    this.title.caption = _trans.__('Crash prediction');
  }

  protected render(): React.ReactElement {
    const trans = this._trans;
    const watcher = this.model.watcher;
    return (
      <div className="jp-Crane-sidebar-content">
        <header className="jp-Crane-sidebar-header">
          <h2>{trans.__('Crash prediction')}</h2>
        </header>
        {this._renderNotices()}
        {watcher ? (
          this._renderActive(watcher)
        ) : (
          <p className="jp-Crane-sidebar-empty">
            {trans.__('Open a notebook to see its crash predictions.')}
          </p>
        )}
        {this.model.top && (
          <FromTopSection
            trans={trans}
            top={this.model.top}
            onStart={() => void this.model.top?.start()}
            onReveal={cellId => void watcher?.reveal(cellId)}
          />
        )}
        {watcher && this._renderStats(watcher.stats.figures)}
        {watcher && this._renderHistory(watcher)}
      </div>
    );
  }

  /** Short notices about the server: once, above everything else. */
  private _renderNotices(): React.ReactElement | null {
    const trans = this._trans;
    const settings = this.model.settings;
    const server = settings.server;
    if (!server) {
      return null;
    }
    const chosen = settings.current.model.trim();
    const refused =
      chosen && settings.hasModel && !server.allowed_models.includes(chosen);
    return (
      <>
        {!settings.hasModel && (
          <p className="jp-Crane-notice jp-mod-nomodel">
            {trans.__(
              'No model is configured: only certain crashes are reported.'
            )}
          </p>
        )}
        {!settings.hasModel && (
          <details className="jp-Crane-notice jp-Crane-addmodel">
            <summary>{trans.__('How to add a model')}</summary>
            <p>
              {trans.__(
                "Whoever starts the Jupyter server chooses the model; its key stays on the server. Start it with the environment variable %1 set to a litellm model name and the provider's key in its usual variable, for example:",
                'CRANE_MODEL'
              )}
            </p>
            <code>{MODEL_EXAMPLE}</code>
            <p>
              {trans.__(
                'Or set %1 (and %2 for a local server such as Ollama, vLLM or llama.cpp) in jupyter_server_config.py, then restart the server.',
                'c.CraneExtension.model',
                'c.CraneExtension.api_base'
              )}
            </p>
          </details>
        )}
        {server.model && !server.key_configured && (
          <p className="jp-Crane-notice">
            {trans.__(
              'The model %1 may lack an API key: %2',
              server.model,
              server.missing_env.join(', ') || '?'
            )}
          </p>
        )}
        {refused && (
          <p className="jp-Crane-notice">
            {trans.__(
              'The server does not allow the model %1; its default is used.',
              chosen
            )}
          </p>
        )}
      </>
    );
  }

  private _renderActive(watcher: NotebookWatcher): React.ReactElement {
    const trans = this._trans;
    const settings = this.model.settings;
    const cell = watcher.activeCodeCell;
    if (!cell) {
      return (
        <p className="jp-Crane-sidebar-empty">
          {trans.__('Select a code cell to see its diagnosis.')}
        </p>
      );
    }
    const record = watcher.recordOf(cell);
    const source = cell.model.sharedModel.getSource();
    const view = cellView(record, source, watcher.checks.epoch);
    const numberOf = (cellId: string) =>
      watcher.chain?.numberOf(cellId) ?? null;
    const d = describeCell(trans, view, record, numberOf);
    const around = {
      trans,
      numberOf,
      reveal: (cellId: string) => void watcher.reveal(cellId)
    };
    const chain = record?.chain ? (
      <ClaimSection {...around} claim={record.chain} source={record.source} />
    ) : record?.result ? (
      <ChainSection
        {...around}
        result={record.result}
        originId={record.cellId}
        changedSince={id => !!watcher.chain?.changedSince(record.cellId, id)}
      />
    ) : null;
    const trialMode = settings.trialMode;
    const checking = view.state === 'checking';
    return (
      <section className="jp-Crane-active">
        <div className="jp-Crane-active-status">
          <div className="jp-Crane-active-verdict">
            <StateLabel
              trans={trans}
              state={view.state}
              record={record}
              stale={view.stale}
            />
            {(d.after || d.basis) && (
              <span className="jp-Crane-basis">
                {[d.after, d.basis].filter(Boolean).join('; ')}
              </span>
            )}
          </div>
          <div className="jp-Crane-actions">
            <button
              className="jp-Button jp-mod-styled jp-mod-accept jp-Crane-recheck"
              disabled={checking}
              onClick={() => void watcher.check(cell)}
            >
              {record ? trans.__('Check again') : trans.__('Check now')}
            </button>
            {trialMode !== 'off' && (
              <button
                className="jp-Button jp-mod-styled jp-Crane-trial-run"
                disabled={checking}
                title={trans.__(
                  'Run the cell in a sandboxed copy of the kernel; nothing outside the copy changes'
                )}
                onClick={() => void watcher.check(cell, true)}
              >
                {trans.__('Trial run')}
              </button>
            )}
          </div>
        </div>
        {currencyNote(trans, view) && (
          <p className="jp-Crane-stale">{currencyNote(trans, view)}</p>
        )}
        <p className="jp-Crane-hint jp-Crane-trial-mode">
          {trialModeText(trans, settings)}
        </p>
        <Diagnosis
          trans={trans}
          record={record}
          view={view}
          source={source}
          serverCategories={settings.server?.categories ?? 'SRV'}
          onApplyFix={fix => watcher.applyFix(cell.model.id, fix)}
          chain={chain}
        />
      </section>
    );
  }

  private _renderStats(figures: Readonly<ISessionFigures>): React.ReactElement {
    const trans = this._trans;
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
              trans.__(
                'Cells that crashed although their check found no crash.'
              ),
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

  private _renderHistory(watcher: NotebookWatcher): React.ReactElement | null {
    const trans = this._trans;
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
}
