import { defineConfig } from 'vitest/config';

// The suite runs twice: once on the embedded SQLite store and once on the
// machine's PostgreSQL (PARLEY_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres).
// Pure unit tests (test/unit) do not touch storage, so they run only once.
export default defineConfig({
  test: {
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/http/**/*.test.ts', 'test/events/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/resilience/**/*.test.ts', 'test/security/**/*.test.ts'],
          env: { PARLEY_TEST_STORE: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/http/**/*.test.ts', 'test/events/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/resilience/**/*.test.ts', 'test/security/**/*.test.ts'],
          env: { PARLEY_TEST_STORE: 'postgres' },
        },
      },
      {
        // Scale-out mode: the same suites on PostgreSQL with event queues, bus and rate limits in Redis
        // (127.0.0.1:6379 or PARLEY_TEST_REDIS_URL), plus the multi-process tests of test/scale.
        extends: true,
        test: {
          name: 'redis',
          include: ['test/http/**/*.test.ts', 'test/events/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/scale/**/*.test.ts'],
          env: { PARLEY_TEST_STORE: 'postgres', PARLEY_TEST_EVENTS: 'redis' },
        },
      },
      {
        // The web app in a real browser (issue 14): Debian's chromium driven by playwright-core,
        // against a test server on a loopback port. Once, on SQLite; the app is built first (globalSetup).
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          env: { PARLEY_TEST_STORE: 'sqlite' },
          globalSetup: ['test/browser/global-setup.ts'],
          testTimeout: 60_000,
        },
      },
      {
        // The benchmarks' smoke run (issue 20): every bench/ script once with tiny sizes, no time asserted.
        extends: true,
        test: { name: 'bench', include: ['test/bench/**/*.test.ts'], testTimeout: 600_000 },
      },
    ],
  },
});
