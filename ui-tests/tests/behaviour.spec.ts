/**
 * When checks run and what they send: the S/R/V settings, auto-check off, a busy kernel; and the
 * settings page, which offers what this server allows.
 */
import { expect, galata, test } from '@jupyterlab/galata';

import {
  analysisOf,
  badgeOf,
  checked,
  CRASHING,
  MAYBE,
  notebookWithData,
  openSidebar,
  screenshot,
  setSetting,
  typeInto
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });
test.describe.configure({ mode: 'serial' });

test('the facts sent follow the settings', async ({ page }) => {
  await notebookWithData(page, 'settings.ipynb');
  // With V on, value facts (unique counts) reach the model.
  const first = analysisOf(page, MAYBE);
  await typeInto(page, 1, MAYBE);
  const firstJson = await (await first).json();
  expect(firstJson.runtime_text).toContain('MISSING');
  expect(firstJson.runtime_text).toContain('unique');

  // V off: the next request asks for S and R only, and no value facts are sent.
  await setSetting(page, 'value', false);
  await setSetting(page, 'maxColumns', 5);
  const source = "(lambda: df['Agee'].sum())()";
  const noValues = analysisOf(page, source);
  await typeInto(page, 1, source);
  const response = await noValues;
  const sent = response.request().postDataJSON().settings;
  expect(sent.categories).toBe('SR');
  expect(sent.max_columns).toBe(5);
  const json = await response.json();
  expect(json.runtime_text).toContain('MISSING');
  expect(json.runtime_text).not.toContain('unique');
  expect(json.runtime_text).not.toMatch(/\bnan\b/);
  await expect(await badgeOf(page, 1)).toHaveAttribute(
    'data-crane-state',
    'may-crash'
  );
  // The facts the model did not get are marked as such in the panel.
  await (await badgeOf(page, 1)).click();
  await expect(
    page.locator('#jp-crane-sidebar .jp-Crane-fact.jp-mod-unsent').first()
  ).toBeAttached();
  await setSetting(page, 'value', true);
  await setSetting(page, 'maxColumns', 20);
});

test('the settings page offers what this server allows, in plain words, with the extension icon', async ({
  page
}) => {
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('settingeditor:open', {
      query: 'Crash prediction'
    })
  );
  const panel = page.locator('.jp-SettingsPanel');
  await expect(panel).toContainText(
    'Ask before running a cell that will or may crash'
  );
  // The UI tests' server has a model: its settings are offered, with the models it allows.
  await expect(panel).toContainText('Votes');
  await expect(panel).toContainText('This server allows: openai/crane-stub');
  // This machine has the OS sandbox: trial runs are offered, the server's choice named.
  await expect(panel).toContainText('Trial run');
  await expect(panel).toContainText(
    "Until you choose, the server's setting applies: when I ask."
  );
  // Human words only: no command ids.
  await expect(panel).not.toContainText('crane:');
  // The extension's icon in the list of plugins.
  await expect(
    page.locator('.jp-PluginList [data-icon="crane-jupyterlab:crane"]').first()
  ).toBeVisible();
  // Every control is labelled: no "add a property" button.
  await expect(panel.locator('.jp-ArrayOperationsButton')).toHaveCount(0);
  await screenshot(page.locator('#jp-main-dock-panel'), 'settings-light');
});

test("on a server without a model that runs trials with every check, the settings show the server's mode and no unlabelled button", async ({
  page
}) => {
  // The server's answer, changed at the network edge: no model, trial runs automatically.
  const config = /\/crane\/config(\?|$)/;
  await page.route(config, async route => {
    const response = await route.fetch();
    const json = (await response.json()) as Record<string, unknown>;
    await route.fulfill({
      response,
      json: { ...json, model: null, allowed_models: [], trial: 'auto' }
    });
  });
  await page.goto();
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('settingeditor:open', {
      query: 'Crash prediction'
    })
  );
  const panel = page.locator('.jp-SettingsPanel');
  await expect(panel).toContainText('Trial run');
  // No model: its settings are gone, and with them the form offered an unlabelled "+" button.
  await expect(panel).not.toContainText('Votes');
  await expect(panel.locator('.jp-ArrayOperationsButton')).toHaveCount(0);
  // The dropdown shows what applies (the server's mode), and says whose it is.
  const select = panel.locator('select').first();
  await expect(select.locator('option:checked')).toHaveText(
    'Automatically, with every check'
  );
  await expect(panel).toContainText(
    "Until you choose, the server's setting applies: automatically."
  );
  await page.unroute(config);
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
  await expect(badge).toHaveAttribute('data-crane-state', 'will-crash');

  // The cell context menu offers the check and the trial run.
  await (await page.notebook.getCellLocator(1))!.click({ button: 'right' });
  const menu = page.locator('.lm-Menu');
  await expect(menu.getByText('Check Cell for Crashes')).toBeVisible();
  await expect(menu.getByText('Trial-Run Cell')).toBeVisible();
  await page.keyboard.press('Escape');

  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  await expect
    .poll(
      async () => (await page.notebook.getCellTextOutput(1))?.join('\n') ?? '',
      {
        timeout: 30_000
      }
    )
    .toContain('KeyError');
  await expect(page.locator('.jp-Dialog')).toHaveCount(0);
  await setSetting(page, 'autoCheck', true);
});

test('checks wait for user code to finish, and the badge says so', async ({
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
  // The badge says why no verdict is there yet.
  const waiting = await badgeOf(page, 1);
  await expect(waiting).toHaveAttribute('data-crane-state', 'busy');
  await expect(waiting).toContainText(
    'Kernel busy: will check when it is idle'
  );
  // Once the kernel is idle, the waiting check runs by itself.
  await analysis;
  expect(Date.now() - started).toBeGreaterThan(14_000);
  await expect(await badgeOf(page, 1)).toHaveAttribute(
    'data-crane-state',
    'will-crash'
  );
});

test('half-typed code gets no warning while typing; code invalid as it stands does', async ({
  page
}) => {
  await notebookWithData(page, 'typing.ipynb');
  const answers: string[] = [];
  page.on('response', async response => {
    if (response.url().includes('/crane/analyze')) {
      const body = response.request().postDataJSON() as { source: string };
      const json = (await response.json()) as { status: string };
      answers.push(`${body.source} -> ${json.status}`);
    }
  });
  // An open bracket after a pause: the automatic check answers "incomplete", and nothing shows.
  const half = "total = df['Age'].sum(";
  await typeInto(page, 1, half);
  await expect
    .poll(() => answers, { timeout: 30_000 })
    .toContain(`${half} -> incomplete`);
  const badge = await badgeOf(page, 1);
  await expect(badge).toBeHidden();
  const panel = await openSidebar(page);
  await expect(
    panel.locator('.jp-Crane-history-source').getByText(half, { exact: true })
  ).toHaveCount(0);
  // Finished, it is checked as usual.
  const done = "total = df['Age'].sum()";
  const analysis = analysisOf(page, done);
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('End');
  await page.keyboard.type(')');
  await analysis;
  await expect(badge).toHaveAttribute('data-crane-state', 'no-crash');
  // One bracket too many can never be completed: a syntax error, said while typing.
  await checked(page, 1, "total = df['Age'].sum())", 'will-crash');
  await expect(badge).toContainText('syntax error');
});

// Referenced so the import is kept for the window.galata typings.
void galata;
