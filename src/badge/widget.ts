import type { TranslationBundle } from '@jupyterlab/translation';
import { checkIcon, infoIcon } from '@jupyterlab/ui-components';
import type { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import type { IFix } from '../contract/api';
import { badgeLine } from '../forecast/words';
import type { CellNumbers, IDownstream } from './claim';
import {
  downstreamLead,
  downstreamLevel,
  downstreamText,
  isObserved
} from './claim';
import { crashIcon, maybeIcon, missedIcon, observedIcon } from './icons';
import type { CellState } from './levels';
import type { IDescription } from './words';
import { describeCell } from './words';
import type { ICheckRecord } from '../contract/tokens';
import type { ICellView } from './verdict';

const BADGE_CLASS = 'jp-Crane-badge';
const STATES: CellState[] = [
  'none',
  'checking',
  'busy',
  'error',
  'will-crash',
  'may-crash',
  'no-crash',
  'confirmed',
  'missed',
  'passed'
];

/** Whether a record's crash was observed in a trial run (its own, or a chain's of a cell above). */
function observedCrash(record: ICheckRecord | undefined): boolean {
  if (record?.chain) {
    return isObserved(record.chain.outcome);
  }
  return record?.result?.verdict?.source === 'trial';
}

/**
 * The icon of a state; an observed crash has its own, so it reads apart from a prediction.
 */
export function stateIcon(
  state: CellState,
  record: ICheckRecord | undefined
): LabIcon | null {
  switch (state) {
    case 'will-crash':
      return observedCrash(record) ? observedIcon : crashIcon;
    case 'confirmed':
      return crashIcon;
    case 'may-crash':
      return maybeIcon;
    case 'missed':
      return missedIcon;
    case 'no-crash':
      return checkIcon;
    case 'error':
      return infoIcon;
    default:
      return null;
  }
}

/** The one-line text of a description: "Will crash (certain: deterministic check): cause, line 2." */
export function describeText(
  trans: TranslationBundle,
  d: IDescription
): string {
  let text = d.after ? trans.__('%1 %2', d.label, d.after) : d.label;
  text = d.basis ? trans.__('%1 (%2)', text, d.basis) : text;
  if (d.cause) {
    text = trans.__('%1: %2', text, d.cause);
  }
  return d.line !== null ? lineText(trans, text, d.line) : text;
}

/** `text` with its line, unless it says the line already. */
function lineText(
  trans: TranslationBundle,
  text: string,
  line: number
): string {
  if (new RegExp(`\\bline ${line}\\b`).test(text)) {
    return text;
  }
  return text
    ? trans.__('%1 (line %2)', text, line)
    : trans.__('line %1', line);
}

/**
 * A sentence on the verdict's currency, for the badge and the panel: the check in flight for its
 * text, or why it may be outdated ('' when it is current).
 */
export function currencyNote(
  trans: TranslationBundle,
  view: ICellView
): string {
  switch (view.pending) {
    case 'recheck':
      return trans.__('Checking again…');
    case 'trial':
      return trans.__('Trial run in progress…');
    case 'model':
      return trans.__('Asking the model…');
    case 'busy':
      return trans.__('Will check again when the kernel is idle.');
  }
  if (!view.stale || view.state === 'none') {
    return '';
  }
  return view.unresolved
    ? trans.__(
        'Outdated: a check of the kernel as it is now could neither confirm nor clear it.'
      )
    : trans.__('Outdated: the cell or the kernel changed since this check.');
}

/** What a badge shows of the chain (`claim.ts`): the cells' numbers, the crash its edit causes below. */
export interface IBadgeChain {
  numberOf?: CellNumbers;
  downstream?: IDownstream | null;
}

/**
 * The verdict of one cell, shown as a row under its input: a spinner while checking, the level
 * with who decided and the cause, and a button to the full diagnosis. Long text wraps instead of
 * being cut. An edit that makes a cell below crash, in a cell whose own check found no crash, takes
 * that crash's level and leads with it ("Cell 7 below would then crash: KeyError: 'age'. No crash
 * found in this cell itself (tried: …)"). A click anywhere on the badge opens the sidebar; a click
 * on the crash below goes to that cell (`onReveal`). A long or tight cell's forecast follows on a
 * line of its own ("Takes ~12 min · peaks at ~9.5 GB of 24 GB", `forecast/words.ts`).
 */
export class CellBadge extends Widget {
  constructor(
    private readonly _trans: TranslationBundle,
    onOpen: () => void,
    onApplyFix?: (fix: IFix) => void,
    onReveal?: (cellId: string) => void
  ) {
    super({ node: document.createElement('div') });
    this.addClass(BADGE_CLASS);
    this.node.setAttribute('role', 'status');
    this._icon = document.createElement('span');
    this._icon.className = `${BADGE_CLASS}-icon`;
    this._text = document.createElement('span');
    this._text.className = `${BADGE_CLASS}-text`;
    this._label = document.createElement('strong');
    this._label.className = `${BADGE_CLASS}-label`;
    this._basis = document.createElement('span');
    this._basis.className = `${BADGE_CLASS}-basis`;
    this._cause = document.createElement('span');
    this._cause.className = `${BADGE_CLASS}-cause`;
    // The crash this cell's edit causes below: a button inside the sentence, to go there.
    this._below = document.createElement('span');
    this._below.className = `${BADGE_CLASS}-below`;
    this._below.hidden = true;
    this._belowGo = document.createElement('button');
    this._belowGo.type = 'button';
    this._belowGo.className = `${BADGE_CLASS}-below-go`;
    this._belowGo.addEventListener('click', event => {
      event.stopPropagation(); // going there is not opening the panel
      if (this._downstream && onReveal) {
        onReveal(this._downstream.cellId);
      }
    });
    this._text.append(this._label, this._basis, this._cause, this._below);
    this._details = document.createElement('button');
    this._details.type = 'button';
    this._details.className = `${BADGE_CLASS}-details`;
    this._details.textContent = _trans.__('Details in the crash panel');
    this._details.title = _trans.__(
      'Open the full diagnosis in the Crash Prediction panel (right sidebar)'
    );
    // The verified fix, on a line of its own: the change, what was tried, and Apply.
    this._fix = document.createElement('div');
    this._fix.className = `${BADGE_CLASS}-fix`;
    this._fixText = document.createElement('span');
    this._fixText.className = `${BADGE_CLASS}-fix-text`;
    this._apply = document.createElement('button');
    this._apply.type = 'button';
    this._apply.className = `${BADGE_CLASS}-apply`;
    this._apply.textContent = _trans.__('Apply fix');
    this._apply.addEventListener('click', event => {
      event.stopPropagation(); // applying is not opening the panel
      if (this._offered && onApplyFix) {
        onApplyFix(this._offered);
      }
    });
    this._fix.append(this._fixText, this._apply);
    this._fix.hidden = true;
    // Before it runs: a line of its own for a long or tight cell ("Takes ~12 min · peaks at …").
    this._forecast = document.createElement('div');
    this._forecast.className = `${BADGE_CLASS}-forecast`;
    this._forecastIcon = document.createElement('span');
    this._forecastIcon.className = 'jp-Crane-level-icon';
    this._forecastText = document.createElement('span');
    this._forecastText.className = `${BADGE_CLASS}-forecast-text`;
    this._forecast.append(this._forecastIcon, this._forecastText);
    this._forecast.hidden = true;
    this.node.append(
      this._icon,
      this._text,
      this._details,
      this._forecast,
      this._fix
    );
    this.node.addEventListener('click', event => {
      event.stopPropagation();
      onOpen();
    });
    this.render({ state: 'none', stale: false }, undefined);
  }

  /** The state on display (for tests and the guard). */
  get state(): CellState {
    return this._state;
  }

  /**
   * Show `view` for `record`; `fix` is the verified fix offered for the cell's text, `chain` what the
   * chain says around it.
   */
  render(
    view: ICellView,
    record: ICheckRecord | undefined,
    fix: IFix | null = null,
    chain: IBadgeChain = {}
  ): void {
    const trans = this._trans;
    const downstream = chain.downstream ?? null;
    // A crash this cell's edit causes below is what the user must act on: when the cell's own check
    // found no crash, it leads the badge, at its own level; after a warning of its own, it follows.
    const leads = downstream !== null && view.state === 'no-crash';
    const state = leads ? downstreamLevel(downstream) : view.state;
    for (const s of STATES) {
      this.toggleClass(`jp-mod-${s}`, s === state);
    }
    const stale = view.stale && view.state !== 'none' && !view.pending;
    this.toggleClass('jp-mod-stale', stale);
    this.toggleClass('jp-mod-pending', !!view.pending);
    const observed = leads
      ? downstream.observed
      : view.state === 'will-crash' && observedCrash(record);
    this.toggleClass('jp-mod-observed', observed);
    this.toggleClass('jp-mod-leads-below', leads);
    this._state = state;
    this.node.dataset.craneState = state;

    const d = describeCell(trans, view, record, chain.numberOf);
    this._label.textContent = leads
      ? trans.__('No crash found in this cell itself')
      : d.label;
    this._basis.textContent =
      (d.after ? ` ${d.after}` : '') + (d.basis ? ` (${d.basis})` : '');
    const cause = d.line !== null ? lineText(trans, d.cause, d.line) : d.cause;
    this._cause.textContent = cause ? `: ${cause}` : '';
    const note = currencyNote(trans, view);
    if (note) {
      // Mid-sentence on the badge: "…: KeyError: 'x' — checking again…".
      this._cause.textContent +=
        ' — ' + note.charAt(0).toLocaleLowerCase() + note.slice(1);
    }
    this.node.title = record?.result?.verdict?.reasoning ?? '';
    this._downstream = downstream;
    this._below.hidden = !downstream;
    // In the sentence only while there is a crash below to name: first ("Cell 7 below would then
    // crash: KeyError: 'age'. No crash found in this cell itself (tried: …)"), or after the cell's
    // own warning ("…; and cell 7 below would then crash").
    if (leads) {
      this._below.replaceChildren(
        this._belowGo,
        downstream.cause ? `: ${downstream.cause}. ` : '. '
      );
      this._text.replaceChildren(
        this._below,
        this._label,
        this._basis,
        this._cause
      );
    } else {
      this._below.replaceChildren(...(downstream ? ['; ', this._belowGo] : []));
      this._text.replaceChildren(
        this._label,
        this._basis,
        this._cause,
        this._below
      );
    }
    this._belowGo.textContent = downstream
      ? leads
        ? downstreamLead(trans, downstream)
        : downstreamText(trans, downstream)
      : '';
    this._belowGo.title = downstream
      ? trans.__('Go to cell %1', downstream.number)
      : '';

    this._icon.replaceChildren();
    const icon = leads
      ? downstream.observed
        ? observedIcon
        : maybeIcon
      : stateIcon(view.state, record);
    if (icon) {
      icon.element({ container: this._icon, tag: 'span' });
    }
    const hasDiagnosis = !['none', 'checking', 'busy'].includes(view.state);
    this._details.hidden = !hasDiagnosis;
    this._renderForecast(view, record);
    this._offered = fix;
    this._fix.hidden = !fix;
    if (fix) {
      this._fixText.textContent = trans.__(
        'Fix: %1 (%2)',
        fix.title,
        fix.tried
      );
    }
    // A cell that ran without an error needs no badge: its output speaks.
    this.setHidden(view.state === 'none' || view.state === 'passed');
  }

  /**
   * The forecast's line, under a cell the check found no crash in or that may crash, when it is long
   * or tight. A projected run out of memory takes the "may crash" look (never the observed one): it
   * is a projection, not a crash seen.
   */
  private _renderForecast(
    view: ICellView,
    record: ICheckRecord | undefined
  ): void {
    const shown = view.state === 'no-crash' || view.state === 'may-crash';
    const line = shown
      ? badgeLine(this._trans, record?.result?.forecast)
      : null;
    this._forecast.hidden = !line;
    this._forecastText.textContent = line?.text ?? '';
    this._forecast.classList.toggle('jp-mod-may-crash', !!line?.outOfMemory);
    this._forecastIcon.replaceChildren();
    if (line?.outOfMemory) {
      maybeIcon.element({ container: this._forecastIcon, tag: 'span' });
    }
  }

  private _icon: HTMLElement;
  private _text: HTMLElement;
  private _label: HTMLElement;
  private _basis: HTMLElement;
  private _cause: HTMLElement;
  private _below: HTMLElement;
  private _belowGo: HTMLButtonElement;
  private _downstream: IDownstream | null = null;
  private _details: HTMLButtonElement;
  private _fix: HTMLElement;
  private _fixText: HTMLElement;
  private _apply: HTMLButtonElement;
  private _forecast: HTMLElement;
  private _forecastIcon: HTMLElement;
  private _forecastText: HTMLElement;
  private _offered: IFix | null = null;
  private _state: CellState = 'none';
}
