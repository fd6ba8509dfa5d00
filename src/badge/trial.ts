/**
 * A trial run's outcome, in words: an observed crash in one line, what a shortened (quick) or
 * timed-out run got through, why a run that could not decide did not; and which outcomes decide
 * nothing. Pure functions of the server's `ITrialOutcome`, for the levels (`levels.ts`) and every
 * view of a trial, so a trial is said one way wherever it is shown.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ITrialLoop, ITrialOutcome, IVerdict } from '../contract/api';

/** Whether a trial cut a loop short (a quick trial): what ran is not the whole cell. */
export function isShortened(trial: ITrialOutcome | null): boolean {
  return !!trial?.quick?.cut;
}

/** The trial outcomes that say nothing about a crash; a shortened run that finished is one of them
 * (only its first iterations ran), and so is its crash when that depends on the cut. */
export function isInconclusive(trial: ITrialOutcome | null): boolean {
  if (!trial) {
    return false;
  }
  if (isShortened(trial)) {
    return trial.status !== 'crashed' || trial.quick?.crash === 'shortened';
  }
  return trial.status !== 'crashed' && trial.status !== 'finished';
}

/** `KeyError: 'Agee'`, the way a traceback's last line says it. */
export function observedCause(
  trial: Pick<ITrialOutcome, 'exception' | 'message'>
): string {
  const exception = trial.exception ?? 'Exception';
  return trial.message ? `${exception}: ${trial.message}` : exception;
}

/**
 * An observed crash in one line, as a badge shows it: the exception and its message's first paragraph,
 * past a wrapper paragraph that only says where it was raised (Keras: "Exception encountered when
 * calling Sequential.call()."), at most `max` characters.
 */
export function observedHeadline(
  trial: Pick<ITrialOutcome, 'exception' | 'message'>,
  max = 300
): string {
  const exception = trial.exception ?? 'Exception';
  const paragraphs = (trial.message ?? '')
    .split(/\n\s*\n/)
    .map(p => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const wrapper = /^Exception encountered when calling [\w.]+(\(\))?\.?$/;
  const head =
    paragraphs.length > 1 && wrapper.test(paragraphs[0])
      ? paragraphs[1]
      : (paragraphs[0] ?? '');
  const text = head ? `${exception}: ${head}` : exception;
  return text.length > max
    ? text.slice(0, max - 1).replace(/\s+$/, '') + '…'
    : text;
}

/** What a shortened run or a timed-out one got through: "the first 2 iterations of its loops ran
 * without an error", "ran 5 s: 3 of 12 epochs without an error (line 7)". '' when nothing is known. */
export function progressText(
  trans: TranslationBundle,
  trial: ITrialOutcome
): string {
  if (isShortened(trial) && trial.status === 'finished') {
    return trans.__(
      'the first %1 iterations of its long loops ran without an error (a quick trial: the rest did not run)',
      trial.quick?.k ?? 0
    );
  }
  if (isShortened(trial) && trial.quick?.crash === 'shortened') {
    return trans.__(
      'in a quick trial (loops cut short) the cell raised %1 on what the shortened loops built, which a shortened run does by itself',
      observedCause(trial)
    );
  }
  const progress = trial.progress;
  const outer = progress?.loops.find(l => l.kind !== 'comprehension');
  if (trial.status !== 'timed_out' || !progress || !outer) {
    return '';
  }
  const seconds = Math.round((progress.elapsed_ms ?? 0) / 1000);
  const done =
    outer.total !== null
      ? trans.__('%1 of %2 iterations', outer.iterations, outer.total)
      : trans.__('%1 iterations', outer.iterations);
  const line =
    progress.line !== null ? trans.__(' (line %1)', progress.line) : '';
  return trans.__(
    'ran %1 s: %2 of the loop at line %3 without an error%4',
    seconds,
    done,
    outer.line,
    line
  );
}

/** The loops of a trial, in words: "line 3: 2 of 100 iterations (cut); line 5: 6 iterations". */
export function loopsText(
  trans: TranslationBundle,
  loops: ITrialLoop[]
): string {
  return loops
    .map(l => {
      const count =
        l.total !== null && l.runs === 1
          ? trans.__('%1 of %2 iterations', l.iterations, l.total)
          : trans.__('%1 iterations', l.iterations);
      const cut = l.cut ? ' ' + trans.__('(cut)') : '';
      return trans.__('line %1: %2', l.line, count) + cut;
    })
    .join('; ');
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
  trial: ITrialOutcome
): string {
  if (isShortened(trial)) {
    // A run with loops cut short decides nothing: say so, never "finished".
    return trial.status === 'crashed'
      ? trans.__('a quick trial crashed only because its loops were cut')
      : trans.__('a quick trial ran its first iterations without an error');
  }
  const status = trial.status;
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
  basis: IVerdict['source']
): string {
  const progress = progressText(trans, trial);
  const why =
    progress && isShortened(trial)
      ? trans.__('The trial run: %1.', progress)
      : trial.reason
        ? trans.__(
            'The trial run %1: %2.',
            trialStatusLabel(trans, trial.status),
            trial.reason.replace(/\.$/, '')
          )
        : trans.__('The trial run %1.', trialStatusLabel(trans, trial.status));
  const far =
    progress && !isShortened(trial) ? ` ${trans.__('It %1.', progress)}` : '';
  const by =
    basis === 'llm'
      ? trans.__('The verdict falls back to the checks and the model.')
      : trans.__('The verdict falls back to the deterministic checks.');
  return `${why}${far} ${by}`;
}
