import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './tools/lint/layers.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**', '.state/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { strait: { rules: { layers } } },
    rules: {
      'strait/layers': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // the CLI, tests and benchmarks print to the terminal
    files: ['src/cli/**/*.ts', 'src/*/cli/**/*.ts', 'src/platform/cli-kit/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'daemon/**/*.ts', 'agents/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
