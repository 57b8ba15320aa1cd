/**
 * The simulator child's main (sim.process child, started by src/sim/child.ts with an IPC channel):
 * waits for the service's `start` message, starts the world and the venue servers, answers with
 * their endpoints, and stops when told (SIGTERM) or when the service is gone (IPC disconnect, or
 * the parent pid changes after a SIGKILL of the service), so it never outlives the service.
 */
import { isStartMessage, type FromChild } from './child-protocol.js';
import { startSim, type RunningSim } from './runner.js';

const send = process.send?.bind(process);
if (!send) {
  process.stderr.write('src/sim/child-entry is started by the service (sim.process child), over an IPC channel\n');
  process.exit(2);
}

let sim: RunningSim | undefined;
let stopping = false;

function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  // A venue server that does not close in time must not keep the process alive.
  setTimeout(() => process.exit(code), 3_000).unref();
  void (sim?.close() ?? Promise.resolve()).finally(() => process.exit(code));
}

function reply(m: FromChild, then?: () => void): void {
  send!(m, undefined, {}, () => then?.());
}

process.on('SIGTERM', () => stop(0));
// Ctrl-C reaches the whole process group: the service decides when its simulator stops.
process.on('SIGINT', () => undefined);
process.on('disconnect', () => stop(0));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop(0);
}, 1_000).unref();

process.on('message', (m: unknown) => {
  if (sim || stopping) return;
  if (!isStartMessage(m)) {
    reply({ type: 'failed', message: 'unexpected first message from the service' }, () => stop(1));
    return;
  }
  startSim(m.config, { ports: m.ports }).then(
    (s) => {
      sim = s;
      if (stopping) return void s.close();
      reply({ type: 'ready', endpoints: Object.fromEntries([...s.servers].map(([label, srv]) => [label, srv.endpoints])) });
    },
    (e: unknown) => reply({ type: 'failed', message: e instanceof Error ? e.message : String(e) }, () => stop(1)),
  );
});
