import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Report, type Trade } from '../../src/backtest/schema.js';
import { backtestCommand } from '../../src/cli/backtest.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { startService, type Service } from '../../src/service.js';
import type { OpportunityRecord } from '../../src/signals/lifecycle/record.js';
import { haveChromium, launchChromium } from '../support/chromium.js';

/**
 * SIMULATOR DATA. The acceptance check of the backtest (issue 29) and of GET
 * /arb/history/{id}/fills, against the real service on the embedded simulator: it captures a
 * session, `crossbook backtest` reads that capture log with two latencies, its trades carry ids
 * the live /arb/history lists, and the endpoint gives, for an opportunity, the numbers the
 * backtest reported for it. report.html opens in Chromium and draws its charts.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-fills-'));
const out = mkdtempSync(join(tmpdir(), 'cb-fills-report-'));
const profile = mkdtempSync(join(tmpdir(), 'cb-fills-chromium-'));
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    logLevel: 'warn',
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 400, seed: 11, process: 'inline' },
  },
});
const LATENCIES = [0, 1000] as const;

interface FillsBody {
  readonly opportunity_id: string;
  readonly runs: readonly {
    readonly latency_ms: number;
    readonly status: string;
    readonly fillable: boolean;
    readonly net_usd: number;
    readonly legs: Trade['legs'];
    readonly unwind: Trade['unwind'];
  }[];
}

let svc: Service;
let report: Report;
let from = 0;
let to = 0;

async function get(path: string, key = svc.demoKey!): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${svc.url}/api/v2${path}`, { headers: { 'X-API-Key': key } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** Every id /arb/history lists, paging to the end. */
async function historyIds(): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const r = await get(`/arb/history?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status).toBe(200);
    for (const o of r.body['opportunities'] as { opportunity_id: string }[]) ids.add(o.opportunity_id);
    cursor = r.body['next_cursor'] as string | null;
  } while (cursor);
  return ids;
}

const run = (lat: number) => report.runs.find((r) => r.latency_ms === lat)!;

beforeAll(async () => {
  svc = await startService(config);
  // A session with arbitrage opened and closed, fills a second after the signal inside it.
  await vi.waitFor(() => expect(svc.history.written.arb).toBeGreaterThanOrEqual(12), { timeout: 90_000, interval: 200 });
  await svc.capture!.flush();
  const first = (await get('/arb/history?limit=500')).body['opportunities'] as { first_seen: string }[];
  from = Math.min(...first.map((o) => Date.parse(o.first_seen)));
  to = svc.clock.now() - 1;
  await backtestCommand(config, { from: String(from), to: String(to), latencyMs: LATENCIES.join(','), out }, log);
  report = Report.parse(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')));
}, 240_000);

afterAll(async () => {
  await svc?.close();
  for (const d of [dir, out, profile]) rmSync(d, { recursive: true, force: true });
});

describe('crossbook backtest on the capture of a live session', () => {
  it('trades carry legs, fees and ids that the live /arb/history lists; more latency never fills more', async () => {
    const trades = run(0).trades;
    expect(trades.length).toBeGreaterThan(0);
    for (const t of trades) {
      expect(t.legs).toHaveLength(2);
      for (const l of t.legs) expect(l.fee_usd).toBeGreaterThanOrEqual(0);
    }
    // Every trade's opportunity is in the live history, or still open on /arb. Open ones first: one
    // open then is in the history read after its close's batched write has committed.
    const open = new Set(svc.lifecycle.openRecords().map((o) => o.opportunity_id));
    await svc.history.committed();
    const history = await historyIds();
    const ids = report.runs.flatMap((r) => r.trades.map((t) => t.opportunity_id));
    const missing = ids.filter((id) => !history.has(id) && !open.has(id));
    expect(missing).toEqual([]);
    expect(ids.filter((id) => history.has(id)).length).toBeGreaterThan(0);
    const [fast, slow] = [run(LATENCIES[0]).summary, run(LATENCIES[1]).summary];
    expect(slow.fillable).toBeLessThanOrEqual(fast.fillable);
    expect(slow.contracts).toBeLessThanOrEqual(fast.contracts);
  });

  it.skipIf(!haveChromium)('report.html opens in Chromium without console errors and draws its charts', async () => {
    const browser = await launchChromium(profile);
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(pathToFileURL(join(out, 'report.html')).href);
      // uPlot draws each chart into a canvas inside its div.
      await page.waitForFunction(() => document.querySelectorAll('.chart canvas').length === 5, undefined, { timeout: 30_000 });
      const sizes = await page.$$eval('.chart canvas', (cs) => cs.map((c) => (c as HTMLCanvasElement).width * (c as HTMLCanvasElement).height));
      expect(sizes.every((s) => s > 0)).toBe(true);
      expect(await page.locator('.chart .u-legend').count()).toBe(5);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('GET /arb/history/{opportunity_id}/fills', () => {
  it('gives the numbers crossbook backtest reported for the opportunity, at each latency', async () => {
    const closed = new Map<string, OpportunityRecord>();
    for (const id of await historyIds()) {
      const r = svc.history.find('arb', id);
      if (r) closed.set(id, r);
    }
    // Opportunities whose fills (and a broken leg's unwind) fall inside the backtest's window.
    const ids = run(0)
      .trades.map((t) => t.opportunity_id)
      .filter((id) => closed.has(id) && closed.get(id)!.first_seen + 2 * LATENCIES[1] + 100 < to)
      .slice(0, 2);
    expect(ids.length).toBeGreaterThan(0);
    let compared = 0;
    for (const id of ids) {
      const path = `/arb/history/${id}/fills?latency_ms=${LATENCIES.join(',')}`;
      // The window ends a latency after the close: until the clock passes it, a 409 says to retry.
      const r = await vi.waitFor(
        async () => {
          const x = await get(path);
          expect(x.body['code']).not.toBe('fills.not_captured_yet');
          return x;
        },
        { timeout: 30_000, interval: 250 },
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const body = r.body as unknown as FillsBody;
      expect(body.opportunity_id).toBe(id);
      expect(body.runs.map((x) => x.latency_ms)).toEqual([...LATENCIES]);
      for (const x of body.runs) {
        const t = run(x.latency_ms).trades.find((tr) => tr.opportunity_id === id);
        if (t === undefined) {
          expect(x.status).toBe('unfilled');
          continue;
        }
        expect({ status: x.status, net_usd: x.net_usd, legs: x.legs, unwind: x.unwind }).toEqual({
          status: t.status,
          net_usd: t.net_usd,
          legs: t.legs,
          unwind: t.unwind,
        });
        expect(x.fillable).toBe(Math.min(...t.legs.map((l) => l.size)) > 0);
        compared++;
      }
      // More latency never fills more.
      const filled = body.runs.map((x) => x.legs.reduce((s, l) => s + l.size, 0));
      expect(filled[1]).toBeLessThanOrEqual(filled[0]!);
    }
    // The trades at 0 ms of the chosen ids filled: the comparison is of real fills.
    expect(compared).toBeGreaterThanOrEqual(ids.length);
    // Failure guard: each request is a replay of the capture from its start (CPU work, not a wait).
  }, 120_000);

  it('refuses bad input: 400 for a bad latency or id, 404 for an unknown id, 400 for a window outside the capture, 403 on the free plan', async () => {
    const id = run(0).trades.find((t) => svc.history.find('arb', t.opportunity_id))!.opportunity_id;
    for (const q of ['latency_ms=abc', 'latency_ms=60001', 'latency_ms=-5', 'latency_ms=1,,2', 'latency_ms=1,2,3,4,5,6,7,8,9', 'max_usd=0', 'fees=maybe']) {
      const r = await get(`/arb/history/${id}/fills?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body['code'], q).toBe('validation.invalid');
    }
    const bad = await get('/arb/history/not-an-id/fills');
    expect(bad.status).toBe(400);
    expect(String(bad.body['error'])).toMatch(/opportunity_id/);
    const unknown = await get(`/arb/history/arb_zz_${from.toString(36)}_0/fills`);
    expect(unknown.status).toBe(404);
    expect(unknown.body['code']).toBe('not_found');
    // An opportunity the history keeps from before the capture started (history retention is
    // longer than capture retention, or capture was off then): its window is not captured.
    const rec = svc.history.find('arb', id)!;
    const old = from - 3 * 3_600_000;
    const oldId = `arb_${rec.group_id.toString(36)}_${old.toString(36)}_0`;
    svc.history.append({ ...rec, opportunity_id: oldId, first_seen: old, last_seen: old + 500, closed_at: old + 1000 });
    // The history's puts are batched: wait for this one's commit, then it is read back.
    await svc.history.committed();
    expect(svc.history.find('arb', oldId)).toBeDefined();
    const outside = await get(`/arb/history/${oldId}/fills`);
    expect(outside.status).toBe(400);
    expect(outside.body['code']).toBe('replay.outside_retention');
    const free = svc.keys.create('free', 'fills-free').key;
    const blocked = await get(`/arb/history/${id}/fills`, free);
    expect(blocked.status).toBe(403);
    expect(blocked.body['code']).toBe('auth.endpoint_blocked');
  });
});
