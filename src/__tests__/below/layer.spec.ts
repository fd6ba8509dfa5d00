import type { Notebook } from '@jupyterlab/notebook';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';

import type { IAnalyzeResult, IBelowOutcome } from '../../contract/api';
import { CellChecks } from '../../badge/model';
import { cellView } from '../../badge/verdict';
import { describeCell } from '../../badge/words';
import { ChainLayer } from '../../below/layer';
import type { IRunEnd, KernelActivity } from '../../contract/kernel';
import { CraneSettings } from '../../settings/model';
import {
  belowOutcome as outcome,
  finishedTrial,
  schema,
  serverConfig
} from '../fixtures';
import { notebookWith } from '../harness';
import { BELOW, EDIT } from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

class FakeActivity {
  readonly runFinished = new Signal<this, IRunEnd>(this);
}

describe('ChainLayer', () => {
  const SOURCES = [
    "df = pd.DataFrame({'age': [1]})",
    'n = len(df)',
    'print(n)',
    BELOW
  ];
  let notebook: Notebook;
  let checks: CellChecks;
  let kernel: FakeActivity;
  let settings: CraneSettings;
  let layer: ChainLayer;
  let rechecked: string[];

  beforeEach(() => {
    notebook = notebookWith(SOURCES);
    checks = new CellChecks();
    kernel = new FakeActivity();
    settings = new CraneSettings(schema);
    settings.server = serverConfig();
    rechecked = [];
    layer = new ChainLayer({
      notebook,
      checks,
      kernel: kernel as unknown as KernelActivity,
      settings,
      recheck: async cell => {
        rechecked.push(cell.model.id);
      }
    });
  });

  afterEach(() => {
    layer.dispose();
    checks.dispose();
    notebook.dispose();
  });

  const cell = (i: number) => notebook.widgets[i];
  const setText = (i: number, text: string) =>
    cell(i).model.sharedModel.setSource(text);

  function ran(i: number, code: string, crashed = false) {
    kernel.runFinished.emit({
      msgId: `m${Math.random()}`,
      cellId: `cell-${i}`,
      code,
      elapsedMs: 3,
      error: crashed ? { ename: 'KeyError', evalue: "'age'" } : null
    });
  }

  /** The user edits cell 0 and its full check (with a trial) answers with the chain. */
  function checkEdit(below: IBelowOutcome[]) {
    setText(0, EDIT);
    const request = layer.request(cell(0), true)!;
    const token = layer.begin('cell-0', EDIT, checks.epoch, request);
    const result: IAnalyzeResult = { ...finishedTrial, below };
    layer.finish(token, result);
    return request;
  }

  const fine = (id: string) =>
    outcome({
      cell_id: id,
      status: 'finished',
      exception: null,
      message: null,
      line: null
    });

  it('sends the cells below and the text the kernel last ran, only when a trial runs', () => {
    expect(layer.request(cell(0), undefined)).toBeNull(); // on demand, no trial this check
    ran(0, SOURCES[0]);
    setText(0, EDIT);
    const request = layer.request(cell(0), true)!;
    expect(request.fields).toEqual({
      below: SOURCES.slice(1).map((source, i) => ({
        cell_id: `cell-${i + 1}`,
        source
      })),
      previous_source: SOURCES[0]
    });
    settings.server = serverConfig({ trial: 'auto' });
    expect(layer.request(cell(0), undefined)).not.toBeNull();
    expect(layer.request(cell(3), true)).toBeNull(); // nothing below the last cell
  });

  it('puts a badge on the cell below that crashes, names it on the edited cell, and clears it when its text changes', () => {
    ran(0, SOURCES[0]);
    checkEdit([fine('cell-1'), fine('cell-2'), outcome({ cell_id: 'cell-3' })]);
    const record = checks.get('cell-3')!;
    expect(record.chain).toMatchObject({
      originId: 'cell-0',
      origin: 'edited'
    });
    expect(cellView(record, BELOW, checks.epoch).state).toBe('will-crash');
    expect(layer.downstream('cell-0')).toEqual({
      cellId: 'cell-3',
      number: 4,
      observed: true,
      cause: "KeyError: 'age'"
    });
    expect(
      describeCell(trans, cellView(record, BELOW, checks.epoch), record, id =>
        layer.numberOf(id)
      ).after
    ).toBe('after your edit of cell 1');
    setText(3, "df['Age'].mean()");
    expect(checks.get('cell-3')).toBeUndefined();
    expect(layer.downstream('cell-0')).toBeNull();
  });

  it('clears the claims of an edit edited again, and keeps them marked while the same text is checked again', () => {
    checkEdit([fine('cell-1'), fine('cell-2'), outcome({ cell_id: 'cell-3' })]);
    const request = layer.request(cell(0), true)!;
    const token = layer.begin('cell-0', EDIT, checks.epoch, request);
    expect(checks.get('cell-3')?.pending?.what).toBe('recheck');
    layer.finish(token, null); // superseded: the claim stays, no longer marked
    expect(checks.get('cell-3')?.pending).toBeUndefined();
    expect(checks.get('cell-3')?.chain).toBeDefined();
    setText(0, "df = pd.DataFrame({'AGE': [1]})");
    expect(checks.get('cell-3')).toBeUndefined();
  });

  it('re-checks its claims when the edit runs for real, and drops them when that run crashes', async () => {
    checkEdit([fine('cell-1'), fine('cell-2'), outcome({ cell_id: 'cell-3' })]);
    ran(0, EDIT);
    await Promise.resolve();
    expect(rechecked).toEqual(['cell-3']);
    expect(checks.get('cell-3')?.chain?.applied).toBe(true);
    checks.withdraw('cell-3');

    checkEdit([fine('cell-1'), fine('cell-2'), outcome({ cell_id: 'cell-3' })]);
    ran(0, EDIT, true);
    expect(checks.get('cell-3')).toBeUndefined();
  });

  it('the chain run to the end of the claimed cell clears it; the setting off clears every claim', () => {
    checkEdit([fine('cell-1'), fine('cell-2'), outcome({ cell_id: 'cell-3' })]);
    checkEdit([fine('cell-1'), fine('cell-2'), fine('cell-3')]);
    expect(checks.get('cell-3')).toBeUndefined();
    checkEdit([fine('cell-1'), fine('cell-2'), outcome({ cell_id: 'cell-3' })]);
    expect(checks.get('cell-3')?.chain).toBeDefined();
    settings.attach({
      composite: { chain: false },
      user: { chain: false },
      changed: new Signal({})
    } as unknown as ISettingRegistry.ISettings);
    expect(checks.get('cell-3')).toBeUndefined();
    expect(layer.request(cell(0), true)).toBeNull();
  });
});
