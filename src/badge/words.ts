/**
 * The words of the levels (`levels.ts`): a state's name, who decided or what was tried, the cause as
 * the user reads it, and a cell's whole description, the same for the badge, the guard and the
 * history.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { IAnalyzeResult, IQuickTrial } from '../contract/api';
import type { ICheckRecord, IRunOutcome } from '../contract/tokens';
import { closeMatches } from '../facts/naming';
import type { CellNumbers } from './claim';
import { claimDescription } from './claim';
import type { CellState, IAssessment, Level, Tried } from './levels';
import { assess, firstSentence, isQuick } from './levels';
import { trialShortLabel } from './trial';

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

/** Milliseconds in words: "35 ms", "2.4 s", "3 min 5 s", "1 h 2 min". */
export function formatDuration(ms: number): string {
  if (ms <= 0) {
    return '0 s';
  }
  if (ms < 1) {
    return 'under 1 ms';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  const s = ms / 1000;
  if (s < 60) {
    return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  }
  const minutes = Math.floor(s / 60);
  if (minutes < 60) {
    return `${minutes} min ${Math.round(s - minutes * 60)} s`;
  }
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
