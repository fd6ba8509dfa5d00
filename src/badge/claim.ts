/**
 * A claim of the chain, as a cell's badge reads it: how sure it is ("Will crash" only for a crash
 * observed as such), after what ("after your edit of cell 3"), who saw it and what it raised; and the
 * crash below an edited cell that its own badge names. The chain's rules, which make and withdraw
 * the claims, are `below/chain.ts`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { IBelowOutcome } from '../contract/api';
import type { IChainClaim } from '../contract/tokens';
import { observedHeadline } from './trial';

/** A cell's number as the user reads it ("cell 7"): its position in the notebook, from 1. */
export type CellNumbers = (cellId: string) => number | null;

/**
 * A crash the chain saw that depends on no cut loop: no loop above it was cut, and its own cut (a
 * quick step) cannot have caused it (`BelowOutcome.observed` on the server).
 */
export function isObserved(
  outcome: Pick<IBelowOutcome, 'status' | 'after_cut' | 'quick'>
): boolean {
  const own =
    !outcome.quick || !outcome.quick.cut || outcome.quick.crash === 'certain';
  return outcome.status === 'crashed' && !outcome.after_cut && own;
}

/** How sure a claim is: "Will crash" only for a crash observed as such, else "May crash". */
export function claimLevel(
  outcome: Pick<IBelowOutcome, 'status' | 'after_cut' | 'quick'>
): 'will-crash' | 'may-crash' {
  return isObserved(outcome) ? 'will-crash' : 'may-crash';
}

/**
 * The crash below an edited cell that its badge names: first, when the cell's own check found no
 * crash ("Cell 7 below would then crash: KeyError: 'age'"), after a warning of its own otherwise.
 */
export interface IDownstream {
  cellId: string;
  number: number;
  observed: boolean;
  /** What it raised, in one line ("KeyError: 'age'"). */
  cause: string;
}

/** The level a crash below gives the edited cell's badge: as sure as the claim on that cell. */
export function downstreamLevel(
  downstream: Pick<IDownstream, 'observed'>
): 'will-crash' | 'may-crash' {
  return downstream.observed ? 'will-crash' : 'may-crash';
}

// ---- words -----------------------------------------------------------------------------------

/** "after your edit of cell 3", "after cell 3 runs", "after cell 3 runs again". */
export function afterText(
  trans: TranslationBundle,
  claim: IChainClaim,
  number: number | null
): string {
  if (number === null) {
    return claim.origin === 'edited'
      ? trans.__('after your edit of a cell above')
      : trans.__('after a cell above runs');
  }
  switch (claim.origin) {
    case 'edited':
      return trans.__('after your edit of cell %1', number);
    case 'new':
      return trans.__('after cell %1 runs', number);
    case 'same':
      return trans.__('after cell %1 runs again', number);
  }
}

/** Who saw it and how sure: observed, or seen where a cut loop may have caused it; never blamed on
 * the origin when the cell crashes without it too. */
export function claimBasis(
  trans: TranslationBundle,
  claim: IChainClaim
): string {
  const outcome = claim.outcome;
  let basis: string;
  if (isObserved(outcome)) {
    basis = trans.__('observed in a trial run');
  } else if (outcome.after_cut) {
    basis = trans.__(
      'seen in a trial run after a loop above it was cut short; the crash may depend on how many iterations ran'
    );
  } else {
    basis = trans.__(
      'seen in a quick trial, loops cut short; the crash may depend on how many ran'
    );
  }
  if (outcome.without_edit === true) {
    basis = trans.__(
      '%1; %2',
      basis,
      claim.origin === 'edited'
        ? trans.__('it crashes with or without this edit')
        : trans.__('it crashes on the kernel as it is, too')
    );
  }
  return basis;
}

/** "KeyError: 'age' (line 2, reads df)": the exception, its line and the changed names it reads. */
export function claimCause(
  trans: TranslationBundle,
  outcome: IBelowOutcome
): string {
  const head = observedHeadline(outcome);
  const where: string[] = [];
  if (outcome.line !== null) {
    where.push(trans.__('line %1', outcome.line));
  }
  if (outcome.reads.length) {
    where.push(trans.__('reads %1', outcome.reads.join(', ')));
  }
  return where.length ? trans.__('%1 (%2)', head, where.join(', ')) : head;
}

/** A claim, for the badge, the guard, the panel's header and the history. */
export function claimDescription(
  trans: TranslationBundle,
  claim: IChainClaim,
  numberOf?: CellNumbers
): { after: string; basis: string; cause: string } {
  return {
    after: afterText(trans, claim, numberOf?.(claim.originId) ?? null),
    basis: claimBasis(trans, claim),
    cause: claimCause(trans, claim.outcome)
  };
}

/** The edited cell's badge, leading: "Cell 7 below would then crash". */
export function downstreamLead(
  trans: TranslationBundle,
  downstream: IDownstream
): string {
  return downstream.observed
    ? trans.__('Cell %1 below would then crash', downstream.number)
    : trans.__('Cell %1 below may then crash', downstream.number);
}

/** The edited cell's badge after a warning of its own: "and cell 7 below would then crash". */
export function downstreamText(
  trans: TranslationBundle,
  downstream: IDownstream
): string {
  return downstream.observed
    ? trans.__('and cell %1 below would then crash', downstream.number)
    : trans.__('and cell %1 below may then crash', downstream.number);
}
