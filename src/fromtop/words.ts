/**
 * From the top: will this notebook run in a fresh kernel? The notebook's code cells, in order, run in
 * a fresh sandboxed worker of the kernel's Python (`POST /crane/notebook`), none of the kernel's
 * state. This module holds the words: a run's summary and progress, each cell's outcome, the badge
 * of the first crash, why a run could not start. What is sent is `request.ts`, the run's lifecycle
 * `run.ts`, its panel section and toolbar button `view.tsx`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { INotebookCell, INotebookRun } from '../contract/api';
import { CraneRequestError } from '../contract/request';
import type { ISentCell } from './request';

/** Whether a cell's outcome is a crash the run claims (observed, not after a cut loop above). */
export function isClaimedCrash(cell: INotebookCell): boolean {
  return cell.status === 'crashed' && !cell.after_cut;
}

/**
 * `NameError: name 'df_clean' is not defined`: an exception as a traceback's last line says it,
 * its message from its first non-empty paragraph (a library's wrapper paragraph that only says
 * where it was raised ends with "call()." and is skipped), at most `max` characters.
 */
export function crashCause(
  cell: Pick<INotebookCell, 'exception' | 'message'>,
  max = 300
): string {
  const exception = cell.exception ?? 'Exception';
  const paragraphs = (cell.message ?? '')
    .split(/\n\s*\n/)
    .map(p => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const head =
    paragraphs.find(p => !/ when calling \S+\(\)\.$/.test(p)) ??
    paragraphs[0] ??
    '';
  const text = head ? `${exception}: ${head}` : exception;
  return text.length > max
    ? text.slice(0, max - 1).replace(/\s+$/, '') + '…'
    : text;
}

/** The hidden state a crash reveals, in the user's words. */
export function hiddenText(trans: TranslationBundle): string {
  return trans.__('your kernel has it from a cell that no longer defines it');
}

/** One cell's outcome in words: a short status and what it adds (the cause, what was cut, why). */
export interface ICellWords {
  status: string;
  detail: string;
}

/** A cell's outcome in a run from the top, in words. */
export function cellWords(
  trans: TranslationBundle,
  cell: INotebookCell,
  kernelHasIt = true
): ICellWords {
  const reason = (cell.reason ?? '').replace(/\.$/, '');
  switch (cell.status) {
    case 'ran':
      return { status: trans.__('ran'), detail: '' };
    case 'shortened':
      return {
        status: trans.__('shortened'),
        detail: trans.__(
          'long loops or library calls were cut to their first iterations or a sample; it ran without an error, and what a full run meets later in them is not claimed'
        )
      };
    case 'crashed': {
      let cause = crashCause(cell);
      if (cell.line !== null) {
        cause = trans.__('%1 (line %2)', cause, cell.line);
      }
      if (cell.after_cut) {
        return {
          status: trans.__('crashed after a cut'),
          detail: trans.__(
            '%1; a loop above was cut short, so this may come from the cut: not claimed',
            cause
          )
        };
      }
      return {
        status: trans.__('crashed'),
        detail:
          cell.hidden && kernelHasIt
            ? trans.__('%1; %2', cause, hiddenText(trans))
            : cause
      };
    }
    case 'blocked':
      return { status: trans.__('blocked by the sandbox'), detail: reason };
    case 'unavailable':
      return { status: trans.__('could not run'), detail: reason };
    case 'timed_out':
      return { status: trans.__('timed out'), detail: reason };
    case 'out_of_memory':
      return { status: trans.__('ran out of memory'), detail: reason };
    case 'not_reached':
      return { status: trans.__('not reached'), detail: '' };
  }
}

/** A cell's number as the user reads it (its position in the notebook, from 1), or null. */
export type CellNumbers = (cellId: string) => number | null;

/** "cell 4", or "code cell 3" (its place among the code cells) when the notebook no longer has it. */
function cellName(
  trans: TranslationBundle,
  cell: INotebookCell,
  index: number,
  numberOf: CellNumbers
): string {
  const number = cell.cell_id ? numberOf(cell.cell_id) : null;
  return number !== null
    ? trans.__('cell %1', number)
    : trans.__('code cell %1', index + 1);
}

/** What the run found, in one sentence (an ended run). */
export function summaryText(
  trans: TranslationBundle,
  run: INotebookRun,
  numberOf: CellNumbers,
  kernelHasIt = true
): string {
  if (run.state === 'error') {
    return trans.__(
      'The run from the top failed: %1',
      run.message ?? trans.__('no reason given')
    );
  }
  if (run.state === 'cancelled') {
    return trans.__(
      'Cancelled after %1 of %2 code cells.',
      run.done,
      run.total
    );
  }
  const crash = run.first_crash;
  if (crash && run.first_crash_index !== null) {
    const { detail } = cellWords(trans, crash, kernelHasIt);
    return trans.__(
      'Fails from the top at %1: %2',
      cellName(trans, crash, run.first_crash_index, numberOf),
      detail
    );
  }
  const stop = run.cells.findIndex(
    c => c.status !== 'ran' && c.status !== 'shortened'
  );
  if (stop >= 0 && run.cells[stop].status !== 'not_reached') {
    const cell = run.cells[stop];
    const { status, detail } = cellWords(trans, cell);
    const unchecked = run.cells.filter(
      c => c.status !== 'ran' && c.status !== 'shortened'
    );
    if (!unchecked.some(c => c.status === 'not_reached')) {
      // The run went on past the cells it could not run, to the end.
      return trans._n(
        'Ran to the end without a crash it could claim; %1 code cell could not be checked here, %2 (%3).',
        'Ran to the end without a crash it could claim; %1 code cells could not be checked here, the first %2 (%3).',
        unchecked.length,
        cellName(trans, cell, stop, numberOf),
        detail ? trans.__('%1: %2', status, detail) : status
      );
    }
    return trans.__(
      'Stopped at %1 (%2); the cells after it were not checked.',
      cellName(trans, cell, stop, numberOf),
      detail ? trans.__('%1: %2', status, detail) : status
    );
  }
  if (stop >= 0) {
    return trans.__(
      'The run ended after %1 of %2 code cells, without a crash.',
      stop,
      run.cells.length
    );
  }
  const shortened = run.cells.filter(c => c.status === 'shortened').length;
  return shortened
    ? trans.__(
        'Runs from the top: all %1 code cells ran without an error, %2 of them shortened (long loops or library calls cut).',
        run.cells.length,
        shortened
      )
    : trans.__(
        'Runs from the top: all %1 code cells ran without an error.',
        run.cells.length
      );
}

/** Where a running run is: "Cell 5 running (3 of 12 code cells done)". */
export function progressText(
  trans: TranslationBundle,
  run: INotebookRun,
  sent: readonly ISentCell[],
  numberOf: CellNumbers
): string {
  const running = run.running;
  if (running === null || running < 0 || running >= sent.length) {
    return run.done === 0
      ? trans.__('Starting a fresh worker of the kernel’s Python…')
      : trans.__('%1 of %2 code cells done', run.done, run.total);
  }
  const number = numberOf(sent[running].cellId);
  return number !== null
    ? trans.__(
        'Cell %1 running (%2 of %3 code cells done)',
        number,
        run.done,
        run.total
      )
    : trans.__(
        'Code cell %1 running (%2 of %3 done)',
        running + 1,
        run.done,
        run.total
      );
}

/** The badge of the first crash: its words. */
export interface IBadgeWords {
  label: string;
  cause: string;
}

/** "Fails from the top": "NameError: name 'df_clean' is not defined (line 1); your kernel has it ...". */
export function badgeWords(
  trans: TranslationBundle,
  crash: INotebookCell,
  kernelHasIt = true
): IBadgeWords {
  return {
    label: trans.__('Fails from the top'),
    cause: cellWords(trans, crash, kernelHasIt).detail
  };
}

/** Why a run could no longer be followed: the server forgot it (a 404), or reading it failed. */
export function followError(trans: TranslationBundle, reason: unknown): string {
  if (reason instanceof CraneRequestError && reason.status === 404) {
    return trans.__(
      'the server no longer knows this run (it restarted, or the run is too old)'
    );
  }
  return reason instanceof Error ? reason.message : String(reason);
}

/** Why the server did not take a run, in words. */
export function startError(trans: TranslationBundle, reason: unknown): string {
  if (reason instanceof CraneRequestError) {
    if (reason.status === 409) {
      return trans.__(
        'A run from the top is already in progress for this kernel (from another notebook or tab): %1',
        reason.message
      );
    }
    if (reason.status === 404) {
      return trans.__(
        'The server does not know this notebook’s kernel: %1',
        reason.message
      );
    }
    return trans.__('The run from the top could not start: %1', reason.message);
  }
  return trans.__(
    'The run from the top could not start: %1',
    reason instanceof Error ? reason.message : String(reason)
  );
}
