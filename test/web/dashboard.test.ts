/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page.evaluate / waitForFunction callbacks run in the browser and use its DOM.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../support/temp.js';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';
import { CHROMIUM, haveChromium, launchChromium } from '../support/chromium.js';
import { CLOSE_REASONS } from '../../src/signals/lifecycle/record.js';

/**
 * The web dashboard in a real browser: Debian's Chromium driven by playwright-core, against the
 * whole service on the embedded simulator (as `npm start` runs it). Every step waits for a DOM
 * condition. Screenshots go to docs/images/ with UPDATE_SCREENSHOTS=1 (README shows them), to a
 * temporary folder otherwise; render timings go to bench/out/dashboard-render.json (BENCHMARKS.md).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const have = haveChromium;
if (!have) console.warn(`dashboard browser tests skipped: ${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)`);

/** One board update as the page measures it (web/src/perf.ts). */
interface Sample {
  readonly ms: number;
  readonly latency: number;
  readonly rows: number;
  readonly messages: number;
}

/** Failure guard of each DOM wait, not a measurement. */
const WAIT = { timeout: 45_000 };

describe.skipIf(!have)('web dashboard in Chromium against the live simulator', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cb-web-'));
  const profile = mkdtempSync(join(tmpdir(), 'cb-chromium-'));
  const shots = process.env['UPDATE_SCREENSHOTS'] === '1' ? join(ROOT, 'docs', 'images') : tempDir('cb-shots-');
  let svc: Service;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    // The bundle the service serves at / (npm run build makes it; built again so the test sees this checkout's web/).
    execFileSync(process.execPath, [join(ROOT, 'web', 'build.mjs')], { stdio: 'pipe' });
    svc = await startService(
      loadConfig({
        env: {},
        overrides: {
          dataDir: dir,
          logLevel: 'warn',
          server: { host: '127.0.0.1', port: 0, baseUrl: null },
          sim: { ticksPerSecond: 400 },
          // Alerts within seconds of trading (a one-second horizon, one scored entry), for the replay page's alert channels.
          signals: {
            wallets: { horizonMs: 1_000, goodMoveUnits: 100, smartMinEntries: 1, smartMinHitRate: 0, fadeMinEntries: 1, fadeMinMissRate: 0 },
            alerts: { smartMinUsd: 0, fadeMinUsd: 0 },
          },
        },
      }),
    );
    browser = await launchChromium(profile);
    page = await browser.newPage();
    mkdirSync(shots, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  });

  it('fills the board from the WebSocket with a key from the URL fragment, and drops the fragment', async () => {
    const sockets: string[] = [];
    const firstFrames: string[] = [];
    page.on('websocket', (ws) => {
      sockets.push(ws.url());
      ws.once('framesent', (f) => void firstFrames.push(String(f.payload)));
    });
    await page.goto(`${svc.url}/#key=${svc.demoKey}`);
    await page.waitForSelector('tr[data-id]:not([data-closed])', WAIT);
    expect(page.url()).toBe(`${svc.url}/`);
    // The key never goes into a socket's URL: each socket logs in with its first message.
    expect(sockets[0]).toBe(`${svc.url.replace('http', 'ws')}/api/v2/ws`);
    expect(sockets.some((u) => u.includes('api_key'))).toBe(false);
    expect(JSON.parse(firstFrames[0]!)).toEqual({ action: 'auth', api_key: svc.demoKey });
    const row = page.locator('tr[data-id]:not([data-closed])').first();
    // legs with venue, side, price and size, and a link to the venue's page
    // Playwright waits for the first leg to be attached (up to WAIT), instead of a 1 s poll of the count.
    const leg = row.locator('.leg').first();
    await leg.waitFor({ ...WAIT, state: 'attached' });
    expect(await leg.innerText()).toMatch(/^venue_[a-h] (YES|NO) \d+(\.\d)?¢ × [\d,]+/);
    expect(await row.locator('.leg a.ext').first().getAttribute('href')).toMatch(/^https?:\/\//);
    expect(await row.locator('td.roi').innerText()).toMatch(/^-?\d+\.\d\d%$/);
    await page.waitForFunction(
      () => document.querySelectorAll('tr[data-kind="arb"]').length > 0 && document.querySelectorAll('tr[data-kind="ev"]').length > 0,
      undefined,
      WAIT,
    );
    await page.screenshot({ path: join(shots, 'board.png') });
  });

  it('narrows the board with the venue and minimum-ROI filters', async () => {
    const venue = (await page.locator('tr[data-id]:not([data-closed]) .leg a:not(.ext)').first().innerText()).trim();
    await page.selectOption('select[name=venue]', venue);
    await page.waitForFunction(
      (v) => {
        const rows = [...document.querySelectorAll('tr[data-id]')];
        return rows.length > 0 && rows.every((r) => [...r.querySelectorAll('.leg a:not(.ext)')].some((a) => a.textContent === v));
      },
      venue,
      WAIT,
    );
    await page.selectOption('select[name=venue]', '');
    const rois = await page.locator('tr[data-id] td.roi').allInnerTexts();
    const sorted = rois.map((r) => Number.parseFloat(r)).sort((a, b) => a - b);
    const min = sorted[Math.floor(sorted.length / 2)]!;
    await page.fill('input[name=min-roi]', String(min));
    await page.waitForFunction(
      (m) => {
        const rows = [...document.querySelectorAll('tr[data-id] td.roi')];
        return rows.length > 0 && rows.every((r) => Number.parseFloat(r.textContent ?? '') >= m);
      },
      min,
      WAIT,
    );
    await page.fill('input[name=min-roi]', '0');
  });

  it('fades a closed opportunity with its close reason, then takes it off the board', async () => {
    const handle = await page.waitForFunction(
      (reasons) => {
        const r = [...document.querySelectorAll<HTMLElement>('tr[data-closed]')].find((x) => reasons.includes(x.dataset['closed'] ?? ''));
        return r ? { id: r.dataset['id']!, reason: r.dataset['closed']!, text: r.querySelector('.reason')?.textContent ?? '' } : false;
      },
      [...CLOSE_REASONS] as string[],
      WAIT,
    );
    const closed = (await handle.jsonValue()) as { id: string; reason: string; text: string };
    expect(closed.text).toMatch(/closed: /);
    await page.waitForFunction((id) => !document.querySelector(`tr[data-id="${CSS.escape(id)}"]`), closed.id, WAIT);
  });

  it('measures rendering time per board update, against the same board drawing no rows', async () => {
    const measure = async (n: number) => {
      await page.evaluate(() => (globalThis as unknown as { __crossbookPerf: { reset(): void } }).__crossbookPerf.reset());
      await page.waitForFunction((k) => (globalThis as unknown as { __crossbookPerf: { samples: unknown[] } }).__crossbookPerf.samples.length >= k, n, {
        timeout: 120_000,
      });
      return page.evaluate(() => {
        const p = (globalThis as unknown as { __crossbookPerf: { samples: Sample[]; longTasks: number } }).__crossbookPerf;
        return { samples: p.samples.slice(), longTasks: p.longTasks };
      });
    };
    const N = 100;
    const full = await measure(N);
    await page.fill('input[name=min-roi]', '100000');
    await page.waitForFunction(() => document.querySelectorAll('tr[data-id]').length === 0, undefined, WAIT);
    const empty = await measure(N);
    await page.fill('input[name=min-roi]', '0');
    const stats = (s: Sample[]) => {
      const q = (k: 'ms' | 'latency', f: number) => {
        const v = s.map((x) => x[k]).sort((a, b) => a - b);
        return Number(v[Math.min(v.length - 1, Math.floor(f * v.length))]!.toFixed(2));
      };
      return {
        updates: s.length,
        renderMs: { p50: q('ms', 0.5), p95: q('ms', 0.95), max: q('ms', 1) },
        latencyMs: { p50: q('latency', 0.5), p95: q('latency', 0.95) },
        meanRows: Math.round(s.reduce((a, x) => a + x.rows, 0) / s.length),
        messagesPerUpdate: Number((s.reduce((a, x) => a + x.messages, 0) / s.length).toFixed(1)),
      };
    };
    const result = {
      date: new Date().toISOString(),
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      loadAverage1m: Number(loadavg()[0]!.toFixed(2)),
      node: process.version,
      chromium: browser.browser()?.version() ?? 'unknown',
      withRows: { ...stats(full.samples), longTasks: full.longTasks },
      noRows: { ...stats(empty.samples), longTasks: empty.longTasks },
    };
    mkdirSync(join(ROOT, 'bench', 'out'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'out', 'dashboard-render.json'), `${JSON.stringify(result, null, 2)}\n`);
    expect(result.withRows.meanRows).toBeGreaterThan(0);
    expect(result.noRows.meanRows).toBe(0);
  }, 300_000);

  it('draws a market page: ladder, candles, trades and the match group side by side', async () => {
    // A leg on a venue with an order book and a trade feed, opened from the board (in-page navigation keeps the key).
    const links = page.locator('tr[data-id]:not([data-closed]) .leg a:not(.ext)', { hasText: /venue_[ab]/ });
    await links.first().waitFor(WAIT);
    // The page draws a candle chart and a trade tape: a young service may have neither for a given
    // market yet (most of the simulator's markets trade seldom), so take one of the board's markets
    // that has both over REST, waiting until one does.
    const count = async (path: string, field: 'candles' | 'trades'): Promise<number> => {
      const r = await fetch(`${svc.url}/api/v2${path}`, { headers: { 'X-API-Key': svc.demoKey! } });
      return r.ok ? ((await r.json()) as Record<string, unknown[]>)[field]!.length : 0;
    };
    let href: URL | undefined;
    await expect
      .poll(
        async () => {
          const hrefs = [...new Set(await links.evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? '')))].slice(0, 8);
          for (const h of hrefs) {
            const u = new URL(h, svc.url);
            const q = `platform=${u.searchParams.get('platform')}&market_id=${encodeURIComponent(u.searchParams.get('id')!)}`;
            if ((await count(`/trades?${q}&limit=1`, 'trades')) > 0 && (await count(`/prices/history?${q}&interval=1m`, 'candles')) > 0) {
              href = u;
              return true;
            }
          }
          return false;
        },
        { timeout: 180_000, interval: 1_000 },
      )
      .toBe(true);
    // That very market (the board may have re-ranked meanwhile), as a click on its link navigates: in the page.
    await page.evaluate((to) => {
      history.pushState(null, '', to);
      dispatchEvent(new PopStateEvent('popstate'));
    }, `${href!.pathname}${href!.search}`);
    await page.waitForURL(/\/app\/market\?/, WAIT);
    await page.waitForSelector('[data-testid=ladder] tr.lvl[data-price]', WAIT);
    await page.waitForSelector('.chart canvas', WAIT).catch(async (e: unknown) => {
      throw new Error(`no chart; the price card reads: ${await page.locator('.card.wide').first().innerText()}`, { cause: e });
    });
    expect(Number(await page.locator('.chart').getAttribute('data-candles'))).toBeGreaterThan(0);
    await page.waitForSelector('table.members tr[data-member]', WAIT);
    expect(await page.locator('table.members tr[aria-current=true]').count()).toBe(1);
    expect(await page.locator('[data-testid=ladder] tr.lvl[data-price] td.num').first().innerText()).toMatch(/¢$/);
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="trade tape"] tbody tr').length > 0, undefined, WAIT);
    await page.getByRole('radio', { name: '5m', exact: true }).click();
    await page.waitForSelector('.chart[aria-label^="5m"] canvas', WAIT);
    await page.getByRole('radio', { name: '1m', exact: true }).click();
    await page.waitForSelector('.chart[aria-label^="1m"] canvas', WAIT);
    await page.screenshot({ path: join(shots, 'market.png'), fullPage: true });
  }, 240_000);

  it('lists match groups with members, confidence and reasons, and a unified book', async () => {
    await page.getByRole('link', { name: 'Match groups' }).click();
    await page.waitForSelector('article.group tr[data-member]', WAIT);
    expect(await page.locator('article.group table.members td.num').nth(0).innerText()).toMatch(/^\d\.\d\d$/);
    await page.locator('article.group button', { hasText: 'Show unified book' }).first().click();
    await page.waitForSelector('article.group table.unified tbody tr', WAIT);
    await page.screenshot({ path: join(shots, 'groups.png') });
  });

  it('lists every venue on the health page with feed status, lag and malformed frames', async () => {
    await page.getByRole('link', { name: 'Health' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-venue]').length === 8, undefined, WAIT);
    // the lag column fills from live price updates
    await page.waitForFunction(
      () => [...document.querySelectorAll('tr[data-venue] td:nth-child(3)')].some((td) => /ms$/.test(td.textContent ?? '')),
      undefined,
      WAIT,
    );
    expect(await page.locator('[data-testid=persistence]').innerText()).toBe('ok');
    await page.screenshot({ path: join(shots, 'health.png') });
  });

  it('replays a window of the session over the WebSocket: prices, a book and arbitrage as they were, paused, resumed, sought, to replay_completed', async () => {
    await page.getByRole('link', { name: 'Replay' }).click();
    await page.waitForSelector('form.replay', WAIT);
    // A window the capture log holds (written through before the replay reads it).
    await svc.capture!.flush();
    const to = Date.now() - 2_000;
    const from = to - 20_000;
    await page.waitForFunction(() => (document.querySelector<HTMLInputElement>('input[name=markets]')?.value ?? '') !== '', undefined, WAIT);
    await page.fill('input[name=from]', new Date(from).toISOString());
    await page.fill('input[name=to]', String(to));
    await page.selectOption('select[name=speed]', '1');
    await page.getByRole('button', { name: 'Start' }).click();
    const status = page.locator('[data-testid=replay-status]');
    await page.waitForSelector('[data-testid=replay-status][data-state=running]', WAIT);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.waitForSelector('[data-testid=replay-status][data-state=paused]', WAIT);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.waitForSelector('[data-testid=replay-status][data-state=running]', WAIT);
    // Seek near the end of the window: at 1× the rest takes a second and a half.
    await page.fill('input[name=seek]', String(to - 1_500));
    await page.getByRole('button', { name: 'Seek' }).click();
    await page.waitForSelector('[data-testid=replay-status][data-state=completed]', WAIT).catch(async (e: unknown) => {
      throw new Error(
        `the replay did not complete; the page reads: ${await status.innerText()} ${await page.locator('[data-testid=replay-error]').allInnerTexts()}`,
        {
          cause: e,
        },
      );
    });
    expect(await status.innerText()).toMatch(/completed: \d+ messages sent/);
    // The markets as they were at the sought moment: their prices (snapshots, then updates) and a book.
    expect(await page.locator('table[aria-label="replayed prices"] tbody tr[data-market]').count()).toBeGreaterThan(0);
    await page.waitForSelector('table.ladder tr.lvl[data-price]', WAIT);
    await page.screenshot({ path: join(shots, 'replay.png'), fullPage: true });
  }, 120_000);

  it('replays the alerts live raised in a window beside its markets: the alert channels read back from the store', async () => {
    // An alert the service raised (the lowered thresholds above raise them within seconds of trading).
    const newest = async (): Promise<{ alert_id: string; created_at: string } | undefined> => {
      const r = await fetch(`${svc.url}/api/v2/alerts/smart-money?limit=1`, { headers: { 'x-api-key': svc.demoKey! } });
      return ((await r.json()) as { alerts: { alert_id: string; created_at: string }[] }).alerts[0];
    };
    await expect.poll(newest, { timeout: WAIT.timeout, interval: 100 }).toBeDefined();
    const alert = (await newest())!;
    const at = Date.parse(alert.created_at);
    await svc.capture!.flush();
    await page.getByRole('link', { name: 'Replay' }).click();
    await page.waitForSelector('form.replay', WAIT);
    await page.fill('input[name=from]', String(at - 2_000));
    await page.fill('input[name=to]', String(at));
    await page.selectOption('select[name=speed]', 'max');
    await page.check('input[name=alerts]');
    await page.getByRole('button', { name: 'Start' }).click();
    const status = page.locator('[data-testid=replay-status]');
    await page.waitForSelector('[data-testid=replay-status][data-state=completed]', WAIT).catch(async (e: unknown) => {
      throw new Error(
        `the replay did not complete; the page reads: ${await status.innerText()} ${await page.locator('[data-testid=replay-error]').allInnerTexts()}`,
        {
          cause: e,
        },
      );
    });
    // The alert is in the table as the feed gave it: its kind, the trade and what it was worth.
    const row = page.locator(`table[aria-label="replayed alerts"] tr[data-alert="${alert.alert_id}"]`);
    await row.waitFor(WAIT);
    expect(await row.getAttribute('data-kind')).toMatch(/^(smart_money|insider|captain_hook)$/);
    expect(await row.locator('td').nth(2).innerText()).toMatch(/^(buy|sell) (YES|NO) at \d+(\.\d)?¢$/);
    await page.screenshot({ path: join(shots, 'replay-alerts.png'), fullPage: true });
  }, 120_000);

  it('is usable with the keyboard: skip link first, then the page links', async () => {
    const p = await browser.newPage();
    await p.goto(`${svc.url}/#key=${svc.demoKey}`);
    await p.waitForSelector('tr[data-id]', WAIT);
    await p.keyboard.press('Tab');
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    // brand, Board, Match groups, Health
    for (let i = 0; i < 4; i++) await p.keyboard.press('Tab');
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Health');
    await p.keyboard.press('Enter');
    await p.waitForSelector('tr[data-venue]', WAIT);
    // the page change moves focus to the content, so the next Tab goes into the page, not the header
    expect(await p.evaluate(() => document.activeElement?.id)).toBe('content');
    await p.close();
  });

  it('fits a phone: no page-wide horizontal scroll, the board scrolls inside its box', async () => {
    const phone = await browser.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${svc.url}/#key=${svc.demoKey}`);
    await phone.waitForSelector('tr[data-id]', WAIT);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await phone.screenshot({ path: join(shots, 'board-phone.png') });
    await phone.close();
  });

  it('says clearly that a bad key was refused, and keeps it nowhere', async () => {
    const p = await browser.newPage();
    await p.goto(`${svc.url}/#key=pmx_notarealkey0000000000`);
    const error = await p.waitForSelector('[data-testid=key-error]', WAIT);
    expect(await error.innerText()).toMatch(/This key was refused \(401\)/);
    expect(await p.evaluate(() => localStorage.length)).toBe(0);
    await p.screenshot({ path: join(shots, 'bad-key.png') });
    // a string that is not a key is refused before any request
    await p.fill('input[name=key]', 'hello');
    await p.click('button[type=submit]');
    await p.waitForFunction(() => /starts? with pmx_/.test(document.querySelector('[data-testid=key-error]')?.textContent ?? ''), undefined, WAIT);
    await p.close();
  });

  it('remembers the key only when asked (localStorage), and forgets it', async () => {
    const p = await browser.newPage();
    await p.goto(`${svc.url}/`);
    await p.fill('input[name=key]', svc.demoKey!);
    await p.check('input[name=remember]');
    await p.click('button[type=submit]');
    await p.waitForSelector('tr[data-id]', WAIT);
    expect(await p.evaluate(() => localStorage.getItem('crossbook.apiKey'))).toBe(svc.demoKey);
    await p.reload();
    await p.waitForSelector('tr[data-id]', WAIT);
    await p.getByRole('button', { name: 'Forget key' }).click();
    await p.waitForSelector('input[name=key]', WAIT);
    expect(await p.evaluate(() => localStorage.getItem('crossbook.apiKey'))).toBeNull();
    await p.close();
  });
});
