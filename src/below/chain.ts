/**
 * The chain: what an edit breaks further down, before anything runs. When the full check
 * of a cell runs a trial, its request carries the code cells below it (`below`); once the trial ran
 * the cell to its end, the same sandboxed trial goes on with them in notebook order, each a quick
 * step, within the server's chain budget (crane_jupyterlab/server/chain.py). A cell below that
 * crashes there gets a badge of its own: a *claim*, a check record of that cell carrying what the
 * chain met (`ICheckRecord.chain`) in place of a server answer of its own, so that the guard, the
 * runs ("Crashed as warned") and the history treat it as any warning.
 *
 * This module holds the rules, as pure functions (which cells to send, which claims went stale, what
 * an answer or a run does to the claims standing); what a claim says and how sure it is are
 * `badge/claim.ts`, `layer.ts` applies the rules to one notebook, and `view.tsx` shows them. A claim never stays on a cell whose
 * text changed; it goes when the cell it comes from is edited again (it said what that text does),
 * and when that cell's real run crashed or ran other text; when that cell runs its text without an
 * error, the claim is checked again on the kernel as it is now. A check of the claimed cell alone,
 * on a kernel that does not hold the edit yet, never clears it (see `verdict.overrules`).
 */
import type { IBelowCell, IBelowOutcome, IConfigReply } from '../contract/api';
import type { IChainClaim, ICheckRecord } from '../contract/tokens';
import type { CellNumbers, IDownstream } from '../badge/claim';
import { isObserved } from '../badge/claim';
import { observedHeadline } from '../badge/trial';

/** The most code cells below the target one request may carry, and their text in all (api.py). */
export const MAX_BELOW = 200;
export const MAX_BELOW_CHARS = 1_000_000;
/** The longest cell id the server takes (api.py); a longer one is sent as null (outcomes keep order). */
const MAX_ID = 200;

/** A notebook cell as the chain reads it. */
export interface ICellText {
  id: string;
  type: string;
  source: string;
}

/** A cell sent in `below`: its id here, whatever was sent, and its text then. */
export interface ISentCell {
  cellId: string;
  source: string;
}

/** Where a cell stands now: its position in the notebook (0-based) and its text. */
export interface ICellPlace {
  index: number;
  source: string;
}

/**
 * The code cells after `index` to send for the chain, in notebook order: empty ones left out (they
 * change nothing), at most `MAX_BELOW` and `MAX_BELOW_CHARS` of text in all. The list stops at the
 * first cell that does not fit: a cell further down must never run without the cells before it.
 */
export function belowCells(
  cells: readonly ICellText[],
  index: number
): ISentCell[] {
  const out: ISentCell[] = [];
  let chars = 0;
  for (const cell of cells.slice(index + 1)) {
    if (cell.type !== 'code' || !cell.source.trim()) {
      continue;
    }
    if (
      out.length >= MAX_BELOW ||
      chars + cell.source.length > MAX_BELOW_CHARS
    ) {
      break;
    }
    chars += cell.source.length;
    out.push({ cellId: cell.id, source: cell.source });
  }
  return out;
}

/** The request's `below`. */
export function belowRequest(sent: readonly ISentCell[]): IBelowCell[] {
  return sent.map(c => ({
    cell_id: c.cellId.length <= MAX_ID ? c.cellId : null,
    source: c.source
  }));
}

/** What a full check adds to its request for the chain, and what it sent. */
export interface IChainRequest {
  fields: { below: IBelowCell[]; previous_source?: string };
  sent: ISentCell[];
}

/**
 * The fields a full check of `cellId` adds for the chain, or null when no code cell below it holds
 * anything: the code cells below it, and the text the kernel last ran of it (`previous`; the names
 * it no longer binds are hidden state below).
 */
export function chainRequest(
  cells: readonly ICellText[],
  cellId: string,
  previous: string | undefined
): IChainRequest | null {
  const index = cells.findIndex(c => c.id === cellId);
  const sent = index >= 0 ? belowCells(cells, index) : [];
  if (!sent.length) {
    return null;
  }
  return {
    fields: {
      below: belowRequest(sent),
      ...(previous !== undefined ? { previous_source: previous } : {})
    },
    sent
  };
}

/**
 * Whether a full check sends the cells below: the chain is on, the server runs trials, and this
 * check runs one (`planned`: the request's `trial`, absent when the server's mode decides).
 */
export function wantsChain(
  enabled: boolean,
  config: IConfigReply | null,
  planned: boolean | null | undefined
): boolean {
  if (!enabled || !config?.trial_available || config.trial === 'off') {
    return false;
  }
  return planned ?? config.trial === 'auto';
}

/** The checked text against the text the kernel last ran of that cell (undefined: never, here). */
export function originOf(
  lastRun: string | undefined,
  source: string
): IChainClaim['origin'] {
  if (lastRun === undefined) {
    return 'new';
  }
  return lastRun === source ? 'same' : 'edited';
}

/** Whether the claim lays the crash at the origin's door: not when the cell crashes without it too. */
export function blamesOrigin(claim: IChainClaim): boolean {
  return claim.outcome.without_edit !== true;
}

/** The claim record of a cell below: a warning of that cell, made by another cell's check. */
export function claimRecord(
  cell: ISentCell,
  epoch: number,
  claim: IChainClaim
): ICheckRecord {
  return {
    cellId: cell.cellId,
    source: cell.source,
    epoch,
    phase: 'done',
    startedAt: Date.now(),
    sent: {},
    tier: 'full',
    chain: claim
  };
}

/** Claims standing on their cells (a run's outcome on a claim is the run's, no longer a claim). */
function standingClaims(records: Iterable<ICheckRecord>): ICheckRecord[] {
  return [...records].filter(r => r.chain && !r.run);
}

/** What a chain's answer does to one cell below. */
export type ChainAction =
  /** It crashed there: a claim, shown unless a stronger record stands (`CellChecks.finish`). */
  | { kind: 'claim'; cell: ISentCell; claim: IChainClaim }
  /** The chain ran it to its end, whole, on the state its claim was about: the claim goes. */
  | { kind: 'withdraw'; cellId: string }
  /** The same chain could neither confirm nor clear its earlier claim (not reached, shortened, ...). */
  | { kind: 'unresolved'; cellId: string };

/** A chain's answer: who asked, in which kernel state, what was sent and what came back. */
export interface IChainAnswer {
  originId: string;
  originSource: string;
  origin: IChainClaim['origin'];
  /** The kernel epoch when the request started. */
  epoch: number;
  sent: readonly ISentCell[];
  below: readonly IBelowOutcome[];
}

/**
 * What an answer does to the claims. Nothing when the origin's text changed since (its outcomes are
 * of a text it no longer has), and nothing for a cell whose text changed or that moved above the
 * origin. A crash makes a claim (a newer warning); a cell the chain ran to its end at the kernel's
 * current state clears a claim about that very state (the same origin and text, or one whose edit
 * the kernel holds now); the same chain failing to reach or decide a cell leaves its claim marked
 * unresolved; the origin's claims on cells it no longer sends go.
 */
export function mergeChain(
  answer: IChainAnswer,
  now: {
    epoch: number;
    cells: ReadonlyMap<string, ICellPlace>;
    records: Iterable<ICheckRecord>;
  }
): ChainAction[] {
  const origin = now.cells.get(answer.originId);
  if (!origin || origin.source !== answer.originSource) {
    return [];
  }
  const claims = new Map(standingClaims(now.records).map(r => [r.cellId, r]));
  const out: ChainAction[] = [];
  const covered = new Set<string>();
  answer.below.forEach((outcome, i) => {
    const sent = answer.sent[i];
    const cell = sent ? now.cells.get(sent.cellId) : undefined;
    if (!sent || !cell || cell.source !== sent.source) {
      return;
    }
    if (cell.index <= origin.index) {
      return;
    }
    covered.add(sent.cellId);
    if (outcome.status === 'crashed') {
      const claim: IChainClaim = {
        originId: answer.originId,
        originSource: answer.originSource,
        origin: answer.origin,
        outcome
      };
      out.push({ kind: 'claim', cell: sent, claim });
      return;
    }
    const standing = claims.get(sent.cellId);
    if (!standing?.chain || standing.source !== sent.source) {
      return;
    }
    const same =
      standing.chain.originId === answer.originId &&
      standing.chain.originSource === answer.originSource;
    if (!same && !standing.chain.applied) {
      return; // this chain ran without that claim's edit: it says nothing of it
    }
    if (outcome.status === 'finished' && answer.epoch === now.epoch) {
      out.push({ kind: 'withdraw', cellId: sent.cellId });
    } else if (same) {
      out.push({ kind: 'unresolved', cellId: sent.cellId });
    }
  });
  for (const r of claims.values()) {
    const chain = r.chain!;
    if (
      chain.originId === answer.originId &&
      chain.originSource === answer.originSource &&
      !chain.applied &&
      !covered.has(r.cellId)
    ) {
      out.push({ kind: 'withdraw', cellId: r.cellId });
    }
  }
  return out;
}

/**
 * The claims to withdraw now: on a cell whose text changed (whatever it holds, a confirmed crash too:
 * no badge stays on a changed cell), and, while the kernel does not hold the origin's edit, those
 * whose origin was deleted, edited again, or is no longer above the cell.
 */
export function staleClaims(
  records: Iterable<ICheckRecord>,
  cells: ReadonlyMap<string, ICellPlace>
): string[] {
  const out: string[] = [];
  for (const r of records) {
    const cell = r.chain ? cells.get(r.cellId) : undefined;
    if (!r.chain || !cell) {
      continue; // a deleted cell is forgotten by the watcher
    }
    if (cell.source !== r.source) {
      out.push(r.cellId);
      continue;
    }
    if (r.run || r.chain.applied) {
      continue;
    }
    const origin = cells.get(r.chain.originId);
    if (
      !origin ||
      origin.source !== r.chain.originSource ||
      origin.index >= cell.index
    ) {
      out.push(r.cellId);
    }
  }
  return out;
}

/** What a real run of a cell does to the claims it made. */
export interface IRunActions {
  /** The run crashed, or ran another text: the premise of these claims did not happen. */
  withdraw: string[];
  /** It ran the claims' text without an error: the kernel holds the edit now; check them again. */
  recheck: string[];
}

export function afterOriginRun(
  records: Iterable<ICheckRecord>,
  originId: string,
  code: string,
  crashed: boolean
): IRunActions {
  const out: IRunActions = { withdraw: [], recheck: [] };
  for (const r of standingClaims(records)) {
    const chain = r.chain!;
    if (chain.originId !== originId || chain.applied) {
      continue;
    }
    if (crashed || code !== chain.originSource) {
      out.withdraw.push(r.cellId);
    } else {
      out.recheck.push(r.cellId);
    }
  }
  return out;
}

/**
 * The first cell below (by number) that the chain of `originId`'s current text claims will or may
 * crash because of it; never one that crashes without it.
 */
export function downstreamOf(
  records: Iterable<ICheckRecord>,
  originId: string,
  originSource: string,
  numberOf: CellNumbers
): IDownstream | null {
  let best: IDownstream | null = null;
  for (const r of standingClaims(records)) {
    const chain = r.chain!;
    const number = numberOf(r.cellId);
    if (
      chain.originId !== originId ||
      chain.originSource !== originSource ||
      !blamesOrigin(chain) ||
      number === null
    ) {
      continue;
    }
    if (!best || number < best.number) {
      best = {
        cellId: r.cellId,
        number,
        observed: isObserved(chain.outcome),
        cause: observedHeadline(chain.outcome)
      };
    }
  }
  return best;
}
