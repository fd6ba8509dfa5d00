import type { INotebookTracker } from '@jupyterlab/notebook';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { CraneSettings } from '../settings';
import { CraneSidebar, SidebarModel } from '../sidebar';
import type { IServerConfig } from '../tokens';
import type { CraneWatcher } from '../watcher';

const trans = nullTranslator.load('crane_jupyterlab');

/** A notebook tracker with no notebook open: the sidebar's empty state. */
function emptyTracker(): INotebookTracker {
  const owner = {};
  return {
    currentWidget: null,
    currentChanged: new Signal(owner),
    activeCellChanged: new Signal(owner)
  } as unknown as INotebookTracker;
}

const noWatchers = { watcherFor: () => undefined } as unknown as CraneWatcher;

function server(over: Partial<IServerConfig>): IServerConfig {
  return {
    model: 'openai/a',
    allowed_models: ['openai/a'],
    categories: 'SRV',
    votes: 1,
    temperature: 0,
    auto_check: true,
    docs: false,
    key_configured: true,
    ...over
  };
}

async function rendered(settings: CraneSettings): Promise<CraneSidebar> {
  const sidebar = new CraneSidebar(
    new SidebarModel(emptyTracker(), noWatchers, settings),
    trans
  );
  Widget.attach(sidebar, document.body);
  sidebar.update();
  // React renders asynchronously.
  await new Promise(resolve => setTimeout(resolve, 50));
  return sidebar;
}

describe('CraneSidebar', () => {
  it('says that only certain crashes are reported without a model, and how to add one', async () => {
    const settings = new CraneSettings();
    settings.server = server({ model: null, allowed_models: [] });
    const sidebar = await rendered(settings);
    const text = sidebar.node.textContent ?? '';
    expect(text).toContain('only certain crashes');
    expect(text).toContain('--CraneExtension.model=');
    expect(text).toContain('CRANE_MODEL');
    expect(text).toContain('Open a notebook');
    sidebar.dispose();
    settings.dispose();
  });

  it('reflects a model the server does not allow instead of using it', async () => {
    const settings = new CraneSettings();
    const owner = {};
    const user = { model: 'openai/not-allowed' };
    settings.attach({
      composite: user,
      user,
      changed: new Signal(owner)
    } as unknown as ISettingRegistry.ISettings);
    settings.server = server({});
    const sidebar = await rendered(settings);
    const text = sidebar.node.textContent ?? '';
    expect(text).toContain(
      'The server does not allow the model openai/not-allowed; its default is used.'
    );
    expect(text).not.toContain('only certain crashes');
    sidebar.dispose();
    settings.dispose();
  });
});
