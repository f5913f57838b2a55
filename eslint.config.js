import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.kgw/', '.cache/', 'bench/results/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/cli/**', 'bench/**', 'test/services/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The package's launcher is plain JavaScript outside the TypeScript project.
    files: ['eslint.config.js', 'bin/**'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { URL: 'readonly' } },
  },
  {
    // The console's scripts run in the browser, as plain JavaScript (src/console/static, a section's static/).
    files: ['src/console/static/**', 'src/atmina/console/static/**'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: { document: 'readonly', window: 'readonly', fetch: 'readonly', crypto: 'readonly', DOMParser: 'readonly', URLSearchParams: 'readonly' },
    },
  },
  {
    // The Organisation graph's script runs in the browser too, beside the drawing library it loads (src/brain/console/static).
    files: ['src/brain/console/static/**'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: {
        document: 'readonly',
        window: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        requestAnimationFrame: 'readonly',
        cytoscape: 'readonly',
      },
    },
  },
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: ['.dependency-cruiser.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' }, parserOptions: { projectService: false, project: null } },
  },
);
