import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules', 'dist'],
    // Network tests bind loopback servers; forks keep native addons (uWS, lmdb) isolated per file.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
