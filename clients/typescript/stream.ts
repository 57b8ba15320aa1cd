import type { components, paths } from './schema.js';
import type { CrossbookClient } from './index.js';

type S = components['schemas'];

/** A live message the stream passes on: per-topic seq checked. */
export type StreamUpdate = S['WsPriceUpdate'] | S['WsOrderbookUpdate'] | S['WsArb'] | S['WsEv'];

/** Why the stream re-fetched a topic over REST. */
export type ResyncReason = 'gap' | 'epoch' | 'reconnect' | 'ready';

/** The current state of a topic fetched over REST after a gap, a new epoch, a reconnect or a feed recovery. */
export type StreamSnapshot =
  | { topic: string; reason: ResyncReason; channel: 'prices'; source: string; market_id: string; price: PriceOf<'/prices/bulk'> | undefined }
  | { topic: string; reason: ResyncReason; channel: 'orderbook'; source: string; market_id: string; book: BodyOf<'/orderbook'> | undefined }
  | { topic: string; reason: ResyncReason; channel: 'arb'; group_id: number; opportunities: BodyOf<'/arb'>['opportunities'] }
  | { topic: string; reason: ResyncReason; channel: 'ev'; group_id: number; opportunities: BodyOf<'/ev'>['opportunities'] };

type BodyOf<P extends '/prices/bulk' | '/orderbook' | '/arb' | '/ev'> = paths[P]['get']['responses'][200]['content']['application/json'];
type PriceOf<P extends '/prices/bulk'> = BodyOf<P>['prices'][string];

/**
 * An event handler property. Declared as a method so that its parameter is checked bivariantly:
 * the WHATWG WebSocket's and `ws`'s handlers (typed with their own event classes) both fit.
 */
type Handler<E> = { bivarianceHack(ev: E): void }['bivarianceHack'];

/** The part of a WebSocket the stream uses (the WHATWG WebSocket and the `ws` package both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onmessage: Handler<{ data: unknown }> | null;
  onclose: Handler<unknown> | null;
  onerror: Handler<unknown> | null;
}

export interface StreamOptions {
  /** Base URL of the service, without /api/v2. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The REST client snapshots are fetched with. */
  readonly client: CrossbookClient;
  /**
   * Opens the socket. Default: the global WebSocket with the key in the api_key query parameter
   * (browsers cannot set headers); in Node pass `(url, headers) => new WebSocket(url, { headers })` of `ws`.
   */
  readonly connect?: (url: string, headers: Record<string, string>) => WebSocketLike;
  /** First reconnect delay, ms (doubling up to 30 s). Default 500. */
  readonly reconnectMs?: number;
  readonly onUpdate?: (m: StreamUpdate) => void;
  readonly onSnapshot?: (s: StreamSnapshot) => void;
  /** An arbitrage or EV opportunity closed (`arb_expired` / `ev_expired`, with its close reason): drop it from the list. */
  readonly onExpired?: (m: S['WsExpired']) => void;
  /** Warnings, errors and feed notices (S['WsNotice']), and subscription acknowledgements. */
  readonly onNotice?: (m: S['WsNotice'] | S['WsSubscribed']) => void;
  /** A REST re-fetch failed (the stream keeps going; the next gap or notice tries again). */
  readonly onError?: (e: Error) => void;
}

type Sub = { channel: 'prices' | 'orderbook'; ids: string[] } | { channel: 'arb' | 'ev'; ids: number[] | undefined };

/**
 * A WebSocket client of /api/v2/ws that keeps every topic consistent by itself: it tracks the
 * per-topic seq and the process epoch, and on a seq gap, a new epoch (the server restarted), a
 * reconnect or a FEED_READY notice it re-fetches the topic's current state over REST and hands it
 * to onSnapshot, then carries on from the next message. It reconnects and resubscribes on its own.
 */
export class CrossbookStream {
  /** The server's process epoch, once welcomed. */
  epoch: number | undefined;
  private readonly seqs = new Map<string, number>();
  private readonly subs: Sub[] = [];
  private socket: WebSocketLike | undefined;
  private closed = false;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private welcomed = false;

  constructor(private readonly o: StreamOptions) {
    this.open();
  }

  /** Last seq seen on a topic (`prices:<source>:<market_id>`, `orderbook:…`, `arb:<group_id>`, `ev:<group_id>`). */
  seqOf(topic: string): number | undefined {
    return this.seqs.get(topic);
  }

  /** Prices or order books of markets given as `platform:market_id`. */
  subscribe(channel: 'prices' | 'orderbook', ids: readonly string[]): void {
    const sub: Sub = { channel, ids: [...ids] };
    this.subs.push(sub);
    this.sendSub(sub);
  }

  /** Arbitrage or EV of match groups (every group when `groupIds` is omitted). */
  subscribeSignals(channel: 'arb' | 'ev', groupIds?: readonly number[]): void {
    const sub: Sub = { channel, ids: groupIds ? [...groupIds] : undefined };
    this.subs.push(sub);
    this.sendSub(sub);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close(1000, 'client closed');
  }

  private open(): void {
    const base = this.o.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws');
    const url = `${base}/api/v2/ws`;
    const ws = this.o.connect
      ? this.o.connect(url, { 'X-API-Key': this.o.apiKey })
      : (new (globalThis as unknown as { WebSocket: new (u: string) => WebSocketLike }).WebSocket(
          `${url}?api_key=${encodeURIComponent(this.o.apiKey)}`,
        ) as WebSocketLike);
    this.socket = ws;
    this.welcomed = false;
    ws.onmessage = (ev) => this.receive(typeof ev.data === 'string' ? ev.data : String(ev.data));
    ws.onclose = () => this.reconnect();
    ws.onerror = () => undefined; // a close follows
  }

  private reconnect(): void {
    if (this.closed) return;
    const delay = Math.min(30_000, (this.o.reconnectMs ?? 500) * 2 ** this.attempts++);
    this.timer = setTimeout(() => this.open(), delay);
  }

  private sendSub(sub: Sub): void {
    if (!this.socket || !this.welcomed || this.socket.readyState !== 1) return; // sent on welcome
    const ids = sub.ids === undefined ? undefined : sub.ids.map(String);
    this.socket.send(JSON.stringify({ type: 'subscribe', channel: sub.channel, ...(ids ? { market_ids: ids } : {}) }));
  }

  private receive(text: string): void {
    let m: { type: string } & Record<string, unknown>;
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      return;
    }
    if (m.type === 'welcome') return this.welcome(m as unknown as S['WsWelcome']);
    if (m.type === 'price_update' || m.type === 'orderbook_update' || m.type === 'arb' || m.type === 'ev') return this.live(m as unknown as StreamUpdate);
    if (m.type === 'arb_expired' || m.type === 'ev_expired') return this.o.onExpired?.(m as unknown as S['WsExpired']);
    if (m.type === 'ready') this.resyncSource((m as unknown as S['WsNotice']).source, 'ready');
    if (m.type === 'warning' || m.type === 'error' || m.type === 'ready' || m.type === 'subscribed' || m.type === 'unsubscribed')
      this.o.onNotice?.(m as unknown as S['WsNotice'] | S['WsSubscribed']);
  }

  /** A (re)connection: resubscribe; after a restart (new epoch) or a dropped connection, reconcile over REST. */
  private welcome(w: S['WsWelcome']): void {
    this.welcomed = true;
    this.attempts = 0;
    const first = this.epoch === undefined;
    const reason: ResyncReason = !first && w.epoch !== this.epoch ? 'epoch' : 'reconnect';
    this.epoch = w.epoch;
    for (const s of this.subs) this.sendSub(s);
    if (!first) {
      const topics = [...this.seqs.keys()];
      this.seqs.clear(); // the new connection's snapshots set each topic's baseline
      void this.resync(topics, reason);
    }
  }

  private live(m: StreamUpdate): void {
    const topic = this.topicOf(m);
    // Snapshots on an every-group subscription carry each group's own seq, not the `*` topic's.
    if (m.snapshot && topic.endsWith(':*')) return this.o.onUpdate?.(m);
    if (m.epoch !== this.epoch) {
      // A message of another process epoch than the welcome's: the server restarted underneath.
      this.epoch = m.epoch;
      this.seqs.set(topic, m.seq);
      this.o.onUpdate?.(m);
      void this.resync([topic], 'epoch');
      return;
    }
    const last = this.seqs.get(topic);
    if (m.snapshot || last === undefined) {
      this.seqs.set(topic, m.seq);
      this.o.onUpdate?.(m);
      return;
    }
    if (m.seq <= last) return; // already seen (a snapshot raced a publication)
    this.seqs.set(topic, m.seq);
    this.o.onUpdate?.(m);
    if (m.seq > last + 1) void this.resync([topic], 'gap');
  }

  /** The server topic a live message was published on: `arb:*` / `ev:*` on an every-group subscription. */
  private topicOf(m: StreamUpdate): string {
    if (m.type === 'arb' || m.type === 'ev')
      return this.subs.some((x) => x.channel === m.type && x.ids === undefined) ? `${m.type}:*` : `${m.type}:${m.group_id}`;
    return `${m.channel}:${m.source}:${m.market_id}`;
  }

  private resyncSource(source: string | undefined, reason: ResyncReason): void {
    if (!source) return;
    void this.resync(
      [...this.seqs.keys()].filter((t) => t.split(':')[1] === source),
      reason,
    );
  }

  /** Fetches the current state of `topics` over REST and hands each to onSnapshot. */
  private async resync(topics: readonly string[], reason: ResyncReason): Promise<void> {
    const c = this.o.client;
    try {
      const prices = topics.filter((t) => t.startsWith('prices:')).map((t) => t.slice('prices:'.length));
      for (let i = 0; i < prices.length; i += 100) {
        const ids = prices.slice(i, i + 100);
        const { data } = await c.GET('/prices/bulk', { params: { query: { ids: ids.join(',') } } });
        for (const id of ids) {
          const [source, market_id] = split(id);
          this.o.onSnapshot?.({ topic: `prices:${id}`, reason, channel: 'prices', source, market_id, price: data?.prices[id] });
        }
      }
      for (const t of topics.filter((x) => x.startsWith('orderbook:'))) {
        const [source, market_id] = split(t.slice('orderbook:'.length));
        const { data } = await c.GET('/orderbook', { params: { query: { platform: source as never, market_id } } });
        this.o.onSnapshot?.({ topic: t, reason, channel: 'orderbook', source, market_id, book: data });
      }
      for (const ch of ['arb', 'ev'] as const) {
        const mine = topics.filter((x) => x.startsWith(`${ch}:`));
        if (!mine.length) continue;
        const { data } = ch === 'arb' ? await c.GET('/arb', { params: { query: { limit: 100 } } }) : await c.GET('/ev', { params: { query: { limit: 100 } } });
        const all = (data?.opportunities ?? []) as { group_id: number }[];
        // An every-group topic gets one snapshot per group that has opportunities now.
        const groups = mine.some((x) => x.endsWith(':*')) ? [...new Set(all.map((x) => x.group_id))] : mine.map((x) => Number(x.slice(ch.length + 1)));
        for (const g of groups)
          this.o.onSnapshot?.({ topic: `${ch}:${g}`, reason, channel: ch, group_id: g, opportunities: all.filter((x) => x.group_id === g) } as StreamSnapshot);
      }
    } catch (e) {
      this.o.onError?.(e instanceof Error ? e : new Error(String(e)));
    }
  }
}

function split(id: string): [string, string] {
  const i = id.indexOf(':');
  return [id.slice(0, i), id.slice(i + 1)];
}
