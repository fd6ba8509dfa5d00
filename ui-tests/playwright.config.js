/**
 * Galata configuration: the system Chromium (never a downloaded browser) and a JupyterLab
 * started by `jlpm start` with the crane server extension and a stub LLM on 127.0.0.1.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// Another port than 8888 lets UI tests of several checkouts run side by side.
const port = process.env.CRANE_UI_PORT || '8888';

module.exports = {
  ...baseConfig,
  // One server, one kernel at a time: the machine has 2 cores.
  workers: 1,
  // Each test's line with its time, in CI too (where Galata's default prints only failures).
  reporter: [
    ['list'],
    ...baseConfig.reporter.filter(([name]) => name !== 'list')
  ],
  timeout: 120 * 1000,
  expect: { timeout: 30 * 1000 },
  use: {
    ...baseConfig.use,
    baseURL: `http://localhost:${port}`,
    launchOptions: {
      executablePath: process.env.CRANE_CHROMIUM || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run'
      ]
    },
    // Video needs Playwright's own ffmpeg download, which this setup never installs.
    video: 'off',
    trace: 'retain-on-failure'
  },
  webServer: {
    command: `jlpm start --ServerApp.port=${port}`,
    url: `http://localhost:${port}/lab`,
    timeout: 180 * 1000,
    reuseExistingServer: !process.env.CI
  }
};
