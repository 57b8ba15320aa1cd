import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Publication, Replay } from '../ws/hub.js';
import { decodeMessage, decodePublication, EV_SUBJECTS, HB_SUBJECT, WS_SUBJECTS, wsSubject } from './subjects.js';
import { decodeSnapshot, encodeSnapshot, type StateSnapshot } from './snapshot.js';

/** NATS settings of a cluster role (config `cluster`). */
export interface ClusterSettings {
  readonly natsUrl: string;
  /** The JetStream stream holding the replay window. */
  readonly stream: string;
  /** The window: messages older than this are dropped (ms). */
  readonly maxAgeMs: number;
  /** The window: at most this many messages. */
  readonly maxMsgs: number;
  /** The object store bucket holding the core's snapshot. */
  readonly bucket: string;
}

const SNAPSHOT = 'state';
/** Replay reads at most this many messages per request, waiting at most this long for a batch. */
const REPLAY_BATCH = 1_000;
const REPLAY_WAIT_MS = 2_000;
/** A snapshot read that takes longer is given up and retried. */
const SNAPSHOT_READ_MS = 10_000;

/** A connection to NATS with the stream and the snapshot bucket in place. */
export interface ClusterLink {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly objects: ObjectStore;
  readonly settings: ClusterSettings;
  close(): Promise<void>;
}

/** Connects and makes sure the stream (bounded by age and count) and the snapshot bucket exist. */
export async function openLink(settings: ClusterSettings): Promise<ClusterLink> {
  const nc = await connect({ servers: settings.natsUrl, name: 'crossbook', maxReconnectAttempts: -1 });
  // Stream administration (a window update trims up to maxMsgs messages) can outlast the 5 s default on a loaded machine.
  const jsm = await jetstreamManager(nc, { timeout: 20_000 });
  const config = {
    name: settings.stream,
    subjects: [`${WS_SUBJECTS}.>`, `${EV_SUBJECTS}.>`, HB_SUBJECT],
    max_age: settings.maxAgeMs * 1_000_000,
    max_msgs: settings.maxMsgs,
  };
  const exists = await jsm.streams.info(settings.stream).then(
    () => true,
    () => false,
  );
  if (exists) await jsm.streams.update(settings.stream, config);
  else await jsm.streams.add(config);
  const js = jetstream(nc);
  const objects = await new Objm(js).create(settings.bucket);
  return { nc, js, jsm, objects, settings, close: () => nc.drain() };
}

/**
 * Stores the core's snapshot as `state.<stream seq>` (the object store chunks it, whatever its
 * size) and deletes all but the two newest: an edge still reading the previous one finds its
 * chunks in place, where overwriting one name would purge them under it.
 */
export async function putSnapshot(link: ClusterLink, s: StateSnapshot): Promise<void> {
  await link.objects.putBlob({ name: `${SNAPSHOT}.${s.streamSeq}` }, encodeSnapshot(s));
  for (const name of (await snapshotNames(link)).slice(2)) await link.objects.delete(name);
}

/** The snapshots held, newest first. */
async function snapshotNames(link: ClusterLink): Promise<string[]> {
  const seqOf = (name: string): number => Number(name.slice(SNAPSHOT.length + 1));
  return (await link.objects.list())
    .filter((o) => !o.deleted && o.name.startsWith(`${SNAPSHOT}.`))
    .map((o) => o.name)
    .sort((x, y) => seqOf(y) - seqOf(x));
}

/** The core's latest snapshot, waiting up to `timeoutMs` for a first one (a read that stalls is retried). */
export async function getSnapshot(link: ClusterLink, timeoutMs: number): Promise<StateSnapshot> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const name = (await snapshotNames(link))[0];
    const data = name === undefined ? null : await withTimeout(link.objects.getBlob(name), SNAPSHOT_READ_MS).catch(() => null);
    if (data) return decodeSnapshot(data);
    if (Date.now() > until)
      throw new Error(`no core snapshot in bucket ${link.settings.bucket} after ${timeoutMs} ms: is a core running on ${link.settings.natsUrl}?`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The stream's last sequence (0 when empty). */
export async function lastSequence(link: ClusterLink): Promise<number> {
  return (await link.jsm.streams.info(link.settings.stream)).state.last_seq;
}

/**
 * The hub's `resume` reader: a topic's publications after a seq, read off the stream in order
 * (an ordered consumer on the topic's subject). Undefined when the window no longer holds the one
 * right after it, or the stream holds another epoch's.
 */
export function streamReplay(link: ClusterLink): Replay {
  const stream = link.settings.stream;
  return async (topic, afterSeq, epoch) => {
    const subject = wsSubject(topic);
    const last = await link.jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
    if (!last) return [];
    const lastP = decodePublication(last.data);
    if (lastP.epoch !== epoch) return undefined;
    if (lastP.seq <= afterSeq) return [];
    const consumer = await link.js.consumers.get(stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
    const out: Publication[] = [];
    // In batches until the last message seen above (or the end of what the subject holds now: the
    // window may drop it meanwhile); a batch that brings nothing ends it too.
    for (let done = false; !done;) {
      let got = 0;
      for await (const m of await consumer.fetch({ max_messages: REPLAY_BATCH, expires: REPLAY_WAIT_MS })) {
        got++;
        const d = decodeMessage(m.subject, m.data);
        if (d.kind === 'ws' && d.p.seq > afterSeq && d.p.epoch === epoch) out.push(d.p);
        if (m.seq >= last.seq || m.info.pending === 0) done = true;
      }
      if (got === 0) done = true;
    }
    // In the topic's own order, once each: a publication the core sent again after nats-server
    // refused it can sit in the stream after later ones.
    out.sort((a, b) => a.seq - b.seq);
    const once = out.filter((p, i) => i === 0 || p.seq !== out[i - 1]!.seq);
    return once.length && once[0]!.seq === afterSeq + 1 ? once : undefined;
  };
}

/** The NATS settings of `config` (the URL from config, else NATS_URL); a ConfigError when neither names one. */
export function clusterSettings(
  config: Config,
): ClusterSettings & { readonly bootstrapTimeoutMs: number; readonly snapshotIntervalMs: number; readonly publishBuffer: number | undefined } {
  const c = config.cluster;
  const natsUrl = c?.natsUrl ?? process.env['NATS_URL'];
  if (!c || !natsUrl) throw new ConfigError(`role ${c?.role ?? 'single'} needs a NATS URL: --nats nats://host:4222 or NATS_URL`);
  return {
    natsUrl,
    stream: c.stream,
    bucket: c.bucket,
    maxAgeMs: c.maxAgeMs,
    maxMsgs: c.maxMsgs,
    snapshotIntervalMs: c.snapshotIntervalMs,
    bootstrapTimeoutMs: c.bootstrapTimeoutMs,
    publishBuffer: c.publishBuffer,
  };
}
