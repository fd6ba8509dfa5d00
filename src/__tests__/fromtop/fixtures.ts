/** Runs from the top as the server describes them (`GET /crane/notebook/{id}`), for the tests. */
import type { INotebookCell, INotebookRun } from '../../contract/api';

/** One cell's outcome, as `GET /crane/notebook/{id}` gives it once the run is done. */
export function outcome(
  cellId: string,
  status: INotebookCell['status'],
  extra: Partial<INotebookCell> = {}
): INotebookCell {
  return {
    cell_id: cellId,
    status,
    exception: null,
    message: null,
    line: null,
    elapsed_ms: 12,
    shortened: status === 'shortened',
    quick: null,
    after_cut: false,
    reason: null,
    hidden: null,
    forecast: null,
    installs: null,
    ...extra
  };
}

/** A run that is done, with these outcomes. */
export function doneRun(cells: INotebookCell[]): INotebookRun {
  const first = cells.findIndex(c => c.status === 'crashed' && !c.after_cut);
  return {
    id: 'r1',
    kernel_id: 'k1',
    state: 'done',
    done: cells.filter(c => c.status !== 'not_reached').length,
    total: cells.length,
    running: null,
    elapsed_ms: 2400,
    cells,
    first_crash: first >= 0 ? cells[first] : null,
    first_crash_index: first >= 0 ? first : null,
    message: 'a fresh worker of the kernel’s Python, bwrap, quick mode',
    forecast: null
  };
}
