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
      // Biome lays code out in 160 columns; what it cannot break (one string or template
      // literal, a regular expression, a URL) may run longer, nothing else
      'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  {
    // the CLI, tests and benchmarks print to the terminal
    files: ['src/cli/**/*.ts', 'src/*/cli/**/*.ts', 'src/platform/cli-kit/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'daemon/**/*.ts', 'agents/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // no function over 80 lines in product code, every line counted (docs/architecture.md, "Long functions")
    files: ['src/**/*.ts', 'src/**/*.tsx', 'daemon/**/*.ts', 'agents/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false }] },
  },
  {
    // the exceptions docs/architecture.md lists, each a closure over state its handlers share
    files: [
      'src/gitops/control/api-handlers.ts', // createApiHandlers: the Argo CD RPC handler table
      'src/gitops/control/api-server.ts', // startApiServer: the REST routes over those handlers
      'src/mesh/control/config-server/server.ts', // serveMeshConfig: long-poll waiters, token reviews, flow report times
      'src/platform/store/api/server.ts', // createStoreApi: the router and its open streams
      'src/world/supervisor/cluster-sync.ts', // startClusterSync: the refusals already reported
    ],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
  },
);
