/**
 * The baseline of the live fan-out bench (bench/ws/live.bench.ts), in its own process: a plain `ws`
 * client subscribed to the same simulator feed as the service (venue_a, the Kalshi protocol:
 * orderbook_delta, ticker, trade for every active market), and a bare uWebSockets.js server that
 * publishes each frame's update to `prices:venue_a:<ticker>` when the quote a client sees changed.
 * It keeps only what that needs: per market the resting count by price of each side (Kalshi's
 * deltas are relative), the last price and the volume. The message has the hub's price_update shape
 * and envelope (venue_ts, recv_ts stamped on the frame's arrival, seq, epoch, ts).
 *
 * argv: the venue's REST base and WebSocket URL. Prints {"port"} once the feed's snapshots are in;
 * runs until killed.
 */
import uWS from 'uWebSockets.js';
import WebSocket from 'ws';

const [rest, wsUrl] = process.argv.slice(2) as [string, string];
const EPOCH = Date.now();

interface Market {
  /** Resting count by price (units of 0.0001 dollars): YES bids, NO bids. */
  readonly yes: Map<number, number>;
  readonly no: Map<number, number>;
  last: number | null;
  volume: number | null;
  seq: number;
  /** The quote fields last published, to publish only a change. */
  shown: string;
}

const units = (dollars: string): number => Math.round(Number(dollars) * 10_000);
const cents = (u: number | undefined): number | null => (u === undefined ? null : u / 100);
const best = (side: Map<number, number>): number | undefined => {
  let b: number | undefined;
  for (const p of side.keys()) if (b === undefined || p > b) b = p;
  return b;
};

const markets = new Map<string, Market>();
const app = uWS.App();
app.ws('/api/v2/ws', {
  idleTimeout: 120,
  maxBackpressure: 16 * 1024 * 1024,
  message: (ws, data) => {
    const msg = JSON.parse(Buffer.from(data).toString()) as { market_ids?: string[] };
    for (const m of msg.market_ids ?? []) ws.subscribe(`prices:venue_a:${m}`);
    ws.send('{"type":"subscribed"}');
  },
});

/** One frame of the feed: update the market, publish when the quote a client sees changed. */
function frame(text: string, recv: number): void {
  const f = JSON.parse(text) as { type: string; msg?: Record<string, unknown> };
  const m = f.msg;
  const id = m?.['market_ticker'];
  if (typeof id !== 'string' || !m) return;
  let mk = markets.get(id);
  let venueTs = recv;
  if (f.type === 'orderbook_snapshot') {
    mk = { yes: new Map(), no: new Map(), last: null, volume: null, seq: 0, shown: '' };
    markets.set(id, mk);
    for (const [p, s] of (m['yes_dollars_fp'] as [string, string][] | undefined) ?? []) mk.yes.set(units(p), Number(s));
    for (const [p, s] of (m['no_dollars_fp'] as [string, string][] | undefined) ?? []) mk.no.set(units(p), Number(s));
  } else if (!mk) return;
  else if (f.type === 'orderbook_delta') {
    const side = m['side'] === 'yes' ? mk.yes : mk.no;
    const p = units(m['price_dollars'] as string);
    const n = (side.get(p) ?? 0) + Number(m['delta_fp']);
    if (n > 0) side.set(p, n);
    else side.delete(p);
  } else if (f.type === 'ticker') {
    mk.last = units(m['price_dollars'] as string);
    mk.volume = Number(m['volume_fp']);
  } else if (f.type === 'trade') mk.last = units(m['yes_price_dollars'] as string);
  else return;
  if (typeof m['ts_ms'] === 'number') venueTs = m['ts_ms'];
  const bid = best(mk.yes);
  const noBid = best(mk.no);
  const ask = noBid === undefined ? undefined : 10_000 - noBid;
  const shown = `"yes_bid":${cents(bid)},"yes_ask":${cents(ask)},"no_bid":${cents(noBid)},"no_ask":${cents(bid === undefined ? undefined : 10_000 - bid)},"last_price":${cents(mk.last ?? undefined)},"volume":${mk.volume}`;
  if (shown === mk.shown) return;
  mk.shown = shown;
  const topic = `prices:venue_a:${id}`;
  if (app.numSubscribers(topic) === 0) return;
  app.publish(
    topic,
    `{"type":"price_update","channel":"prices","market_id":${JSON.stringify(id)},"source":"venue_a",${shown},"venue_ts":${venueTs},"recv_ts":${recv},"seq":${++mk.seq},"epoch":${EPOCH},"ts":${Date.now()}}`,
  );
}

const page = (await (await fetch(`${rest}/markets?limit=1000`)).json()) as { markets: { ticker: string; status: string }[] };
const tickers = page.markets.filter((m) => m.status === 'active').map((m) => m.ticker);
const feed = new WebSocket(wsUrl);
feed.on('message', (d: Buffer) => frame(d.toString(), Date.now()));
feed.once('open', () =>
  feed.send(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'ticker', 'trade'], market_tickers: tickers } })),
);
feed.once('close', () => process.exit(3));
while (markets.size < tickers.length) await new Promise((r) => setTimeout(r, 50));
app.listen('127.0.0.1', 0, (s) => {
  if (!s) process.exit(2);
  process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(s) })}\n`);
});
