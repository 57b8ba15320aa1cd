/**
 * The HTTP front's thread (guard.ts, `HttpGuard`): listens on the public address, guards each
 * connection into uWS on the main thread's loopback port, posts `GuardReady` once, and stops on
 * 'close'.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { GuardFront, GuardRoute, type GuardReady, type GuardWorkerData } from './guard.js';

const data = workerData as GuardWorkerData;
const port = parentPort!;
const front = new GuardFront(data.upstreamPort, new GuardRoute(data.prefix));
front.listen(data.host, data.port).then(
  (p) => port.postMessage({ port: p } satisfies GuardReady),
  (e: Error) => port.postMessage({ error: e.message } satisfies GuardReady),
);
port.on('message', (m) => {
  if (m !== 'close') return;
  front.close();
  port.close();
});
