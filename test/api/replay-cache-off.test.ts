import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureDir, readBatches, ReplayFeed } from '../../src/capture/index.js';
import { eventLineWriter, itemLine, ndjsonChunks } from '../../src/capture/ndjson.js';
import { buildCore, buildHttp, type Core } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import type { HttpServer } from '../../src/server/http.js';

/**
 * `capture.replayCache: false`: the capture runs, no normalized cache follows it, and GET /replay
 * maps even a window from the session's start (the one the cache would serve) from the frames,
 * byte for byte what the frames path gives. Recorded Kalshi frames (test/fixtures).
 */

const config = loadConfig({ env: {}, overrides: { capture: { replayCache: false } } });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const frames = (JSON.parse(readFileSync(join(__dirname, '../fixtures/kalshi/ws_ticker_capture_2026-02-12.json'), 'utf8')) as unknown[]).map((f) =>
  JSON.stringify(f),
);
const T0 = Date.now() - 60_000;
const last = T0 + frames.length - 1;

let dir: string;
let core: Core;
let http: HttpServer;
let base: string;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-replay-cache-off-'));
  core = buildCore(config, { persistence: new Persistence(dir), log });
  http = buildHttp(core).http;
  base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
  key = core.keys.create('enterprise', 'tests').key;
  const a = core.capture!.venue(kalshi.label);
  frames.forEach((f, i) => a.frame(f, 1, T0 + i));
  await core.capture!.flush();
});

afterAll(async () => {
  http.close();
  await core.capture?.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('capture.replayCache false', () => {
  it('builds no normalized cache and serves a window from the session start from the frames', async () => {
    expect(core.capture).toBeDefined();
    expect(core.normCache).toBeUndefined();
    const r = await fetch(`${base}/replay?from=${T0}&to=${last}`, { headers: { 'x-api-key': key } });
    expect(r.status).toBe(200);
    const body = await r.text();
    let expected = '';
    const items = new ReplayFeed(config.venues).items(readBatches(core.capture!.store, { from: T0, to: last, flushes: false }));
    for await (const c of ndjsonChunks(items, itemLine(eventLineWriter(config.venues, {})))) expected += c;
    expect(body.split('\n').length).toBeGreaterThan(10);
    expect(body).toBe(expected);
    expect(existsSync(join(captureDir(dir), '_norm'))).toBe(false);
  });
});
