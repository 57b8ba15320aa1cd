import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';

/**
 * SIMULATOR DATA. `capture.history: false`: the capture runs (GET /replay still answers) but no
 * history index follows it, so `as_of` reads say they are off, with a 400 naming the setting.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-asof-off-'));
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 50, seed: 5, process: 'inline' },
    capture: { enabled: true, retention: { days: 7, bytes: 1024 ** 3 }, checkpointIntervalMs: 300_000, history: false },
  },
});

let svc: Service;
let key: string;

beforeAll(async () => {
  svc = await startService(config);
  key = svc.keys.create('pro', 'tests').key;
});

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('capture.history false', () => {
  it('keeps capturing, builds no history index, and refuses as_of reads with the setting named', async () => {
    expect(svc.capture).toBeDefined();
    expect(svc.bookHistory).toBeUndefined();
    const r = await fetch(`${svc.url}/api/v2/orderbook?platform=venue_a&market_id=X&as_of=${Date.now()}`, { headers: { 'x-api-key': key } });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: string; code: string };
    expect(body.code).toBe('as_of.capture_off');
    expect(body.error).toMatch(/capture\.history/);
  });
});
