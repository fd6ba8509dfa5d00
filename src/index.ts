import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ILayoutRestorer } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import type { PartialJSONObject } from '@lumino/coreutils';
import { JSONExt } from '@lumino/coreutils';

import { keepModeOnBadges, revealKeepingFocus } from './editing/focus';
import { craneIcon, observedIcon } from './badge/icons';
import { requestAPI } from './contract/request';
// The settings, the sidebar and the watcher are needed at activation (the schema transform, the
// sidebar tab, the notebook extension).
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneSettings, serverSchema } from './settings/model';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneSidebar, SidebarModel } from './panel/sidebar';
import { ICraneVerdicts } from './contract/tokens';
import type { IServerConfig } from './contract/tokens';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { TopRuns } from './fromtop/run';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { TopToolbarItem } from './fromtop/view';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CraneWatcher } from './editing/watcher';

/** Command ids. */
export namespace CommandIDs {
  export const checkCell = 'crane:check-cell';
  export const trialRunCell = 'crane:trial-run-cell';
  export const openSidebar = 'crane:open-sidebar';
  export const runGuarded = 'crane:run-cell-and-select-next';
  export const checkFromTop = 'crane:check-from-top';
  export const cancelFromTop = 'crane:cancel-from-top';
}

const PLUGIN_ID = 'crane-jupyterlab:plugin';

/** How long activation waits for `GET /crane/config` before going on without it. */
const CONFIG_TIMEOUT_MS = 10_000;

/** The server's configuration, or null when the server extension does not answer. */
async function fetchConfig(): Promise<IServerConfig | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>(resolve => {
    timer = setTimeout(() => resolve(null), CONFIG_TIMEOUT_MS);
  });
  const config = requestAPI<IServerConfig>('config').catch(reason => {
    console.warn('crane: the server extension did not answer', reason);
    return null;
  });
  try {
    return await Promise.race([config, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Load the settings with the schema this server allows (see `serverSchema`). Resolves with the
 * settings, whose defaults come from the schema as written.
 */
async function loadSettings(
  registry: ISettingRegistry,
  config: IServerConfig | null
): Promise<CraneSettings> {
  let written: ISettingRegistry.ISchema | null = null;
  registry.transform(PLUGIN_ID, {
    fetch: plugin => {
      written ??= JSONExt.deepCopy(
        plugin.schema as unknown as PartialJSONObject
      ) as ISettingRegistry.ISchema;
      return { ...plugin, schema: serverSchema(written, config) };
    }
  });
  try {
    const loaded = await registry.load(PLUGIN_ID);
    const settings = new CraneSettings(written ?? loaded.schema);
    settings.server = config;
    settings.attach(loaded);
    return settings;
  } catch (reason) {
    if (!written) {
      throw reason;
    }
    // The user's settings file is invalid: keep working with the defaults.
    console.error(
      'crane: cannot load the settings; using the defaults',
      reason
    );
    const settings = new CraneSettings(written);
    settings.server = config;
    return settings;
  }
}

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
    const settings = await loadSettings(settingRegistry, config);
    const watcher = new CraneWatcher({
      settings,
      trans,
      openSidebar: () => app.commands.execute(CommandIDs.openSidebar)
    });
    app.docRegistry.addWidgetExtension('Notebook', watcher);

    // From the top (issue 37): the notebook's code cells in a fresh sandboxed worker.
    const showPanel = () => app.commands.execute(CommandIDs.openSidebar);
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

    const currentWatcher = () => watcher.watcherFor(tracker.currentWidget);

    app.commands.addCommand(CommandIDs.checkCell, {
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

    app.commands.addCommand(CommandIDs.trialRunCell, {
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

    app.commands.addCommand(CommandIDs.openSidebar, {
      label: trans.__('Show Crash Prediction Panel'),
      describedBy: { args: { type: 'object', properties: {} } },
      // Shown beside the notebook without taking its focus: a badge clicked while typing opens it.
      execute: () =>
        revealKeepingFocus(() => app.shell.activateById(sidebar.id))
    });
    keepModeOnBadges(app.shell.node);

    // The guard is a command of our own, bound to Shift-Enter only while the notebook carries the
    // `jp-Crane-guarded` class (schema/plugin.json): no core command is wrapped or replaced, and with
    // the guard off the core binding is untouched.
    app.commands.addCommand(CommandIDs.runGuarded, {
      label: trans.__('Run Selected Cell and Select Next (Crash Guard)'),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: async () => {
        const current = currentWatcher();
        if (current && settings.current.guard) {
          const { confirmRun, crashingCells } = await import('./editing/guard');
          const cells = crashingCells(current);
          if (cells.length && !(await confirmRun(trans, current, cells))) {
            return;
          }
        }
        await app.commands.execute('notebook:run-cell-and-select-next');
      }
    });

    const currentTop = () => tops.forPanel(tracker.currentWidget);

    app.commands.addCommand(CommandIDs.checkFromTop, {
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

    app.commands.addCommand(CommandIDs.cancelFromTop, {
      label: trans.__('Cancel the Run from the Top'),
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: () => !!currentTop()?.running,
      execute: async () => {
        await currentTop()?.cancel();
      }
    });
    const notifyTop = () => {
      app.commands.notifyCommandChanged(CommandIDs.checkFromTop);
      app.commands.notifyCommandChanged(CommandIDs.cancelFromTop);
    };
    tops.changed.connect(notifyTop);
    tracker.currentChanged.connect(notifyTop);

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
