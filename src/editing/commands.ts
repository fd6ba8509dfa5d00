/**
 * The commands of the editing loop: check the active cell, trial-run it, and run it behind the crash
 * guard. The guard is a command of our own, bound to Shift-Enter only while the notebook carries the
 * `jp-Crane-guarded` class (`GUARDED_CLASS`, schema/plugin.json): no core command is wrapped or
 * replaced, and with the guard off the core binding is untouched.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';

import { craneIcon, observedIcon } from '../badge/icons';
import type { CraneSettings } from '../settings/model';
import type { CraneWatcher } from './watcher';

/** Command ids. */
export namespace EditingCommandIDs {
  export const checkCell = 'crane:check-cell';
  export const trialRunCell = 'crane:trial-run-cell';
  export const runGuarded = 'crane:run-cell-and-select-next';
}

/** What the commands act on. */
export interface IEditingCommandsOptions {
  watcher: CraneWatcher;
  tracker: INotebookTracker;
  settings: CraneSettings;
  trans: TranslationBundle;
}

/** Add the commands of the editing loop to `app`. */
export function addEditingCommands(
  app: JupyterFrontEnd,
  options: IEditingCommandsOptions
): void {
  const { watcher, tracker, settings, trans } = options;
  const currentWatcher = () => watcher.watcherFor(tracker.currentWidget);

  app.commands.addCommand(EditingCommandIDs.checkCell, {
    label: trans.__('Check Cell for Crashes'),
    caption: trans.__(
      'Tell whether the active cell will crash, without running it'
    ),
    icon: craneIcon,
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: () => !!currentWatcher()?.activeCodeCell,
    execute: async () => {
      const current = currentWatcher();
      const cell = current?.activeCodeCell;
      if (current && cell) {
        await current.check(cell);
      }
    }
  });

  app.commands.addCommand(EditingCommandIDs.trialRunCell, {
    label: trans.__('Trial-Run Cell'),
    caption: () =>
      settings.trialMode === 'off'
        ? (settings.server?.trial_unavailable_reason ??
          trans.__('Trial runs are off (see the Crash prediction settings)'))
        : trans.__(
            'Run the active cell in a sandboxed copy of the kernel to see whether it crashes; nothing outside the copy changes'
          ),
    icon: observedIcon,
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: () =>
      settings.trialMode !== 'off' && !!currentWatcher()?.activeCodeCell,
    execute: async () => {
      const current = currentWatcher();
      const cell = current?.activeCodeCell;
      if (current && cell && settings.trialMode !== 'off') {
        await current.check(cell, true);
      }
    }
  });

  app.commands.addCommand(EditingCommandIDs.runGuarded, {
    label: trans.__('Run Selected Cell and Select Next (Crash Guard)'),
    describedBy: { args: { type: 'object', properties: {} } },
    execute: async () => {
      const current = currentWatcher();
      if (current && settings.current.guard) {
        const { confirmRun, crashingCells } = await import('./guard');
        const cells = crashingCells(current);
        if (cells.length && !(await confirmRun(trans, current, cells))) {
          return;
        }
      }
      await app.commands.execute('notebook:run-cell-and-select-next');
    }
  });
}
