// At the repository root, where editors and `eslint .` look for it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/*.mjs',
      'data/**',
      '**/dist/**',
      'apps/web/public/**',
      'infra/**/*.js',
      'eslint.config.js',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read the environment only in config.ts (and test helpers).',
        },
      ],
    },
  },
  {
    files: [
      '**/config.ts',
      '**/main.ts',
      '**/test/**',
      '**/*.test.ts',
      '**/testing.ts',
      '**/infra/scripts/**',
      '**/bench/**',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
