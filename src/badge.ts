import type { TranslationBundle } from '@jupyterlab/translation';
import { checkIcon, infoIcon } from '@jupyterlab/ui-components';
import type { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { crashIcon } from './icons';
import type { ICheckRecord } from './tokens';
import type { BadgeState, IBadgeView } from './verdict';
import { oneLine } from './verdict';

const BADGE_CLASS = 'jp-Crane-badge';
const STATES: BadgeState[] = [
  'none',
  'checking',
  'crash',
  'ok',
  'error',
  'limited',
  'busy'
];

/**
 * The verdict of one cell, shown as a thin row under its input: a spinner while checking, the
 * predicted crash with its reason, a quiet mark otherwise. Hover shows the full reasoning; a click
 * opens the sidebar.
 */
export class CellBadge extends Widget {
  constructor(
    private readonly _trans: TranslationBundle,
    onOpen: () => void
  ) {
    super({ node: document.createElement('div') });
    this.addClass(BADGE_CLASS);
    this.node.setAttribute('role', 'status');
    this._icon = document.createElement('span');
    this._icon.className = `${BADGE_CLASS}-icon`;
    this._text = document.createElement('span');
    this._text.className = `${BADGE_CLASS}-text`;
    this.node.append(this._icon, this._text);
    this.node.addEventListener('click', onOpen);
    this.render({ state: 'none', stale: false }, undefined);
  }

  /** The state on display (for tests and the guard). */
  get state(): BadgeState {
    return this._state;
  }

  /** Show `view` for `record`. */
  render(view: IBadgeView, record: ICheckRecord | undefined): void {
    const trans = this._trans;
    for (const state of STATES) {
      this.toggleClass(`jp-mod-${state}`, state === view.state);
    }
    this.toggleClass('jp-mod-stale', view.stale);
    this._state = view.state;
    this.node.dataset.craneState = view.state;

    const verdict = record?.result?.verdict ?? null;
    let icon: LabIcon | null = null;
    let text = '';
    let title = '';
    switch (view.state) {
      case 'checking':
        text = trans.__('Checking for crashes…');
        break;
      case 'crash':
        icon = crashIcon;
        text = trans.__(
          'Predicted crash: %1',
          oneLine(verdict?.reasoning ?? '')
        );
        title = verdict?.reasoning ?? '';
        break;
      case 'ok':
        icon = checkIcon;
        text = trans.__('No crash predicted');
        title = verdict?.reasoning ?? '';
        break;
      case 'limited':
        icon = infoIcon;
        text = trans.__('No certain crash found (no model configured)');
        title = record?.result?.hint ?? '';
        break;
      case 'busy':
        text = trans.__('Kernel busy: will check when it is idle');
        break;
      case 'error': {
        icon = infoIcon;
        const message =
          record?.error ??
          record?.result?.error?.message ??
          trans.__('no verdict');
        text = trans.__('Check failed: %1', oneLine(message, 100));
        title = [message, record?.result?.hint ?? ''].join('\n').trim();
        break;
      }
      case 'none':
        break;
    }
    if (view.stale && view.state !== 'none') {
      text = trans.__('%1 (outdated: the cell or the kernel changed)', text);
    }
    this._icon.replaceChildren();
    if (icon) {
      icon.element({ container: this._icon, tag: 'span' });
    }
    this._text.textContent = text;
    this.node.title = title;
    this.setHidden(view.state === 'none');
  }

  private _icon: HTMLElement;
  private _text: HTMLElement;
  private _state: BadgeState = 'none';
}
