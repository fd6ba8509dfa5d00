/**
 * What a user reads, level by level: will crash (certain), may crash (the model), no crash found;
 * then confirmed (the run crashed as warned) and missed (it crashed, nothing warned); and the
 * session figures a fixed crash adds to.
 */
import { expect, galata, test } from '@jupyterlab/galata';

import {
  checked,
  CRASHING,
  FIXED,
  MAYBE,
  MAYBE_FIXED,
  MISSED,
  notebookWithData,
  openSidebar,
  runAndSee,
  screenshot,
  screenshotBadge,
  setSetting,
  sidebar,
  stat
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });
test.describe.configure({ mode: 'serial' });

test('will crash: a certain crash before Shift-Enter, its cause and decisive facts; the guard; confirmed by the run', async ({
  page
}) => {
  await notebookWithData(page, 'certain.ipynb');
  const badge = await checked(page, 1, CRASHING, 'will-crash');
  await expect(badge).toContainText(
    "Will crash (certain: deterministic check): KeyError: df has no column 'Agee'"
  );
  const details = badge.getByRole('button', { name: 'Details in the crash panel' });
  await expect(details).toBeVisible();
  // Nothing ran.
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();
  await screenshotBadge(page, 1, 'badge-certain');

  // The badge says where the full diagnosis is: the crash panel, cause first.
  await details.click();
  const panel = sidebar(page);
  await expect(panel).toBeVisible();
  await expect(panel.locator('.jp-Crane-active .jp-Crane-level')).toHaveClass(
    /jp-mod-will-crash/
  );
  await expect(panel.locator('.jp-Crane-basis')).toHaveText(
    'certain: deterministic check'
  );
  await expect(panel.locator('.jp-Crane-cause-text')).toContainText(
    "df has no column 'Agee'"
  );
  await expect(panel.locator('.jp-Crane-cause-line')).toHaveText(
    `Line 1: ${CRASHING}`
  );
  await expect(panel.locator('.jp-Crane-decisive li').first()).toHaveText(
    "df['Agee'] does not exist"
  );
  // The first object's decisive facts come first, highlighted.
  await expect(
    panel.locator('.jp-Crane-object').first().locator('li').first()
  ).toHaveClass(/jp-mod-decisive/);
  // No model was asked: no model, token or vote rows.
  await expect(panel.locator('.jp-Crane-details dt')).toHaveText(['Time']);
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-light');

  // The guard asks in the badge's words; Cancel runs nothing, in edit and in command mode.
  await setSetting(page, 'guard', true);
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('This cell will crash');
  await expect(dialog).toContainText('certain: deterministic check');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();
  await page.notebook.selectCells(1);
  await page.keyboard.press('Escape');
  await expect(page.locator('.jp-Notebook.jp-mod-commandMode')).toHaveCount(1);
  await page.keyboard.press('Shift+Enter');
  await expect(dialog).toContainText('This cell will crash');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();

  // Run anyway: the kernel raises the KeyError, and the badge says the warning was right.
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  await dialog.getByRole('button', { name: 'Run anyway' }).click();
  await expect
    .poll(
      async () => (await page.notebook.getCellTextOutput(1))?.join('\n') ?? '',
      { timeout: 30_000 }
    )
    .toContain('KeyError');
  await expect(badge).toHaveAttribute('data-crane-state', 'confirmed');
  await expect(badge).toContainText("Crashed as warned: KeyError: 'Agee'");
  // No prediction comes back above the real traceback.
  await page.waitForTimeout(2500);
  await expect(badge).toHaveAttribute('data-crane-state', 'confirmed');
  await expect(panel.locator('.jp-Crane-history-entry').first()).toHaveClass(
    /jp-mod-confirmed/
  );
  await expect(stat(page, 'confirmed')).toHaveText('1');
  await screenshotBadge(page, 1, 'badge-confirmed');
  await setSetting(page, 'guard', false);
});

test('may crash: the model predicts what the checks cannot prove; fixed and run, the crash counts as caught with the time saved', async ({
  page
}) => {
  await notebookWithData(page, 'predicted.ipynb');
  const panel = await openSidebar(page);
  await expect(stat(page, 'caught')).toHaveText('0');
  await expect(stat(page, 'saved')).toHaveAttribute('data-ms', '0');

  const badge = await checked(page, 1, MAYBE, 'may-crash');
  await expect(badge).toContainText("May crash (the model's prediction):");
  await expect(badge).toContainText('KeyError');
  await screenshotBadge(page, 1, 'badge-predicted');
  await expect(panel.locator('.jp-Crane-basis')).toHaveText("the model's prediction");
  // The facts the model's reasoning names are the decisive ones: the missing column among them.
  await expect(panel.locator('.jp-Crane-decisive')).toContainText(
    "df['Agee'] does not exist"
  );
  // A model answered: its name and tokens are shown now.
  await expect(panel.locator('.jp-Crane-details dt')).toContainText(['Model', 'Time', 'Tokens']);
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-predicted-light');

  // Fix the cell, run it: no error, a crash caught, and the re-run it spared counted.
  await checked(page, 1, MAYBE_FIXED, 'no-crash');
  await runAndSee(page, 1, '30');
  await expect(stat(page, 'caught')).toHaveText('1 (observed 0, predicted 1)');
  const saved = Number(await stat(page, 'saved').getAttribute('data-ms'));
  // At least the data-loading cell (pandas import included) would have been re-run.
  expect(saved).toBeGreaterThan(0);
  await expect(stat(page, 'checks')).not.toHaveText('0');
  await panel.locator('.jp-Crane-help summary').click();
  await expect(panel.locator('.jp-Crane-help')).toContainText('restart');
});

test('no crash found, with what was tried; then a crash nothing warned of is recorded as missed', async ({
  page
}) => {
  await notebookWithData(page, 'missed.ipynb');
  const panel = await openSidebar(page);
  const badge = await checked(page, 1, MISSED, 'no-crash');
  await expect(badge).toContainText(
    'No crash found (tried: the deterministic checks and the model)'
  );
  // What was tried, once: under the level.
  await expect(panel.locator('.jp-Crane-basis')).toHaveText(
    'tried: the deterministic checks and the model'
  );
  await expect(panel.locator('.jp-Crane-active .jp-Crane-cause')).toHaveCount(0);
  await runAndSee(page, 1, 'KeyError');
  await expect(badge).toHaveAttribute('data-crane-state', 'missed');
  await expect(badge).toContainText('Crashed without a warning');
  const entry = panel.locator('.jp-Crane-history-entry').first();
  await expect(entry).toHaveClass(/jp-mod-missed/);
  await expect(entry).toContainText(MISSED);
  await expect(stat(page, 'missed')).toHaveText('1');
});

test('a warned cell that is fixed and run adds a caught crash (checks)', async ({
  page
}) => {
  await notebookWithData(page, 'fixed.ipynb');
  await openSidebar(page);
  await checked(page, 1, CRASHING, 'will-crash');
  await checked(page, 1, FIXED, 'no-crash');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-no-crash');
  await runAndSee(page, 1, '30');
  await expect(stat(page, 'caught')).toHaveText('1 (observed 0, predicted 1)');
  expect(Number(await stat(page, 'saved').getAttribute('data-ms'))).toBeGreaterThan(0);
});

// Referenced so the import is kept for the window.galata typings.
void galata;
