import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import React from 'react';

import type { INotebookRun } from '../../contract/api';
import type { NotebookTop } from '../../fromtop/run';
import { FromTopSection, TopToolbarItem } from '../../fromtop/view';
import { rendered, settle } from '../harness';
import { doneRun, outcome } from './fixtures';

const trans = nullTranslator.load('crane_jupyterlab');

/** What the view reads of a notebook's runs. */
function fakeTop(fields: Partial<NotebookTop> = {}): NotebookTop {
  const ids = ['c0', 'c2'];
  return {
    run: null,
    running: false,
    stale: false,
    error: null,
    unavailable: null,
    kernelHasIt: true,
    startedAt: Date.now(),
    sent: [
      { cellId: 'c0', source: '\nimport pandas as pd\ndf = pd.read_csv(p)' },
      { cellId: 'c2', source: "df_clean['Age'].mean()" }
    ],
    numberOf: (id: string) =>
      ids.includes(id) ? ids.indexOf(id) * 2 + 1 : null,
    changed: new Signal<unknown, void>({}),
    cancel: jest.fn(async () => undefined),
    start: jest.fn(async () => undefined),
    ...fields
  } as unknown as NotebookTop;
}

function render(
  top: NotebookTop,
  onStart = () => undefined,
  onReveal: (id: string) => void = () => undefined
): Promise<{ node: HTMLElement; dispose: () => void }> {
  return rendered(
    <FromTopSection
      trans={trans}
      top={top}
      onStart={onStart}
      onReveal={onReveal}
    />
  );
}

const CRASHED = doneRun([
  outcome('c0', 'shortened'),
  outcome('c2', 'crashed', {
    exception: 'NameError',
    message: "name 'df_clean' is not defined",
    line: 1,
    hidden: true
  })
]);

describe('FromTopSection', () => {
  it('offers the run, and says what it does, before any', async () => {
    const started = jest.fn();
    const { node, dispose } = await render(fakeTop(), started);
    const button = node.querySelector<HTMLButtonElement>('.jp-Crane-top-run')!;
    expect(button.textContent).toBe('Check from the top');
    expect(button.disabled).toBe(false);
    expect(node.textContent).toContain('your kernel stays as it is');
    button.click();
    expect(started).toHaveBeenCalled();
    dispose();
  });

  it('says why no run can start', async () => {
    const { node, dispose } = await render(
      fakeTop({ unavailable: 'No sandbox on this server.' })
    );
    expect(
      node.querySelector<HTMLButtonElement>('.jp-Crane-top-run')!.disabled
    ).toBe(true);
    expect(node.textContent).toContain('No sandbox on this server.');
    dispose();
  });

  it('shows the progress bar and Cancel while a run goes', async () => {
    const run: INotebookRun = {
      ...doneRun([]),
      state: 'running',
      done: 1,
      total: 2,
      running: 1
    };
    const top = fakeTop({ run, running: true });
    const { node, dispose } = await render(top);
    const bar = node.querySelector('progress')!;
    expect(bar.getAttribute('max')).toBe('2');
    expect(bar.getAttribute('value')).toBe('1');
    expect(node.textContent).toContain(
      'Cell 3 running (1 of 2 code cells done)'
    );
    expect(node.querySelector('.jp-Crane-top-run')!.textContent).toBe(
      'Running…'
    );
    node.querySelector<HTMLButtonElement>('.jp-Crane-top-cancel')!.click();
    expect(top.cancel).toHaveBeenCalled();
    dispose();
  });

  it('lists each code cell after the run, the first crash first in words, each a link', async () => {
    const reveal = jest.fn();
    const { node, dispose } = await render(
      fakeTop({ run: CRASHED }),
      undefined,
      reveal
    );
    expect(node.querySelector('.jp-Crane-top-summary')!.textContent).toBe(
      "Fails from the top at cell 3: NameError: name 'df_clean' is not defined (line 1); your kernel has it from a cell that no longer defines it"
    );
    const lines = node.querySelectorAll('.jp-Crane-top-cell');
    expect(lines).toHaveLength(2);
    expect(lines[0].getAttribute('data-crane-top-status')).toBe('shortened');
    expect(lines[0].querySelector('code')!.textContent).toBe(
      'import pandas as pd'
    );
    expect(lines[1].classList).toContain('jp-mod-first-crash');
    expect(lines[1].textContent).toContain('[3]crashed');
    lines[1].querySelector('button')!.click();
    expect(reveal).toHaveBeenCalledWith('c2');
    expect(node.textContent).toContain('2.4 s in a fresh worker');
    expect(node.querySelector('.jp-Crane-stale')).toBeNull();
    dispose();
  });

  it('offers a run in full where a crash a cut loop may have caused was left unanswered', async () => {
    const hedgedRun = doneRun([
      outcome('c0', 'shortened'),
      outcome('c2', 'crashed', {
        exception: 'IndexError',
        message: 'list index out of range',
        line: 1,
        after_cut: true
      })
    ]);
    const top = fakeTop({ run: hedgedRun });
    const { node, dispose } = await render(top);
    const full = node.querySelector<HTMLButtonElement>('.jp-Crane-top-full')!;
    expect(full.textContent).toBe('Run in full to answer it');
    full.click();
    expect(top.start).toHaveBeenCalledWith(true);
    dispose();
    // a claimed crash (nothing a cut may have caused) offers none
    const claimed = await render(fakeTop({ run: CRASHED }));
    expect(claimed.node.querySelector('.jp-Crane-top-full')).toBeNull();
    claimed.dispose();
  });

  it('marks a result outdated once the code cells changed', async () => {
    const { node, dispose } = await render(
      fakeTop({ run: CRASHED, stale: true })
    );
    expect(node.querySelector('.jp-Crane-stale')!.textContent).toMatch(
      /^Outdated: the notebook’s code cells changed/
    );
    expect(node.querySelector('.jp-Crane-top-summary')!.classList).toContain(
      'jp-mod-stale'
    );
    dispose();
  });
});

describe('TopToolbarItem', () => {
  it('offers the run, then its progress and Cancel while it goes', async () => {
    const started = jest.fn();
    const changed = new Signal<unknown, void>({});
    const fields: Partial<NotebookTop> = { changed } as Partial<NotebookTop>;
    const top = fakeTop(fields);
    const item = new TopToolbarItem(top, trans, started);
    Widget.attach(item, document.body);
    item.update();
    await settle();
    expect(item.node.textContent).toBe('From the top');
    item.node.querySelector<HTMLElement>('.jp-ToolbarButtonComponent')!.click();
    expect(started).toHaveBeenCalled();

    Object.assign(top, {
      running: true,
      run: { ...doneRun([]), state: 'running', done: 1, total: 3 }
    });
    changed.emit();
    await settle();
    expect(item.node.textContent).toBe('Running… 1/3Cancel');
    item.dispose();
  });
});
