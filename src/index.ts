/**
 * The plugin: it loads the settings, then gives every notebook its crash checks (`editing/`) and its
 * runs from the top (`fromtop/`), puts the crash panel (`panel/`) in the right sidebar, and adds the
 * commands of each.
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ILayoutRestorer } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { ICraneVerdicts } from './contract/tokens';
// The settings, the sidebar and the watchers are needed at activation (the schema transform, the
// sidebar tab, the notebook extensions).
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { fetchConfig, loadSettings } from './settings/load';
import { addEditingCommands, EditingCommandIDs } from './editing/commands';
import { keepModeOnBadges, revealKeepingFocus } from './editing/focus';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneWatcher } from './editing/watcher';
import { addFromTopCommands, FromTopCommandIDs } from './fromtop/commands';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { TopRuns } from './fromtop/extension';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { TopToolbarItem } from './fromtop/view';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneSidebar, SidebarModel } from './panel/sidebar';

/** Command ids. */
export namespace CommandIDs {
  export const checkCell = EditingCommandIDs.checkCell;
  export const trialRunCell = EditingCommandIDs.trialRunCell;
  export const openSidebar = 'crane:open-sidebar';
  export const runGuarded = EditingCommandIDs.runGuarded;
  export const checkFromTop = FromTopCommandIDs.checkFromTop;
  export const cancelFromTop = FromTopCommandIDs.cancelFromTop;
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
  requires: [INotebookTracker, ISettingRegistry],
  optional: [ITranslator, ICommandPalette, ILayoutRestorer],
  provides: ICraneVerdicts,
  activate: async (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry,
    translator: ITranslator | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ): Promise<ICraneVerdicts> => {
    const trans = (translator ?? nullTranslator).load('crane_jupyterlab');
    const config = await fetchConfig();
    const settings = await loadSettings(settingRegistry, PLUGIN_ID, config);
    const showPanel = () => app.commands.execute(CommandIDs.openSidebar);

    // The crash checks of every notebook: the badges, the chain, the guard.
    const watcher = new CraneWatcher({
      settings,
      trans,
      openSidebar: showPanel
    });
    app.docRegistry.addWidgetExtension('Notebook', watcher);

    // From the top: the notebook's code cells in a fresh sandboxed worker.
    const tops = new TopRuns({
      trans,
      openSidebar: showPanel,
      unavailable: () =>
        !settings.server
          ? trans.__('The crane server extension did not answer.')
          : settings.server.trial_available
            ? null
            : (settings.server.trial_unavailable_reason ??
              trans.__('No sandbox on this server.')),
      toolbarItem: top =>
        new TopToolbarItem(top, trans, () => {
          void showPanel();
          void top.start();
        })
    });
    app.docRegistry.addWidgetExtension('Notebook', tops);

    const sidebar = new CraneSidebar(
      new SidebarModel(tracker, watcher, settings, tops),
      trans
    );
    app.shell.add(sidebar, 'right', { rank: 650 });
    restorer?.add(sidebar, 'crane-sidebar');

    addEditingCommands(app, { watcher, tracker, settings, trans });
    app.commands.addCommand(CommandIDs.openSidebar, {
      label: trans.__('Show Crash Prediction Panel'),
      describedBy: { args: { type: 'object', properties: {} } },
      // Shown beside the notebook without taking its focus: a badge clicked while typing opens it.
      execute: () =>
        revealKeepingFocus(() => app.shell.activateById(sidebar.id))
    });
    keepModeOnBadges(app.shell.node);
    addFromTopCommands(app, { tops, tracker, trans, showPanel });

    if (palette) {
      const category = trans.__('Crash Prediction');
      palette.addItem({ command: CommandIDs.checkCell, category });
      palette.addItem({ command: CommandIDs.trialRunCell, category });
      palette.addItem({ command: CommandIDs.openSidebar, category });
      palette.addItem({ command: CommandIDs.checkFromTop, category });
      palette.addItem({ command: CommandIDs.cancelFromTop, category });
    }

    return watcher;
  }
};

export default plugin;
