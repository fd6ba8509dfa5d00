/**
 * Shared setup of the specs that need the page: real notebook widgets and rendered React views
 * (the server answers and the settings schema are in fixtures.ts). Not a spec itself: jest.config.js
 * runs only `*.spec.ts[x]`.
 */
import type { Notebook } from '@jupyterlab/notebook';
import { NotebookModel } from '@jupyterlab/notebook';
import { NBTestUtils } from '@jupyterlab/notebook/lib/testutils';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import type React from 'react';

/** Let React render and pending timers run. */
export const settle = (): Promise<unknown> =>
  new Promise(resolve => setTimeout(resolve, 50));

/**
 * A real notebook widget with cells of these types and sources, attached to the page; the cells'
 * ids are `idPrefix` and their index.
 */
export function notebookOf(
  cells: [string, string][],
  idPrefix: string
): Notebook {
  const notebook = NBTestUtils.createNotebook();
  const model = new NotebookModel();
  // yjs warns about reads before the cells join the document; harmless here.
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  model.fromJSON({
    cells: cells.map(([type, source], i) => ({
      cell_type: type,
      id: `${idPrefix}${i}`,
      source,
      metadata: {},
      ...(type === 'code' ? { outputs: [], execution_count: null } : {})
    })),
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5
  });
  warn.mockRestore();
  notebook.model = model;
  Widget.attach(notebook, document.body);
  return notebook;
}

/** A real notebook widget with code cells of these sources (ids `cell-0`, `cell-1`, …), attached to the page. */
export function notebookWith(sources: string[]): Notebook {
  return notebookOf(
    sources.map(source => ['code', source]),
    'cell-'
  );
}

/** Render `element` in a widget attached to the page, once React has drawn it. */
export async function rendered(
  element: React.ReactElement
): Promise<{ node: HTMLElement; dispose: () => void }> {
  const widget = ReactWidget.create(element);
  Widget.attach(widget, document.body);
  widget.update();
  await settle();
  return { node: widget.node, dispose: () => widget.dispose() };
}

/** The text of each element under `node` that `selector` matches. */
export function texts(node: HTMLElement, selector: string): string[] {
  return [...node.querySelectorAll(selector)].map(e => e.textContent ?? '');
}
