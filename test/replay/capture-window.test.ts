import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { replayCommand } from '../../src/cli/replay.js';
import { loadConfig } from '../../src/config/load.js';
import { wallClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { opportunityLines } from '../../src/replay/run.js';
import { startService, type Service } from '../../src/service.js';
import { CuttingRecording } from '../support/cut.js';

/**
 * SIMULATOR DATA. `crossbook replay --data-dir D --from F --to T` on the capture log of a live
 * service, for a window that starts mid-run (what a user replays: not the session's first
 * second). The live run is cut right after a flush at `at`; the window is [F, at + 1). The replay
 * warms up from the start of the capture, so the books of a relative-delta venue (venue_a, Kalshi:
 * its deltas change a book a snapshot began before F) are live's, and it writes only the window:
 * the opportunities that closed in it are those live closed in it (ids, times to the ms, peak ROI,
 * sizes), and every book that did not change in the cut's own millisecond is live's book at the cut.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-replay-capture-'));
const out = mkdtempSync(join(tmpdir(), 'cb-replay-capture-out-'));
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 400, seed: 13, process: 'inline' },
    ingest: { pollMs: 300 },
  },
});

let svc: Service | undefined;
afterAll(async () => {
  await svc?.close();
  for (const d of [dir, out]) rmSync(d, { recursive: true, force: true });
});

describe('crossbook replay of a capture window that starts mid-run', () => {
  it("gives live's opportunities closed in the window and live's books at its end", async () => {
    const rec = new CuttingRecording();
    svc = await startService(config, { listen: false, clock: wallClock(), tap: rec });
    rec.attach(svc);
    // The window starts once venue_a's books exist (their snapshots are before it) ...
    await vi.waitFor(() => expect([...svc!.state.books.entries()].filter(([v]) => v === 'venue_a').length).toBeGreaterThan(20), {
      timeout: 45_000,
      interval: 100,
    });
    const from = svc.clock.now() + 1;
    // ... and ends once opportunities have opened and closed inside it.
    await vi.waitFor(() => expect(rec.closed.filter((r) => r.first_seen >= from).length).toBeGreaterThanOrEqual(3), { timeout: 45_000, interval: 100 });
    const cut = await rec.cutAfterNextFlush();
    await svc.capture!.flush();
    const to = cut.at + 1;

    const r = await replayCommand({ ...config, dataDir: dir }, { dataDir: dir, from: String(from), to: String(to), out }, log);
    await svc.close();
    svc = undefined;

    // The opportunities that closed in the window, as live closed them.
    const liveClosed = cut.closed.filter((c) => c.closed_at >= from && c.closed_at < to);
    expect(liveClosed.length).toBeGreaterThanOrEqual(3);
    expect(r.closed).toEqual(liveClosed);
    const lines = readFileSync(join(out, 'opportunities.ndjson'), 'utf8').trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('{"state":"closed"'))).toEqual(opportunityLines(liveClosed, []));
    // Only the window's events are written.
    const events = readFileSync(join(out, 'events.ndjson'), 'utf8').trimEnd().split('\n');
    expect(events.length).toBe(r.events);
    const times = events.map((l) => (JSON.parse(l) as { localTimestamp: number }).localTimestamp);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(from);
    expect(Math.max(...times)).toBeLessThan(to);
    // Live's books at the cut: a book last changed before the cut's millisecond is the same in the
    // replay (events of that millisecond after the flush are in the window too).
    const key = (b: { venue: string; instrument: string }): string => `${b.venue} ${b.instrument}`;
    const replayed = new Map(r.books.map((b) => [key(b), b]));
    const settled = cut.books.filter((b) => b.timestamp < cut.at && (replayed.get(key(b))?.timestamp ?? 0) < cut.at);
    expect(settled.filter((b) => b.venue === 'venue_a').length).toBeGreaterThan(20);
    for (const b of settled) expect(replayed.get(key(b)), key(b)).toEqual(b);
  }, 150_000);
});
