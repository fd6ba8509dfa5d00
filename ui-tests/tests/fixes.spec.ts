/**
 * A fix, tried before it is offered: a KeyError on a column with a close name shows the edit that a
 * trial ran; Apply changes the cell (one undo step), the badge then finds no crash, and the cell runs.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  badgeOf,
  checked,
  notebookWithData,
  openSidebar,
  runAndSee,
  screenshot,
  screenshotBadge
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });

test('a KeyError with a close column offers the fix a trial ran; Apply edits the cell, which then runs', async ({
  page
}) => {
  await notebookWithData(page, 'fix.ipynb');
  const crashing = "mean_age = df['age'].mean()\nprint(round(mean_age, 1))";
  const badge = await checked(page, 1, crashing, 'will-crash');
  const fixRow = badge.locator('.jp-Crane-badge-fix');
  await expect(fixRow).toBeVisible();
  await expect(fixRow).toContainText("Fix: df['age'] → df['Age']");
  await expect(fixRow).toContainText('tried: the edited cell then ran to its end');
  await screenshotBadge(page, 1, 'badge-fix');

  // The panel shows the change line by line, with the same Apply.
  const panel = await openSidebar(page);
  const section = panel.locator('.jp-Crane-fix');
  await expect(section.locator('.jp-Crane-fix-diff')).toHaveText(
    "- mean_age = df['age'].mean()\n+ mean_age = df['Age'].mean()"
  );
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-fix');

  // Apply: the cell holds the fixed text, the new check finds no crash, and no fix is offered.
  await fixRow.getByRole('button', { name: 'Apply fix' }).click();
  const fixed = "mean_age = df['Age'].mean()\nprint(round(mean_age, 1))";
  await expect
    .poll(async () => page.notebook.getCellTextInput(1))
    .toBe(fixed);
  await expect(await badgeOf(page, 1)).toHaveAttribute(
    'data-crane-state',
    'no-crash',
    { timeout: 30_000 }
  );
  await expect(fixRow).toBeHidden();
  // One undo step brings the original back.
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Control+Z');
  await expect.poll(async () => page.notebook.getCellTextInput(1)).toBe(crashing);
  await page.keyboard.press('Control+Shift+Z');
  await expect.poll(async () => page.notebook.getCellTextInput(1)).toBe(fixed);
  // And it runs.
  await runAndSee(page, 1, '30.0');
});
