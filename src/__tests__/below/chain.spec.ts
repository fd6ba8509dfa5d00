import type { Notebook } from '@jupyterlab/notebook';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';

import type { IAnalyzeResult, IBelowOutcome } from '../../contract/api';
import { describeText } from '../../badge/widget';
import type { ICellPlace, ISentCell } from '../../below/chain';
import {
  afterOriginRun,
  belowCells,
  belowRequest,
  claimRecord,
  downstreamOf,
  MAX_BELOW,
  mergeChain,
  originOf,
  staleClaims,
  wantsChain
} from '../../below/chain';
import {
  claimDescription,
  claimLevel,
  downstreamLead,
  downstreamLevel,
  downstreamText
} from '../../badge/claim';
import { ChainLayer } from '../../below/layer';
import { outcomeText, unboundText } from '../../below/view';
import type { IRunEnd, KernelActivity } from '../../editing/kernel';
import { describeCell } from '../../badge/words';
import { CellChecks } from '../../badge/model';
import { CraneSettings } from '../../settings/model';
import type { IChainClaim, ICheckRecord } from '../../contract/tokens';
import { cellView, overrules, warns } from '../../badge/verdict';
import {
  belowOutcome as outcome,
  finishedTrial,
  schema,
  serverConfig
} from '../fixtures';
import { notebookWith } from '../harness';

const trans = nullTranslator.load('crane_jupyterlab');

function claim(over: Partial<IChainClaim> = {}): IChainClaim {
  return {
    originId: 'e',
    originSource: "df = pd.DataFrame({'Age': [1]})",
    origin: 'edited',
    outcome: outcome(),
    ...over
  };
}

const EDIT = "df = pd.DataFrame({'Age': [1]})";
const BELOW = "df['age'].mean()";

/** Cells by id: the edited one first, the one below at 4. */
function places(
  over: Record<string, ICellPlace> = {}
): Map<string, ICellPlace> {
  return new Map(
    Object.entries({
      e: { index: 0, source: EDIT },
      x: { index: 2, source: 'n = len(df)' },
      d: { index: 4, source: BELOW },
      ...over
    })
  );
}

const SENT: ISentCell[] = [
  { cellId: 'x', source: 'n = len(df)' },
  { cellId: 'd', source: BELOW }
];

describe('which cells go with the request', () => {
  const cells = [
    { id: 'a', type: 'code', source: 'import pandas as pd' },
    { id: 'e', type: 'code', source: EDIT },
    { id: 'm', type: 'markdown', source: '# Notes' },
    { id: 'x', type: 'code', source: 'n = len(df)' },
    { id: 'blank', type: 'code', source: '  \n' },
    { id: 'd', type: 'code', source: BELOW }
  ];

  it('sends the code cells after the target, in notebook order, none of the cells above', () => {
    expect(belowCells(cells, 1)).toEqual([
      { cellId: 'x', source: 'n = len(df)' },
      { cellId: 'd', source: BELOW }
    ]);
    expect(belowCells(cells, 5)).toEqual([]);
  });

  it('stops at the bounds the server sets, never leaving a gap', () => {
    const many = Array.from({ length: MAX_BELOW + 5 }, (_, i) => ({
      id: `c${i}`,
      type: 'code',
      source: `x${i} = ${i}`
    }));
    expect(belowCells([cells[0], ...many], 0)).toHaveLength(MAX_BELOW);
    const big = [
      { id: 'e', type: 'code', source: 'x = 1' },
      { id: 'p', type: 'code', source: 'a'.repeat(600_000) },
      { id: 'q', type: 'code', source: 'b'.repeat(600_000) },
      { id: 'r', type: 'code', source: 'y = 2' }
    ];
    // q does not fit: r, which may need q, is not sent either.
    expect(belowCells(big, 0).map(c => c.cellId)).toEqual(['p']);
  });

  it('sends a cell id the server would refuse as null (outcomes come back in order)', () => {
    const long = 'i'.repeat(201);
    expect(
      belowRequest([
        { cellId: long, source: 'x' },
        { cellId: 'd', source: 'y' }
      ])
    ).toEqual([
      { cell_id: null, source: 'x' },
      { cell_id: 'd', source: 'y' }
    ]);
  });

  it('asks for the chain only when this check runs a trial and the chain is on', () => {
    const onDemand = serverConfig();
    const auto = serverConfig({ trial: 'auto' });
    expect(wantsChain(true, onDemand, true)).toBe(true); // Trial-Run Cell
    expect(wantsChain(true, onDemand, undefined)).toBe(false); // no trial this time
    expect(wantsChain(true, auto, undefined)).toBe(true); // every check tries
    expect(wantsChain(true, auto, false)).toBe(false); // the user turned trials off
    expect(wantsChain(false, auto, true)).toBe(false); // the chain setting
    expect(
      wantsChain(true, serverConfig({ trial_available: false }), true)
    ).toBe(false);
    expect(wantsChain(true, serverConfig({ trial: 'off' }), true)).toBe(false);
    expect(wantsChain(true, null, true)).toBe(false);
  });

  it('tells an edit from a text the kernel never ran or ran as it is', () => {
    expect(originOf(undefined, EDIT)).toBe('new');
    expect(originOf(EDIT, EDIT)).toBe('same');
    expect(originOf("df = pd.DataFrame({'age': [1]})", EDIT)).toBe('edited');
  });
});

describe('what a claim says', () => {
  const numberOf = (id: string) => ({ e: 2, d: 6 })[id] ?? null;

  function sentence(c: IChainClaim): string {
    const record = claimRecord({ cellId: 'd', source: BELOW }, 0, c);
    return describeText(
      trans,
      describeCell(trans, cellView(record, BELOW, 0), record, numberOf)
    );
  }

  it('an observed crash after an edit: will crash, blamed on the edit, with its line and what it reads', () => {
    expect(claimLevel(outcome())).toBe('will-crash');
    expect(sentence(claim())).toBe(
      "Will crash after your edit of cell 2 (observed in a trial run): KeyError: 'age' (line 1, reads df)"
    );
    const d = { cellId: 'd', number: 6, observed: true, cause: '' };
    expect(downstreamText(trans, d)).toBe('and cell 6 below would then crash');
    expect(downstreamLead(trans, d)).toBe('Cell 6 below would then crash');
    expect(downstreamLevel(d)).toBe('will-crash');
  });

  it('a crash that may come from a loop cut short is at most "may crash"', () => {
    const afterCut = claim({ outcome: outcome({ after_cut: true }) });
    expect(claimLevel(afterCut.outcome)).toBe('may-crash');
    expect(sentence(afterCut)).toMatch(
      /^May crash after your edit of cell 2 \(seen in a trial run after a loop above it was cut short; the crash may depend on how many iterations ran\)/
    );
    const quick = (crash: 'certain' | 'depends') =>
      outcome({
        quick: { k: 2, loops: [], cut: true, crash, skipped_asserts: [] }
      });
    expect(claimLevel(quick('depends'))).toBe('may-crash');
    expect(claimLevel(quick('certain'))).toBe('will-crash');
    const d = { cellId: 'd', number: 6, observed: false, cause: '' };
    expect(downstreamText(trans, d)).toBe('and cell 6 below may then crash');
    expect(downstreamLead(trans, d)).toBe('Cell 6 below may then crash');
    expect(downstreamLevel(d)).toBe('may-crash');
  });

  it('a cell that crashes without the edit too is not blamed on it', () => {
    const anyway = claim({ outcome: outcome({ without_edit: true }) });
    expect(sentence(anyway)).toContain(
      '(observed in a trial run; it crashes with or without this edit)'
    );
    const records = [claimRecord({ cellId: 'd', source: BELOW }, 0, anyway)];
    expect(downstreamOf(records, 'e', EDIT, numberOf)).toBeNull();
  });

  it('says after what: an edit, a first run, a run again; a cell it cannot number', () => {
    expect(
      claimDescription(trans, claim({ origin: 'new' }), numberOf).after
    ).toBe('after cell 2 runs');
    expect(
      claimDescription(trans, claim({ origin: 'same' }), numberOf).after
    ).toBe('after cell 2 runs again');
    expect(claimDescription(trans, claim()).after).toBe(
      'after your edit of a cell above'
    );
  });

  it('words every outcome of the chain', () => {
    const words = (over: Partial<IBelowOutcome>) =>
      outcomeText(
        trans,
        outcome({
          exception: null,
          message: null,
          line: null,
          reads: [],
          ...over
        })
      );
    expect(words({ status: 'finished' })).toBe('ran to its end');
    expect(words({ status: 'shortened' })).toBe(
      'ran to its end with its long loops cut short (a quick step)'
    );
    expect(
      words({
        status: 'skipped',
        reason:
          'it reads nothing the chain changed, and the kernel already ran this same text.'
      })
    ).toBe(
      'skipped: it reads nothing the chain changed, and the kernel already ran this same text'
    );
    expect(
      words({
        status: 'not_reached',
        reason: 'an earlier cell below did not run to its end'
      })
    ).toBe('not reached: an earlier cell below did not run to its end');
    expect(
      words({
        status: 'blocked',
        reason: 'the sandbox refused to connect to 10.0.0.1:80'
      })
    ).toBe(
      'blocked by the sandbox: the sandbox refused to connect to 10.0.0.1:80'
    );
    expect(words({ status: 'timed_out' })).toBe('timed out');
    expect(outcomeText(trans, outcome())).toBe(
      "crashed: KeyError: 'age' (line 1, reads df)"
    );
    expect(outcomeText(trans, outcome({ without_edit: true }))).toBe(
      "crashed: KeyError: 'age' (line 1, reads df); it crashes with or without this edit"
    );
    expect(unboundText(trans, ['upper_limit'], 6)).toBe(
      "reads `upper_limit`, which cell 6 no longer defines: it runs only on the kernel's old value and fails from the top"
    );
  });
});

describe('what an answer does to the claims', () => {
  const answer = (below: IBelowOutcome[], epoch = 3) => ({
    originId: 'e',
    originSource: EDIT,
    origin: 'edited' as const,
    epoch,
    sent: SENT,
    below
  });
  const finished = outcome({
    status: 'finished',
    exception: null,
    message: null
  });
  const notReached = outcome({ status: 'not_reached', exception: null });
  const standing = (c: IChainClaim, epoch = 1) =>
    claimRecord({ cellId: 'd', source: BELOW }, epoch, c);

  it('a crash below is a claim on that cell', () => {
    const actions = mergeChain(answer([finished, outcome()]), {
      epoch: 3,
      cells: places(),
      records: []
    });
    expect(actions).toEqual([
      {
        kind: 'claim',
        cell: SENT[1],
        claim: expect.objectContaining({ originId: 'e', origin: 'edited' })
      }
    ]);
  });

  it('the same edit run to the end of that cell clears its claim; not reaching it leaves it unresolved', () => {
    const now = { epoch: 3, cells: places(), records: [standing(claim())] };
    expect(mergeChain(answer([finished, finished]), now)).toEqual([
      { kind: 'withdraw', cellId: 'd' }
    ]);
    expect(
      mergeChain(
        answer([outcome({ status: 'crashed', cell_id: 'x' }), notReached]),
        now
      )
    ).toEqual([
      expect.objectContaining({ kind: 'claim', cell: SENT[0] }),
      { kind: 'unresolved', cellId: 'd' }
    ]);
    // Outdated on arrival: it cannot clear anything.
    expect(mergeChain(answer([finished, finished], 2), now)).toEqual([
      { kind: 'unresolved', cellId: 'd' }
    ]);
  });

  it("another cell's chain, run without this claim's edit, says nothing of it until the kernel holds the edit", () => {
    const other = claim({ originId: 'z', originSource: 'x = 1' });
    const now = (c: IChainClaim) => ({
      epoch: 3,
      cells: places({ z: { index: 1, source: 'x = 1' } }),
      records: [standing(c)]
    });
    expect(mergeChain(answer([finished, finished]), now(other))).toEqual([]);
    expect(
      mergeChain(answer([finished, finished]), now({ ...other, applied: true }))
    ).toEqual([{ kind: 'withdraw', cellId: 'd' }]);
  });

  it('nothing for an origin edited since, or a cell whose text changed; the cells no longer sent lose their claims', () => {
    const edited = places({ e: { index: 0, source: 'df = 1' } });
    expect(
      mergeChain(answer([finished, outcome()]), {
        epoch: 3,
        cells: edited,
        records: []
      })
    ).toEqual([]);
    const changed = places({ d: { index: 4, source: "df['Age'].mean()" } });
    expect(
      mergeChain(answer([finished, outcome()]), {
        epoch: 3,
        cells: changed,
        records: []
      })
    ).toEqual([]);
    const now = { epoch: 3, cells: places(), records: [standing(claim())] };
    expect(mergeChain({ ...answer([finished]), sent: [SENT[0]] }, now)).toEqual(
      [{ kind: 'withdraw', cellId: 'd' }]
    );
  });
});

describe('staleness: no claim outlives what it was about', () => {
  const record = (
    over: Partial<IChainClaim> = {},
    extra: Partial<ICheckRecord> = {}
  ) => ({
    ...claimRecord({ cellId: 'd', source: BELOW }, 1, claim(over)),
    ...extra
  });

  it("goes as soon as the claimed cell's text changes, even after a run confirmed it", () => {
    const changed = places({ d: { index: 4, source: "df['Age'].mean()" } });
    expect(staleClaims([record()], changed)).toEqual(['d']);
    const confirmed = record(
      {},
      { run: { kind: 'confirmed', ename: 'KeyError', evalue: "'age'", at: 0 } }
    );
    expect(staleClaims([confirmed], changed)).toEqual(['d']);
    expect(staleClaims([record()], places())).toEqual([]);
  });

  it('goes when the edited cell is edited again, deleted, or moved below it, unless the kernel holds the edit', () => {
    const editedAgain = places({ e: { index: 0, source: EDIT + '  # again' } });
    expect(staleClaims([record()], editedAgain)).toEqual(['d']);
    expect(staleClaims([record({ applied: true })], editedAgain)).toEqual([]);
    const deleted = places();
    deleted.delete('e');
    expect(staleClaims([record()], deleted)).toEqual(['d']);
    expect(
      staleClaims([record()], places({ e: { index: 5, source: EDIT } }))
    ).toEqual(['d']);
  });

  it("the edited cell's real run: a crash or another text withdraws its claims, its text without an error re-checks them", () => {
    const records = [
      record(),
      { ...record(), cellId: 'f', chain: claim({ originId: 'other' }) }
    ];
    expect(afterOriginRun(records, 'e', EDIT, false)).toEqual({
      withdraw: [],
      recheck: ['d']
    });
    expect(afterOriginRun(records, 'e', EDIT, true)).toEqual({
      withdraw: ['d'],
      recheck: []
    });
    expect(afterOriginRun(records, 'e', 'df = 2', false)).toEqual({
      withdraw: ['d'],
      recheck: []
    });
    expect(
      afterOriginRun([record({ applied: true })], 'e', EDIT, false)
    ).toEqual({
      withdraw: [],
      recheck: []
    });
  });

  it('a claim is a warning: kept against a check of the cell alone until the kernel holds the edit', () => {
    const c = record({}, { epoch: 3 });
    expect(warns(c)).toBe(true);
    const ownTrial: ICheckRecord = {
      cellId: 'd',
      source: BELOW,
      epoch: 3,
      phase: 'done',
      startedAt: 0,
      sent: {},
      tier: 'full',
      result: finishedTrial
    };
    expect(overrules(ownTrial, c, 3)).toBe(false);
    expect(
      overrules(ownTrial, { ...c, chain: claim({ applied: true }) }, 3)
    ).toBe(true);
    // A newer claim replaces an older warning.
    expect(overrules(record({}, { epoch: 4 }), ownTrial, 4)).toBe(true);
  });
});

// ---- one notebook -----------------------------------------------------------------------------

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
