import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import prettierRecommended from 'eslint-plugin-prettier/recommended';
import globals from 'globals';
import jupyterPlugin from '@jupyter/eslint-plugin';

export default defineConfig([
  {
    ignores: [
      'node_modules',
      'dist',
      'coverage',
      'lib',
      '.venv',
      'crane_jupyterlab',
      '**/*.js',
      '**/*.mjs',
      '**/*.d.ts',
      'tests',
      'ui-tests'
    ]
  },
  // Registered globally: the Jupyter rules also lint schema/*.json.
  { plugins: { jupyter: jupyterPlugin } },
  js.configs.recommended,
  tseslint.configs.recommended,
  jupyterPlugin.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      globals: {
        ...globals.browser,
        ...globals.es2015,
        ...globals.node
      },
      parserOptions: {
        // The test config also covers src/__tests__, so Jest specs are linted too.
        project: 'tsconfig.test.json',
        sourceType: 'module'
      }
    },
    rules: {
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: {
            regex: '^I[A-Z]',
            match: true
          }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-use-before-define': 'off',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'separate-type-imports' }
      ],
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
      'prefer-arrow-callback': 'error'
    }
  },
  prettierRecommended
]);
