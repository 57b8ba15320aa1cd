/**
 * The baseline of bench/api/live.bench.ts: a bare uWebSockets.js app whose one route, `/bare`,
 * answers the bytes read from stdin (a response of the service, fetched by the bench) as
 * application/json. Prints its port when ready.
 */
import { loadUws } from '../../src/server/uws.js';

const uWS = loadUws();

const chunks: Buffer[] = [];
for await (const c of process.stdin) chunks.push(c as Buffer);
const body = Buffer.concat(chunks);
uWS
  .App()
  .get('/bare', (res) => {
    res.cork(() => res.writeHeader('Content-Type', 'application/json').end(body));
  })
  .listen('127.0.0.1', 0, (sock) => {
    if (!sock) throw new Error('cannot listen');
    console.log(uWS.us_socket_local_port(sock));
  });
