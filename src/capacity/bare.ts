/**
 * The baseline of `crossbook bench`, run as a child process: bare uWebSockets.js with (1) a route
 * serving a pre-built body of `?bytes=N` bytes and (2) a WebSocket endpoint whose clients subscribe
 * to topics and get a publish loop at `rate` messages per second round-robin over every subscribed
 * topic, each message shaped like a price_update (market_id, seq, ts). What crossbook adds on top
 * of uWS shows as the ratio against these. Prints {"port"} when ready.
 */
import { loadUws } from '../server/uws.js';

const rate = Number(process.argv[2] ?? 1000);
const uws = loadUws();
const app = uws.App();
const bodies = new Map<number, string>();
app.get('/bare', (res, req) => {
  const n = Math.min(50_000_000, Number(req.getQuery('bytes') ?? 1000) || 1000);
  let b = bodies.get(n);
  if (!b) bodies.set(n, (b = JSON.stringify({ pad: 'x'.repeat(Math.max(0, n - 10)) })));
  res.cork(() => res.writeHeader('content-type', 'application/json').end(b));
});
const topics: string[] = [];
const known = new Set<string>();
const seq = new Map<string, number>();
app.ws('/ws', {
  maxPayloadLength: 1024 * 1024,
  message: (ws, data) => {
    const m = JSON.parse(Buffer.from(data).toString()) as { market_ids?: string[] };
    for (const id of m.market_ids ?? []) {
      ws.subscribe(id);
      if (!known.has(id)) {
        known.add(id);
        topics.push(id);
      }
    }
    ws.send('{"type":"subscribed"}');
  },
});
let carry = 0;
let last = performance.now();
let next = 0;
setInterval(() => {
  const now = performance.now();
  carry += ((now - last) * rate) / 1000;
  last = now;
  const k = Math.floor(carry);
  carry -= k;
  if (topics.length === 0) return;
  for (let j = 0; j < k; j++) {
    const t = topics[next++ % topics.length]!;
    const s = (seq.get(t) ?? 0) + 1;
    seq.set(t, s);
    app.publish(
      t,
      `{"type":"price_update","channel":"prices","market_id":"${t}","yes_bid":41,"yes_ask":42,"no_bid":58,"no_ask":59,"seq":${s},"epoch":1,"ts":${Date.now()}}`,
    );
  }
}, 1);
app.listen('127.0.0.1', 0, (sock) => {
  if (!sock) throw new Error('bare baseline: cannot listen');
  process.stdout.write(`${JSON.stringify({ port: uws.us_socket_local_port(sock) })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
