/**
 * What a run from the top sends and whether its result still holds: the request (the notebook's code
 * cells in order, with the ids the model has), whether the code cells are still those it was sent
 * (`sameCells`), and whether a run has ended. Pure functions of the notebook's text, unit-tested
 * without a browser.
 */
import type { Notebook } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { INotebookRequest, INotebookRun } from '../contract/api';

/** The most code cells a run takes, the most characters of one cell and of all (api.py). */
export const MAX_CELLS = 1000;
export const MAX_CELL_CHARS = 1_000_000;
export const MAX_CHARS = 4 * MAX_CELL_CHARS;
/** The longest cell id the server takes (api.py); a longer one is sent as null (outcomes keep order). */
const MAX_ID = 200;

/** A notebook cell as the run reads it. */
export interface ICellText {
  id: string;
  type: string;
  source: string;
}

/** A code cell sent in a run: its id here and its text then. */
export interface ISentCell {
  cellId: string;
  source: string;
}

/** A run's request, and what it sent (to tell later whether the cells changed). */
export interface ITopPlan {
  request: INotebookRequest;
  sent: ISentCell[];
}

/** A notebook's cells as a run reads them, in order. */
export function cellTexts(notebook: Notebook): ICellText[] {
  const cells = notebook.model?.cells;
  const out: ICellText[] = [];
  for (let i = 0; cells && i < cells.length; i++) {
    const m = cells.get(i);
    out.push({ id: m.id, type: m.type, source: m.sharedModel.getSource() });
  }
  return out;
}

/** The code cells of a notebook, in order. */
export function codeCells(cells: readonly ICellText[]): ISentCell[] {
  return cells
    .filter(c => c.type === 'code')
    .map(c => ({ cellId: c.id, source: c.source }));
}

/**
 * The request of a run of these cells on `kernelId`: the code cells, in order, with the ids the
 * model has. A string says why none can be sent (too many cells, too much text).
 */
export function topRequest(
  trans: TranslationBundle,
  kernelId: string,
  cells: readonly ICellText[],
  settings?: INotebookRequest['settings']
): ITopPlan | string {
  const sent = codeCells(cells);
  if (!sent.length) {
    return trans.__('The notebook has no code cells.');
  }
  if (sent.length > MAX_CELLS) {
    return trans.__(
      'The notebook has %1 code cells; a run from the top takes at most %2.',
      sent.length,
      MAX_CELLS
    );
  }
  const chars = sent.reduce((n, c) => n + c.source.length, 0);
  if (chars > MAX_CHARS || sent.some(c => c.source.length > MAX_CELL_CHARS)) {
    return trans.__(
      'The notebook holds too much code for a run from the top (at most %1 characters in all, %2 in a cell).',
      MAX_CHARS,
      MAX_CELL_CHARS
    );
  }
  const request: INotebookRequest = {
    kernel_id: kernelId,
    cells: sent.map(c => ({
      cell_id: c.cellId.length <= MAX_ID ? c.cellId : null,
      source: c.source
    }))
  };
  if (settings) {
    request.settings = settings;
  }
  return { request, sent };
}

/**
 * Whether the notebook's code cells are those a run was sent: the same cells, in the same order,
 * with the same text. Markdown and raw cells do not run, so they may come and go.
 */
export function sameCells(
  sent: readonly ISentCell[],
  now: readonly ISentCell[]
): boolean {
  return (
    sent.length === now.length &&
    sent.every(
      (c, i) => c.cellId === now[i].cellId && c.source === now[i].source
    )
  );
}

/** Whether a run has ended (a terminal state). */
export function hasEnded(run: Pick<INotebookRun, 'state'>): boolean {
  return run.state !== 'running';
}

/** A run the server took and has not described yet. */
export function pendingRun(
  id: string,
  kernelId: string,
  total: number
): INotebookRun {
  return {
    id,
    kernel_id: kernelId,
    state: 'running',
    done: 0,
    total,
    running: null,
    elapsed_ms: 0,
    cells: [],
    first_crash: null,
    first_crash_index: null,
    message: null,
    forecast: null
  };
}
