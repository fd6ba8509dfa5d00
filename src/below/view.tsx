/**
 * The chain in the diagnosis (`chain.ts`): for a checked cell, the cells below as its
 * trial met them, each with its outcome in words and its time; for a cell the chain of a cell above
 * claims will crash, what it met there, after which cell, and why that cell is (or is not) to blame.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { IAnalyzeResult, IBelowOutcome } from '../contract/api';
import type { CellNumbers } from '../badge/claim';
import { afterText, claimCause, isObserved } from '../badge/claim';
import { Rich } from '../badge/label';
import { formatDuration } from '../badge/words';
import type { IChainClaim } from '../contract/tokens';
import { observedCause, observedHeadline } from '../badge/trial';

/** `text` without its final full stop, to go mid-sentence. */
function clause(text: string): string {
  return text.trim().replace(/\.$/, '');
}

/** One cell of the chain, in words: ran, shortened, skipped and why, not reached, blocked and why,
 * crashed and with what. */
export function outcomeText(
  trans: TranslationBundle,
  outcome: IBelowOutcome
): string {
  const why = outcome.reason ? clause(outcome.reason) : '';
  const because = (words: string) =>
    why ? trans.__('%1: %2', words, why) : words;
  switch (outcome.status) {
    case 'finished':
      return trans.__('ran to its end');
    case 'shortened':
      return trans.__(
        'ran to its end with its long loops cut short (a quick step)'
      );
    case 'skipped':
      return because(trans.__('skipped'));
    case 'not_reached':
      return because(trans.__('not reached'));
    case 'blocked':
      return because(trans.__('blocked by the sandbox'));
    case 'timed_out':
      return because(trans.__('timed out'));
    case 'out_of_memory':
      return because(trans.__('ran out of memory'));
    case 'unavailable':
      return because(trans.__('not run'));
    case 'crashed': {
      let text = trans.__('crashed: %1', claimCause(trans, outcome));
      if (outcome.without_edit === true) {
        text = trans.__('%1; it crashes with or without this edit', text);
      } else if (!isObserved(outcome)) {
        text = trans.__(
          '%1; the crash may depend on a loop cut short in the trial',
          text
        );
      }
      return text;
    }
  }
}

/** A cell that reads names the origin no longer binds (hidden state), with code marks. */
export function unboundText(
  trans: TranslationBundle,
  names: readonly string[],
  originNumber: number | null
): string {
  const list = names.map(n => `\`${n}\``).join(', ');
  return originNumber === null
    ? trans.__(
        "reads %1, which the edited cell no longer defines: it runs only on the kernel's old value and fails from the top",
        list
      )
    : trans.__(
        "reads %1, which cell %2 no longer defines: it runs only on the kernel's old value and fails from the top",
        list,
        originNumber
      );
}

/** What the chain's views read of the notebook, and going to a cell. */
export interface IChainViewProps {
  trans: TranslationBundle;
  numberOf: CellNumbers;
  /** Make a cell the active one and scroll to it. */
  reveal: (cellId: string) => void;
}

/** A cell named by its number, as a button that goes there. */
function CellLink(
  props: IChainViewProps & { cellId: string | null }
): React.ReactElement {
  const { trans, cellId, numberOf, reveal } = props;
  const number = cellId ? numberOf(cellId) : null;
  if (!cellId || number === null) {
    return <span className="jp-Crane-chain-cell">{trans.__('a cell')}</span>;
  }
  return (
    <button
      className="jp-Crane-chain-cell jp-Crane-chain-go"
      title={trans.__('Go to cell %1', number)}
      onClick={() => reveal(cellId)}
    >
      {trans.__('cell %1', number)}
    </button>
  );
}

/** The first sentence of the list: how far the trial went on, or why it did not. */
function chainIntro(
  trans: TranslationBundle,
  below: readonly IBelowOutcome[],
  ms: number
): string {
  const ran = below.some(
    o => o.status !== 'not_reached' && o.status !== 'unavailable'
  );
  if (ran) {
    return trans.__(
      'After this cell ran to its end, the same trial went on with the code cells below, in order, each as a quick step (%1 in all):',
      formatDuration(ms)
    );
  }
  const why = below[0]?.reason;
  return why
    ? trans.__(
        'The trial did not run the cells below: %1.',
        why.replace(/\.$/, '')
      )
    : trans.__('The trial did not run the cells below.');
}

/**
 * The cells below a checked cell as its trial met them: each cell (a button to it), its outcome in
 * words, its time; a cell whose text changed since is marked so.
 */
export function ChainSection(
  props: IChainViewProps & {
    result: IAnalyzeResult;
    originId: string;
    /** Whether a cell's text is no longer what the chain ran. */
    changedSince?: (cellId: string) => boolean;
  }
): React.ReactElement | null {
  const { trans, result, originId, numberOf, changedSince } = props;
  const below = result.below;
  if (!below?.length) {
    return null;
  }
  return (
    <div className="jp-Crane-chain">
      <h3>{trans.__('Cells below')}</h3>
      <p className="jp-Crane-chain-intro">
        {chainIntro(trans, below, result.timing.below_ms)}
      </p>
      <ol className="jp-Crane-chain-list">
        {below.map((outcome, i) => (
          <li
            key={`${outcome.cell_id ?? ''}-${i}`}
            className={`jp-Crane-chain-entry jp-mod-${outcome.status}`}
          >
            <CellLink {...props} cellId={outcome.cell_id} />
            {': '}
            <span className="jp-Crane-chain-outcome">
              {outcomeText(trans, outcome)}
            </span>
            {outcome.elapsed_ms !== null && (
              <span className="jp-Crane-chain-time">
                {' '}
                {trans.__('(%1)', formatDuration(outcome.elapsed_ms))}
              </span>
            )}
            {outcome.cell_id && changedSince?.(outcome.cell_id) && (
              <span className="jp-Crane-chain-changed">
                {' '}
                {trans.__('(changed since)')}
              </span>
            )}
            {outcome.unbound.length > 0 && (
              <p className="jp-Crane-chain-unbound">
                <Rich
                  text={unboundText(trans, outcome.unbound, numberOf(originId))}
                />
              </p>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

/** Why the origin is, or is not, what breaks the cell, in a sentence. */
function blameText(trans: TranslationBundle, claim: IChainClaim): string {
  switch (claim.outcome.without_edit) {
    case true:
      return trans.__(
        'It crashes with or without this edit: a trial of this cell alone, on the kernel as it is, crashed the same way.'
      );
    case false:
      return claim.origin === 'edited'
        ? trans.__(
            'Alone, on the kernel as it is, this cell runs without this error: the edit is what breaks it.'
          )
        : trans.__(
            'Alone, on the kernel as it is, this cell runs without this error.'
          );
    default:
      return '';
  }
}

/**
 * The diagnosis of a cell the chain of a cell above claims will or may crash: the crash, its line,
 * what the chain ran, whom to blame, and a button to the cell it comes from.
 */
export function ClaimSection(
  props: IChainViewProps & { claim: IChainClaim; source: string }
): React.ReactElement {
  const { trans, claim, source, numberOf } = props;
  const outcome = claim.outcome;
  const origin = numberOf(claim.originId);
  const after = afterText(trans, claim, origin);
  const headline = observedHeadline(outcome);
  const whole = observedCause(outcome);
  const lineText =
    outcome.line !== null ? source.split('\n')[outcome.line - 1]?.trim() : null;
  const notes: string[] = [];
  notes.push(
    origin === null
      ? trans.__(
          'A trial ran the cell above, then the code cells below it in order, each as a quick step; this one raised the error there, before anything ran in your kernel.'
        )
      : trans.__(
          'A trial ran cell %1, then the code cells below it in order, each as a quick step; this one raised the error there, before anything ran in your kernel.',
          origin
        )
  );
  if (outcome.reads.length) {
    notes.push(
      trans.__(
        'It reads %1, which the chain changed.',
        outcome.reads.map(n => `\`${n}\``).join(', ')
      )
    );
  }
  const blame = blameText(trans, claim);
  if (blame) {
    notes.push(blame);
  }
  if (!isObserved(outcome)) {
    notes.push(
      outcome.after_cut
        ? trans.__(
            'A loop above it was cut short in the trial: the crash may depend on how many iterations ran.'
          )
        : trans.__(
            'Its own long loops were cut short in the trial: the crash may depend on how many iterations ran.'
          )
    );
  }
  if (claim.applied) {
    notes.push(
      trans.__('That cell has run this text since: the kernel holds it now.')
    );
  }
  return (
    <div className="jp-Crane-cause jp-Crane-claim">
      <h3>{trans.__('Cause')}</h3>
      <p className="jp-Crane-claim-after">
        {trans.__('%1:', after.charAt(0).toLocaleUpperCase() + after.slice(1))}
      </p>
      <p className="jp-Crane-cause-text">
        <Rich text={claimCause(trans, { ...outcome, line: null, reads: [] })} />
      </p>
      {whole.replace(/\s+/g, ' ').trim() !== headline && (
        <details className="jp-Crane-message">
          <summary>{trans.__('The whole message')}</summary>
          <pre>{whole}</pre>
        </details>
      )}
      {outcome.line !== null && (
        <p className="jp-Crane-cause-line">
          {trans.__('Line %1', outcome.line)}
          {lineText ? ': ' : ''}
          {lineText && <code>{lineText}</code>}
        </p>
      )}
      {notes.map((note, i) => (
        <p key={i} className="jp-Crane-claim-note">
          <Rich text={note} />
        </p>
      ))}
      {outcome.elapsed_ms !== null && (
        <p className="jp-Crane-claim-note">
          {trans.__(
            'It ran %1 in the trial.',
            formatDuration(outcome.elapsed_ms)
          )}
        </p>
      )}
      {origin !== null && (
        <button
          className="jp-Button jp-mod-styled jp-Crane-chain-origin"
          onClick={() => props.reveal(claim.originId)}
        >
          {trans.__('Go to cell %1', origin)}
        </button>
      )}
    </div>
  );
}
