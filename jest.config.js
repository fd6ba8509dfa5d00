const jestJupyterLab = require('@jupyterlab/testutils/lib/jest-config');

// Packages shipped as ES modules that Jest must transpile.
const esModules = [
  '@codemirror',
  '@jupyter/',
  '@jupyterlab/',
  '@microsoft/',
  '@rjsf/',
  'exenv-es6',
  'lib0',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  collectCoverageFrom: [
    'src/**/*.{ts,tsx}',
    '!src/**/*.d.ts',
    '!src/**/.ipynb_checkpoints/*'
  ],
  coverageReporters: ['lcov', 'text'],
  // Only src/ holds tests and sources: never crawl a virtual environment or the built extension.
  roots: ['<rootDir>/src'],
  // No junit.xml in the source tree; CI reads Jest's own summary.
  reporters: ['default'],
  testRegex: 'src/.*/.*.spec.ts[x]?$',
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
