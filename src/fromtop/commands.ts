/**
 * The commands of the run from the top: check the current notebook from the top, and cancel the run
 * in progress. Their enabled state follows the runs and the current notebook.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';

import { craneIcon } from '../badge/icons';
import type { TopRuns } from './extension';

/** Command ids. */
export namespace FromTopCommandIDs {
  export const checkFromTop = 'crane:check-from-top';
  export const cancelFromTop = 'crane:cancel-from-top';
}

/** What the commands act on. */
export interface IFromTopCommandsOptions {
  tops: TopRuns;
  tracker: INotebookTracker;
  trans: TranslationBundle;
  /** Reveal the crash panel, where the run shows. */
  showPanel: () => Promise<unknown>;
}

/** Add the commands of the run from the top to `app`. */
export function addFromTopCommands(
  app: JupyterFrontEnd,
  options: IFromTopCommandsOptions
): void {
  const { tops, tracker, trans, showPanel } = options;
  const currentTop = () => tops.forPanel(tracker.currentWidget);

  app.commands.addCommand(FromTopCommandIDs.checkFromTop, {
    label: trans.__('Check the Notebook from the Top'),
    caption: () =>
      currentTop()?.unavailable ??
      trans.__(
        "Run the notebook's code cells in order in a fresh sandboxed worker of the kernel's Python, to see whether it runs in a fresh kernel; your kernel is not touched"
      ),
    icon: craneIcon,
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: () => {
      const top = currentTop();
      return !!top && !top.unavailable;
    },
    execute: async () => {
      const top = currentTop();
      if (top && !top.unavailable) {
        await showPanel();
        await top.start();
      }
    }
  });

  app.commands.addCommand(FromTopCommandIDs.cancelFromTop, {
    label: trans.__('Cancel the Run from the Top'),
    describedBy: { args: { type: 'object', properties: {} } },
    isEnabled: () => !!currentTop()?.running,
    execute: async () => {
      await currentTop()?.cancel();
    }
  });
  const notifyTop = () => {
    app.commands.notifyCommandChanged(FromTopCommandIDs.checkFromTop);
    app.commands.notifyCommandChanged(FromTopCommandIDs.cancelFromTop);
  };
  tops.changed.connect(notifyTop);
  tracker.currentChanged.connect(notifyTop);
}
