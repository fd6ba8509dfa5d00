import type { Notebook } from '@jupyterlab/notebook';
import { nullTranslator } from '@jupyterlab/translation';
import type { PanelLayout } from '@lumino/widgets';

import { BadgeLayer } from '../../badge/layer';
import { CellBadge } from '../../badge/widget';
import { CellChecks } from '../../badge/model';
import type { ICheckRecord } from '../../contract/tokens';
import { checksCrash } from '../fixtures';
import { notebookWith } from '../harness';

const trans = nullTranslator.load('crane_jupyterlab');

function record(cellId: string, source: string): ICheckRecord {
  return {
    cellId,
    source,
    epoch: 0,
    phase: 'done',
    startedAt: 0,
    sent: {},
    result: checksCrash
  };
}

describe('BadgeLayer', () => {
  let notebook: Notebook;
  let checks: CellChecks;
  let layer: BadgeLayer;
  let opened = 0;

  beforeEach(() => {
    notebook = notebookWith(["df['Agee'].mean()", 'x = 1']);
    checks = new CellChecks();
    layer = new BadgeLayer(notebook, checks, trans, () => opened++);
  });

  afterEach(() => {
    layer.dispose();
    checks.dispose();
    notebook.dispose();
  });

  it('puts a badge right after the input of a checked cell, through public APIs', async () => {
    const cell = notebook.widgets[0];
    expect(layer.badgeOf(cell.model.id)).toBeUndefined();
    checks.set(record(cell.model.id, "df['Agee'].mean()"));
    await cell.ready;
    const badge = layer.badgeOf(cell.model.id)!;
    expect(badge).toBeInstanceOf(CellBadge);
    const widgets = (cell.layout as PanelLayout).widgets;
    expect(widgets.indexOf(badge)).toBe(
      widgets.indexOf(cell.inputArea!.parent!) + 1
    );
    expect(badge.state).toBe('will-crash');
    expect(badge.isHidden).toBe(false);
    // The other cell has no record, hence no badge.
    expect(layer.badgeOf(notebook.widgets[1].model.id)).toBeUndefined();
  });

  it('follows the cell text and the kernel epoch', async () => {
    const cell = notebook.widgets[0];
    checks.set(record(cell.model.id, "df['Agee'].mean()"));
    await cell.ready;
    const badge = layer.badgeOf(cell.model.id)!;
    cell.model.sharedModel.setSource("df['Age'].mean()");
    expect(badge.hasClass('jp-mod-stale')).toBe(true);
    cell.model.sharedModel.setSource("df['Agee'].mean()");
    expect(badge.hasClass('jp-mod-stale')).toBe(false);
    checks.bumpEpoch();
    expect(badge.hasClass('jp-mod-stale')).toBe(true);
  });

  it('removes the badge when the record goes, and on dispose', async () => {
    const [first, second] = notebook.widgets;
    checks.set(record(first.model.id, "df['Agee'].mean()"));
    checks.set(record(second.model.id, 'x = 1'));
    await Promise.all([first.ready, second.ready]);
    const badge = layer.badgeOf(first.model.id)!;
    checks.delete(first.model.id);
    expect(badge.isDisposed).toBe(true);
    expect(layer.badgeOf(first.model.id)).toBeUndefined();
    const other = layer.badgeOf(second.model.id)!;
    layer.dispose();
    expect(other.isDisposed).toBe(true);
  });

  it('opens the sidebar from a badge', async () => {
    const cell = notebook.widgets[0];
    checks.set(record(cell.model.id, "df['Agee'].mean()"));
    await cell.ready;
    opened = 0;
    layer.badgeOf(cell.model.id)!.node.click();
    expect(opened).toBe(1);
  });
});
