import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { VDomModel, VDomRenderer } from '@jupyterlab/ui-components';
import React from 'react';

import { craneIcon } from './icons';
import type { CraneSettings } from './settings';
import type {
  FactCategory,
  ICheckRecord,
  IServerConfig,
  IVerdict
} from './tokens';
import type { BadgeState } from './verdict';
import { badgeView, groupFacts, oneLine, voteSplit } from './verdict';
import type { CraneWatcher, NotebookWatcher } from './watcher';

/**
 * What the sidebar shows: the active cell of the current notebook and that notebook's checks.
 */
export class SidebarModel extends VDomModel {
  constructor(
    private readonly _tracker: INotebookTracker,
    private readonly _watchers: CraneWatcher,
    readonly settings: CraneSettings
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

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._watcher?.updated.disconnect(this._emit, this);
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._tracker.activeCellChanged.disconnect(this._emit, this);
    this.settings.changed.disconnect(this._emit, this);
    super.dispose();
  }

  private _onCurrentChanged(): void {
    this._watcher?.updated.disconnect(this._emit, this);
    this._watcher = this._watchers.watcherFor(this._tracker.currentWidget);
    this._watcher?.updated.connect(this._emit, this);
    this._emit();
  }

  private _emit(): void {
    this.stateChanged.emit();
  }

  private _watcher: NotebookWatcher | undefined;
}

function categoryTitle(trans: TranslationBundle, cat: FactCategory): string {
  switch (cat) {
    case 'S':
      return trans.__('Structural (S)');
    case 'R':
      return trans.__('Representation (R)');
    case 'V':
      return trans.__('Value (V)');
  }
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
    const server = this.model.settings.server;
    return (
      <div className="jp-Crane-sidebar-content">
        <header className="jp-Crane-sidebar-header">
          <h2>{trans.__('Crash prediction')}</h2>
        </header>
        {this._renderModelNotice(server)}
        {watcher ? (
          this._renderActive(watcher)
        ) : (
          <p className="jp-Crane-sidebar-empty">
            {trans.__('Open a notebook to see its crash predictions.')}
          </p>
        )}
        {watcher && this._renderHistory(watcher)}
      </div>
    );
  }

  private _renderModelNotice(
    server: IServerConfig | null
  ): React.ReactElement | null {
    const trans = this._trans;
    const settings = this.model.settings.current;
    const refused =
      server &&
      settings.model.trim() &&
      !server.allowed_models.includes(settings.model.trim());
    return (
      <>
        {server && !server.model && (
          <div className="jp-Crane-notice jp-mod-nomodel">
            <p>
              {trans.__(
                'No model is configured: only certain crashes, found by deterministic checks, are reported.'
              )}
            </p>
            <p>
              {trans.__(
                'To add a model, start JupyterLab with %1 (or set the %2 environment variable) and put the provider key in its usual environment variable.',
                '--CraneExtension.model=openai/gpt-4o-mini',
                'CRANE_MODEL'
              )}
            </p>
          </div>
        )}
        {server && server.model && !server.key_configured && (
          <div className="jp-Crane-notice">
            {trans.__(
              'The model %1 may lack an API key: %2',
              server.model,
              (server.missing_env ?? []).join(', ') || '?'
            )}
          </div>
        )}
        {refused && (
          <div className="jp-Crane-notice">
            {trans.__(
              'The server does not allow the model %1; its default is used.',
              settings.model
            )}
          </div>
        )}
      </>
    );
  }

  private _renderActive(watcher: NotebookWatcher): React.ReactElement {
    const trans = this._trans;
    const cell = watcher.activeCodeCell;
    if (!cell) {
      return (
        <p className="jp-Crane-sidebar-empty">
          {trans.__('Select a code cell to see its prediction.')}
        </p>
      );
    }
    const record = watcher.recordOf(cell);
    const view = badgeView(
      record,
      cell.model.sharedModel.getSource(),
      watcher.checks.epoch
    );
    return (
      <section className="jp-Crane-active">
        <div className="jp-Crane-active-status">
          <span
            className={`jp-Crane-verdict jp-mod-${view.state}${view.stale ? ' jp-mod-stale' : ''}`}
          >
            {this._stateLabel(view.state)}
            {view.stale ? ' ' + trans.__('(outdated)') : ''}
          </span>
          <button
            className="jp-Button jp-mod-styled jp-mod-accept jp-Crane-recheck"
            disabled={view.state === 'checking'}
            onClick={() => void watcher.check(cell)}
          >
            {trans.__('Check again')}
          </button>
        </div>
        {record && this._renderRecord(record)}
      </section>
    );
  }

  private _stateLabel(state: BadgeState): string {
    const trans = this._trans;
    switch (state) {
      case 'none':
        return trans.__('Not checked yet');
      case 'checking':
        return trans.__('Checking…');
      case 'crash':
        return trans.__('Predicted to crash');
      case 'ok':
        return trans.__('No crash predicted');
      case 'limited':
        return trans.__('No certain crash found');
      case 'busy':
        return trans.__('Kernel busy');
      case 'error':
        return trans.__('Check failed');
    }
  }

  private _sourceLabel(source: IVerdict['source']): string {
    const trans = this._trans;
    switch (source) {
      case 'llm':
        return trans.__('the model');
      case 'checks':
        return trans.__('deterministic checks');
      case 'both':
        return trans.__('the model and deterministic checks');
      case 'syntax':
        return trans.__('syntax check');
    }
  }

  private _renderRecord(record: ICheckRecord): React.ReactElement {
    const trans = this._trans;
    const result = record.result;
    const verdict = result?.verdict ?? null;
    const sentCategories =
      record.sent.categories ?? this.model.settings.server?.categories ?? 'SRV';
    const facts = groupFacts(result?.runtime, sentCategories);
    const split = verdict ? voteSplit(verdict.votes) : null;
    const problem = record.error ?? result?.error?.message;
    return (
      <>
        {problem && <p className="jp-Crane-error">{problem}</p>}
        {result?.hint && <p className="jp-Crane-hint">{result.hint}</p>}
        {verdict && (
          <div className="jp-Crane-reasoning">
            <h3>{trans.__('Reasoning')}</h3>
            <p>{verdict.reasoning}</p>
            {verdict.findings.length > 0 && (
              <ul className="jp-Crane-findings">
                {verdict.findings.map((f, i) => (
                  <li key={i}>
                    <code>{f.rule}</code>
                    {f.line !== null
                      ? ' ' + trans.__('line %1', f.line)
                      : ''}: {f.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {result && (
          <table className="jp-Crane-facts-table">
            <tbody>
              <tr>
                <th>{trans.__('Model')}</th>
                <td>{result.model ?? trans.__('none (checks only)')}</td>
              </tr>
              <tr>
                <th>{trans.__('Decided by')}</th>
                <td>{verdict ? this._sourceLabel(verdict.source) : '–'}</td>
              </tr>
              {split && (
                <tr>
                  <th>{trans.__('Votes')}</th>
                  <td>
                    {trans.__('%1 of %2 for a crash', split[0], split[1])}
                  </td>
                </tr>
              )}
              <tr>
                <th>{trans.__('Latency')}</th>
                <td>
                  {trans.__(
                    '%1 ms (runtime %2 ms, model %3 ms)',
                    Math.round(result.timing.total_ms),
                    Math.round(result.timing.extraction_ms),
                    Math.round(result.timing.llm_ms)
                  )}
                </td>
              </tr>
              <tr>
                <th>{trans.__('Tokens')}</th>
                <td>
                  {trans.__(
                    '%1 prompt, %2 completion',
                    result.tokens.prompt ?? '–',
                    result.tokens.completion ?? '–'
                  )}
                </td>
              </tr>
              <tr>
                <th>{trans.__('Executed cells')}</th>
                <td>{result.executed_cells}</td>
              </tr>
              <tr>
                <th>{trans.__('Facts sent')}</th>
                <td>{sentCategories || trans.__('none')}</td>
              </tr>
            </tbody>
          </table>
        )}
        {result?.runtime && (
          <div className="jp-Crane-runtime">
            <h3>{trans.__('Runtime facts sent')}</h3>
            {(['S', 'R', 'V'] as FactCategory[]).map(cat => (
              <details
                key={cat}
                className="jp-Crane-factgroup"
                data-category={cat}
                open={facts[cat].length > 0 && facts[cat].length <= 12}
              >
                <summary>
                  {categoryTitle(trans, cat)} ({facts[cat].length})
                  {sentCategories.includes(cat) ? '' : ' ' + trans.__('off')}
                </summary>
                <ul>
                  {facts[cat].map((f, i) => (
                    <li key={i}>
                      <code>{f.expr}</code> {f.key}: <code>{f.value}</code>
                    </li>
                  ))}
                </ul>
              </details>
            ))}
            {facts.notes.length > 0 && (
              <ul className="jp-Crane-notes">
                {facts.notes.map((n, i) => (
                  <li key={i}>{n}</li>
                ))}
              </ul>
            )}
          </div>
        )}
      </>
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
        <h3>{trans.__('Recent checks in this notebook')}</h3>
        <ol>
          {history.map(r => {
            const state = badgeView(r, r.source, r.epoch).state;
            return (
              <li
                key={`${r.cellId}-${r.startedAt}`}
                className={`jp-mod-${state}`}
                title={trans.__('Go to the cell')}
                onClick={() => void watcher.reveal(r.cellId)}
              >
                <span className="jp-Crane-history-state">
                  {this._stateLabel(state)}
                </span>
                <code className="jp-Crane-history-source">
                  {oneLine(r.source.split('\n')[0] ?? '', 60)}
                </code>
                <span className="jp-Crane-history-time">
                  {new Date(r.startedAt).toLocaleTimeString()}
                </span>
              </li>
            );
          })}
        </ol>
      </section>
    );
  }
}
