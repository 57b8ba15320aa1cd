import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { exportCapture, exportRequest, exportToFile, importRecording, readRecording } from '../../src/cli/capture.js';
import { normalizeFrames } from '../../src/cli/normalize.js';
import { loadConfig } from '../../src/config/load.js';

/** `crossbook capture import|export` on the real recordings of test/fixtures, into a temporary DATA_DIR. */

const config = loadConfig({ env: {} });
const FIX = join(__dirname, '../fixtures');
const BURST = join(FIX, 'polymarket/ws_price_change_burst_capture_2026-09-29.json');
const AT = Date.parse('2026-09-29T10:00:00Z');
const KALSHI = config.venues.find((v) => v.protocol === 'kalshi')!.slug;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'cb-capture-cli-'));
  dirs.push(d);
  return d;
}

async function exported(dir: string, events: boolean, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<Record<string, unknown>[]> {
  let text = '';
  await exportCapture(config, dir, { from, to, events }, (c) => void (text += c));
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every segment file and its bytes, to check that a failed import changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out[p] = readFileSync(p).toString('base64');
    }
  };
  walk(join(dir, 'capture'));
  return out;
}

describe('crossbook capture import / export', () => {
  it('imports a real Polymarket recording; its events on export are those `crossbook normalize` gives for the file', async () => {
    const dir = tempDir();
    const r = await importRecording(config, dir, BURST, { protocol: 'polymarket', at: AT });
    expect(r).toEqual({
      frames: 51,
      venue: 'venue_b',
      from: AT,
      to: AT,
      warning: expect.stringMatching(/older than capture\.retention\.days allows/) as unknown,
    });
    // Inside retention: no warning.
    const now = Date.now();
    expect(await importRecording(config, tempDir(), BURST, { protocol: 'polymarket', at: now })).toEqual({ frames: 51, venue: 'venue_b', from: now, to: now });
    const lines = await exported(dir, true);
    expect(lines.at(-1)).toEqual({ type: 'end', count: lines.length - 1 });
    const expected = normalizeFrames(config, 'polymarket', JSON.parse(readFileSync(BURST, 'utf8')) as unknown[]).events;
    const got = lines.slice(0, -1).map(({ seq: _s, recv_ts: _r, platform: _p, market_id: _m, ...e }) => ({ ...e, localTimestamp: 0 }));
    expect(got).toEqual(expected.map((e) => ({ ...JSON.parse(JSON.stringify(e)), localTimestamp: 0 }) as Record<string, unknown>));
    // Frames export: each frame as recorded, in order.
    const frames = await exported(dir, false);
    expect(frames.slice(0, -1).map((f) => JSON.parse(f['payload'] as string) as unknown)).toEqual(JSON.parse(readFileSync(BURST, 'utf8')));
    expect(frames[0]).toMatchObject({ seq: 1, venue: 'venue_b', recv_ts: AT, kind: 'frame', conn: 0 });
  });

  it('takes receive times from the lines that carry them (ms or ISO 8601), in file order', async () => {
    const dir = tempDir();
    const frames = (JSON.parse(readFileSync(join(FIX, 'kalshi/ws_ticker_capture_2026-02-12.json'), 'utf8')) as unknown[]).map((f) => JSON.stringify(f));
    const file = join(dir, 'timed.jsonl');
    writeFileSync(file, frames.map((f, i) => (i % 2 ? `${AT + i * 1000} ${f}` : `${new Date(AT + i * 1000).toISOString()} ${f}`)).join('\n'));
    expect(readRecording(readFileSync(file, 'utf8'), file).map((f) => f.t)).toEqual(frames.map((_, i) => AT + i * 1000));
    await importRecording(config, dir, file, { protocol: 'kalshi' });
    const quotes = (await exported(dir, true, AT + 2000, AT + 4000)).slice(0, -1);
    expect(quotes.map((q) => q['recv_ts'])).toEqual([AT + 2000, AT + 3000, AT + 4000]);
    expect(new Set(quotes.map((q) => q['type']))).toEqual(new Set(['quote']));
  });

  it('a bad file is a clear error and leaves what is stored as it was', async () => {
    const dir = tempDir();
    await importRecording(config, dir, BURST, { protocol: 'polymarket', at: AT });
    const before = snapshot(dir);
    const garbage = join(dir, 'garbage.jsonl');
    writeFileSync(garbage, '{"type":"ticker","msg":{}}\n{"type":"ticker",\n');
    await expect(importRecording(config, dir, garbage, { protocol: 'kalshi' })).rejects.toThrow(/frame 2 is not JSON .*nothing was imported/);
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, '\n\n');
    await expect(importRecording(config, dir, empty, { protocol: 'kalshi' })).rejects.toThrow(/no frames in the file/);
    await expect(importRecording(config, dir, join(dir, 'missing.json'), { protocol: 'kalshi' })).rejects.toThrow(/ENOENT/);
    await expect(importRecording(config, dir, BURST, { protocol: 'kalshi', venue: 'venue_b' })).rejects.toThrow(/speaks polymarket, not kalshi/);
    expect(snapshot(dir)).toEqual(before);
    await expect(exportCapture(config, dir, { from: 0, to: 1, venues: ['venue_zz'] }, () => undefined)).rejects.toThrow(/unknown venue venue_zz/);
  });
});

/** Reads a Parquet file back with hyparquet (another library than the writer): its rows and row-group count. */
async function parquetRows(file: string): Promise<{ rows: Record<string, unknown>[]; groups: number }> {
  const buf = await asyncBufferFromFile(file);
  const meta = await parquetMetadataAsync(buf);
  return { rows: await parquetReadObjects({ file: buf, metadata: meta }), groups: meta.row_groups.length };
}

const ms = (v: unknown): number => (v instanceof Date ? v.getTime() : Number(v));
const cents = (units: unknown): number | null => (typeof units === 'number' && Number.isFinite(units) ? units / 100 : null);

/** The rows the NDJSON event line `l` should have become in the events table (see src/capture/parquet.ts). */
function rowsOf(n: number, l: Record<string, unknown>): Record<string, unknown>[] {
  const head = {
    event: n,
    seq: l['seq'],
    recv_ts: l['recv_ts'],
    venue_ts: l['timestamp'],
    platform: l['platform'],
    venue: l['venue'],
    market_id: l['market_id'] ?? null,
    instrument: l['instrument'] ?? null,
    type: l['type'],
  };
  const tail = {
    side: null,
    level: null,
    price: null,
    size: null,
    yes_bid: null,
    yes_ask: null,
    last_price: null,
    trade_id: null,
    taker_side: null,
    yes_price: null,
    status: null,
    data: null,
  };
  const levels = (side: string, ls: unknown): Record<string, unknown>[] =>
    (ls as [number, number][]).map(([p, s], i) => ({ ...head, ...tail, side, level: i, price: p / 100, size: s }));
  switch (l['type']) {
    case 'book_snapshot': {
      const r = [...levels('bid', l['bids']), ...levels('ask', l['asks'])];
      return r.length ? r : [{ ...head, ...tail }];
    }
    case 'book_delta': {
      const r = (l['changes'] as [string, number, number][]).map(([side, p, size]) => ({ ...head, ...tail, side, price: p / 100, size }));
      return r.length ? r : [{ ...head, ...tail }];
    }
    case 'trade':
      return [
        {
          ...head,
          ...tail,
          side: l['side'] ?? null,
          price: cents(l['price']),
          size: l['size'],
          trade_id: l['tradeId'],
          taker_side: l['takerSide'] ?? null,
          yes_price: cents(l['yesPrice']),
        },
      ];
    case 'quote':
      return [{ ...head, ...tail, yes_bid: cents(l['yesBid']), yes_ask: cents(l['yesAsk']), last_price: cents(l['lastPrice']) }];
    default: {
      const { seq: _s, recv_ts: _r, platform: _p, market_id: _m, ...event } = l;
      return [{ ...head, ...tail, status: l['status'] ?? l['state'], data: event }];
    }
  }
}

/** A Parquet row with its INT64 and timestamp cells as plain numbers, for comparing with NDJSON. */
function plain(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...r };
  for (const k of ['event', 'seq']) out[k] = Number(r[k]);
  for (const k of ['recv_ts', 'venue_ts']) if (k in r) out[k] = ms(r[k]);
  if (typeof r['data'] === 'string') out['data'] = JSON.parse(r['data']) as unknown;
  return out;
}

describe('crossbook capture export --format parquet', () => {
  /** Two real recordings in one capture: Kalshi's snapshot, delta and tickers, and a Polymarket burst of books and price changes. */
  async function session(): Promise<string> {
    const dir = tempDir();
    const kalshi = join(dir, 'kalshi.jsonl');
    const k = [
      ...(JSON.parse(readFileSync(join(FIX, 'kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), 'utf8')) as unknown[]),
      ...(JSON.parse(readFileSync(join(FIX, 'kalshi/ws_ticker_capture_2026-02-12.json'), 'utf8')) as unknown[]),
    ];
    writeFileSync(kalshi, k.map((f, i) => `${AT + 1000 + i} ${JSON.stringify(f)}`).join('\n'));
    await importRecording(config, dir, BURST, { protocol: 'polymarket', at: AT });
    await importRecording(config, dir, kalshi, { protocol: 'kalshi' });
    return dir;
  }

  it('events: read back with a Parquet reader, every event of the NDJSON export of the window is there, a row per level change, in several row groups', async () => {
    const dir = await session();
    const lines = (await exported(dir, true)).slice(0, -1);
    const out = join(dir, 'events.parquet');
    const n = await exportToFile(config, dir, { from: 0, to: Number.MAX_SAFE_INTEGER, events: true, format: 'parquet', out, rowGroupRows: 100 });
    expect(n).toBe(lines.length);
    const { rows, groups } = await parquetRows(out);
    const expected = lines.flatMap((l, i) => rowsOf(i, l));
    expect(rows.length).toBe(expected.length);
    expect(groups).toBe(Math.ceil(expected.length / 100));
    expect(groups).toBeGreaterThan(1);
    expect(rows.map(plain)).toEqual(expected);
    const types = [...new Set(rows.map((r) => r['type']))].sort();
    expect(types).toEqual([...new Set(lines.map((l) => l['type']))].sort());
    expect(types).toEqual(expect.arrayContaining(['book_snapshot', 'book_delta', 'quote']));
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('frames: one row per record, equal to the NDJSON export; a venue and a window select as they do there', async () => {
    const dir = await session();
    const from = AT + 1002;
    const to = AT + 1006;
    let text = '';
    await exportCapture(config, dir, { from, to, venues: [KALSHI] }, (c) => void (text += c));
    const lines = text
      .trimEnd()
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(5);
    const out = join(dir, 'frames.parquet');
    // Row groups of 2 rows: a frames export writes each group as it fills (3 groups for 5 rows), so
    // memory holds one group, not the window.
    expect(await exportToFile(config, dir, { from, to, venues: [KALSHI], format: 'parquet', out, rowGroupRows: 2 })).toBe(5);
    const { rows, groups } = await parquetRows(out);
    expect(groups).toBe(3);
    expect(rows.map((r) => ({ ...r, seq: Number(r['seq']), recv_ts: ms(r['recv_ts']) }))).toEqual(
      lines.map((l) => ({
        seq: l['seq'],
        recv_ts: l['recv_ts'],
        venue: l['venue'],
        connection: l['conn'],
        kind: l['kind'],
        text: typeof l['payload'] === 'string' ? l['payload'] : JSON.stringify(l['payload']),
      })),
    );
    // The same window as NDJSON into a file gives the stdout bytes.
    const nd = join(dir, 'frames.ndjson');
    await exportToFile(config, dir, { from, to, venues: [KALSHI], format: 'ndjson', out: nd });
    expect(readFileSync(nd, 'utf8')).toBe(text);
  });

  it('bad input is a clear error and writes no file: window, format, out path, venue', async () => {
    const dir = await session();
    const out = join(dir, 'x.parquet');
    const all = { from: 0, to: Number.MAX_SAFE_INTEGER, format: 'parquet' as const, out };
    expect(exportRequest({ from: 'yesterday', to: '1' })).toMatch(/--from and --to take ms since the epoch or an ISO 8601 time/);
    expect(exportRequest({ from: '2026-09-29T10:00:00Z', to: '2026-09-29T09:00:00Z' })).toBe('--from is after --to');
    expect(exportRequest({ from: '1', to: '2', format: 'csv' })).toMatch(/unknown --format "csv"/);
    expect(exportRequest({ from: '1', to: '2', what: 'books' })).toMatch(/unknown --what "books"/);
    expect(exportRequest({ from: '1', to: '2', format: 'parquet' })).toBe('--format parquet needs --out FILE');
    expect(exportRequest({ from: '1', to: '2', format: 'parquet', what: 'events', out })).toEqual({
      from: 1,
      to: 2,
      format: 'parquet',
      events: true,
      venues: undefined,
      out,
    });
    await expect(exportToFile(config, dir, { ...all, from: AT - 10 * 86_400_000, to: AT - 9 * 86_400_000 })).rejects.toThrow(
      /window .* is outside the capture, which holds/,
    );
    await expect(exportToFile(config, dir, { ...all, format: 'csv' as 'parquet' })).rejects.toThrow(/unknown format "csv"/);
    await expect(exportToFile(config, dir, { ...all, out: join(dir, 'no/such/dir/x.parquet') })).rejects.toThrow(/cannot write --out .*no\/such\/dir.*ENOENT/);
    await expect(exportToFile(config, dir, { ...all, out: dir })).rejects.toThrow(/is a directory/);
    await expect(exportToFile(config, dir, { ...all, venues: ['venue_zz'] })).rejects.toThrow(/unknown venue venue_zz/);
    await expect(exportToFile(config, tempDir(), all)).rejects.toThrow(/no capture log here/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp') || f.endsWith('.parquet'))).toEqual([]);
  });

  it('a read that fails midway leaves no partial file and an earlier export at the path as it was', async () => {
    const dir = await session();
    const out = join(dir, 'events.parquet');
    await exportToFile(config, dir, { from: 0, to: Number.MAX_SAFE_INTEGER, events: true, format: 'parquet', out });
    const before = readFileSync(out);
    // Damage a segment's block body: the reader's checksum fails partway through the window.
    const seg = Object.keys(snapshot(dir)).find((f) => f.endsWith('.seg'))!;
    const bytes = readFileSync(seg);
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0xff;
    writeFileSync(seg, bytes);
    await expect(exportToFile(config, dir, { from: 0, to: Number.MAX_SAFE_INTEGER, events: true, format: 'parquet', out })).rejects.toThrow(
      /corrupt|checksum/i,
    );
    expect(readFileSync(out).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });
});
