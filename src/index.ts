import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ILayoutRestorer } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { craneIcon } from './icons';
import { requestAPI } from './request';
import { CraneSettings } from './settings';
// The sidebar and the watcher are needed at activation (the sidebar tab, the notebook extension).
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneSidebar, SidebarModel } from './sidebar';
import { ICraneVerdicts } from './tokens';
import type { IServerConfig } from './tokens';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneWatcher } from './watcher';

/** Command ids. */
export namespace CommandIDs {
  export const checkCell = 'crane:check-cell';
  export const openSidebar = 'crane:open-sidebar';
  export const runGuarded = 'crane:run-cell-and-select-next';
}

const PLUGIN_ID = 'crane-jupyterlab:plugin';

/**
 * Crane: predicts whether a notebook cell will crash before it runs.
 */
const plugin: JupyterFrontEndPlugin<ICraneVerdicts> = {
  id: PLUGIN_ID,
  description:
    'Predicts, before a cell runs, whether it will crash and why, from the live kernel state.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, ITranslator, ICommandPalette, ILayoutRestorer],
  provides: ICraneVerdicts,
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ): ICraneVerdicts => {
    const trans = (translator ?? nullTranslator).load('crane_jupyterlab');
    const settings = new CraneSettings();
    const watcher = new CraneWatcher({
      settings,
      trans,
      openSidebar: () => app.commands.execute(CommandIDs.openSidebar)
    });
    app.docRegistry.addWidgetExtension('Notebook', watcher);

    const sidebar = new CraneSidebar(
      new SidebarModel(tracker, watcher, settings),
      trans
    );
    app.shell.add(sidebar, 'right', { rank: 650 });
    restorer?.add(sidebar, 'crane-sidebar');

    const currentWatcher = () => watcher.watcherFor(tracker.currentWidget);

    app.commands.addCommand(CommandIDs.checkCell, {
      label: trans.__('Check Cell for Crashes'),
      caption: trans.__(
        'Predict whether the active cell will crash, without running it'
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

    app.commands.addCommand(CommandIDs.openSidebar, {
      label: trans.__('Show Crash Prediction Panel'),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => app.shell.activateById(sidebar.id)
    });

    // The guard is a command of our own, bound to Shift-Enter only while the notebook carries the
    // `jp-Crane-guarded` class (schema/plugin.json): no core command is wrapped or replaced, and with
    // the guard off the core binding is untouched.
    app.commands.addCommand(CommandIDs.runGuarded, {
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

    if (palette) {
      const category = trans.__('Crash Prediction');
      palette.addItem({ command: CommandIDs.checkCell, category });
      palette.addItem({ command: CommandIDs.openSidebar, category });
    }

    requestAPI<IServerConfig>('config')
      .then(config => {
        settings.server = config;
      })
      .catch(reason =>
        console.warn('crane: the server extension did not answer', reason)
      );

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => settings.attach(loaded))
        .catch(reason =>
          console.error('crane: cannot load the settings', reason)
        );
    }

    return watcher;
  }
};

export default plugin;
