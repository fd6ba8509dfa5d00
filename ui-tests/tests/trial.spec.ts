/**
 * Trial runs: the cell run in a sandboxed fork of the kernel before the user runs it. A crash is
 * observed (will crash, "observed in a trial run"), not predicted; a cell that would change the world
 * outside the fork (a program started) is stopped by the sandbox and the checks and the model decide.
 * A long cell runs as a quick trial: its loops cut to their first iterations, the code after them runs.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  analysisOf,
  trialAnalysis,
  badgeOf,
  checked,
  MISSED,
  notebookWithData,
  openSidebar,
  runAndSee,
  screenshot,
  screenshotBadge,
  setSetting,
  sidebar
} from './helpers';

test.use({ autoGoto: true, viewport: { width: 1400, height: 850 } });
test.describe.configure({ mode: 'serial' });

/** Writes a file through a program it starts (in a trial the file lands in its private copy), then
 * reaches for the network, which no trial has: the sandbox stops it there and the trial decides
 * nothing; in the kernel the file is written and the refused connection is ignored (`|| true`). */
const WRITES =
  '!touch trial-out.csv; python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 9), 1)" || true';

/** "Trains" for 30 s (an epoch a second), then fails where the checks see nothing (KeyError: 10). */
const LONG = [
  'import time',
  'losses = []',
  'for epoch in range(30):',
  '    time.sleep(1.0)  # one epoch of training',
  '    losses.append(1.0 / (epoch + 1))',
  'df.loc[10]'
].join('\n');

test('Trial-Run Cell observes a crash that the checks and the model missed, before the cell runs', async ({
  page
}) => {
  await notebookWithData(page, 'observed.ipynb');
  // The server runs trials only when asked (ui-tests/jupyter_server_test_config.py): no crash found.
  await checked(page, 1, MISSED, 'no-crash');
  const analysis = trialAnalysis(page);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:trial-run-cell')
  );
  const reply = (await (await analysis).json()) as {
    trial: { status: string; exception: string; line: number };
  };
  expect(reply.trial.status).toBe('crashed');
  expect(reply.trial.exception).toBe('KeyError');
  const badge = await badgeOf(page, 1);
  await expect(badge).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(badge).toHaveClass(/jp-mod-observed/);
  await expect(badge).toContainText('Will crash (observed in a trial run): KeyError');
  // The user's kernel did not run it: no output, and its execution count did not move.
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();
  await screenshotBadge(page, 1, 'badge-observed');

  const panel = await openSidebar(page);
  const trial = panel.locator('.jp-Crane-trial');
  await expect(trial).toContainText('crashed');
  await expect(trial).toContainText('Sandbox');
  // The exception is said once, as the cause; the trial section adds the outcome, time and sandbox.
  await expect(panel.locator('.jp-Crane-cause-text')).toHaveText("KeyError: 10");
  const active = await panel.locator('.jp-Crane-active').innerText();
  expect(active.split('KeyError')).toHaveLength(2);
  // The objects of the crashing line are open.
  await expect(panel.locator('.jp-Crane-object').first()).toHaveAttribute('open', '');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-observed');

  // The real run crashes as observed: confirmed.
  await runAndSee(page, 1, 'KeyError');
  await expect(badge).toHaveAttribute('data-crane-state', 'confirmed');
});

test('with trial runs on every check, a cell that writes a file and reaches for the network is stopped by the sandbox and nothing is written', async ({
  page,
  tmpPath
}) => {
  await setSetting(page, 'trial', 'auto');
  await notebookWithData(page, 'blocked.ipynb');
  const badge = await checked(page, 1, WRITES, 'no-crash');
  // The badge names the trial that was asked for and could not decide.
  await expect(badge).toContainText('trial run blocked by the sandbox');
  const panel = await openSidebar(page);
  const trial = sidebar(page).locator('.jp-Crane-trial');
  await expect(trial).toContainText('stopped by the sandbox');
  await expect(panel.locator('.jp-Crane-trial-fallback')).toBeVisible();
  // The mode in effect and whose it is.
  await expect(panel.locator('.jp-Crane-trial-mode')).toHaveText(
    'Trial runs: with every check (your setting)'
  );
  expect(await page.contents.fileExists(`${tmpPath}/trial-out.csv`)).toBe(false);
  await page.notebook.selectCells(1);
  await screenshotBadge(page, 1, 'badge-blocked');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-blocked');

  // Run for real, the file is written: the trial's refusal was the sandbox, not the cell.
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.press('Shift+Enter');
  await expect
    .poll(() => page.contents.fileExists(`${tmpPath}/trial-out.csv`), {
      timeout: 30_000
    })
    .toBe(true);
  await setSetting(page, 'trial', 'on-demand');
});

test('a cell that trains for 30 s and then crashes shows the quick trial\'s warning with the real exception, before it runs', async ({
  page
}) => {
  await notebookWithData(page, 'quick.ipynb');
  const checkedLong = analysisOf(page, LONG);
  await page.notebook.enterCellEditingMode(1);
  // Pasted, as a user would bring a training loop in (typing it would meet the editor's auto-indent).
  await page.evaluate(source => {
    const panel = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        activeCell: { model: { sharedModel: { setSource(s: string): void } } };
      };
    };
    panel.content.activeCell.model.sharedModel.setSource(source);
  }, LONG);
  await checkedLong;
  const badge = await badgeOf(page, 1);
  await expect(badge).toHaveAttribute('data-crane-state', 'no-crash');
  await page.notebook.selectCells(1);
  const analysis = trialAnalysis(page, 60_000);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:trial-run-cell')
  );
  const reply = (await (await analysis).json()) as {
    verdict: { source: string };
    trial: {
      status: string;
      exception: string;
      quick: { cut: boolean; k: number } | null;
    };
  };
  // The loop was cut after its first iterations and the line after it ran: the real exception.
  expect(reply.trial.status).toBe('crashed');
  expect(reply.trial.exception).toBe('KeyError');
  expect(reply.trial.quick?.cut).toBe(true);
  // df.loc[10] reads nothing the loop changes: certain, and said apart from a full trial's crash.
  expect(reply.verdict.source).toBe('quick');
  await expect(badge).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(badge).toContainText(
    `Will crash (seen in a quick trial, loops cut to their first ${reply.trial.quick?.k} iterations; the crash does not depend on how many ran)`
  );
  await expect(badge).toContainText('KeyError');
  // Before it is run: the user's kernel did not run it.
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();
  await screenshotBadge(page, 1, 'badge-quick');

  const panel = await openSidebar(page);
  await expect(panel.locator('.jp-Crane-trial')).toContainText('Quick trial');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-quick');
});

/** Trains a small Keras classifier: TensorFlow's runtime then lives in the kernel, which a fork cannot use. */
const KERAS_SETUP = [
  'import numpy as np, keras',
  'x = np.random.rand(256, 4).astype("float32")',
  'y = np.random.randint(0, 3, 256)',
  'model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),',
  '                          keras.layers.Dense(3, activation="softmax")])',
  'model.compile("adam", "sparse_categorical_crossentropy")',
  'model.fit(x, y, epochs=1, verbose=0)',
  'x5 = np.random.rand(64, 5).astype("float32")  # 5 columns: one too many for this model',
  'y_new = y.copy()',
  'y_new[10] = 5  # a label the 3 classes do not have'
].join('\n');

/** The loss fails inside the training step (a graph function), on the label out of range. */
const KERAS_FIT = 'history = model.fit(x, y_new, epochs=3, verbose=0)';

test('a Keras fit that crashes inside its training step shows the observed crash before it runs (the trial worker)', async ({
  page
}) => {
  test.setTimeout(420_000);
  await page.notebook.createNew('keras.ipynb');
  await page.notebook.setCell(0, 'code', KERAS_SETUP);
  await page.notebook.runCell(0, true);
  await page.notebook.addCell('code', KERAS_FIT);
  await page.notebook.selectCells(1);
  const analysis = trialAnalysis(page, 180_000);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:trial-run-cell')
  );
  const reply = (await (await analysis).json()) as {
    trial: {
      status: string;
      exception: string;
      worker: { reason: string; names: number } | null;
    };
  };
  // Observed in a fresh worker process on a copy of the cell's inputs: the fork could only have said
  // "unavailable" at the first graph function.
  expect(reply.trial.status).toBe('crashed');
  expect(reply.trial.exception).toBe('InvalidArgumentError');
  expect(reply.trial.worker?.reason).toContain('TensorFlow');
  const badge = await badgeOf(page, 1);
  await expect(badge).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(badge).toContainText('Will crash (observed in a trial run): InvalidArgumentError');
  // Before it is run: the user's kernel did not run it.
  expect(await page.notebook.getCellTextOutput(1)).toBeNull();

  const panel = await openSidebar(page);
  const trial = panel.locator('.jp-Crane-trial');
  await expect(trial).toContainText('Ran in');
  await expect(trial).toContainText("a fresh process, on a copy of the cell's inputs");
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-worker');

  // The real run crashes as observed.
  await runAndSee(page, 1, 'InvalidArgumentError');
  await expect(badge).toHaveAttribute('data-crane-state', 'confirmed');

  // A shape error: 5 input columns into a model built for 4. The badge gives Keras' own line (not its
  // "Exception encountered when calling" wrapper), the panel the facts that line compares.
  // Shift-Enter on the last cell added an empty one after it: the new cell goes there.
  await page.notebook.setCell(2, 'code', 'model.fit(x5, y[:64], epochs=1, verbose=0)');
  await page.notebook.selectCells(2);
  const shapeAnalysis = trialAnalysis(page, 180_000);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('crane:trial-run-cell')
  );
  await shapeAnalysis;
  const shapeBadge = await badgeOf(page, 2);
  await expect(shapeBadge).toHaveAttribute('data-crane-state', 'will-crash');
  await expect(shapeBadge).toContainText(
    'expected axis -1 of input shape to have value 4'
  );
  await expect(shapeBadge).not.toContainText('Exception encountered');
  await expect(shapeBadge).not.toContainText('Arguments received');
  await expect(panel.locator('.jp-Crane-decisive')).toContainText('x5');
  await screenshot(page.locator('#jp-main-content-panel'), 'sidebar-keras-shape');
});
