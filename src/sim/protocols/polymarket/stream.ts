import type { WebSocket } from 'ws';
import { PAYOUT } from '../../../core/price.js';
import { WS_PING, WS_PONG } from '../../../venues/polymarket/raw.js';
import type { SimHttp } from '../../server-kit.js';
import type { SimChange, SimFault, SimListing, SimTrade, SimWorldApi } from '../../types.js';
import { bookFrame, marketMessage, polyPrice, polySize, resultOf, sha1, type TokenIndex } from './docs.js';

/** One market-channel client. */
interface Conn {
  readonly ws: WebSocket;
  readonly assets: Set<string>;
  custom: boolean;
  skipNextPriceChange: boolean;
  readonly queue: string[];
}

/**
 * The simulated Polymarket market channel: subscriptions by asset, the frames the world's changes
 * become (price_change, last_trade_price and fresh books, market_resolved, new_market), stall
 * holding and the stream faults.
 */
export class PolymarketStream {
  private readonly conns = new Set<Conn>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly world: SimWorldApi,
    private readonly label: string,
    private readonly http: SimHttp,
    private readonly tokens: TokenIndex,
  ) {}

  /** Takes a new client. */
  connect(ws: WebSocket): void {
    const c: Conn = { ws, assets: new Set(), custom: false, skipNextPriceChange: false, queue: [] };
    this.conns.add(c);
    ws.on('close', () => this.conns.delete(c));
    ws.on('message', (data) => this.onMessage(c, data.toString()));
  }

  private onMessage(c: Conn, text: string): void {
    if (text === WS_PING) {
      this.out(c, WS_PONG);
      return;
    }
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return; // the venue ignores what it cannot parse
    }
    if (typeof m !== 'object' || m === null) return;
    const msg = m as { assets_ids?: unknown; type?: unknown; operation?: unknown; custom_feature_enabled?: unknown; initial_dump?: unknown };
    const ids = Array.isArray(msg.assets_ids) ? msg.assets_ids.filter((x): x is string => typeof x === 'string') : [];
    if (msg.custom_feature_enabled === true) c.custom = true;
    if (msg.operation === 'unsubscribe') {
      for (const a of ids) c.assets.delete(a);
      return;
    }
    if (msg.operation === 'subscribe' || (typeof msg.type === 'string' && msg.type.toLowerCase() === 'market')) {
      // A duplicate subscription is ignored, as the venue does: only new assets get a book.
      const added = ids.filter((a) => !c.assets.has(a));
      for (const a of added) c.assets.add(a);
      if (msg.initial_dump !== false) this.sendBooks(c, added);
    }
  }

  // ---- sending --------------------------------------------------------------------------------

  private flush(c: Conn): void {
    while (c.queue.length && c.ws.readyState === c.ws.OPEN) c.ws.send(c.queue.shift()!);
  }

  /** Sends now, or holds until the stall is over. */
  private out(c: Conn, text: string): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    const wait = this.http.stallUntil - Date.now();
    if (wait > 0) {
      c.queue.push(text);
      if (!this.flushTimer) {
        this.flushTimer = setTimeout(() => {
          this.flushTimer = undefined;
          for (const x of this.conns) this.flush(x);
        }, wait);
      }
      return;
    }
    this.flush(c);
    c.ws.send(text);
  }

  private sendBooks(c: Conn, assets: Iterable<string>): void {
    const frames: Record<string, unknown>[] = [];
    for (const a of assets) {
      const t = this.tokens.get(a);
      if (t) frames.push(bookFrame(this.world, t.listing, t.yes));
    }
    if (frames.length) this.out(c, JSON.stringify(frames));
  }

  // ---- the world's changes ------------------------------------------------------------------

  onChange(ch: SimChange): void {
    if (this.conns.size === 0) return;
    switch (ch.type) {
      case 'book':
        if (ch.listing.venue !== this.label) return;
        for (const c of this.conns) this.priceChange(c, ch);
        return;
      case 'trade':
        if (ch.trade.listing.venue === this.label) this.onTrade(ch.trade);
        return;
      case 'status':
        if (ch.listing.venue === this.label) this.onStatus(ch.listing);
        return;
      case 'listing': {
        const l = ch.listing;
        if (l.venue !== this.label) return;
        this.tokens.add(l);
        const frame = JSON.stringify({ ...marketMessage(this.world, l), event_type: 'new_market' });
        for (const c of this.conns) if (c.custom) this.out(c, frame);
      }
    }
  }

  /** One book change as a `price_change` with an entry per subscribed token, each with its top after the change. */
  private priceChange(c: Conn, ch: Extract<SimChange, { type: 'book' }>): void {
    const l = ch.listing;
    const yesId = l.ids['yes_token']!;
    const noId = l.ids['no_token']!;
    const wantYes = c.assets.has(yesId);
    const wantNo = c.assets.has(noId);
    if (!wantYes && !wantNo) return;
    if (c.skipNextPriceChange) {
      c.skipNextPriceChange = false;
      return;
    }
    const yb = l.book.bids.best();
    const ya = l.book.asks.best();
    const yesTop = { best_bid: yb === undefined ? '0' : polyPrice(yb), best_ask: ya === undefined ? '1' : polyPrice(ya) };
    const noTop = { best_bid: ya === undefined ? '0' : polyPrice(PAYOUT - ya), best_ask: yb === undefined ? '1' : polyPrice(PAYOUT - yb) };
    const entries: Record<string, unknown>[] = [];
    for (const [side, price, size] of ch.changes) {
      if (wantYes)
        entries.push({
          asset_id: yesId,
          price: polyPrice(price),
          size: polySize(size),
          side: side === 'bid' ? 'BUY' : 'SELL',
          hash: sha1(`${yesId}${ch.timestamp}${side}${price}${size}`),
          ...yesTop,
        });
      if (wantNo)
        entries.push({
          asset_id: noId,
          price: polyPrice(PAYOUT - price),
          size: polySize(size),
          side: side === 'bid' ? 'SELL' : 'BUY',
          hash: sha1(`${noId}${ch.timestamp}${side}${price}${size}`),
          ...noTop,
        });
    }
    this.out(c, JSON.stringify({ market: l.id, price_changes: entries, timestamp: String(ch.timestamp), event_type: 'price_change' }));
  }

  /** A trade on the token the taker bought, then fresh books of both tokens. */
  private onTrade(t: SimTrade): void {
    const l = t.listing;
    const yes = t.takerSide === 'yes';
    const asset = l.ids[yes ? 'yes_token' : 'no_token']!;
    const frame = JSON.stringify({
      asset_id: asset,
      event_type: 'last_trade_price',
      fee_rate_bps: '0',
      market: l.id,
      price: polyPrice(yes ? t.price : PAYOUT - t.price),
      side: 'BUY',
      size: polySize(t.size),
      timestamp: String(t.timestamp),
    });
    const both = [l.ids['yes_token']!, l.ids['no_token']!];
    for (const c of this.conns) {
      if (c.assets.has(asset)) this.out(c, frame);
      const mine = both.filter((a) => c.assets.has(a));
      if (mine.length) this.sendBooks(c, mine);
    }
  }

  /** A finalized listing with a known result: `market_resolved` to custom-feature clients holding a token. */
  private onStatus(l: SimListing): void {
    if (l.status !== 'finalized') return;
    const result = resultOf(l);
    if (!result) return;
    const frame = JSON.stringify({
      ...marketMessage(this.world, l),
      winning_asset_id: l.ids[result === 'yes' ? 'yes_token' : 'no_token'],
      winning_outcome: l.ids[result === 'yes' ? 'outcome_yes' : 'outcome_no'],
      event_type: 'market_resolved',
    });
    for (const c of this.conns) if (c.custom && (c.assets.has(l.ids['yes_token']!) || c.assets.has(l.ids['no_token']!))) this.out(c, frame);
  }

  // ---- faults ------------------------------------------------------------------------------

  fault(f: SimFault): void {
    switch (f.kind) {
      case 'disconnect':
        this.http.dropAll();
        return;
      case 'gap':
        for (const c of this.conns) c.skipNextPriceChange = true;
        return;
      case 'malformed':
        for (const c of this.conns) for (let i = 0; i < (f.count ?? 1); i++) this.out(c, this.malformed(c, i));
        return;
      case 'stall':
        this.http.stallUntil = Date.now() + f.ms;
        return;
      case 'duplicate_snapshot':
        for (const c of this.conns) this.sendBooks(c, c.assets);
        return;
    }
  }

  private malformed(c: Conn, i: number): string {
    const a = c.assets.values().next().value ?? '0';
    const t = this.tokens.get(a);
    const market = t?.listing.id ?? '0x0';
    switch (i % 5) {
      case 0:
        return '[{"event_type":"book","asset_id":"'; // truncated JSON
      case 1:
        return JSON.stringify({ event_type: 'book', asset_id: 12345, market, bids: 'none', asks: [] }); // wrong types
      case 2:
        return JSON.stringify({ event_type: 'order_book_v9', asset_id: a, market }); // unknown variant
      case 3:
        return JSON.stringify({
          market,
          price_changes: [{ asset_id: a, price: '1.5', size: '10', side: 'BUY' }],
          timestamp: String(this.world.now()),
          event_type: 'price_change',
        });
      default:
        return JSON.stringify({
          market,
          price_changes: [{ asset_id: a, price: '0.5', size: '-10', side: 'SELL' }],
          timestamp: String(this.world.now()),
          event_type: 'price_change',
        });
    }
  }

  close(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
  }
}
