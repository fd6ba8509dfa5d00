import { nullTranslator } from '@jupyterlab/translation';

import { CellBadge } from '../badge';
import type { IAnalyzeResult, ICheckRecord } from '../tokens';
import { badgeView } from '../verdict';

const trans = nullTranslator.load('crane_jupyterlab');

function done(
  status: IAnalyzeResult['status'],
  detection: boolean | null,
  extra: Partial<IAnalyzeResult> = {}
): ICheckRecord {
  return {
    cellId: 'c',
    source: 'df.x',
    epoch: 1,
    phase: 'done',
    startedAt: 0,
    sent: {},
    result: {
      status,
      verdict:
        detection === null
          ? null
          : {
              detection,
              reasoning: 'AttributeError: df has no attribute x. More detail.',
              source: 'llm',
              votes: [detection],
              findings: []
            },
      runtime: null,
      runtime_text: '',
      executed_cells: 1,
      model: null,
      timing: { extraction_ms: 1, llm_ms: 1, total_ms: 2 },
      tokens: { prompt: null, completion: null },
      ...extra
    }
  };
}

function show(
  badge: CellBadge,
  record: ICheckRecord | undefined,
  source = 'df.x',
  epoch = 1
) {
  badge.render(badgeView(record, source, epoch), record);
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

  it('shows a crash in one line with the full reasoning on hover', () => {
    show(badge, done('ok', true));
    expect(badge.isHidden).toBe(false);
    expect(badge.hasClass('jp-mod-crash')).toBe(true);
    expect(badge.node.textContent).toBe(
      'Predicted crash: AttributeError: df has no attribute x.'
    );
    expect(badge.node.title).toBe(
      'AttributeError: df has no attribute x. More detail.'
    );
    expect(badge.node.querySelector('svg')).not.toBeNull();
  });

  it('switches state classes instead of accumulating them', () => {
    show(badge, { ...done('ok', true), phase: 'checking' });
    expect(badge.hasClass('jp-mod-checking')).toBe(true);
    show(badge, done('ok', false));
    expect(badge.hasClass('jp-mod-checking')).toBe(false);
    expect(badge.hasClass('jp-mod-ok')).toBe(true);
    expect(badge.node.textContent).toBe('No crash predicted');
  });

  it('marks an outdated verdict', () => {
    show(badge, done('ok', true), 'df.y');
    expect(badge.hasClass('jp-mod-stale')).toBe(true);
    expect(badge.node.textContent).toContain('outdated');
    show(badge, done('ok', true));
    expect(badge.hasClass('jp-mod-stale')).toBe(false);
  });

  it('shows model failures and the no-model hint', () => {
    show(
      badge,
      done('llm_error', null, {
        error: { kind: 'timeout', message: 'model timed out' }
      })
    );
    expect(badge.state).toBe('error');
    expect(badge.node.textContent).toBe('Check failed: model timed out');
    show(badge, done('no_model', false, { hint: 'Set CRANE_MODEL.' }));
    expect(badge.state).toBe('limited');
    expect(badge.node.title).toBe('Set CRANE_MODEL.');
    show(badge, {
      ...done('ok', false),
      phase: 'failed',
      result: undefined,
      error: 'HTTP 500'
    });
    expect(badge.node.textContent).toBe('Check failed: HTTP 500');
  });

  it('opens the sidebar on click', () => {
    show(badge, done('ok', true));
    badge.node.click();
    expect(opened).toBe(1);
  });
});
