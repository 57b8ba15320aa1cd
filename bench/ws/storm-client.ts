/**
 * The subscription storm of issue 30, as its own process (so its CPU is not the bench's): C
 * connections of one key, each sending R subscribe/unsubscribe messages a second (alternating) for
 * the same N order-book ids, reading everything it is sent. Runs until killed; prints, every
 * second, the messages it sent and the RATE_LIMITED errors it got back, as JSON lines.
 *
 * argv: wsUrl key idsFile connections perSecond
 */
import { readFileSync } from 'node:fs';
import { RawWebSocket } from '../../src/capacity/raw-ws.js';

const [url, key, idsFile, conns, rate] = process.argv.slice(2);
const ids = JSON.parse(readFileSync(idsFile!, 'utf8')) as string[];
const sub = JSON.stringify({ type: 'subscribe', channel: 'orderbook', market_ids: ids });
const unsub = JSON.stringify({ type: 'unsubscribe', channel: 'orderbook', market_ids: ids });
const LIMITED = Buffer.from('RATE_LIMITED');
let sent = 0;
let limited = 0;
let received = 0;
const sockets: RawWebSocket[] = [];
for (let i = 0; i < Number(conns); i++) {
  const ws = new RawWebSocket(
    url!,
    { 'x-api-key': key! },
    (d, s, e) => {
      received++;
      if (e - s < 600 && d.subarray(s, e).includes(LIMITED)) limited++;
    },
    () => sockets.push(ws),
    (reason) => console.error(`storm connection closed: ${reason}`),
  );
}
let tick = 0;
setInterval(
  () => {
    tick++;
    for (const ws of sockets) {
      ws.send(tick % 2 ? sub : unsub);
      sent++;
    }
  },
  1000 / Number(rate),
);
// The bench kills this process when it is done; a closed stdout ends it too.
process.stdout.on('error', () => process.exit(0));
setInterval(() => {
  console.log(JSON.stringify({ open: sockets.length, sent, limited, received }));
  sent = limited = received = 0;
}, 1000);
