import { nullTranslator } from '@jupyterlab/translation';

import type { IAnalyzeResult, IFix } from '../../contract/api';
import { CellBadge } from '../../badge/widget';
import type { ICheckRecord } from '../../contract/tokens';
import { cellView, offeredFix } from '../../badge/verdict';
import {
  blockedTrial,
  checksCrash,
  modelCrash,
  noModelNoCrash,
  observedCrash,
  trialOutcome
} from '../fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

function done(
  result: IAnalyzeResult | undefined,
  extra: Partial<ICheckRecord> = {}
): ICheckRecord {
  return {
    cellId: 'c',
    source: 'src',
    epoch: 1,
    phase: 'done',
    startedAt: 0,
    sent: {},
    result,
    ...extra
  };
}

function show(
  badge: CellBadge,
  record: ICheckRecord | undefined,
  source = 'src',
  epoch = 1
) {
  badge.render(cellView(record, source, epoch), record);
}

/** The badge's text without its button. */
function text(badge: CellBadge): string {
  return badge.node.querySelector('.jp-Crane-badge-text')?.textContent ?? '';
}

describe('CellBadge', () => {
  let opened = 0;
  let badge: CellBadge;
  beforeEach(() => {
    opened = 0;
    badge = new CellBadge(trans, () => (opened += 1));
  });
  afterEach(() => badge.dispose());

  it('is hidden until the cell is checked', () => {
    expect(badge.isHidden).toBe(true);
    expect(badge.state).toBe('none');
  });

  it('says a certain crash will happen, who found it, the cause, and where the diagnosis is', () => {
    show(badge, done(checksCrash));
    expect(badge.isHidden).toBe(false);
    expect(badge.hasClass('jp-mod-will-crash')).toBe(true);
    expect(text(badge)).toBe(
      "Will crash (certain: deterministic check): KeyError: df has no column 'Agee' (line 1). Did you mean 'Age'?"
    );
    const details = badge.node.querySelector('button')!;
    expect(details.textContent).toBe('Details in the crash panel');
    expect(details.hidden).toBe(false);
    expect(badge.node.querySelector('svg')).not.toBeNull();
  });

  it('tells an observed crash from a prediction at a glance', () => {
    show(badge, done(observedCrash));
    expect(badge.hasClass('jp-mod-observed')).toBe(true);
    expect(text(badge)).toBe(
      "Will crash (observed in a trial run): KeyError: 'Agee'. Did you mean 'Age'? (line 2)"
    );
    const observedSvg = badge.node.querySelector('svg')!.outerHTML;
    show(badge, done(modelCrash));
    expect(badge.hasClass('jp-mod-observed')).toBe(false);
    expect(badge.hasClass('jp-mod-may-crash')).toBe(true);
    expect(text(badge)).toMatch(/^May crash \(the model's prediction\): /);
    expect(badge.node.querySelector('svg')!.outerHTML).not.toBe(observedSvg);
  });

  it('says what was tried when no crash was found', () => {
    show(badge, done(noModelNoCrash));
    expect(badge.state).toBe('no-crash');
    expect(text(badge)).toBe(
      'No crash found (tried: the deterministic checks (no model configured))'
    );
  });

  it('names a trial run that was asked for and could not decide', () => {
    show(badge, done(blockedTrial));
    expect(text(badge)).toBe(
      'No crash found (tried: the deterministic checks and the model; trial run blocked by the sandbox)'
    );
    show(
      badge,
      done({ ...noModelNoCrash, trial: trialOutcome('timed_out', null) })
    );
    expect(text(badge)).toBe(
      'No crash found (tried: the deterministic checks (no model configured); trial run timed out)'
    );
    show(
      badge,
      done({
        ...modelCrash,
        trial: trialOutcome('unavailable', 'CUDA in use')
      })
    );
    expect(text(badge)).toMatch(
      /^May crash \(the model's prediction; no trial run possible\): /
    );
  });

  it('switches state classes instead of accumulating them', () => {
    show(badge, done(checksCrash, { phase: 'checking' }));
    expect(badge.hasClass('jp-mod-checking')).toBe(true);
    expect(badge.node.querySelector('button')!.hidden).toBe(true);
    show(badge, done(noModelNoCrash));
    expect(badge.hasClass('jp-mod-checking')).toBe(false);
    expect(badge.hasClass('jp-mod-no-crash')).toBe(true);
  });

  it('marks an outdated verdict', () => {
    show(badge, done(checksCrash), 'other');
    expect(badge.hasClass('jp-mod-stale')).toBe(true);
    expect(text(badge)).toContain('outdated');
    show(badge, done(checksCrash));
    expect(badge.hasClass('jp-mod-stale')).toBe(false);
  });

  it('shows a confirmed and a missed crash with the real exception', () => {
    const run = { ename: 'KeyError', evalue: "'Agee'", at: 1 };
    show(
      badge,
      done(checksCrash, { run: { ...run, kind: 'confirmed' } }),
      'src',
      9
    );
    expect(badge.state).toBe('confirmed');
    expect(text(badge)).toBe("Crashed as warned: KeyError: 'Agee'");
    show(
      badge,
      done(noModelNoCrash, { run: { ...run, kind: 'missed' } }),
      'src',
      9
    );
    expect(badge.state).toBe('missed');
    expect(text(badge)).toBe(
      "Crashed without a warning (the check had found no crash): KeyError: 'Agee'"
    );
  });

  it("carries the first line of a run's long message, not its whole block", () => {
    const run = {
      ename: 'ValueError',
      evalue:
        'Input 0 of layer "dense" is incompatible with the layer\n\n' +
        'Arguments received by Sequential.call():\n  • inputs=tf.Tensor(shape=(None, 5))',
      at: 1,
      kind: 'confirmed' as const
    };
    show(badge, done(checksCrash, { run }), 'src', 9);
    expect(text(badge)).toBe(
      'Crashed as warned: ValueError: Input 0 of layer "dense" is incompatible with the layer'
    );
  });

  it('shows failures with their message', () => {
    show(
      badge,
      done({
        ...noModelNoCrash,
        status: 'llm_error',
        verdict: null,
        error: { kind: 'timeout', message: 'model timed out' }
      })
    );
    expect(badge.state).toBe('error');
    expect(text(badge)).toBe('Check failed: model timed out');
    show(badge, done(undefined, { phase: 'failed', error: 'HTTP 500' }));
    expect(text(badge)).toBe('Check failed: HTTP 500');
  });

  it('opens the sidebar on a click of the button or the badge', () => {
    show(badge, done(checksCrash));
    badge.node.querySelector('button')!.click();
    badge.node.click();
    expect(opened).toBe(2);
  });
});

describe('CellBadge: a verified fix', () => {
  const fix: IFix = {
    // eslint-disable-next-line jupyter/no-untranslated-string -- the server's text, not a UI string
    title: "df['Agee'] → df['Age']",
    source: "df['Age'].mean()",
    origin: 'close-name',
    line: 1,
    tried: 'tried: the edited cell then ran to its end in a trial (0.2 s)',
    shortened: false,
    trial_ms: 210
  };
  const withFix = (result: IAnalyzeResult) => ({ ...result, fixes: [fix] });

  it('is offered under a warning for the very text it was made for, and Apply hands it over without opening the panel', () => {
    const applied: IFix[] = [];
    let opened = 0;
    const badge = new CellBadge(
      trans,
      () => (opened += 1),
      f => applied.push(f)
    );
    const record = done(withFix(checksCrash));
    badge.render(cellView(record, 'src', 1), record, offeredFix(record, 'src'));
    const row = badge.node.querySelector<HTMLElement>('.jp-Crane-badge-fix')!;
    expect(row.hidden).toBe(false);
    expect(row.textContent).toContain(
      "Fix: df['Agee'] → df['Age'] (tried: the edited cell then ran to its end"
    );
    row.querySelector<HTMLButtonElement>('button')!.click();
    expect(applied).toEqual([fix]);
    expect(opened).toBe(0);
    // Edited since, no fix: the text it was made for is gone.
    expect(offeredFix(record, 'src2')).toBeNull();
    badge.render(
      cellView(record, 'src2', 1),
      record,
      offeredFix(record, 'src2')
    );
    expect(row.hidden).toBe(true);
    badge.dispose();
  });

  it('is never offered beside a no-crash verdict or a run', () => {
    expect(offeredFix(done(withFix(noModelNoCrash)), 'src')).toBeNull();
    const ran = done(withFix(checksCrash), {
      run: { kind: 'confirmed', ename: 'KeyError', evalue: "'Agee'", at: 1 }
    });
    expect(offeredFix(ran, 'src')).toBeNull();
    expect(offeredFix(done(checksCrash), 'src')).toBeNull();
  });
});
