/**
 * Runs from the top for every notebook: one `NotebookTop` per panel, through
 * `docRegistry.addWidgetExtension('Notebook', ...)`, and its button in the notebook's toolbar.
 */
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import { Signal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import { NotebookTop } from './run';

/** What every notebook's runs share. */
export interface ITopRunsOptions {
  trans: TranslationBundle;
  openSidebar: () => void;
  unavailable?: () => string | null;
  /** Adds the toolbar button of a notebook (index.ts; null: none). */
  toolbarItem?: (top: NotebookTop) => Widget | null;
}

/**
 * Adds runs from the top to every notebook: one `NotebookTop` per panel, through
 * `docRegistry.addWidgetExtension('Notebook', ...)`, and its button in the notebook's toolbar.
 */
export class TopRuns implements DocumentRegistry.IWidgetExtension<
  NotebookPanel,
  INotebookModel
> {
  constructor(private readonly _options: ITopRunsOptions) {}

  /** Emits the notebook's runs whose state changed (the commands' enabled state follows). */
  get changed(): ISignal<this, NotebookTop> {
    return this._changed;
  }

  createNew(panel: NotebookPanel): IDisposable {
    const top = new NotebookTop({
      notebook: panel.content,
      session: panel.sessionContext,
      trans: this._options.trans,
      openSidebar: this._options.openSidebar,
      unavailable: this._options.unavailable
    });
    this._tops.set(panel, top);
    top.changed.connect(this._onChanged, this);
    const item = this._options.toolbarItem?.(top) ?? null;
    if (item) {
      const name = 'crane-from-top';
      if (!panel.toolbar.insertAfter('cellType', name, item)) {
        panel.toolbar.addItem(name, item);
      }
    }
    panel.disposed.connect(() => {
      this._tops.delete(panel);
      item?.dispose();
    });
    return top;
  }

  /** The runs of a panel. */
  forPanel(panel: NotebookPanel | null): NotebookTop | undefined {
    return panel ? this._tops.get(panel) : undefined;
  }

  private _onChanged(top: NotebookTop): void {
    this._changed.emit(top);
  }

  private _tops = new WeakMap<NotebookPanel, NotebookTop>();
  private _changed = new Signal<this, NotebookTop>(this);
}
