import { defineConfig } from 'vitest/config';

// Tests that bind sockets (loopback servers, simulated venues, the HTTP/WebSocket API) or start
// child processes; everything else is a unit test. Fault injection (killed processes, full or
// read-only disks, misbehaving clients and venues) has its own project.
const integration = [
  'test/service.test.ts',
  'test/access/access.test.ts',
  'test/api/**/*.test.ts',
  'test/config/venue-names.test.ts',
  'test/matching/overrides.test.ts',
  'test/matching/related-api.test.ts',
  'test/capacity/**/*.test.ts',
  'test/server/http.test.ts',
  'test/server/guard.test.ts',
  'test/server/dashboard-http.test.ts',
  'test/server/default-port.test.ts',
  'test/deploy/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/signals/lifecycle-ws.test.ts',
  'test/ws/**/*.test.ts',
  'test/cluster/**/*.test.ts',
  'test/compat/**/*.test.ts',
  'test/venues/*/feed.test.ts',
  'test/venues/kalshi/sim.test.ts',
  'test/venues/polymarket_us/mappers.test.ts',
  'test/contract/**/*.test.ts',
  'test/clients/**/*.test.ts',
  'test/mcp/**/*.test.ts',
  'test/sim/child.test.ts',
  'test/web/dashboard.test.ts',
  'test/replay/determinism.test.ts',
  'test/replay/capture-window.test.ts',
  'test/backtest/fills.test.ts',
  'test/capture/lz4-alloc.test.ts',
];
const faults = ['test/faults/**/*.test.ts'];

export default defineConfig({
  test: {
    exclude: ['node_modules', 'dist'],
    // Network tests bind loopback servers; forks keep native addons (uWS, lmdb) isolated per file.
    pool: 'forks',
    // Two files at a time on this 2-core machine (vitest's default is cores − 1 = one): most files
    // wait on sockets and child processes, and one at a time took the suite to 594 s of CI's 15
    // minutes; two took 371 s with every test green (2026-11-28).
    maxWorkers: 2,
    // Failure guards, not measurements: generous so a loaded machine stays green.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...integration, ...faults],
          // Refuses sockets and child processes, so a test that needs them is moved to `integration`.
          setupFiles: ['test/support/temp-cleanup.ts', 'test/support/unit-guard.ts'],
        },
      },
      { extends: true, test: { name: 'integration', include: integration, setupFiles: ['test/support/temp-cleanup.ts'] } },
      { extends: true, test: { name: 'faults', include: faults, setupFiles: ['test/support/temp-cleanup.ts'] } },
    ],
  },
});
