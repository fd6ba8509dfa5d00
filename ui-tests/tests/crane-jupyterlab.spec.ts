/**
 * End-to-end: a real JupyterLab, a real kernel, the crane server extension, and a stub LLM on
 * 127.0.0.1 that answers from the runtime facts in the prompt (crane_stub.py).
 */
import { expect, galata, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator, Response } from '@playwright/test';
import * as path from 'path';

const PLUGIN_ID = 'crane-jupyterlab:plugin';
const LOAD_DATA =
  "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0, None], 'Fare': [7.25, 71.3, 8.05]})";
const CRASHING = "df['Agee'].mean()";
const FIXED = "df['Age'].mean()";
const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });
test.describe.configure({ mode: 'serial' });

/** Set one of our settings through the application's setting registry. */
async function setSetting(
  page: IJupyterLabPageFixture,
  key: string,
  value: boolean | number | string
): Promise<void> {
  await page.evaluate(
    async ({ id, key, value }) => {
      const registry = await window.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      );
      await registry?.set(id, key, value);
    },
    { id: PLUGIN_ID, key, value }
  );
}

/** Resolve with the next successful analysis of `source`. */
function analysisOf(page: IJupyterLabPageFixture, source: string): Promise<Response> {
  return page.waitForResponse(
    async response => {
      if (!response.url().includes('/crane/analyze')) {
        return false;
      }
      const body = response.request().postDataJSON() as { source?: string } | null;
      if (body?.source !== source || response.status() !== 200) {
        return false;
      }
      const json = (await response.json()) as { status: string };
      return json.status === 'ok';
    },
    { timeout: 90_000 }
  );
}

async function badgeOf(page: IJupyterLabPageFixture, index: number): Promise<Locator> {
  const cell = await page.notebook.getCellLocator(index);
  if (!cell) {
    throw new Error(`no cell ${index}`);
  }
  return cell.locator('.jp-Crane-badge');
}

/** Type into a cell the way a user does, leaving it in edit mode. */
async function typeInto(
  page: IJupyterLabPageFixture,
  index: number,
  source: string
): Promise<void> {
  await page.notebook.enterCellEditingMode(index);
  await page.keyboard.press('Control+A');
  await page.keyboard.type(source);
}

async function screenshot(locator: Locator, name: string): Promise<void> {
  // Screenshots for the README are refreshed on demand, never by CI.
  if (process.env.CRANE_SCREENSHOTS) {
    await locator.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }
}

/** Create a notebook whose first cell loaded a data frame, and an empty second cell. */
async function notebookWithData(page: IJupyterLabPageFixture, name: string): Promise<void> {
  await page.notebook.createNew(name);
  await page.notebook.setCell(0, 'code', LOAD_DATA);
  await page.notebook.runCell(0, true);
  await page.notebook.addCell('code', '');
}

test('predicts a crash before Shift-Enter, explains it, and follows the settings', async ({
  page
}) => {
  await notebookWithData(page, 'crane.ipynb');

  // 1. Typing a crashing cell: the badge appears without running the cell.
  const first = analysisOf(page, CRASHING);
  await typeInto(page, 1, CRASHING);
  const firstJson = await (await first).json();
  expect(firstJson.verdict.detection).toBe(true);
  expect(firstJson.runtime_text).toContain('MISSING');
  // With V on, value facts (unique counts) reach the model.
  expect(firstJson.runtime_text).toContain('unique');

  const badge = await badgeOf(page, 1);
  await expect(badge).toHaveClass(/jp-mod-crash/);
  await expect(badge).toContainText('Predicted crash');
  await expect(badge).toHaveAttribute('title', /MISSING/);
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();
  const cell = await page.notebook.getCellLocator(1);
  await screenshot(cell!, 'badge-light');

  // 2. The sidebar shows the reasoning and the runtime facts, grouped S/R/V.
  await badge.click();
  const sidebar = page.locator('#jp-crane-sidebar');
  await expect(sidebar).toBeVisible();
  await expect(sidebar.locator('.jp-Crane-verdict')).toHaveClass(/jp-mod-crash/);
  await expect(sidebar.locator('.jp-Crane-reasoning')).toContainText('KeyError');
  await expect(sidebar.locator('.jp-Crane-notes')).toContainText("df['Agee']");
  for (const cat of ['S', 'R', 'V']) {
    await expect(
      sidebar.locator(`.jp-Crane-factgroup[data-category="${cat}"] li`).first()
    ).toBeVisible();
  }
  await expect(sidebar.locator('.jp-Crane-facts-table')).toContainText('openai/crane-stub');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-light');

  // 3. Fixing the cell: the crash badge goes stale at once, then clears.
  const fixed = analysisOf(page, FIXED);
  await typeInto(page, 1, FIXED);
  await expect(badge).toHaveClass(/jp-mod-stale|jp-mod-checking/);
  expect((await (await fixed).json()).verdict.detection).toBe(false);
  await expect(badge).toHaveClass(/jp-mod-ok/);
  await expect(badge).not.toHaveClass(/jp-mod-crash/);
  // Newest first: the fix, then the crash (the data-loading cell was checked before it ran, too).
  const history = sidebar.locator('.jp-Crane-history li');
  await expect(history.nth(0)).toContainText(FIXED);
  await expect(history.nth(0)).toContainText('No crash predicted');
  await expect(history.nth(1)).toContainText(CRASHING);
  await expect(history.nth(1)).toContainText('Predicted to crash');

  // 4. V off: the next request asks for S and R only, and no value facts are sent.
  await setSetting(page, 'value', false);
  await setSetting(page, 'maxColumns', 5);
  const noValues = analysisOf(page, "df['Agee'].sum()");
  await typeInto(page, 1, "df['Agee'].sum()");
  const response = await noValues;
  const sent = response.request().postDataJSON().settings;
  expect(sent.categories).toBe('SR');
  expect(sent.max_columns).toBe(5);
  const json = await response.json();
  expect(json.runtime_text).toContain('MISSING');
  expect(json.runtime_text).not.toContain('unique');
  expect(json.runtime_text).not.toMatch(/\bnan\b/);
  await expect(badge).toHaveClass(/jp-mod-crash/);
  await expect(
    sidebar.locator('.jp-Crane-factgroup[data-category="V"] summary')
  ).toContainText('(0)');

  // 5. Guard on: Shift-Enter on the crashing cell asks first; Cancel does not run it.
  await setSetting(page, 'guard', true);
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('predicted to crash');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();
  // Command mode too (there the core binds Shift-Enter to another command).
  await page.notebook.selectCells(1);
  await page.keyboard.press('Escape');
  await expect(page.locator('.jp-Notebook.jp-mod-commandMode')).toHaveCount(1);
  await page.keyboard.press('Shift+Enter');
  await expect(dialog).toContainText('predicted to crash');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();

  // Run anyway: the cell runs and the kernel confirms the prediction.
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  await dialog.getByRole('button', { name: 'Run anyway' }).click();
  await expect
    .poll(async () => (await page.notebook.getCellTextOutput(1))?.join('\n') ?? '', {
      timeout: 30_000
    })
    .toContain('KeyError');
  // The run changed the kernel: the verdict is outdated now.
  await expect(badge).toHaveClass(/jp-mod-stale/);

  // Settings page (for the README).
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('settingeditor:open', { query: 'Crane' })
  );
  await expect(page.locator('.jp-SettingsPanel')).toContainText('Crash guard');
  await screenshot(page.locator('#jp-main-dock-panel'), 'settings-light');

  await setSetting(page, 'value', true);
  await setSetting(page, 'maxColumns', 20);
  await setSetting(page, 'guard', false);
});

test('auto-check off: only the command checks, and Shift-Enter runs unguarded', async ({
  page
}) => {
  await setSetting(page, 'guard', false);
  await setSetting(page, 'autoCheck', false);
  await notebookWithData(page, 'manual.ipynb');
  let analyses = 0;
  page.on('request', request => {
    if (request.url().includes('/crane/analyze')) {
      analyses += 1;
    }
  });
  await typeInto(page, 1, CRASHING);
  await page.waitForTimeout(2500); // more than the auto-check delay
  expect(analyses).toBe(0);
  const badge = await badgeOf(page, 1);
  await expect(badge).toHaveCount(0);

  // The keyboard shortcut of "Check Cell for Crashes".
  const analysis = analysisOf(page, CRASHING);
  await page.keyboard.press('Control+Alt+C');
  await analysis;
  await expect(badge).toHaveClass(/jp-mod-crash/);

  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  await expect
    .poll(async () => (await page.notebook.getCellTextOutput(1))?.join('\n') ?? '', {
      timeout: 30_000
    })
    .toContain('KeyError');
  await expect(page.locator('.jp-Dialog')).toHaveCount(0);
  await setSetting(page, 'autoCheck', true);
});

test('checks wait for user code to finish', async ({
  page
}) => {
  await notebookWithData(page, 'busy.ipynb');
  const analyses: string[] = [];
  page.on('request', request => {
    if (request.url().includes('/crane/analyze')) {
      analyses.push(request.postDataJSON().source);
    }
  });
  // Start a slow cell without waiting for it, then type while it runs.
  await page.notebook.setCell(0, 'code', 'import time\ntime.sleep(15)');
  await page.notebook.selectCells(0);
  await page.notebook.enterCellEditingMode(0);
  await page.keyboard.press('Control+Enter');
  const started = Date.now();
  const analysis = analysisOf(page, CRASHING);
  await typeInto(page, 1, CRASHING);
  await page.waitForTimeout(2500); // more than the auto-check delay
  // Nothing was sent while the kernel ran user code (checked well before the sleep ends).
  expect(analyses).not.toContain(CRASHING);
  expect(Date.now() - started).toBeLessThan(14_000);
  // Typing stayed free.
  expect(await page.notebook.getCellTextInput(1)).toBe(CRASHING);
  // Once the kernel is idle, the waiting check runs by itself.
  await analysis;
  expect(Date.now() - started).toBeGreaterThan(14_000);
  await expect(await badgeOf(page, 1)).toHaveClass(/jp-mod-crash/);
});

test('the badge and the sidebar follow the dark theme', async ({ page }) => {
  await page.theme.setDarkTheme();
  await notebookWithData(page, 'dark.ipynb');
  const analysis = analysisOf(page, CRASHING);
  await typeInto(page, 1, CRASHING);
  await analysis;
  const badge = await badgeOf(page, 1);
  await expect(badge).toHaveClass(/jp-mod-crash/);
  // The colour comes from the theme's variable, not a constant.
  const [colour, themeColour] = await badge.evaluate(node => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--jp-warn-color1)';
    node.appendChild(probe);
    const expected = getComputedStyle(probe).color;
    probe.remove();
    return [getComputedStyle(node).color, expected];
  });
  expect(colour).toBe(themeColour);
  await screenshot((await page.notebook.getCellLocator(1))!, 'badge-dark');
  await badge.click();
  await expect(page.locator('#jp-crane-sidebar .jp-Crane-verdict')).toHaveClass(
    /jp-mod-crash/
  );
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-dark');
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('settingeditor:open', { query: 'Crane' })
  );
  await expect(page.locator('.jp-SettingsPanel')).toContainText('Crash guard');
  await screenshot(page.locator('#jp-main-dock-panel'), 'settings-dark');
  await page.theme.setLightTheme();
});

// Referenced so the import is kept for the window.galata typings.
void galata;
