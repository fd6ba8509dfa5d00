/**
 * From the top: "Check the Notebook from the Top" runs the notebook's code cells, in
 * order, in a fresh sandboxed worker of the kernel's Python, none of the kernel's state. A cell that
 * defined a name ran and was then deleted: the kernel still has the name, the notebook fails from the
 * top at its first reader, and the badge says so, with the hidden state made visible. The user's
 * kernel stays as it was.
 */
import { expect, test } from '@jupyterlab/galata';
import type { Response } from '@playwright/test';
import * as path from 'path';

import {
  notebookWithData,
  openSidebar,
  screenshot,
  setSetting,
  sidebar
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });
test.describe.configure({ mode: 'serial' });

const DEFINES = 'df_clean = df.dropna()';
const READS = "df_clean['Age'].mean()";

/** A screenshot of a cell from its top to the bottom of its from-the-top badge (CRANE_SCREENSHOTS). */
async function screenshotTopBadge(
  page: Parameters<typeof notebookWithData>[0],
  index: number,
  name: string
): Promise<void> {
  if (!process.env.CRANE_SCREENSHOTS) {
    return;
  }
  const cell = (await page.notebook.getCellLocator(index))!;
  const top = (await cell.boundingBox())!;
  const badge = (await cell.locator('.jp-Crane-topbadge').boundingBox())!;
  await page.screenshot({
    path: path.resolve(
      __dirname,
      '..',
      '..',
      'docs',
      'screenshots',
      `${name}.png`
    ),
    clip: {
      x: top.x,
      y: top.y,
      width: top.width,
      height: badge.y + badge.height - top.y + 4
    }
  });
}

/** The next answer of `GET /crane/notebook/{id}` whose run has ended (the URL carries JupyterLab's
 * cache buster). */
function runEnded(
  page: Parameters<typeof notebookWithData>[0]
): Promise<Response> {
  return page.waitForResponse(
    async response => {
      if (
        !/\/crane\/notebook\/[0-9a-f]+$/.test(
          new URL(response.url()).pathname
        ) ||
        response.request().method() !== 'GET' ||
        response.status() !== 200
      ) {
        return false;
      }
      const run = (await response.json()) as { state: string };
      return run.state !== 'running';
    },
    { timeout: 120_000 }
  );
}

test('a deleted defining cell: the run from the top fails at its reader, and says the kernel has the name', async ({
  page
}) => {
  // Only the run from the top here: no automatic checks of the cells being typed.
  await setSetting(page, 'autoCheck', false);
  await notebookWithData(page, 'fromtop.ipynb', 0);
  await page.notebook.addCell('code', DEFINES);
  await page.notebook.runCell(1, true);
  await page.notebook.addCell('code', READS);
  await page.notebook.runCell(2, true);
  await expect
    .poll(async () => (await page.notebook.getCellTextOutput(2))?.join(''))
    .toContain('30');
  // The cell that defined df_clean goes; the kernel keeps df_clean.
  await page.notebook.selectCells(1);
  await page.notebook.deleteCells();
  expect(await page.notebook.getCellCount()).toBe(2);

  const posted = page.waitForRequest(
    request =>
      new URL(request.url()).pathname.endsWith('/crane/notebook') &&
      request.method() === 'POST'
  );
  const ended = runEnded(page);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:check-from-top')
  );
  const panel = sidebar(page);
  await expect(panel).toBeVisible();
  // While it runs: the progress bar and Cancel.
  const section = panel.locator('.jp-Crane-top');
  await expect(section.locator('progress.jp-Crane-top-bar')).toBeVisible();
  await expect(section.locator('.jp-Crane-top-cancel')).toBeVisible();
  await expect(section.locator('.jp-Crane-top-run')).toHaveText('Running…');

  // The notebook's code cells, in order, with the ids the model has.
  const body = (await posted).postDataJSON() as {
    kernel_id: string;
    cells: { cell_id: string; source: string }[];
  };
  expect(body.cells.map(c => c.source)).toEqual([
    expect.stringContaining('pd.DataFrame'),
    READS
  ]);
  const ids = await page.evaluate(() =>
    (
      window.jupyterapp.shell.currentWidget as unknown as {
        content: { widgets: { model: { id: string } }[] };
      }
    ).content.widgets.map(w => w.model.id)
  );
  expect(body.cells.map(c => c.cell_id)).toEqual(ids);

  const run = (await (await ended).json()) as {
    state: string;
    first_crash_index: number;
    first_crash: { exception: string; hidden: boolean };
  };
  expect(run.state).toBe('done');
  expect(run.first_crash_index).toBe(1);
  expect(run.first_crash.exception).toBe('NameError');
  expect(run.first_crash.hidden).toBe(true);

  // The badge on the first reader, with the hidden state.
  const cell = (await page.notebook.getCellLocator(1))!;
  const badge = cell.locator('.jp-Crane-topbadge');
  await expect(badge).toContainText(
    "Fails from the top: NameError: name 'df_clean' is not defined"
  );
  await expect(badge).toContainText(
    'your kernel has it from a cell that no longer defines it'
  );
  await expect(badge).toHaveClass(/jp-mod-observed/);

  // The panel: what the run found, one line per code cell.
  await expect(section.locator('.jp-Crane-top-summary')).toContainText(
    "Fails from the top at cell 2: NameError: name 'df_clean' is not defined"
  );
  const lines = section.locator('.jp-Crane-top-cell');
  await expect(lines).toHaveCount(2);
  await expect(lines.nth(0)).toHaveAttribute('data-crane-top-status', 'ran');
  await expect(lines.nth(1)).toHaveAttribute(
    'data-crane-top-status',
    'crashed'
  );
  await expect(lines.nth(1)).toContainText('line 1');
  await expect(section.locator('.jp-Crane-top-run')).toHaveText(
    'Check from the top'
  );
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-fromtop');
  await screenshotTopBadge(page, 1, 'badge-fromtop');

  // The kernel is as it was: df_clean is still there, the cells' outputs unchanged.
  expect((await page.notebook.getCellTextOutput(1))?.join('')).toContain('30');
  await page.notebook.addCell('code', 'print(len(df_clean), df.shape)');
  await page.notebook.runCell(2, true);
  await expect
    .poll(async () => (await page.notebook.getCellTextOutput(2))?.join(''))
    .toContain('2 (3, 2)');

  // A code cell added (or edited, moved, removed) outdates the result: the badge goes, the panel
  // says so.
  await expect(badge).toHaveCount(0);
  await expect(section.locator('.jp-Crane-stale')).toContainText('Outdated');
  await setSetting(page, 'autoCheck', true);
});
