/**
 * The badge of a run from the top on the cell where the notebook first fails: "Fails from
 * the top: NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no
 * longer defines it". It speaks the badges' visual language (`jp-Crane-badge`, the observed crash's
 * level and icon, style/base.css) and sits under the cell's input, beside the cell's own badge.
 */
import type { Cell } from '@jupyterlab/cells';
import type { Notebook } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';
import type { PanelLayout } from '@lumino/widgets';
import { Widget } from '@lumino/widgets';

import type { INotebookCell } from '../contract/api';
import { badgeWords } from './words';
import { observedIcon } from '../badge/icons';

const BADGE_CLASS = 'jp-Crane-badge';
export const TOP_BADGE_CLASS = 'jp-Crane-topbadge';

/** The badge of the first crash of a run from the top. A click opens the crash panel. */
export class TopBadge extends Widget {
  constructor(
    private readonly _trans: TranslationBundle,
    onOpen: () => void
  ) {
    super({ node: document.createElement('div') });
    this.addClass(BADGE_CLASS);
    this.addClass(TOP_BADGE_CLASS);
    // An observed crash: the level and icon of a crash a trial run saw.
    this.addClass('jp-mod-will-crash');
    this.addClass('jp-mod-observed');
    this.node.dataset.craneState = 'fails-from-top';
    this.node.setAttribute('role', 'status');
    const icon = document.createElement('span');
    icon.className = `${BADGE_CLASS}-icon`;
    observedIcon.element({ container: icon, tag: 'span' });
    const text = document.createElement('span');
    text.className = `${BADGE_CLASS}-text`;
    this._label = document.createElement('strong');
    this._label.className = `${BADGE_CLASS}-label`;
    this._cause = document.createElement('span');
    this._cause.className = `${BADGE_CLASS}-cause`;
    text.append(this._label, this._cause);
    const details = document.createElement('button');
    details.type = 'button';
    details.className = `${BADGE_CLASS}-details`;
    details.textContent = _trans.__('Details in the crash panel');
    details.title = _trans.__(
      'Open the run from the top in the Crash Prediction panel (right sidebar)'
    );
    this.node.append(icon, text, details);
    this.node.addEventListener('click', event => {
      event.stopPropagation();
      onOpen();
    });
  }

  /** Show the first crash; `kernelHasIt`: the live kernel is still the one `hidden` was read on. */
  render(crash: INotebookCell, kernelHasIt: boolean): void {
    const words = badgeWords(this._trans, crash, kernelHasIt);
    this._label.textContent = words.label;
    this._cause.textContent = words.cause ? `: ${words.cause}` : '';
    this.toggleClass('jp-mod-hidden-state', !!crash.hidden && kernelHasIt);
  }

  /** Put the badge in `cell`'s layout, right after the widget that holds its input area. */
  placeIn(cell: Cell): void {
    const layout = cell.layout as PanelLayout;
    const input = cell.inputArea?.parent ?? null;
    const index = input ? layout.widgets.indexOf(input) : -1;
    layout.insertWidget(index + 1, this);
  }

  private _label: HTMLElement;
  private _cause: HTMLElement;
}

/**
 * The badge of the first crash in one notebook: on the crash's cell while there is a crash to show,
 * placed under its input once the cell has rendered (windowed notebooks render cells late), and gone
 * with the cell (a cell replaced in place keeps its id: the badge comes back on the new one).
 */
export class FirstCrashBadge implements IDisposable {
  constructor(
    private readonly _notebook: Notebook,
    private readonly _trans: TranslationBundle,
    private readonly _openSidebar: () => void
  ) {}

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Show `crash` on its cell (null: no badge); `kernelHasIt` as `TopBadge.render` takes it. */
  show(crash: INotebookCell | null, kernelHasIt: boolean): void {
    if (this._isDisposed) {
      return;
    }
    this._crash = crash;
    this._kernelHasIt = kernelHasIt;
    const cell = crash?.cell_id
      ? this._notebook.widgets.find(w => w.model.id === crash.cell_id)
      : undefined;
    if (!crash || !cell) {
      this._badge?.dispose();
      this._badge = null;
      return;
    }
    if (this._badge && this._badgeCell !== cell) {
      this._badge.dispose();
      this._badge = null;
    }
    if (!this._badge) {
      this._badge = this._attach(cell);
    }
    this._badge.render(crash, kernelHasIt);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._badge?.dispose();
    this._badge = null;
  }

  /** A badge placed under `cell`'s input once the cell has rendered (windowed notebooks). */
  private _attach(cell: Cell): TopBadge {
    const badge = new TopBadge(this._trans, this._openSidebar);
    this._badgeCell = cell;
    const onDisposed = () => {
      badge.dispose();
      if (this._badge === badge) {
        this._badge = null;
        this.show(this._crash, this._kernelHasIt); // a cell replaced in place keeps its id
      }
    };
    cell.disposed.connect(onDisposed);
    badge.disposed.connect(() => cell.disposed.disconnect(onDisposed));
    cell.ready
      .then(() => {
        if (!badge.isDisposed && !cell.isDisposed) {
          badge.placeIn(cell);
        }
      })
      .catch(reason =>
        console.error('crane: cannot place the from-the-top badge', reason)
      );
    return badge;
  }

  private _badge: TopBadge | null = null;
  private _badgeCell: Cell | null = null;
  private _crash: INotebookCell | null = null;
  private _kernelHasIt = true;
  private _isDisposed = false;
}
