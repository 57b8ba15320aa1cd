import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { program } from '../../src/cli/main.js';
import { webhooksCommand } from '../../src/cli/webhooks.js';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import type { OpportunityRecord } from '../../src/signals/lifecycle/record.js';
import { HEADERS, WebhookDispatcher, type WebhookEvent } from '../../src/webhooks/dispatcher.js';
import { verifySignature } from '../../src/webhooks/sign.js';
import { WebhookStore } from '../../src/webhooks/store.js';
import { checkWebhookUrl, forbiddenAddress } from '../../src/webhooks/url.js';
import { Webhooks } from '../../src/webhooks/webhooks.js';

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly raw: Buffer;
  readonly body: Record<string, unknown>;
}

/** A real local HTTP receiver; `reply` decides each answer (a status, or 'hold' to never answer). */
async function receiver(reply: (n: number) => number | 'hold' = () => 200): Promise<{ url: string; got: Received[]; held: ServerResponse[]; server: Server }> {
  const got: Received[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      got.push({ headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) as Record<string, unknown> });
      const r = reply(got.length);
      if (r === 'hold') held.push(res);
      else res.writeHead(r).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, held, server };
}

const servers: Server[] = [];
const dirs: string[] = [];
const closers: (() => unknown)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of closers.splice(0)) await c();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Waits on real I/O (setImmediate and Date are never faked here) until `pred` holds. The deadline is
 * 30 s of the real clock, a failure guard: it was 20,000 turns of the loop, which pass in well under
 * a second when the loop is idle, so a delivery over loopback that a busy machine slowed missed it.
 */
async function until(pred: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

const record: OpportunityRecord = {
  opportunity_id: 'arb_test1',
  kind: 'arb',
  group_id: 7,
  title: 'Seattle to win',
  category: 'Sports',
  side: null,
  legs: [
    { platform: 'venue_h', source: 'venue_h', market_id: 'H1', side: 'yes' },
    { platform: 'venue_b', source: 'venue_b', market_id: 'B1', side: 'no' },
  ],
  platforms: ['venue_b', 'venue_h'],
  first_seen: 1_795_000_000_000,
  last_seen: 1_795_000_003_000,
  closed_at: 1_795_000_004_000,
  duration_ms: 4000,
  close_reason: 'book_moved',
  open_roi: 0.5,
  peak_roi: 0.5,
  last_roi: 0.5,
  peak_size: 300,
  roi_weighted_size: 187.5,
  updates: 2,
};
const arbEvent = (roi: number, platforms = ['venue_a']): WebhookEvent => ({ kind: 'arb', type: 'arb_opened', roi, platforms, data: { roi } });

describe('crossbook webhooks (CLI) and signed delivery', () => {
  it('adds an endpoint, prints the secret last, and the receiver verifies each POST with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-wh-'));
    dirs.push(dir);
    const config = loadConfig({ env: {}, overrides: { dataDir: dir } });
    const rx = await receiver();
    const lines: string[] = [];
    const errs: string[] = [];
    expect(
      await webhooksCommand(
        config,
        'add',
        { url: rx.url, events: 'arb,feed', minRoi: '0.1' },
        (s) => lines.push(s),
        (s) => errs.push(s),
      ),
    ).toBe(0);
    const secret = lines[lines.length - 1]!;
    expect(secret).toMatch(/^whsec_/);

    // The server's side: the same DATA_DIR, the webhook room, an opportunity that expired.
    const persistence = new Persistence(dir);
    closers.push(() => persistence.close());
    const hooks = new Webhooks(new WebhookStore(persistence.db('webhooks')), new WebhookDispatcher(), { slugOf: (l) => l, titleOf: () => null }, 500);
    closers.push(() => hooks.close());
    hooks.onLifecycle({ type: 'expired', kind: 'arb', record });
    await until(() => rx.got.length === 1, 'the delivery');
    const d = rx.got[0]!;
    expect(verifySignature(secret, d.raw, d.headers[HEADERS.signature] as string)).toBe(true);
    expect(verifySignature(secret, Buffer.concat([d.raw, Buffer.from(' ')]), d.headers[HEADERS.signature] as string)).toBe(false);
    expect(d.headers[HEADERS.signature]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(d.headers['content-type']).toBe('application/json');
    expect(d.body).toMatchObject({
      id: d.headers[HEADERS.id],
      timestamp: Number(d.headers[HEADERS.timestamp]),
      type: 'arb_expired',
      event: 'arb',
      attempt: 1,
      data: { opportunity_id: 'arb_test1', close_reason: 'book_moved', record: { duration_ms: 4000, first_seen: new Date(record.first_seen).toISOString() } },
    });

    // Filtered out: an event kind it did not ask for, an ROI under its minimum.
    hooks.dispatcher.dispatch({ kind: 'ev', type: 'ev_opened', roi: 5, platforms: [], data: {} });
    hooks.dispatcher.dispatch(arbEvent(0.05));
    hooks.dispatcher.dispatch(arbEvent(0.2));
    await until(() => rx.got.length === 2, 'the second delivery');
    expect(rx.got[1]!.body).toMatchObject({ type: 'arb_opened', data: { roi: 0.2 } });
    expect(rx.got[1]!.body['id']).not.toBe(d.body['id']);

    // Listed, then removed by the CLI while the room runs: the next reload drops it.
    lines.length = 0;
    expect(
      await webhooksCommand(
        config,
        'list',
        {},
        (s) => lines.push(s),
        (s) => errs.push(s),
      ),
    ).toBe(0);
    const id = /^(wh_[0-9a-f]{12}) /.exec(lines[0]!)![1]!;
    expect(lines[0]).toContain('events=arb,feed');
    expect(
      await webhooksCommand(
        config,
        'remove',
        { id },
        () => undefined,
        (s) => errs.push(s),
      ),
    ).toBe(0);
    hooks.reload();
    expect(hooks.dispatcher.stats().size).toBe(0);
    expect(
      await webhooksCommand(
        config,
        'remove',
        { id },
        () => undefined,
        (s) => errs.push(s),
      ),
    ).toBe(1);
    expect(errs).toEqual([`no such webhook: ${id}`]);
  });

  it('refuses bad input: scheme, link-local and metadata targets, unknown events and venues', async () => {
    const config = loadConfig({ env: {} });
    const add = async (a: Record<string, string>): Promise<[number, string[]]> => {
      const errs: string[] = [];
      const code = await webhooksCommand(
        config,
        'add',
        a,
        () => undefined,
        (s) => errs.push(s),
      );
      return [code, errs];
    };
    expect(await add({ url: 'ftp://example.com/x', events: 'arb' })).toEqual([2, [expect.stringContaining('only http and https')]]);
    expect(await add({ url: 'http://169.254.169.254/latest/meta-data', events: 'arb' })).toEqual([2, [expect.stringContaining('link-local')]]);
    expect(await add({ url: 'http://example.com/x', events: 'arb,trades' })).toEqual([2, [expect.stringContaining('--events takes')]]);
    expect(await add({ url: 'http://example.com/x', events: 'arb', platforms: 'venue_z' })).toEqual([2, [expect.stringContaining('--platforms takes')]]);
    expect(await add({ url: 'http://example.com/x', events: 'arb', minRoi: '-1' })).toEqual([2, [expect.stringContaining('--min-roi')]]);
    const w = program().commands.find((c) => c.name() === 'webhooks')!;
    expect(w.commands.map((c) => c.name())).toEqual(['add', 'list', 'remove']);
  });

  it('knows link-local and metadata addresses in every spelling', () => {
    for (const u of [
      'http://169.254.169.254/',
      'http://[fe80::1]/',
      'http://[FEBF::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://2852039166/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.GOOGLE.INTERNAL./',
      'http://100.100.100.200/',
      'http://[fd00:ec2::254]/',
    ])
      expect(checkWebhookUrl(u), u).toMatchObject({ ok: false });
    expect(checkWebhookUrl('http://169.254.169.254/', { allowLinkLocal: true }).ok).toBe(true);
    expect(checkWebhookUrl('https://user:pw@example.com/').ok).toBe(false);
    for (const u of ['http://127.0.0.1:9000/x', 'https://hooks.example.com/a', 'http://10.0.0.5/', 'http://[::1]:80/'])
      expect(checkWebhookUrl(u).ok, u).toBe(true);
    expect(forbiddenAddress('169.254.0.1')).toBe(true);
    expect(forbiddenAddress('fe80::abcd')).toBe(true);
    expect(forbiddenAddress('::ffff:a9fe:1')).toBe(true);
    expect(forbiddenAddress('192.168.1.1')).toBe(false);
    expect(forbiddenAddress('2001:db8::1')).toBe(false);
  });
});

describe('webhook dispatcher timing (fake timers)', () => {
  const endpoint = (url: string, over: Partial<{ minRoi: number; platforms: string[] }> = {}) => ({
    id: 'wh_000000000001',
    url,
    events: ['arb' as const],
    minRoi: 0,
    secret: 'whsec_test',
    createdAt: '2026-11-22T00:00:00.000Z',
    ...over,
  });

  it('retries a failed delivery with exponential backoff, same event id, next attempt number', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const rx = await receiver((n) => (n <= 2 ? 503 : 200));
    const d = new WebhookDispatcher({ maxAttempts: 4, backoffBaseMs: 1000, backoffMaxMs: 60_000 });
    closers.push(() => d.close());
    d.setEndpoints([endpoint(rx.url)]);
    d.dispatch(arbEvent(1));
    await until(() => d.stats().get('wh_000000000001')!.retries === 1, 'the first failure');
    expect(rx.got).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(rx.got).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => d.stats().get('wh_000000000001')!.retries === 2, 'the second failure');
    expect(rx.got).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1999);
    expect(rx.got).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => d.stats().get('wh_000000000001')!.delivered === 1, 'the delivery');
    expect(rx.got.map((g) => g.body['attempt'])).toEqual([1, 2, 3]);
    expect(new Set(rx.got.map((g) => g.body['id'])).size).toBe(1);
    expect(d.stats().get('wh_000000000001')).toMatchObject({ delivered: 1, failed: 0, retries: 2, dropped: 0, waiting: 0 });
  });

  it('gives up after maxAttempts with the backoff capped', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const rx = await receiver(() => 500);
    const d = new WebhookDispatcher({ maxAttempts: 3, backoffBaseMs: 1000, backoffMaxMs: 1500 });
    closers.push(() => d.close());
    d.setEndpoints([endpoint(rx.url)]);
    d.dispatch(arbEvent(1));
    await until(() => rx.got.length === 1 && d.stats().get('wh_000000000001')!.retries === 1, 'attempt 1');
    await vi.advanceTimersByTimeAsync(1000);
    await until(() => rx.got.length === 2 && d.stats().get('wh_000000000001')!.retries === 2, 'attempt 2');
    await vi.advanceTimersByTimeAsync(1499); // 2000 capped at 1500
    expect(rx.got).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => d.stats().get('wh_000000000001')!.failed === 1, 'giving up');
    expect(rx.got).toHaveLength(3);
    expect(d.stats().get('wh_000000000001')!.lastError).toBe('HTTP 500');
  });

  it('never blocks: a receiver that does not answer fills its bounded queue, and the overflow is counted', async () => {
    const rx = await receiver(() => 'hold');
    const d = new WebhookDispatcher({ queueSize: 2, concurrency: 1, timeoutMs: 60_000 });
    closers.push(() => d.close());
    d.setEndpoints([endpoint(rx.url, { platforms: ['venue_a'] })]);
    for (let i = 0; i < 6; i++) d.dispatch(arbEvent(i));
    d.dispatch(arbEvent(9, ['venue_c'])); // not its venues
    expect(d.stats().get('wh_000000000001')).toMatchObject({ waiting: 2, dropped: 3 });
    await until(() => rx.got.length === 1, 'the first POST');
    rx.held[0]!.writeHead(200).end();
    await until(() => rx.got.length === 2, 'the next waiting one');
    // the oldest waiting were dropped: after event 0, the survivors are 4 and 5
    expect(rx.got.map((g) => (g.body['data'] as { roi: number }).roi)).toEqual([0, 4]);
  });
});
