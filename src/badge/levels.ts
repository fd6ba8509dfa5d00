/**
 * The three levels a user reads, derived from a server answer, and the words for them. Every view
 * (badge, sidebar, guard, history) takes its labels from here, so they are written once.
 *
 * - **will crash**: certain. An observed crash in a trial run, a syntax error, or a deterministic check;
 *   or a crash seen in a *quick* trial (long loops cut to their first iterations) that does not depend
 *   on how many iterations ran: "Will crash (seen in a quick trial, loops cut to their first 2
 *   iterations; the crash does not depend on how many ran)", its own words beside the full trial's.
 * - **may crash**: the model's prediction, with its vote split; or a crash seen in a quick trial that may
 *   depend on how many iterations ran ("May crash (seen in a quick trial ...)").
 * - **no crash found**: with what was tried (checks, the model, a trial run that finished).
 * After a real run: **confirmed** (it crashed as warned) and **missed** (it crashed, nothing warned).
 * A trial's own outcome in words (progress, why it did not decide) is in `trial.ts`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type {
  IAnalyzeResult,
  IQuickTrial,
  ITrialOutcome,
  IVerdict
} from '../contract/api';
import type { CellNumbers } from '../below/chain';
import { claimDescription } from '../below/chain';
import { closeMatches } from '../facts/group';
import { runtimeOf } from '../contract/probe';
import type { ICheckRecord, IRunOutcome } from '../contract/tokens';
import {
  isInconclusive,
  isShortened,
  observedCause,
  observedHeadline,
  trialShortLabel
} from './trial';

/** How sure the verdict is. */
export type Level = 'will-crash' | 'may-crash' | 'no-crash';

/** What decided the verdict, strongest evidence first. */
export type Basis = IVerdict['source'];

/** What a cell shows: its level, a run's outcome, or the state of its check. */
export type CellState =
  'none' | 'checking' | 'busy' | 'error' | Level | IRunOutcome['kind'];

/** What was tried before saying "no crash found". */
export type Tried = 'checks' | 'model' | 'trial';

/** A verdict, read for display. */
export interface IAssessment {
  level: Level;
  basis: Basis;
  /** One sentence: the exception and message of an observed crash, a check's message, the model's
   * first sentence. */
  cause: string;
  /** The cell's line the cause points at, when known. */
  line: number | null;
  /** Votes for a crash and votes in all, when the model voted more than once. */
  votes: [number, number] | null;
  /** no-crash: what was tried. */
  tried: Tried[];
  /** Things the cell reads that the kernel lacks although nothing certain was found (a check may
   * have judged them defined by the cell itself): said, so the verdict never hides them. */
  notes: string[];
  /** A trial run that could not conclude (blocked, timed out, ...): the verdict fell back to the
   * checks and the model. */
  trialFallback: ITrialOutcome | null;
  /** An observed crash's whole message, when `cause` gives only its headline. */
  fullMessage?: string;
}

/** The level of a verdict: certain sources make a crash certain, the model's and a quick trial's crash
 * that may depend on the cut make it possible. */
export function levelOf(
  verdict: Pick<IVerdict, 'detection' | 'source'>
): Level {
  if (!verdict.detection) {
    return 'no-crash';
  }
  return verdict.source === 'llm' || verdict.source === 'quick_may'
    ? 'may-crash'
    : 'will-crash';
}

/** Whether a verdict is a crash seen in a quick trial (certain or not). */
export function isQuick(basis: Basis): boolean {
  return basis === 'quick' || basis === 'quick_may';
}

/**
 * Read a server answer; null when it carries no verdict (the model failed and the checks found
 * nothing certain).
 */
export function assess(result: IAnalyzeResult): IAssessment | null {
  const verdict = result.verdict;
  if (!verdict) {
    return null;
  }
  const level = levelOf(verdict);
  const trial = result.trial ?? null;
  const out: IAssessment = {
    level,
    basis: verdict.source,
    cause: firstSentence(plain(verdict.reasoning)),
    line: null,
    votes: null,
    tried: [],
    notes: [],
    trialFallback: isInconclusive(trial) ? trial : null
  };
  if (
    (verdict.source === 'trial' || isQuick(verdict.source)) &&
    trial?.status === 'crashed'
  ) {
    out.cause = observedHeadline(trial);
    out.line = trial.line;
    const whole = observedCause(trial);
    if (whole.replace(/\s+/g, ' ').trim() !== out.cause) {
      out.fullMessage = whole;
    }
  } else if (
    (verdict.source === 'checks' || verdict.source === 'syntax') &&
    verdict.findings.length
  ) {
    out.cause = firstSentence(plain(verdict.findings[0].message), 300);
    out.line = verdict.findings[0].line;
  }
  if (verdict.source === 'llm' && verdict.votes.length > 1) {
    out.votes = [verdict.votes.filter(Boolean).length, verdict.votes.length];
  }
  if (level === 'no-crash') {
    if (trial?.status === 'finished' && !isShortened(trial)) {
      out.tried.push('trial');
    }
    out.tried.push('checks');
    if (result.status === 'ok' && verdict.source === 'llm') {
      out.tried.push('model');
    }
    out.notes = absentNames(result);
  }
  return out;
}

/** Names, attributes, keys and columns the cell reads that the kernel does not have. */
export function absentNames(result: Pick<IAnalyzeResult, 'runtime'>): string[] {
  const runtime = runtimeOf(result);
  if (!runtime) {
    return [];
  }
  const out = [...(runtime.undefined ?? [])];
  for (const entry of runtime.objects ?? []) {
    if (entry.missing) {
      out.push(entry.expr);
    }
    for (const child of entry.children ?? []) {
      if (child.missing) {
        out.push(child.expr);
      }
    }
  }
  return [...new Set(out)];
}

/** Text without Markdown code marks (models like backticks; the badge shows plain text). */
export function plain(text: string): string {
  return text.replace(/`([^`]*)`/g, '$1');
}

/**
 * The first sentence or line of `text`, at most `max` characters. A sentence ends at a blank line too:
 * libraries' messages put their first line alone, then a block (Keras' "Arguments received by …").
 */
export function firstSentence(text: string, max = 200): string {
  const paragraph = text.trim().split(/\n\s*\n/)[0];
  const flat = paragraph.replace(/\s+/g, ' ');
  const sentence = flat.match(/^.*?[.!?](?=\s|$)/);
  const first = sentence ? sentence[0] : flat;
  return first.length > max
    ? first.slice(0, max - 1).replace(/\s+$/, '') + '…'
    : first;
}

// ---- words ---------------------------------------------------------------------------------------

/** The name of a state, as badge, sidebar, guard and history print it. */
export function stateLabel(trans: TranslationBundle, state: CellState): string {
  switch (state) {
    case 'will-crash':
      return trans.__('Will crash');
    case 'may-crash':
      return trans.__('May crash');
    case 'no-crash':
      return trans.__('No crash found');
    case 'confirmed':
      return trans.__('Crashed as warned');
    case 'missed':
      return trans.__('Crashed without a warning');
    case 'passed':
      return trans.__('Ran without an error');
    case 'checking':
      return trans.__('Checking for crashes…');
    case 'busy':
      return trans.__('Kernel busy: will check when it is idle');
    case 'error':
      return trans.__('Check failed');
    case 'none':
      return trans.__('Not checked yet');
  }
}

/**
 * Who decided, in words: "observed in a trial run", "the model's prediction, 2 of 3 votes", ...; a
 * trial run that was asked for and could not decide is named after it ("trial run blocked by the
 * sandbox"), so the badge never hides it.
 */
export function basisLabel(
  trans: TranslationBundle,
  assessment: IAssessment,
  noModel = false
): string {
  let basis = deciderLabel(trans, assessment);
  if (noModel) {
    basis = trans.__('%1 (no model configured)', basis);
  }
  const trial = assessment.trialFallback;
  return trial
    ? trans.__('%1; %2', basis, trialShortLabel(trans, trial))
    : basis;
}

/** Who decided, without a word about an inconclusive trial. */
function deciderLabel(
  trans: TranslationBundle,
  assessment: IAssessment
): string {
  if (assessment.level === 'no-crash') {
    return triedLabel(trans, assessment.tried);
  }
  switch (assessment.basis) {
    case 'trial':
      return trans.__('observed in a trial run');
    case 'syntax':
      return trans.__('certain: syntax error');
    case 'checks':
      return trans.__('certain: deterministic check');
    case 'quick':
    case 'quick_may':
      return quickBasis(trans, assessment.level, null);
    case 'llm':
      return assessment.votes
        ? trans.__(
            "the model's prediction, %1 of %2 votes",
            assessment.votes[0],
            assessment.votes[1]
          )
        : trans.__("the model's prediction");
  }
}

/** "a, b and c": `items` joined with commas, the last two by `pair` (which words the conjunction). */
function joinList(
  items: string[],
  pair: (head: string, last: string) => string
): string {
  return items.length > 1
    ? pair(items.slice(0, -1).join(', '), items[items.length - 1])
    : (items[0] ?? '');
}

/** "tried: a trial run, the checks and the model". */
export function triedLabel(trans: TranslationBundle, tried: Tried[]): string {
  const parts = tried.map(t => {
    switch (t) {
      case 'trial':
        return trans.__('a trial run (it ran without error)');
      case 'checks':
        return trans.__('the deterministic checks');
      case 'model':
        return trans.__('the model');
    }
  });
  const list = joinList(parts, (head, last) =>
    trans.__('%1 and %2', head, last)
  );
  return trans.__('tried: %1', list);
}

/** Kinds of a quick trial's entries that are long library calls run on a sample of their rows
 * (kernel/trial/libcalls.py; policy.SAMPLED_CALLS). */
const SAMPLED_CALLS = new Set(['rows', 'fit', 'minimize']);

/** "seen in a quick trial, loops cut to their first 2 iterations; the crash does not depend on how many
 * ran": who decided a crash seen in a quick trial, with what the cut means for it, in one clause (a
 * qualifier alone, "it does not depend on ...", would not say what "it" is). `k` null: not known.
 * `quick` says what was cut: loops, long library calls run on a sample of their rows, or both. */
export function quickBasis(
  trans: TranslationBundle,
  level: Level,
  k: number | null,
  quick?: IQuickTrial | null
): string {
  const kinds = (quick?.loops ?? [])
    .filter(loop => loop.cut)
    .map(loop => loop.kind);
  const sampled = kinds.some(kind => SAMPLED_CALLS.has(kind));
  const loops = kinds.some(kind => !SAMPLED_CALLS.has(kind));
  const seen =
    sampled && !loops
      ? trans.__(
          'seen in a quick trial, long library calls run on a sample of their rows'
        )
      : sampled
        ? trans.__(
            'seen in a quick trial, loops cut short and long library calls run on a sample of their rows'
          )
        : k === null
          ? trans.__('seen in a quick trial, loops cut short')
          : k === 1
            ? trans.__(
                'seen in a quick trial, loops cut to their first iteration'
              )
            : trans.__(
                'seen in a quick trial, loops cut to their first %1 iterations',
                k
              );
  return level === 'will-crash'
    ? trans.__('%1; the crash does not depend on how many ran', seen)
    : trans.__('%1; the crash may depend on how many ran', seen);
}

/**
 * The cause of an assessment as the user reads it: with "Did you mean 'Age'?" when it names a key,
 * column, attribute or file the kernel lacks and the probe found close matches.
 */
export function causeText(
  trans: TranslationBundle,
  assessment: Pick<IAssessment, 'cause'>,
  result: IAnalyzeResult | undefined
): string {
  const cause = assessment.cause;
  const close = closeMatches(result, cause);
  if (!close.length || /did you mean/i.test(cause)) {
    return cause;
  }
  const options = joinList(
    close.map(c => `'${c}'`),
    (head, last) => trans.__('%1 or %2', head, last)
  );
  const sentence = /[.!?…]$/.test(cause) ? cause : `${cause}.`;
  return trans.__('%1 Did you mean %2?', sentence, options);
}

/** A run's exception, as the traceback's last line says it. */
export function runCause(outcome: IRunOutcome): string {
  return outcome.evalue ? `${outcome.ename}: ${outcome.evalue}` : outcome.ename;
}

/** What a cell shows, in words: the same for the badge, the guard and the history. */
export interface IDescription {
  state: CellState;
  /** "Will crash", "May crash", ... */
  label: string;
  /** A claim of another cell's chain: after what ("after your edit of cell 3"); '' otherwise. */
  after: string;
  /** Who decided or what was tried: "observed in a trial run", "tried: the deterministic checks". */
  basis: string;
  /** The cause in one sentence ('' when there is nothing to add). */
  cause: string;
  line: number | null;
  /** The verdict no longer matches the cell's text or the kernel. */
  stale: boolean;
}

/**
 * Describe a cell's state from its view (see `cellView`) and last record; `numberOf` numbers the
 * cells a chain's claim names.
 */
export function describeCell(
  trans: TranslationBundle,
  view: { state: CellState; stale: boolean },
  record: ICheckRecord | undefined,
  numberOf?: CellNumbers
): IDescription {
  const out: IDescription = {
    state: view.state,
    label: stateLabel(trans, view.state),
    after: '',
    basis: '',
    cause: '',
    line: null,
    stale: view.stale
  };
  const result = record?.result;
  switch (view.state) {
    case 'confirmed':
    case 'missed':
      if (record?.run) {
        out.cause = firstSentence(runCause(record.run));
        // "Crashed as warned" needs no reason; a missed crash says what the check had said.
        out.basis =
          view.state === 'missed'
            ? trans.__('the check had found no crash')
            : '';
      }
      break;
    case 'will-crash':
    case 'may-crash':
    case 'no-crash': {
      if (record?.chain) {
        Object.assign(out, claimDescription(trans, record.chain, numberOf));
        break;
      }
      const assessment = result ? assess(result) : null;
      if (!assessment) {
        break;
      }
      out.basis =
        isQuick(assessment.basis) && assessment.level !== 'no-crash'
          ? quickBasis(
              trans,
              assessment.level,
              result?.trial?.quick?.k ?? null,
              result?.trial?.quick
            )
          : basisLabel(trans, assessment, result?.status === 'no_model');
      out.line = assessment.line;
      if (assessment.level !== 'no-crash') {
        out.cause = causeText(trans, assessment, result);
      } else if (assessment.notes.length) {
        out.cause = trans.__(
          'Note: the kernel has no %1 (the cell may define it).',
          assessment.notes.join(', ')
        );
      }
      break;
    }
    case 'error': {
      out.cause =
        record?.error ??
        result?.error?.message ??
        trans.__('the server gave no verdict');
      break;
    }
    default:
      break;
  }
  return out;
}
