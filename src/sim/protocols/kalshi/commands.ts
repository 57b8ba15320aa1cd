import type { Conn, KalshiStream, Sub } from './stream.js';

/**
 * The simulated Kalshi's WebSocket commands: subscribe / unsubscribe / update_subscription
 * (add_markets, delete_markets, get_snapshot) / list_subscriptions, with the venue's error codes.
 */

const PUBLIC_CHANNELS = new Set(['orderbook_delta', 'ticker', 'trade', 'market_lifecycle_v2', 'multivariate_market_lifecycle']);
const PRIVATE_CHANNELS = new Set(['fill', 'market_positions', 'user_orders', 'order_group_updates', 'communications']);

type Params = Record<string, unknown>;

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined);
const tickersOf = (p: Params): string[] | undefined =>
  strings(p['market_tickers']) ?? (typeof p['market_ticker'] === 'string' ? [p['market_ticker']] : undefined);

/** Answers one command frame of connection `c`. */
export function onCommand(st: KalshiStream, c: Conn, text: string): void {
  let cmd: unknown;
  try {
    cmd = JSON.parse(text);
  } catch {
    st.error(c, undefined, 1, 'Unable to process message');
    return;
  }
  if (typeof cmd !== 'object' || cmd === null || Array.isArray(cmd)) {
    st.error(c, undefined, 1, 'Unable to process message');
    return;
  }
  const o = cmd as Record<string, unknown>;
  const id = typeof o['id'] === 'number' && Number.isInteger(o['id']) ? o['id'] : undefined;
  const params = typeof o['params'] === 'object' && o['params'] !== null ? (o['params'] as Params) : undefined;
  switch (o['cmd']) {
    case 'subscribe':
      return subscribe(st, c, id, params);
    case 'unsubscribe':
      return unsubscribe(st, c, id, params);
    case 'update_subscription':
      return updateSubscription(st, c, id, params);
    case 'list_subscriptions':
      st.send(c, { id, type: 'ok', msg: [...c.subs.values()].map((s) => ({ channel: s.channel, sid: s.sid })) });
      return;
    default:
      st.error(c, id, 5, 'Unknown command');
  }
}

/** One sid per channel; orderbook_delta starts with a snapshot per market. */
function subscribe(st: KalshiStream, c: Conn, id: number | undefined, params: Params | undefined): void {
  if (!params) return st.error(c, id, 2, 'Params required');
  const channels = strings(params['channels']);
  if (!channels || channels.length === 0) return st.error(c, id, 3, 'Channels required');
  const tickers = tickersOf(params);
  for (const ch of channels) {
    if (PRIVATE_CHANNELS.has(ch)) {
      st.error(c, id, 9, 'Authentication required');
      continue;
    }
    if (!PUBLIC_CHANNELS.has(ch)) {
      st.error(c, id, 8, 'Unknown channel name');
      continue;
    }
    if (ch === 'orderbook_delta' && !tickers) {
      st.error(c, id, 14, 'Market Ticker required');
      continue;
    }
    const lifecycleCh = ch === 'market_lifecycle_v2' || ch === 'multivariate_market_lifecycle';
    const s: Sub = { sid: c.nextSid++, channel: ch, tickers: lifecycleCh || !tickers ? null : new Set(tickers), seq: 0 };
    c.subs.set(s.sid, s);
    st.send(c, { id, type: 'subscribed', msg: { channel: ch, sid: s.sid } });
    if (ch === 'orderbook_delta') for (const t of tickers!) st.snapshot(c, s, t);
    if (ch === 'ticker' && params['send_initial_snapshot'] === true && tickers)
      for (const t of tickers) {
        const l = st.listing(t);
        if (l) st.send(c, { type: 'ticker', sid: s.sid, msg: st.tickerMsg(l) });
      }
  }
}

function unsubscribe(st: KalshiStream, c: Conn, id: number | undefined, params: Params | undefined): void {
  const sids = params && Array.isArray(params['sids']) ? (params['sids'] as unknown[]) : undefined;
  if (!sids || sids.length === 0) return st.error(c, id, 4, 'Subscription IDs required');
  for (const sid of sids) {
    const s = typeof sid === 'number' ? c.subs.get(sid) : undefined;
    if (!s) {
      st.error(c, id, 7, 'Unknown subscription ID');
      continue;
    }
    s.seq++;
    c.subs.delete(s.sid);
    st.send(c, { id, sid: s.sid, seq: s.seq, type: 'unsubscribed' });
  }
}

function updateSubscription(st: KalshiStream, c: Conn, id: number | undefined, params: Params | undefined): void {
  if (!params) return st.error(c, id, 2, 'Params required');
  const sids = Array.isArray(params['sids']) ? (params['sids'] as unknown[]) : typeof params['sid'] === 'number' ? [params['sid']] : [];
  if (sids.length !== 1 || typeof sids[0] !== 'number') return st.error(c, id, 12, 'Exactly one subscription ID is required');
  const action = params['action'];
  if (typeof action !== 'string' || action === '') return st.error(c, id, 15, 'Action required');
  const s = c.subs.get(sids[0]);
  if (!s) return st.error(c, id, 7, 'Unknown subscription ID');
  const tickers = tickersOf(params);
  if (!tickers) return st.error(c, id, 14, 'Market Ticker required');
  switch (action) {
    case 'add_markets':
    case 'delete_markets': {
      if (s.tickers === null || s.channel === 'market_lifecycle_v2') return st.error(c, id, 13, 'Unsupported action');
      const added = tickers.filter((t) => !s.tickers!.has(t));
      for (const t of tickers) {
        if (action === 'add_markets') s.tickers.add(t);
        else s.tickers.delete(t);
      }
      s.seq++;
      st.send(c, { id, sid: s.sid, seq: s.seq, type: 'ok', msg: { market_tickers: [...s.tickers] } });
      if (action === 'add_markets' && s.channel === 'orderbook_delta') for (const t of added) st.snapshot(c, s, t);
      return;
    }
    case 'get_snapshot':
      if (s.channel !== 'orderbook_delta') return st.error(c, id, 13, 'Unsupported action');
      for (const t of tickers) st.snapshot(c, s, t, id);
      return;
    default:
      return st.error(c, id, 13, 'Unsupported action');
  }
}
