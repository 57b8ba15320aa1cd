/**
 * The thread that reads the normalized cache for GET /replay (`normreader.ts` starts it): each read
 * runs `cachedLines` here (blocks read, decompressed, merged across venues) and copies each chunk
 * into a slot of the read's shared ring, waiting for a free slot when the socket has not taken the
 * earlier ones (a slow reader holds the thread back, never memory). A failed cache entry is logged
 * here and answered `fell` with where the frames path takes over.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../core/log.js';
import { NORM_CHUNK, cachedLines } from './normread.js';
import type { NormReadJob, NormThreadAnswer, NormThreadRequest } from './normreader.js';
import { NORM_RING } from './normreader.js';

const port = parentPort!;
const log = createLogger((workerData as { logLevel: string }).logLevel).child({ component: 'normcache', thread: 'replay-read' });

interface Job {
  readonly free: number[];
  cancelled: boolean;
  wake: (() => void) | undefined;
}
const jobs = new Map<number, Job>();

const send = (a: NormThreadAnswer): void => port.postMessage(a);

port.on('message', (m: NormThreadRequest) => {
  if (m.type === 'read') {
    void run(m);
    return;
  }
  const job = jobs.get(m.id);
  if (job === undefined) return;
  if (m.type === 'free') job.free.push(m.slot);
  else job.cancelled = true;
  job.wake?.();
});

/** A free ring slot (undefined: the read was cancelled while it waited). */
async function slotOf(job: Job): Promise<number | undefined> {
  while (job.free.length === 0 && !job.cancelled) await new Promise<void>((resolve) => (job.wake = resolve));
  job.wake = undefined;
  return job.cancelled ? undefined : job.free.pop();
}

async function run(m: NormReadJob): Promise<void> {
  const job: Job = { free: Array.from({ length: NORM_RING }, (_, i) => NORM_RING - 1 - i), cancelled: false, wake: undefined };
  jobs.set(m.id, job);
  const ring = Buffer.from(m.ring);
  let fell: { after: number; count: number } | undefined;
  const chunks = cachedLines(m.snaps, {
    from: m.from,
    to: m.to,
    filter: { types: m.types, markets: m.markets === undefined ? undefined : new Set(m.markets) },
    log,
    fallback: (after, count) => {
      fell = { after, count };
      return none();
    },
  });
  try {
    for await (const c of chunks) {
      const bytes = typeof c === 'string' ? Buffer.from(c) : c;
      for (let off = 0; off < bytes.length; off += NORM_CHUNK) {
        const slot = await slotOf(job);
        // Leaving the loop ends `chunks`: its cursors close their files.
        if (slot === undefined) return;
        const n = Math.min(NORM_CHUNK, bytes.length - off);
        ring.set(bytes.subarray(off, off + n), slot * NORM_CHUNK);
        send({ type: 'chunk', id: m.id, slot, length: n });
      }
    }
    send(fell === undefined ? { type: 'done', id: m.id } : { type: 'fell', id: m.id, ...fell });
  } catch (e) {
    send({ type: 'failed', id: m.id, error: e instanceof Error ? e.message : String(e) });
  } finally {
    jobs.delete(m.id);
  }
}

async function* none(): AsyncGenerator<string> {}
