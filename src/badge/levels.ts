/**
 * The three levels a user reads, derived from a server answer. Every view (badge, sidebar, guard,
 * history) reads a verdict through `assess`, and takes its labels from `words.ts`, so they are
 * written once.
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
import type { IAnalyzeResult, ITrialOutcome, IVerdict } from '../contract/api';
import { runtimeOf } from '../contract/probe';
import type { IRunOutcome } from '../contract/tokens';
import {
  isInconclusive,
  isShortened,
  observedCause,
  observedHeadline
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
