import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `cluster` brings up the control plane and its real node once per run
// (test/cluster/global-setup.ts) for every `*.cluster.test.ts` file and the end-to-end suites under test/e2e.
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // Live tests install real CLIs and start servers; two workers match the 2-core machines this runs on.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: ['node_modules/**', '.cache/**', '**/*.cluster.test.ts', 'test/cluster/**', 'test/e2e/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['**/*.cluster.test.ts', 'test/cluster/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          exclude: ['node_modules/**', '.cache/**'],
          globalSetup: ['test/cluster/global-setup.ts'],
          fileParallelism: false,
        },
      },
    ],
  },
});
