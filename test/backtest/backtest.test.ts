import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { backtest } from '../../src/backtest/run.js';
import { Report, type Trade } from '../../src/backtest/schema.js';
import { backtestCommand, backtestRequest } from '../../src/cli/backtest.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { BookSnapshot } from '../../src/core/types.js';
import { parseItem, type ReplayItem } from '../../src/replay/input.js';

/**
 * SIMULATOR DATA: test/fixtures/backtest/sim-session.ndjson.gz is 31 s of `crossbook serve --record`
 * on the embedded simulator (seed 11, 400 ticks/s; test/fixtures/SOURCES.md). The backtest replays
 * it through the live rooms on a virtual clock with the taker inside.
 */
const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'backtest', 'sim-session.ndjson.gz');
const lines = gunzipSync(readFileSync(FIXTURE))
  .toString('utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');
const items = lines.map((l, i) => parseItem(l, i + 1));
const timeOf = (it: ReplayItem): number => (it.type === 'event' ? it.event.localTimestamp : it.at);
const FROM = timeOf(items[0]!);
const TO = timeOf(items[items.length - 1]!);
const config = loadConfig({ env: {} });
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function* feed(list: readonly ReplayItem[]): AsyncGenerator<ReplayItem> {
  yield* list;
}

async function run(
  list: readonly ReplayItem[],
  latencies: number[],
  strategy: 'arb' | 'ev' = 'arb',
): Promise<{ report: Report; html: string; lines: readonly string[] }> {
  const out = mkdtempSync(join(tmpdir(), 'cb-backtest-'));
  dirs.push(out);
  const r = await backtest({ config, items: feed(list), from: FROM, to: TO, latencies, strategy, maxUsd: 100, minRoi: 0, fees: 'venue-schedule', out });
  // The writer's schema, read back whole.
  const report = Report.parse(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')));
  return { report, html: readFileSync(join(out, 'report.html'), 'utf8'), lines: r.lines };
}

/** `list` with `ev` placed before the first item at or after its time (events of one millisecond: it goes first). */
function inject(list: readonly ReplayItem[], ev: BookSnapshot): ReplayItem[] {
  const i = list.findIndex((it) => timeOf(it) >= ev.localTimestamp);
  const item: ReplayItem = { type: 'event', seq: 1_000_000, event: ev };
  return [...list.slice(0, i), item, ...list.slice(i)];
}

const tradeOf = (r: Report, latency: number, id: string): Trade | undefined =>
  r.runs.find((x) => x.latency_ms === latency)!.trades.find((t) => t.opportunity_id === id);

describe('crossbook backtest on a recorded session', () => {
  let base: Awaited<ReturnType<typeof run>>;

  it('writes report.json in its schema: one run per latency, trades with legs, fees and opportunity ids', async () => {
    base = await run(items, [0, 250, 1000]);
    expect(base.report.runs.map((r) => r.latency_ms)).toEqual([0, 250, 1000]);
    const r0 = base.report.runs[0]!;
    expect(r0.summary.opportunities).toBeGreaterThan(0);
    expect(r0.summary.fillable).toBeGreaterThan(0);
    expect(r0.trades.length).toBe(r0.summary.fillable + r0.trades.filter((t) => Math.min(...t.legs.map((l) => l.size)) === 0).length);
    for (const t of r0.trades) {
      expect(t.opportunity_id).toMatch(/^arb_/);
      expect(t.legs).toHaveLength(2);
      for (const l of t.legs) {
        expect(l.price).toBeGreaterThan(0);
        expect(l.price).toBeLessThanOrEqual(l.limit_price);
        expect(Date.parse(l.filled_at) - Date.parse(t.signal_at)).toBe(0);
      }
    }
    // A taker 1 s late acts 1 s after each signal.
    for (const t of base.report.runs[2]!.trades) for (const l of t.legs) expect(Date.parse(l.filled_at) - Date.parse(t.signal_at)).toBe(1000);
    const net = r0.trades.reduce((a, t) => a + t.net_usd, 0);
    expect(r0.summary.net_usd).toBeCloseTo(net, 1);
    expect(base.lines[0]).toMatch(/^\d+ opportunit(y|ies), \d+ fillable at 0 ms, -?\$[\d,]+ net after fees, \d+ broken legs?$/);
  });

  it('more latency fills no more on this session, and broken arbs carry their exposure and unwind', () => {
    const [r0, r250, r1000] = base.report.runs as [Report['runs'][number], Report['runs'][number], Report['runs'][number]];
    expect(r250.summary.fillable).toBeLessThanOrEqual(r0.summary.fillable);
    expect(r1000.summary.fillable).toBeLessThanOrEqual(r250.summary.fillable);
    expect(r1000.summary.broken_legs).toBeGreaterThan(0);
    expect(r1000.summary.broken_legs).toBe(r1000.trades.filter((t) => t.status === 'broken').length);
    for (const t of r1000.trades) {
      if (t.status !== 'broken') continue;
      const u = t.unwind!;
      const [a, b] = t.legs as [Trade['legs'][number], Trade['legs'][number]];
      expect(u.excess).toBeCloseTo(Math.abs(a.size - b.size), 9);
      expect(u.leg).toBe(a.size > b.size ? 0 : 1);
      expect(u.exposure_usd).toBeGreaterThan(0);
      // Sold back one latency after the fill, at the book of that moment (or left unsold when the window ended).
      if (u.at !== null) expect(Date.parse(u.at) - Date.parse(t.legs[0]!.filled_at)).toBe(1000);
      expect(u.sold).toBeLessThanOrEqual(u.excess + 1e-9);
      expect(u.cost_usd).toBeCloseTo(u.exposure_usd - (u.proceeds_usd - u.fee_usd), 3);
    }
  });

  it('report.html is self-contained: uPlot inlined, nothing fetched', () => {
    expect(base.html).toContain('new uPlot(');
    expect(base.html).not.toMatch(/(src|href)\s*=\s*["']?https?:/i);
    expect(base.html).not.toMatch(/@import|url\(\s*["']?https?:/i);
    for (const axis of ['cumulative net PnL (USD)', 'latency (ms)', 'venue pair', 'category', 'lifetime, up to (ms)']) expect(base.html).toContain(axis);
  });

  it('fills against the book at signal time + latency: a change at that very moment or later is not seen, one just before is', async () => {
    const L = 250;
    const t = base.report.runs[1]!.trades.find((x) => x.status === 'filled')!;
    expect(t).toBeDefined();
    const leg = t.legs[0]!;
    const signal = Date.parse(t.signal_at);
    // The leg's market as the recording last snapshotted it before the signal: the injected book takes its place with nothing to buy.
    const snaps = items.flatMap((it) =>
      it.type === 'event' && it.event.type === 'book_snapshot' && it.event.marketId === leg.market_id && timeOf(it) <= signal ? [it.event] : [],
    );
    expect(new Set(snaps.map((s) => s.instrument)).size).toBe(1);
    const last = snaps[snaps.length - 1]!;
    const emptied = (at: number): BookSnapshot => ({
      ...last,
      timestamp: at,
      localTimestamp: at,
      bids: leg.side === 'no' ? [] : last.bids,
      asks: leg.side === 'yes' ? [] : last.asks,
    });
    const [atFill, before] = await Promise.all([run(inject(items, emptied(signal + L)), [L]), run(inject(items, emptied(signal + L - 1)), [L])]);
    // At signal + L the timer runs before any event of that millisecond: the book it walks is the one before the change.
    expect(tradeOf(atFill.report, L, t.opportunity_id)).toEqual(t);
    // One millisecond earlier the change is part of the book at signal + L: that leg gets nothing.
    const b = tradeOf(before.report, L, t.opportunity_id);
    expect(b === undefined || b.legs[0]!.size === 0).toBe(true);
    if (b) expect(b.status).toBe('broken');
  });
});

describe('crossbook backtest --strategy ev', () => {
  it('buys one leg per EV opportunity within max_usd, its net the expected value after the fee', async () => {
    const { report } = await run(items, [250], 'ev');
    const r = report.runs[0]!;
    expect(r.summary.fillable).toBeGreaterThan(0);
    for (const t of r.trades) {
      expect(t.opportunity_id).toMatch(/^ev_/);
      expect(t.legs).toHaveLength(1);
      const l = t.legs[0]!;
      expect(l.size).toBeLessThanOrEqual(l.requested);
      expect(l.price).toBeLessThanOrEqual(l.limit_price);
      // At most $100 spent, fee included.
      expect((l.price / 100) * l.size + l.fee_usd).toBeLessThanOrEqual(100 + 1e-6);
      expect(t.unwind).toBeNull();
    }
  });
});

describe('backtest options', () => {
  const ok = { input: FIXTURE, from: String(FROM), to: String(TO) };
  it('accepts a latency sweep and defaults', () => {
    const r = backtestRequest(config, { ...ok, latencyMs: '1000,0,250,100' });
    expect(r.latencyMs).toEqual([0, 100, 250, 1000]);
    expect(r).toMatchObject({ strategy: 'arb', maxUsd: 500, minRoi: 0, fees: 'venue-schedule', out: 'backtest-report' });
  });
  it.each([
    [{ latencyMs: '250,abc' }, /--latency-ms/],
    [{ latencyMs: '-5' }, /--latency-ms/],
    [{ maxUsd: '0' }, /--max-usd/],
    [{ maxUsd: 'lots' }, /--max-usd/],
    [{ strategy: 'market-making' }, /--strategy/],
    [{ fees: 'flat' }, /--fees/],
    [{ platforms: 'venue_a,nowhere' }, /--platforms: unknown venue "nowhere"/],
    [{ from: 'yesterday' }, /--from/],
    [{ from: String(TO), to: String(FROM) }, /--from must be before --to/],
    [{ input: '/nonexistent/recording.ndjson' }, /--input: no such file/],
    [{ minRoi: 'x' }, /--min-roi/],
  ])('refuses %o with a clear error', (bad, msg) => {
    expect(() => backtestRequest(config, { ...ok, ...bad })).toThrow(msg);
  });

  it('without --input reads the capture log of DATA_DIR, and says so when there is none', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'crossbook-backtest-nocapture-'));
    try {
      await expect(backtestCommand({ ...config, dataDir: empty }, { ...ok, input: undefined }, log)).rejects.toThrow(/no capture log here/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
