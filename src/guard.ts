import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { Cell } from '@jupyterlab/cells';
import type { TranslationBundle } from '@jupyterlab/translation';

import { isFreshCrash, oneLine } from './verdict';
import type { NotebookWatcher } from './watcher';

/**
 * The cells about to run (the selection, or the active cell) whose fresh verdict is a crash.
 */
export function crashingCells(watcher: NotebookWatcher): Cell[] {
  const notebook = watcher.panel.content;
  return notebook.widgets.filter(
    cell =>
      cell.model.type === 'code' &&
      notebook.isSelectedOrActive(cell) &&
      isFreshCrash(
        watcher.recordOf(cell),
        cell.model.sharedModel.getSource(),
        watcher.checks.epoch
      )
  );
}

/**
 * Ask before running cells predicted to crash. Cancel is the default button, so a second
 * Shift-Enter does not run the cell by accident.
 */
export async function confirmRun(
  trans: TranslationBundle,
  watcher: NotebookWatcher,
  cells: Cell[]
): Promise<boolean> {
  const reasons = cells.map(
    cell => watcher.recordOf(cell)?.result?.verdict?.reasoning ?? ''
  );
  const body =
    reasons.length === 1
      ? reasons[0]
      : reasons.map(r => '• ' + oneLine(r)).join('\n');
  const result = await showDialog({
    title: trans._n(
      'This cell is predicted to crash',
      '%1 cells are predicted to crash',
      cells.length
    ),
    body,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.warnButton({ label: trans.__('Run anyway') })
    ],
    defaultButton: 0
  });
  return result.button.accept;
}
