/**
 * Every state the extension shows, in the light, dark and high-contrast themes, checked by axe-core
 * (WCAG 2 A and AA, colour contrast included): zero violations on the badges and the crash panel.
 */
import { expect, galata, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';

import {
  a11yResults,
  a11yViolations,
  badgeOf,
  checked,
  CRASHING,
  FIXED,
  MAYBE,
  MISSED,
  notebookWithData,
  openSidebar,
  runAndSee,
  screenshot,
  screenshotBadge,
  sidebar
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 900 } });
test.describe.configure({ mode: 'serial' });

/** The states, by cell index, that `allStates` builds. */
const STATES: [number, string][] = [
  [1, 'confirmed'],
  [2, 'missed'],
  [3, 'will-crash'],
  [4, 'may-crash'],
  [5, 'no-crash']
];

/** One notebook with a cell in each state (the runs first, so the other verdicts stay fresh). */
async function allStates(page: IJupyterLabPageFixture): Promise<void> {
  await notebookWithData(page, 'states.ipynb', 5);
  await checked(page, 1, "df['Agee'].sum()", 'will-crash');
  await runAndSee(page, 1, 'KeyError');
  await checked(page, 2, MISSED, 'no-crash');
  await runAndSee(page, 2, 'KeyError');
  await checked(page, 3, CRASHING, 'will-crash');
  await checked(page, 4, MAYBE, 'may-crash');
  await checked(page, 5, FIXED, 'no-crash');
  for (const [index, state] of STATES) {
    await expect(await badgeOf(page, index)).toHaveAttribute(
      'data-crane-state',
      state
    );
  }
}

/** Axe on the badges and on the crash panel showing each state in turn. */
async function expectNoViolations(
  page: IJupyterLabPageFixture,
  theme: string
): Promise<void> {
  for (const [index, state] of STATES) {
    await page.notebook.selectCells(index);
    await expect(
      sidebar(page).locator('.jp-Crane-active .jp-Crane-level')
    ).toHaveClass(new RegExp(`jp-mod-${state}`));
    // The collapsed parts too.
    await sidebar(page)
      .locator('details')
      .evaluateAll(nodes =>
        nodes.forEach(node => ((node as HTMLDetailsElement).open = true))
      );
    expect(await a11yViolations(page), `${theme}, ${state}`).toEqual([]);
  }
}

test('every state passes axe in the light, dark and high-contrast themes', async ({
  page
}) => {
  // Five kernel-backed states, then axe on each of them in three themes: several minutes on 2 cores.
  test.slow();
  await allStates(page);
  await openSidebar(page);
  await expectNoViolations(page, 'light');

  await page.theme.setDarkTheme();
  expect(await page.theme.getTheme()).toBe('JupyterLab Dark');
  await expectNoViolations(page, 'dark');
  await page.notebook.selectCells(3);
  await screenshotBadge(page, 3, 'badge-dark');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-dark');

  await page.theme.setDarkHighContrastTheme();
  expect(await page.theme.getTheme()).toBe('JupyterLab Dark High Contrast');
  await expectNoViolations(page, 'high contrast');
  await page.theme.setLightTheme();
});

test('a long verdict wraps instead of being cut, with side panels open', async ({
  page
}) => {
  await page.setViewportSize({ width: 900, height: 800 });
  await notebookWithData(page, 'narrow.ipynb');
  await openSidebar(page);
  const badge = await checked(page, 1, MAYBE, 'may-crash');
  const text = badge.locator('.jp-Crane-badge-text');
  // Its whole text is in the page, on more than one line, and nothing overflows its box.
  const box = await text.evaluate(node => ({
    scroll: node.scrollWidth,
    client: node.clientWidth,
    height: node.getBoundingClientRect().height,
    line: parseFloat(getComputedStyle(node).lineHeight)
  }));
  expect(box.scroll).toBeLessThanOrEqual(box.client);
  expect(box.height).toBeGreaterThan(box.line * 1.5);
  await expect(text).toContainText('KeyError');

  // The contrast check is not vacuous: the badge's text drawn faint fails it. The colours are plain,
  // opaque and set on the text elements themselves (no transparency, gradient, shadow or pseudo
  // element), and far enough apart not to be equal: axe reports a 1:1 pair (say a text in the
  // badge's own background colour) as "incomplete", never as a violation.
  expect(await a11yViolations(page)).toEqual([]);
  await page.addStyleTag({
    content: `.jp-Crane-badge-text, .jp-Crane-badge-text * {
      color: #bbbbbb !important;
      background: #ffffff !important;
      text-shadow: none !important;
    }`
  });
  const faint = await a11yResults(page);
  const contrast = faint.violations.filter(
    v => v.startsWith('color-contrast') && v.includes('jp-Crane-badge')
  );
  expect(contrast, JSON.stringify(faint.incomplete, null, 1)).not.toEqual([]);
});

// Referenced so the import is kept for the window.galata typings.
void galata;
