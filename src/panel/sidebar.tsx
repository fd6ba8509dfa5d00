/**
 * The crash panel in the right sidebar: the notices, the active cell's level and diagnosis (with the
 * chain's section), the run from the top, the session figures and the recent checks of the current
 * notebook. Each section is a family's own view; this module puts them in order and follows the
 * current notebook and cell.
 */
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { VDomModel, VDomRenderer } from '@jupyterlab/ui-components';
import React from 'react';

import { craneIcon } from '../badge/icons';
import { StateLabel } from '../badge/label';
import { cellView } from '../badge/verdict';
import { currencyNote } from '../badge/widget';
import { describeCell } from '../badge/words';
import { ChainSection, ClaimSection } from '../below/view';
import type { CraneWatcher, NotebookWatcher } from '../editing/watcher';
import type { TopRuns } from '../fromtop/extension';
import type { NotebookTop } from '../fromtop/run';
import { FromTopSection } from '../fromtop/view';
import type { CraneSettings } from '../settings/model';
import { Diagnosis } from './diagnosis';
import { SessionFigures } from './figures';
import { RecentChecks } from './history';
import { Notices, trialModeText } from './notices';

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

  /** The runs from the top of the current notebook (`fromtop/run.ts`). */
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
        <Notices trans={trans} settings={this.model.settings} />
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
        {watcher && (
          <SessionFigures trans={trans} figures={watcher.stats.figures} />
        )}
        {watcher && <RecentChecks trans={trans} watcher={watcher} />}
      </div>
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
}
