/**
 * The chain: an edit to an early cell breaks a cell further down. The trial of the edited
 * cell goes on with the cells below it, and the cell that would crash gets a badge of its own before
 * anything runs; the edited cell's badge leads with it. Running the edited cell and then that cell
 * confirms the warning.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  badgeOf,
  checked,
  openSidebar,
  runAndSee,
  screenshot,
  screenshotBadge,
  trialAnalysis
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });

const IMPORT = 'import pandas as pd';
const LOADED =
  "df = pd.DataFrame({'age': [22, 38, 26], 'fare': [7.25, 71.3, 7.9]})";
/** The user renames a column in the cell that defines the frame. */
const EDITED =
  "df = pd.DataFrame({'Age': [22, 38, 26], 'fare': [7.25, 71.3, 7.9]})";
/** The cells below it; the last, four cells below the edited one, reads the old name. */
const BELOW = [
  "df['fare_eur'] = df['fare'] * 0.9",
  'n = len(df)',
  "print(n, 'passengers')",
  "mean_age = df['age'].mean()"
];
/** The edited cell and the cell that breaks, by index (their numbers in the notebook: 2 and 6). */
const EDITED_AT = 1;
const BREAKS_AT = 5;

test('an edit to an early cell shows the crash it causes four cells below, before anything runs, and the runs confirm it', async ({
  page
}) => {
  test.setTimeout(240_000);
  // The notebook ran from the top once: every cell ran without an error.
  await page.notebook.createNew('chain.ipynb');
  await page.notebook.setCell(0, 'code', IMPORT);
  for (const source of [LOADED, ...BELOW]) {
    await page.notebook.addCell('code', source);
  }
  for (let i = 0; i <= BREAKS_AT; i++) {
    await page.notebook.runCell(i, true);
  }
  await runAndSee(page, 4, '3 passengers');

  // The edit: the checks and the model find nothing wrong with the edited cell itself.
  await checked(page, EDITED_AT, EDITED, 'no-crash');
  const below = await badgeOf(page, BREAKS_AT);
  await expect(below).toBeHidden();

  // Trial-Run Cell: the trial runs the edited cell, then the cells below, in a sandboxed copy.
  const analysis = trialAnalysis(page, 90_000);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:trial-run-cell')
  );
  const response = await analysis;
  const request = response.request().postDataJSON() as {
    below: { source: string }[];
    previous_source: string;
  };
  expect(request.below.map(c => c.source)).toEqual(BELOW);
  expect(request.previous_source).toBe(LOADED);
  const reply = (await response.json()) as {
    below: { status: string; exception: string | null; without_edit: boolean | null }[];
  };
  expect(reply.below.map(o => o.status)).toEqual([
    'finished',
    'finished',
    'finished',
    'crashed'
  ]);
  expect(reply.below[3].exception).toBe('KeyError');
  expect(reply.below[3].without_edit).toBe(false);

  // The cell four below gets its own badge; nothing ran in the kernel.
  await expect(below).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(below).toHaveClass(/jp-mod-observed/);
  await expect(below).toContainText(
    "Will crash after your edit of cell 2 (observed in a trial run): KeyError: 'age' (line 1, reads df)"
  );
  // The edited cell's badge leads with what the user must act on: the crash below, at its level,
  // then what was tried for the cell itself.
  const edited = await badgeOf(page, EDITED_AT);
  await expect(edited).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(edited).toHaveClass(/jp-mod-observed/);
  const link = edited.locator('.jp-Crane-badge-below-go');
  await expect(link).toHaveText('Cell 6 below would then crash');
  await expect(edited.locator('.jp-Crane-badge-text')).toContainText(
    "Cell 6 below would then crash: KeyError: 'age'. No crash found in this cell itself (tried:"
  );
  await screenshotBadge(page, EDITED_AT, 'badge-chain-edited');
  await screenshotBadge(page, BREAKS_AT, 'badge-chain');

  // The edited cell's panel lists the chain; the link goes to the cell that breaks.
  const panel = await openSidebar(page);
  const chain = panel.locator('.jp-Crane-chain');
  await expect(chain.locator('.jp-Crane-chain-entry')).toHaveCount(4);
  await expect(chain.locator('.jp-Crane-chain-entry').first()).toContainText(
    'cell 3: ran to its end'
  );
  await expect(chain.locator('.jp-Crane-chain-entry').last()).toContainText(
    "cell 6: crashed: KeyError: 'age' (line 1, reads df)"
  );
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-chain');
  await link.click();
  const breaking = (await page.notebook.getCellLocator(BREAKS_AT))!;
  await expect(breaking).toHaveClass(/jp-mod-active/);
  const claim = panel.locator('.jp-Crane-claim');
  await expect(claim).toContainText('After your edit of cell 2:');
  await expect(claim).toContainText('the edit is what breaks it');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-chain-claim');

  // The edited cell runs for real: the warning below stays, checked again on the kernel as it is.
  await page.notebook.runCell(EDITED_AT, true);
  await expect(below).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(link).toBeHidden(); // it ran without an error: no badge on it
  // That cell runs: it crashes as warned.
  await runAndSee(page, BREAKS_AT, 'KeyError');
  await expect(below).toHaveAttribute('data-crane-state', 'confirmed');
  await expect(below).toContainText("Crashed as warned: KeyError: 'age'");
});
