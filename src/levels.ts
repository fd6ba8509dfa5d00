/**
 * The three levels a user reads, derived from a server answer, and the words for them. Every view
 * (badge, sidebar, guard, history) takes its labels from here, so they are written once.
 *
 * - **will crash**: certain. An observed crash in a trial run, a syntax error, or a deterministic check.
 * - **may crash**: the model's prediction, with its vote split.
 * - **no crash found**: with what was tried (checks, the model, a trial run that finished).
 * After a real run: **confirmed** (it crashed as warned) and **missed** (it crashed, nothing warned).
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { IAnalyzeResult, ITrialOutcome, IVerdict } from './api';
import { runtimeOf } from './probe';
import type { ICheckRecord, IRunOutcome } from './tokens';

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
}

/** The trial outcomes that say nothing about a crash. */
export function isInconclusive(trial: ITrialOutcome | null): boolean {
  return !!trial && trial.status !== 'crashed' && trial.status !== 'finished';
}

/** The level of a verdict: certain sources make a crash certain, the model's make it possible. */
export function levelOf(
  verdict: Pick<IVerdict, 'detection' | 'source'>
): Level {
  if (!verdict.detection) {
    return 'no-crash';
  }
  return verdict.source === 'llm' ? 'may-crash' : 'will-crash';
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
  if (verdict.source === 'trial' && trial?.status === 'crashed') {
    out.cause = observedCause(trial);
    out.line = trial.line;
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
    if (trial?.status === 'finished') {
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

/** `KeyError: 'Agee'`, the way a traceback's last line says it. */
export function observedCause(trial: ITrialOutcome): string {
  const exception = trial.exception ?? 'Exception';
  return trial.message ? `${exception}: ${trial.message}` : exception;
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
 * The first sentence or line of `text`, at most `max` characters.
 */
export function firstSentence(text: string, max = 200): string {
  const flat = text.trim().replace(/\s+/g, ' ');
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
    ? trans.__('%1; %2', basis, trialShortLabel(trans, trial.status))
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
  const list =
    parts.length > 1
      ? trans.__(
          '%1 and %2',
          parts.slice(0, -1).join(', '),
          parts[parts.length - 1]
        )
      : (parts[0] ?? '');
  return trans.__('tried: %1', list);
}

/** A trial run's outcome, in words. */
export function trialStatusLabel(
  trans: TranslationBundle,
  status: ITrialOutcome['status']
): string {
  switch (status) {
    case 'crashed':
      return trans.__('crashed');
    case 'finished':
      return trans.__('ran to its end without error');
    case 'blocked':
      return trans.__('stopped by the sandbox');
    case 'timed_out':
      return trans.__('timed out');
    case 'out_of_memory':
      return trans.__('ran out of memory');
    case 'unavailable':
      return trans.__('not possible here');
  }
}

/** A trial run that could not decide, in a few words for the badge: "trial run timed out". */
export function trialShortLabel(
  trans: TranslationBundle,
  status: ITrialOutcome['status']
): string {
  switch (status) {
    case 'blocked':
      return trans.__('trial run blocked by the sandbox');
    case 'timed_out':
      return trans.__('trial run timed out');
    case 'out_of_memory':
      return trans.__('trial run out of memory');
    case 'unavailable':
      return trans.__('no trial run possible');
    default:
      return trans.__('trial run %1', trialStatusLabel(trans, status));
  }
}

/** Why an inconclusive trial did not decide, and what decided instead. */
export function trialFallbackText(
  trans: TranslationBundle,
  trial: ITrialOutcome,
  basis: Basis
): string {
  const why = trial.reason
    ? trans.__(
        'The trial run %1: %2.',
        trialStatusLabel(trans, trial.status),
        trial.reason.replace(/\.$/, '')
      )
    : trans.__('The trial run %1.', trialStatusLabel(trans, trial.status));
  const by =
    basis === 'llm'
      ? trans.__('The verdict falls back to the checks and the model.')
      : trans.__('The verdict falls back to the deterministic checks.');
  return `${why} ${by}`;
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
  /** Who decided or what was tried: "observed in a trial run", "tried: the deterministic checks". */
  basis: string;
  /** The cause in one sentence ('' when there is nothing to add). */
  cause: string;
  line: number | null;
  /** The verdict no longer matches the cell's text or the kernel. */
  stale: boolean;
}

/**
 * Describe a cell's state from its view (see `cellView`) and last record.
 */
export function describeCell(
  trans: TranslationBundle,
  view: { state: CellState; stale: boolean },
  record: ICheckRecord | undefined
): IDescription {
  const out: IDescription = {
    state: view.state,
    label: stateLabel(trans, view.state),
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
        out.cause = runCause(record.run);
        out.basis =
          view.state === 'confirmed'
            ? trans.__('the run raised the crash')
            : trans.__('the check had found no crash');
      }
      break;
    case 'will-crash':
    case 'may-crash':
    case 'no-crash': {
      const assessment = result ? assess(result) : null;
      if (!assessment) {
        break;
      }
      out.basis = basisLabel(trans, assessment, result?.status === 'no_model');
      out.line = assessment.line;
      if (assessment.level !== 'no-crash') {
        out.cause = assessment.cause;
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
