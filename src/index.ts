import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

/**
 * Crane: predicts whether a notebook cell will crash before it runs.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: 'crane-jupyterlab:plugin',
  description: 'Predicts, before a cell runs, whether it will crash and why.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    console.warn('crane-jupyterlab is activated');
  }
};

export default plugin;
