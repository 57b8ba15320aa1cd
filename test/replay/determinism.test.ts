import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { wallClock } from '../../src/core/clock.js';
import { parseItem, type ReplayItem } from '../../src/replay/input.js';
import { opportunityLines, replay } from '../../src/replay/run.js';
import { startService, type Service } from '../../src/service.js';
import { CuttingRecording } from '../support/cut.js';

/**
 * SIMULATOR DATA. The one-clock claim, end to end: the service runs live on the embedded simulator
 * (real sockets, real feeds, the wall clock), a tap records every event it applies and every place
 * its turn flushed; right after one flush the live opportunities and books are cut. Replaying the
 * recording on a VirtualClock through the same rooms and flows gives the same opportunities (ids,
 * open and close times to the millisecond, peak ROI, sizes) and the same books, and a second replay
 * writes the same bytes. Anything the engine read from wall time instead of its clock would show
 * here as a different time or id.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-replay-live-'));
const outs = [mkdtempSync(join(tmpdir(), 'cb-replay-a-')), mkdtempSync(join(tmpdir(), 'cb-replay-b-'))];
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 400, seed: 11, process: 'inline' },
    ingest: { pollMs: 300 },
  },
});

async function* items(lines: readonly string[]): AsyncGenerator<ReplayItem> {
  for (let i = 0; i < lines.length; i++) yield parseItem(lines[i]!, i + 1);
}

let svc: Service | undefined;
afterAll(async () => {
  await svc?.close();
  for (const d of [dir, ...outs]) rmSync(d, { recursive: true, force: true });
});

describe('record and replay: the live run again, on a virtual clock', () => {
  it('replays a live simulator session to the same opportunities and books, and twice to the same bytes', async () => {
    const rec = new CuttingRecording();
    svc = await startService(config, { listen: false, clock: wallClock(), tap: rec });
    rec.attach(svc);
    // Wait for a session with arbitrage that opened and closed, and some still open.
    await vi.waitFor(
      () => {
        expect(rec.closed.filter((r) => r.kind === 'arb').length).toBeGreaterThanOrEqual(3);
        expect(svc!.lifecycle.openCount).toBeGreaterThan(0);
      },
      { timeout: 45_000, interval: 100 },
    );
    const live = await rec.cutAfterNextFlush();
    await svc.close();
    svc = undefined;
    expect(rec.startedAt).toBeDefined();

    const runs = [];
    for (const out of outs) runs.push(await replay({ config, items: items(live.lines), start: rec.startedAt, flushAtEnd: false, out, log: undefined }));
    const [a, b] = runs as [Awaited<ReturnType<typeof replay>>, Awaited<ReturnType<typeof replay>>];

    // The same events, in the same order.
    const liveEvents = live.lines.map((l) => JSON.parse(l) as ReplayItem).filter((i) => i.type === 'event');
    expect(a.events).toBe(liveEvents.length);
    expect(readFileSync(join(outs[0]!, 'events.ndjson'), 'utf8')).toBe(liveEvents.map((i) => JSON.stringify(i.event) + '\n').join(''));
    // The same opportunities: ids, open and close times, peak ROI, sizes, close reasons.
    expect(a.closed.length).toBe(live.closed.length);
    expect(a.closed).toEqual(live.closed);
    expect(a.open).toEqual(live.open);
    expect(opportunityLines(a.closed, a.open)).toEqual(opportunityLines(live.closed, live.open));
    // The same books.
    expect(a.books.length).toBeGreaterThan(100);
    expect(a.books).toEqual(live.books);
    // A second replay: byte-identical files.
    expect(b.events).toBe(a.events);
    for (const f of ['events.ndjson', 'opportunities.ndjson', 'books.ndjson'])
      expect(readFileSync(join(outs[1]!, f), 'utf8'), f).toBe(readFileSync(join(outs[0]!, f), 'utf8'));
  });
});
