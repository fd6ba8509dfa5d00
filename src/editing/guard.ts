import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { Cell } from '@jupyterlab/cells';
import type { TranslationBundle } from '@jupyterlab/translation';

import { describeText } from '../badge/widget';
import { describeCell } from '../badge/words';
import { asksBeforeRun, cellView } from '../badge/verdict';
import type { NotebookWatcher } from './watcher';

/**
 * The cells about to run (the selection, or the active cell) whose last verdict for their text
 * warns of a crash: fresh, outdated or being re-checked alike.
 */
export function crashingCells(watcher: NotebookWatcher): Cell[] {
  const notebook = watcher.panel.content;
  return notebook.widgets.filter(
    cell =>
      cell.model.type === 'code' &&
      notebook.isSelectedOrActive(cell) &&
      asksBeforeRun(
        watcher.recordOf(cell),
        cell.model.sharedModel.getSource(),
        watcher.checks.epoch
      )
  );
}

/**
 * Ask before running cells that will or may crash, in the words of their badges. Cancel is the
 * default button, so a second Shift-Enter does not run the cell by accident.
 */
export async function confirmRun(
  trans: TranslationBundle,
  watcher: NotebookWatcher,
  cells: Cell[]
): Promise<boolean> {
  const descriptions = cells.map(cell => {
    const record = watcher.recordOf(cell);
    const view = cellView(
      record,
      cell.model.sharedModel.getSource(),
      watcher.checks.epoch
    );
    return describeCell(trans, view, record, id => watcher.chain.numberOf(id));
  });
  const texts = descriptions.map(d =>
    d.stale
      ? trans.__(
          '%1 (checked before the kernel changed)',
          describeText(trans, d)
        )
      : describeText(trans, d)
  );
  const certain = descriptions.every(d => d.state === 'will-crash');
  const possible = descriptions.every(d => d.state === 'may-crash');
  const title =
    cells.length === 1
      ? certain
        ? trans.__('This cell will crash')
        : trans.__('This cell may crash')
      : certain
        ? trans.__('%1 cells will crash', cells.length)
        : possible
          ? trans.__('%1 cells may crash', cells.length)
          : trans.__('%1 cells will or may crash', cells.length);
  const body =
    texts.length === 1 ? texts[0] : texts.map(t => '• ' + t).join('\n');
  const result = await showDialog({
    title,
    body,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.warnButton({ label: trans.__('Run anyway') })
    ],
    defaultButton: 0
  });
  return result.button.accept;
}
