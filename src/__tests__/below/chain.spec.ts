import type { IBelowOutcome } from '../../contract/api';
import type { IChainClaim, ICheckRecord } from '../../contract/tokens';
import { overrules, warns } from '../../badge/verdict';
import type { ICellPlace, ISentCell } from '../../below/chain';
import {
  afterOriginRun,
  belowCells,
  belowRequest,
  claimRecord,
  MAX_BELOW,
  mergeChain,
  originOf,
  staleClaims,
  wantsChain
} from '../../below/chain';
import {
  belowOutcome as outcome,
  finishedTrial,
  serverConfig
} from '../fixtures';
import { BELOW, claim, EDIT } from './fixtures';

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
