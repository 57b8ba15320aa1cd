import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Logger } from '../core/log.js';
import { signature } from './sign.js';
import type { WebhookEventKind, WebhookRecord } from './store.js';
import { checkWebhookUrl, forbiddenAddress } from './url.js';

/** Something a webhook can be told: built once, delivered to every endpoint that wants it. */
export interface WebhookEvent {
  readonly kind: WebhookEventKind;
  /** What happened: arb_opened, arb_expired, ev_opened, ev_expired, smart_money (alert type), feed state. */
  readonly type: string;
  /** Net ROI percent, for an endpoint's `minRoi` (arb and ev events). */
  readonly roi?: number | undefined;
  /** Venue slugs the event touches, for an endpoint's `platforms`. */
  readonly platforms: readonly string[];
  readonly data: Readonly<Record<string, unknown>>;
}

export interface DispatcherOptions {
  readonly queueSize?: number;
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  readonly maxAttempts?: number;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  readonly allowLinkLocal?: boolean;
  readonly log?: Logger | undefined;
}

/** One event waiting for (or in) delivery to one endpoint. */
interface Delivery {
  readonly id: string;
  readonly type: string;
  readonly kind: WebhookEventKind;
  readonly createdAt: number;
  readonly dataJson: string;
  attempt: number;
}

/** Per-endpoint counters (exported on /metrics, labelled by webhook id). */
export interface EndpointStats {
  delivered: number;
  /** Deliveries that failed every attempt. */
  failed: number;
  retries: number;
  /** Deliveries dropped because the endpoint's queue was full. */
  dropped: number;
  lastError: string | undefined;
}

class Endpoint {
  /** Waiting deliveries, oldest first, from `head`. */
  queue: Delivery[] = [];
  head = 0;
  inFlight = 0;
  readonly stats: EndpointStats = { delivered: 0, failed: 0, retries: 0, dropped: 0, lastError: undefined };
  /** Dropped count at the last overflow report, and when that was. */
  reportedDropped = 0;
  reportedAt = 0;
  removed = false;
  constructor(public rec: WebhookRecord) {}
  get waiting(): number {
    return this.queue.length - this.head;
  }
}

/** Headers of a delivery, besides the content type. */
export const HEADERS = { signature: 'x-crossbook-signature', id: 'x-crossbook-id', timestamp: 'x-crossbook-timestamp', event: 'x-crossbook-event' } as const;

/**
 * Webhook delivery: `dispatch` only enqueues (a bounded queue per endpoint; past it the oldest
 * waiting delivery is dropped, counted and reported), so the pipeline never waits on a receiver.
 * Each endpoint has up to `concurrency` POSTs in flight; a failed one (no 2xx, network error,
 * timeout) is retried after backoffBaseMs × 2^(attempt−1), capped at backoffMaxMs, holding its
 * slot, so a receiver that is down is not hammered. The body is signed per attempt: it carries the
 * event id (receivers de-duplicate on it) and the send time (receivers reject replays), and the
 * same two go in headers. Addresses are checked after DNS, so a name resolving to a link-local or
 * metadata address is refused unless allowed.
 */
export class WebhookDispatcher {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly prefix = randomBytes(4).toString('hex');
  private seq = 0;
  private closed = false;
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly o: Required<Omit<DispatcherOptions, 'log'>>;
  /** Events dispatched to at least one endpoint. */
  dispatched = 0;

  constructor(private readonly opts: DispatcherOptions = {}) {
    this.o = {
      queueSize: opts.queueSize ?? 1000,
      concurrency: opts.concurrency ?? 4,
      timeoutMs: opts.timeoutMs ?? 5000,
      maxAttempts: opts.maxAttempts ?? 6,
      backoffBaseMs: opts.backoffBaseMs ?? 1000,
      backoffMaxMs: opts.backoffMaxMs ?? 60_000,
      allowLinkLocal: opts.allowLinkLocal ?? false,
    };
    this.agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  }

  /** Takes the registered endpoints as they are now (after the store re-read its table). */
  setEndpoints(records: readonly WebhookRecord[]): void {
    const ids = new Set(records.map((r) => r.id));
    for (const [id, e] of this.endpoints)
      if (!ids.has(id)) {
        e.removed = true;
        e.queue = [];
        e.head = 0;
        this.endpoints.delete(id);
      }
    for (const r of records) {
      const e = this.endpoints.get(r.id);
      if (e) e.rec = r;
      else this.endpoints.set(r.id, new Endpoint(r));
    }
  }

  /** Enqueues an event for every endpoint that wants it. Never waits. */
  dispatch(ev: WebhookEvent): void {
    if (this.closed || this.endpoints.size === 0) return;
    let dataJson: string | undefined;
    let id: string | undefined;
    const now = Date.now();
    for (const e of this.endpoints.values()) {
      if (!wants(e.rec, ev)) continue;
      dataJson ??= JSON.stringify(ev.data);
      id ??= `evt_${this.prefix}${(++this.seq).toString(36)}`;
      this.enqueue(e, { id, type: ev.type, kind: ev.kind, createdAt: now, dataJson, attempt: 0 });
    }
    if (id) this.dispatched++;
  }

  /** Counters per endpoint id. */
  stats(): Map<string, EndpointStats & { waiting: number }> {
    const out = new Map<string, EndpointStats & { waiting: number }>();
    for (const [id, e] of this.endpoints) out.set(id, { ...e.stats, waiting: e.waiting });
    return out;
  }

  /** Stops delivering: pending retries are cancelled and idle connections closed. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private enqueue(e: Endpoint, d: Delivery): void {
    if (e.waiting >= this.o.queueSize) {
      e.head++;
      e.stats.dropped++;
      this.reportOverflow(e);
    }
    if (e.head > 1024 && e.head * 2 > e.queue.length) {
      e.queue = e.queue.slice(e.head);
      e.head = 0;
    }
    e.queue.push(d);
    this.pump(e);
  }

  private pump(e: Endpoint): void {
    while (!this.closed && !e.removed && e.inFlight < this.o.concurrency && e.waiting > 0) {
      const d = e.queue[e.head]!;
      e.queue[e.head++] = undefined as unknown as Delivery;
      e.inFlight++;
      this.attempt(e, d);
    }
  }

  private attempt(e: Endpoint, d: Delivery): void {
    d.attempt++;
    const ts = Math.floor(Date.now() / 1000);
    const body = `{"id":"${d.id}","type":${JSON.stringify(d.type)},"event":"${d.kind}","created_at":"${new Date(d.createdAt).toISOString()}","timestamp":${ts},"attempt":${d.attempt},"data":${d.dataJson}}`;
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'crossbook-webhooks/1',
      [HEADERS.signature]: signature(e.rec.secret, body),
      [HEADERS.id]: d.id,
      [HEADERS.timestamp]: String(ts),
      [HEADERS.event]: d.type,
    };
    this.post(e.rec.url, body, headers).then(
      () => this.done(e, true),
      (err: unknown) => this.failed(e, d, err instanceof Error ? err.message : String(err)),
    );
  }

  private failed(e: Endpoint, d: Delivery, why: string): void {
    e.stats.lastError = why;
    if (this.closed || e.removed || d.attempt >= this.o.maxAttempts) {
      if (!this.closed && !e.removed)
        this.opts.log?.warn({ webhook: e.rec.id, event: d.id, attempts: d.attempt, err: why }, 'webhook delivery failed; giving up');
      return this.done(e, false);
    }
    e.stats.retries++;
    const wait = Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** (d.attempt - 1));
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.closed || e.removed) return this.done(e, false);
      this.attempt(e, d);
    }, wait);
    t.unref?.();
    this.timers.add(t);
  }

  private done(e: Endpoint, ok: boolean): void {
    e.inFlight--;
    if (ok) e.stats.delivered++;
    else e.stats.failed++;
    this.pump(e);
  }

  /** Overflow is logged at most every 10 s per endpoint, with the count since the last report. */
  private reportOverflow(e: Endpoint): void {
    const now = Date.now();
    if (now - e.reportedAt < 10_000) return;
    this.opts.log?.warn(
      { webhook: e.rec.id, url: e.rec.url, dropped: e.stats.dropped - e.reportedDropped, droppedTotal: e.stats.dropped, queueSize: this.o.queueSize },
      'webhook queue full: dropping the oldest deliveries (the receiver is slower than events arrive, or down)',
    );
    e.reportedAt = now;
    e.reportedDropped = e.stats.dropped;
  }

  /** One POST; resolves on a 2xx, rejects with the reason otherwise. */
  private post(rawUrl: string, body: string, headers: Record<string, string>): Promise<void> {
    const check = checkWebhookUrl(rawUrl, { allowLinkLocal: this.o.allowLinkLocal });
    if (!check.ok) return Promise.reject(new Error(check.reason));
    const url = check.url;
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
          lookup: this.o.allowLinkLocal ? undefined : guardedLookup,
        },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          res.on('end', () => (status >= 200 && status < 300 ? resolve() : reject(new Error(`HTTP ${status}`))));
          res.on('error', reject);
        },
      );
      req.setTimeout(this.o.timeoutMs, () => req.destroy(new Error(`no response within ${this.o.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** Whether an endpoint wants an event: its kinds, its minimum ROI, its venues. */
function wants(r: WebhookRecord, ev: WebhookEvent): boolean {
  if (!r.events.includes(ev.kind)) return false;
  if (ev.roi !== undefined && ev.roi < r.minRoi) return false;
  if (r.platforms && ev.platforms.length > 0 && !ev.platforms.some((p) => r.platforms!.includes(p))) return false;
  return true;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** DNS lookup that refuses link-local and metadata addresses (checked on what the name resolves to now). */
function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, options, (err, address: string | LookupAddress[], family?: number) => {
    if (err) return callback(err, address, family);
    const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
    const bad = all.find((a) => forbiddenAddress(a));
    if (bad)
      return callback(Object.assign(new Error(`${hostname} resolves to ${bad}, a link-local or metadata address`), { code: 'EFORBIDDEN' }), address, family);
    callback(null, address, family);
  });
}
