/**
 * Shared steps of the UI tests: a real JupyterLab, a real kernel, the crane server extension, and a
 * stub LLM on 127.0.0.1 that answers from the runtime facts in the prompt (crane_stub.py).
 */
import AxeBuilder from '@axe-core/playwright';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect } from '@jupyterlab/galata';
import type { Locator, Response } from '@playwright/test';
import * as path from 'path';

export const PLUGIN_ID = 'crane-jupyterlab:plugin';
export const LOAD_DATA =
  "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0, None], 'Fare': [7.25, 71.3, 8.05]})";
/** Will crash: the checks see the missing column. */
export const CRASHING = "df['Agee'].mean()";
export const FIXED = "df['Age'].mean()";
/** May crash: inside a function the checks cannot be sure the column is read; the model can. */
export const MAYBE = "(lambda: df['Agee'].mean())()";
export const MAYBE_FIXED = "(lambda: df['Age'].mean())()";
/** No crash found, yet it crashes (KeyError: 10): a miss. */
export const MISSED = 'df.loc[10]';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

/** Set one of our settings through the application's setting registry. */
export async function setSetting(
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

/**
 * Resolve with the next successful analysis of `source`: its full check (the trial run and the
 * model, when they are on), or with `tier` "checks" the checks' quick first answer.
 */
export function analysisOf(
  page: IJupyterLabPageFixture,
  source: string,
  tier: 'checks' | 'full' = 'full'
): Promise<Response> {
  return page.waitForResponse(
    async response => {
      if (!response.url().includes('/crane/analyze')) {
        return false;
      }
      const body = response.request().postDataJSON() as {
        source?: string;
        tier?: string;
      } | null;
      if (body?.source !== source || response.status() !== 200) {
        return false;
      }
      if ((body.tier ?? 'full') !== tier) {
        return false;
      }
      const json = (await response.json()) as { status: string };
      return json.status === 'ok';
    },
    { timeout: 90_000 }
  );
}

/** Resolve with the next analysis that asked for a trial run ("Trial-Run Cell"). */
export function trialAnalysis(
  page: IJupyterLabPageFixture,
  timeout?: number
): Promise<Response> {
  return page.waitForResponse(
    response =>
      response.url().includes('/crane/analyze') &&
      (
        response.request().postDataJSON() as {
          settings?: { trial?: boolean };
        } | null
      )?.settings?.trial === true,
    timeout === undefined ? {} : { timeout }
  );
}

export async function badgeOf(
  page: IJupyterLabPageFixture,
  index: number
): Promise<Locator> {
  const cell = await page.notebook.getCellLocator(index);
  if (!cell) {
    throw new Error(`no cell ${index}`);
  }
  return cell.locator('.jp-Crane-badge');
}

/** Type into a cell the way a user does, leaving it in edit mode. */
export async function typeInto(
  page: IJupyterLabPageFixture,
  index: number,
  source: string
): Promise<void> {
  await page.notebook.enterCellEditingMode(index);
  await page.keyboard.press('Control+A');
  await page.keyboard.type(source);
}

/** Type `source` into a cell and wait until its badge shows `state`. */
export async function checked(
  page: IJupyterLabPageFixture,
  index: number,
  source: string,
  state: string
): Promise<Locator> {
  const analysis = analysisOf(page, source);
  await typeInto(page, index, source);
  await analysis;
  const badge = await badgeOf(page, index);
  await expect(badge).toHaveAttribute('data-crane-state', state);
  return badge;
}

/** Run a cell (Shift-Enter, no guard) and wait for its output to contain `text`. */
export async function runAndSee(
  page: IJupyterLabPageFixture,
  index: number,
  text: string
): Promise<void> {
  await page.notebook.enterCellEditingMode(index);
  await page.keyboard.press('Shift+Enter');
  await expect
    .poll(
      async () => (await page.notebook.getCellTextOutput(index))?.join('\n') ?? '',
      { timeout: 30_000 }
    )
    .toContain(text);
}

export async function screenshot(locator: Locator, name: string): Promise<void> {
  // Screenshots for the README are refreshed on demand, never by CI.
  if (process.env.CRANE_SCREENSHOTS) {
    await locator.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }
}

/** A screenshot of a cell from its top to the bottom of its badge (not its output). */
export async function screenshotBadge(
  page: IJupyterLabPageFixture,
  index: number,
  name: string
): Promise<void> {
  if (!process.env.CRANE_SCREENSHOTS) {
    return;
  }
  const cell = (await page.notebook.getCellLocator(index))!;
  const top = (await cell.boundingBox())!;
  const badge = (await cell.locator('.jp-Crane-badge').boundingBox())!;
  await page.screenshot({
    path: path.join(SCREENSHOTS, `${name}.png`),
    clip: {
      x: top.x,
      y: top.y,
      width: top.width,
      height: badge.y + badge.height - top.y + 4
    }
  });
}

/** Create a notebook whose first cell loaded a data frame, and `empty` empty cells after it. */
export async function notebookWithData(
  page: IJupyterLabPageFixture,
  name: string,
  empty = 1
): Promise<void> {
  await page.notebook.createNew(name);
  await page.notebook.setCell(0, 'code', LOAD_DATA);
  await page.notebook.runCell(0, true);
  for (let i = 0; i < empty; i++) {
    await page.notebook.addCell('code', '');
  }
}

export function sidebar(page: IJupyterLabPageFixture): Locator {
  return page.locator('#jp-crane-sidebar');
}

/** Show the crash panel. */
export async function openSidebar(page: IJupyterLabPageFixture): Promise<Locator> {
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:open-sidebar')
  );
  await expect(sidebar(page)).toBeVisible();
  return sidebar(page);
}

/** What axe-core found: violations, and the checks it could not decide ("incomplete"), with why. */
export interface IA11yResults {
  violations: string[];
  incomplete: string[];
}

/**
 * Axe-core (WCAG 2 A/AA, contrast included) on the extension's visible elements: the badges and the
 * crash panel.
 */
export async function a11yResults(
  page: IJupyterLabPageFixture
): Promise<IA11yResults> {
  // JupyterLab's body has no height (its shell is positioned absolutely) and hides its overflow:
  // axe would take everything inside for clipped and check nothing. Give it the window's height.
  await page.evaluate(() => {
    document.documentElement.style.height = '100%';
    document.body.style.height = '100%';
  });
  const results = await new AxeBuilder({ page })
    .include('.jp-Crane-badge')
    .include('#jp-crane-sidebar')
    .withTags(['wcag2a', 'wcag2aa'])
    .analyze();
  if (process.env.CRANE_AXE_DEBUG) {
    console.log(
      JSON.stringify(
        {
          incomplete: results.incomplete.map(v => [v.id, v.nodes.length]),
          passes: results.passes.map(v => [v.id, v.nodes.length]),
          inapplicable: results.inapplicable.map(v => v.id)
        },
        null,
        1
      )
    );
  }
  const lines = (items: typeof results.violations) =>
    items.flatMap(v =>
      v.nodes.map(
        n => `${v.id}: ${n.target.join(' ')} — ${n.failureSummary ?? ''}`
      )
    );
  return {
    violations: lines(results.violations),
    incomplete: lines(results.incomplete)
  };
}

/** The WCAG 2 A/AA violations axe-core finds on the badges and the crash panel. */
export async function a11yViolations(
  page: IJupyterLabPageFixture
): Promise<string[]> {
  return (await a11yResults(page)).violations;
}

/** The figure of a session statistic in the crash panel. */
export function stat(page: IJupyterLabPageFixture, name: string): Locator {
  return sidebar(page).locator(`[data-crane-stat="${name}"]`);
}
