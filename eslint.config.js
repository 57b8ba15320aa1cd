// ESLint flat config: typescript-eslint's recommended rules plus the type-aware promise rules, over
// src, pipelines, bench and test, and over the web dashboard (web/src). Formatting is Prettier's job, so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The same rules over each TypeScript program: the service with its tests, and the web dashboard (DOM, Preact JSX). */
const program = (files, project) => ({
  files,
  extends: [js.configs.recommended, ...tseslint.configs.recommended],
  languageOptions: {
    parserOptions: { project, tsconfigRootDir: import.meta.dirname },
  },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
    // `await` on a value that is not a promise is a mistake (an awaited boolean once hid a row-group write).
    '@typescript-eslint/await-thenable': 'error',
    // `_`-prefixed names mark what is unused on purpose (a callback's leading parameters, a rest sibling).
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/out/**', 'bench/results/**', 'bench-report/**'] },
  program(['src/**/*.ts', 'pipelines/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'], './tsconfig.test.json'),
  program(['web/src/**/*.ts', 'web/src/**/*.tsx'], './web/tsconfig.json'),
  {
    // Tests read response bodies field by field and assert on their shape; `any` stays out of src/ (STYLE.md).
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // One clock (src/core/clock.ts): the engine reads time from the Clock it is given and runs its
    // timers on the clock's scheduler, so a replay on a virtual clock reads the same times.
    files: [
      'src/state/**/*.ts',
      'src/signals/**/*.ts',
      'src/matching/**/*.ts',
      'src/venues/**/*.ts',
      'src/pipeline/**/*.ts',
      'src/persist/**/*.ts',
      'src/replay/**/*.ts',
      'pipelines/**/*.ts',
    ],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'read the injected Clock (clock.now(), src/core/clock.ts), not the wall' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.name=/^(interval|auditTime|debounceTime|throttleTime|sampleTime|bufferTime|delay)$/][arguments.length=1]',
          message: "pass the clock's scheduler (clock.scheduler): RxJS's default one is the wall's",
        },
      ],
    },
  },
  {
    // A function that does not fit on a screen is several functions (STYLE.md).
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }] },
  },
);
