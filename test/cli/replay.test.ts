import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replayCommand, replayRequest } from '../../src/cli/replay.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent } from '../../src/core/types.js';

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-replay-cli-'));
const T0 = Date.UTC(2026, 10, 28, 12, 0, 0);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = (venue: string, t: number): { venue: string; timestamp: number; localTimestamp: number } => ({ venue, timestamp: t, localTimestamp: t });
const events: NormalizedEvent[] = [
  { ...at('venue_b', T0), type: 'market', marketId: 'B1', title: 'Seattle to win', status: 'active' },
  { ...at('venue_h', T0), type: 'market', marketId: 'H1', title: 'Seattle to win', status: 'active' },
  { ...at('venue_b', T0 + 1000), type: 'book_snapshot', marketId: 'B1', instrument: 'B1', bids: [[5000, 10]], asks: [[5200, 5]] },
  { ...at('venue_h', T0 + 1500), type: 'book_snapshot', marketId: 'H1', instrument: 'H1', bids: [], asks: [[4950, 7]] },
  { ...at('venue_b', T0 + 2000), type: 'book_delta', marketId: 'B1', instrument: 'B1', changes: [['bid', 5100, 3]] },
];
/** venue_b's book at the end of the recording: its snapshot (T0 + 1000) and its delta (T0 + 2000). */
const B1_AT_END = {
  venue: 'venue_b',
  instrument: 'B1',
  ready: true,
  timestamp: T0 + 2000,
  bids: [
    [5100, 3],
    [5000, 10],
  ],
  asks: [[5200, 5]],
};

/** A recording as `serve --record` writes it: events with their seq, and where the turn flushed. */
function recording(): string {
  const lines: string[] = [];
  let seq = 0;
  for (const e of events) {
    lines.push(JSON.stringify({ type: 'event', seq: seq++, event: e }));
    lines.push(JSON.stringify({ type: 'flush', seq: seq++, at: e.localTimestamp }));
  }
  return lines.join('\n') + '\n';
}

describe('crossbook replay', () => {
  it('replays the window and venues asked for, and writes the events and books it applied', async () => {
    const input = join(dir, 'rec.ndjson');
    writeFileSync(input, recording());
    const out = join(dir, 'out');
    const r = await replayCommand(config, { input, out, from: String(T0 + 500), to: new Date(T0 + 3000).toISOString(), venues: 'venue_b' }, log);
    expect(r.events).toBe(2);
    const lines = readFileSync(join(out, 'events.ndjson'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as NormalizedEvent)).toEqual([events[2], events[4]]);
    expect(r.books).toEqual([B1_AT_END]);
    expect(readFileSync(join(out, 'books.ndjson'), 'utf8')).toBe(`${JSON.stringify(r.books[0])}\n`);
    expect(readFileSync(join(out, 'opportunities.ndjson'), 'utf8')).toBe('');
    expect(r.endedAt).toBe(T0 + 2000);
  });

  it('a window that starts after a book began: the book is warmed up from the recording start, only the window is written', async () => {
    const input = join(dir, 'rec-mid.ndjson');
    writeFileSync(input, recording());
    const out = join(dir, 'out-mid');
    // venue_b's snapshot (T0 + 1000) is before the window, its delta (T0 + 2000) in it.
    const r = await replayCommand(config, { input, out, from: String(T0 + 1200), to: String(T0 + 3000), venues: 'venue_b' }, log);
    expect(r.events).toBe(1);
    expect(readFileSync(join(out, 'events.ndjson'), 'utf8')).toBe(`${JSON.stringify(events[4])}\n`);
    expect(r.books).toEqual([B1_AT_END]);
  });

  it('--from before the recording starts runs it from its first item: the clock does not start at --from', async () => {
    const input = join(dir, 'rec-zero.ndjson');
    writeFileSync(input, recording());
    const whole = await replayCommand(config, { input, out: join(dir, 'out-whole') }, log);
    // From 1970: a clock started there would run every periodic timer for 56 years before the first item.
    const zero = await replayCommand(config, { input, out: join(dir, 'out-zero'), from: '0', to: String(T0 + 3000) }, log);
    expect(zero).toEqual(whole);
    expect(readFileSync(join(dir, 'out-zero', 'events.ndjson'), 'utf8')).toBe(readFileSync(join(dir, 'out-whole', 'events.ndjson'), 'utf8'));
  });

  it('refuses a bad line of the recording with its line number', async () => {
    const input = join(dir, 'bad.ndjson');
    const good = recording().split('\n');
    writeFileSync(input, [good[0], good[1], '{"type":"event","seq":2,"event":{"type":"nope","venue":"venue_b"}}', ''].join('\n'));
    await expect(replayCommand(config, { input, out: join(dir, 'bad-out') }, log)).rejects.toThrow(/^replay input line 3: event\.type: /);
    writeFileSync(input, '{"type":"flush","seq":0,"at":1}\nnot json\n');
    await expect(replayCommand(config, { input, out: join(dir, 'bad-out') }, log)).rejects.toThrow(/^replay input line 2: not JSON/);
  });

  it('says what is wrong with its options', () => {
    const input = join(dir, 'rec.ndjson');
    writeFileSync(input, recording());
    const out = join(dir, 'o');
    expect(() => replayRequest(config, { out })).toThrow(/--from and --to are required to replay the capture log/);
    expect(() => replayRequest(config, { input: join(dir, 'missing'), out })).toThrow(/no such file/);
    expect(() => replayRequest(config, { input })).toThrow(/--out <dir> is required/);
    expect(() => replayRequest(config, { input, out, from: 'yesterday' })).toThrow(/--from "yesterday": not a time/);
    expect(() => replayRequest(config, { input, out, from: String(T0 + 1), to: String(T0) })).toThrow(/--from must be before --to/);
    expect(() => replayRequest(config, { input, out, venues: 'venue_z' })).toThrow(/unknown venue "venue_z"/);
    expect(() => replayRequest(config, { input, out, speed: '0' })).toThrow(/--speed "0"/);
    expect(replayRequest(config, { input, out, speed: '10' }).speed).toBe(10);
  });
});
