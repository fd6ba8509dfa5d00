/**
 * The badge of a run from the top (issue 37) on the cell where the notebook first fails: "Fails from
 * the top: NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no
 * longer defines it". It speaks the badges' visual language (`jp-Crane-badge`, the observed crash's
 * level and icon, style/base.css) and sits under the cell's input, beside the cell's own badge.
 */
import type { Cell } from '@jupyterlab/cells';
import type { TranslationBundle } from '@jupyterlab/translation';
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
