// Two Jest projects: `unit` (no database, no Redis, no server process) runs once per CI run,
// `integration` (everything else) on each database. A test file not listed in UNIT_TESTS is
// integration, so a new file keeps running on both databases until someone lists it.
const UNIT_TESTS = [
  'apps/api/src/domain/order-status.test.ts',
  'apps/api/src/http/cursor.test.ts',
  'apps/api/src/http/validate.test.ts',
  'apps/api/src/middleware/render-errors.test.ts',
  'apps/api/src/payments/fake-provider.test.ts',
  'apps/auth-server/src/admin/console/admin-api.test.ts',
  'apps/auth-server/src/admin/console/kit.test.ts',
  'apps/auth-server/src/identity/ui/html.test.ts',
  'apps/auth-server/src/kernel/agent-settings.test.ts',
  'apps/auth-server/src/kernel/security-headers.test.ts',
  'apps/auth-server/src/oauth/keys.test.ts',
  'apps/auth-server/test/oidc-provider-internals.test.ts',
  'apps/auth-server/test/ui.test.ts',
  'apps/web/src/config.test.ts',
  'apps/web/src/id-token.test.ts',
  'apps/web/src/refresh-coordinator.test.ts',
  'apps/web/src/sealed-cookie.test.ts',
  'packages/claims/test/bearer.test.ts',
  'packages/claims/test/deny-list.test.ts',
  'packages/claims/test/dpop.test.ts',
  'packages/claims/test/jwks.test.ts',
  'packages/claims/test/lru.test.ts',
  'packages/claims/test/permissions.test.ts',
  'packages/claims/test/step-up.test.ts',
  'packages/claims/test/verify.test.ts',
  'packages/client/test/auth.test.ts',
  'packages/client/test/generated-drift.test.ts',
  'packages/client/test/http.test.ts',
  'packages/client/test/oauth.test.ts',
  'packages/client/test/resources.test.ts',
  'packages/client/test/retry.test.ts',
  'packages/client/test/sse.test.ts',
  'packages/client/test/step-up.test.ts',
  'packages/observability/src/constant-time.test.ts',
  'packages/observability/src/error-codes.test.ts',
  'packages/observability/src/graceful-close.test.ts',
  'packages/observability/src/http.test.ts',
  'packages/observability/src/logger.test.ts',
  'packages/observability/src/route-index.test.ts',
  'packages/shop/src/payment-detail.test.ts',
  'infra/test/import-rules.test.ts',
];

const ALL_TESTS = [
  '<rootDir>/apps/*/test/**/*.test.ts',
  '<rootDir>/apps/*/src/**/*.test.ts',
  '<rootDir>/packages/*/test/**/*.test.ts',
  '<rootDir>/packages/*/src/**/*.test.ts',
  '<rootDir>/infra/test/**/*.test.ts',
];

const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
        module: { type: 'es6' },
      },
    ],
  },
};

export default {
  testTimeout: 60000,
  // Integration files wait on servers, databases and browsers: on 2 cores, 4 workers ran the
  // PostgreSQL run in 352 s against 481 s with 2 (docs/testing.md).
  maxWorkers: 4,
  // A worker keeps every test file's ES modules it ran (its heap grew past 700 MB), and each
  // garbage collection walks them: restarted above this, the suite took a third less CPU.
  workerIdleMemoryLimit: '350MB',
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: UNIT_TESTS.map((file) => `<rootDir>/${file}`),
      // A unit test that loads a database or Redis client fails here instead of running once only.
      moduleNameMapper: {
        ...shared.moduleNameMapper,
        '^(@electric-sql/pglite|pg|ioredis|knex|knex-pglite)$':
          '<rootDir>/infra/scripts/jest-no-database.mjs',
      },
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: [...ALL_TESTS, ...UNIT_TESTS.map((file) => `!**/${file}`)],
    },
  ],
};
