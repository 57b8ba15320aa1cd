import type { VenueConfig } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import type { Conn, Socket } from './conn.js';
import { CODES } from './protocol.js';
import type { Publication } from './publish.js';

/**
 * The publications of `topic` after `afterSeq` still held, in order; undefined when the window no
 * longer holds the one right after `afterSeq` (the client then gets a snapshot and RESYNC).
 */
export type Replay = (topic: string, afterSeq: number, epoch: number) => Promise<readonly Publication[] | undefined>;

/** A topic a subscribe asked to resume. */
export interface ResumeTopic {
  readonly topic: string;
  readonly ch: string;
  readonly v: VenueConfig;
  readonly id: string;
}

/** What a resume reads and does on the hub. */
export interface ResumeHub {
  readonly epoch: number;
  readonly clock: Clock;
  /** The last seq of `topic` here. */
  seqOf(topic: string): number;
  /** Whether the connection is still open. */
  isOpen(ws: Socket): boolean;
  /** Sends one message (the send time is added). */
  send(ws: Socket, body: Record<string, unknown>): void;
  /** Subscribes the connection to the topic and its venue's feed-status topic. */
  join(ws: Socket, c: Conn, t: ResumeTopic): void;
  /** Sends the topic's snapshot. */
  snapshot(ws: Socket, t: ResumeTopic): void;
}

/** Rounds of reading the window before a resume gives up and sends the snapshot. */
const ROUNDS = 4;
/** How long a resume waits for this hub to reach a seq the client saw elsewhere, and how often it looks. */
const REACH_MS = 1_000;
const REACH_STEP_MS = 50;

/**
 * Subscribes after sending what the client missed since `last`, read off the stream, in order: the
 * topic is joined only once the replay has reached this hub's own seq, with no await between, so
 * nothing falls between the replayed and the live messages. When the window no longer holds the
 * messages after `last`, or `last` is past the topic's seq, the client gets the snapshot and a
 * RESYNC warning.
 */
export async function resume(hub: ResumeHub, ws: Socket, c: Conn, t: ResumeTopic, last: number, replay: Replay): Promise<void> {
  let after = last;
  for (let round = 0; round < ROUNDS; round++) {
    const held = await replay(t.topic, after, hub.epoch).catch(() => undefined);
    if (!hub.isOpen(ws)) return;
    if (!held) break;
    const upto = hub.seqOf(t.topic);
    // A seq past this topic's own: this hub may trail the one the client came from (an edge
    // catching up on the stream), so it waits a little for it; if it never comes, the client
    // needs the snapshot.
    if (after > upto) {
      if (round < ROUNDS - 1 && (await reaches(hub, t.topic, after)) && hub.isOpen(ws)) continue;
      break;
    }
    let gap = false;
    ws.cork(() => {
      for (const p of held) {
        if (p.seq <= after || p.seq > upto) continue;
        if (p.seq !== after + 1) {
          gap = true;
          break;
        }
        hub.send(ws, replayed(p, c.hosted));
        after = p.seq;
      }
    });
    if (gap) break;
    if (after >= upto) return hub.join(ws, c, t);
  }
  ws.cork(() => {
    hub.join(ws, c, t);
    hub.snapshot(ws, t);
    hub.send(ws, {
      type: 'warning',
      code: CODES.RESYNC,
      channel: t.ch,
      market_ids: [t.id],
      message: `the messages after seq ${last} are no longer held: this is a snapshot, reconcile over REST`,
    });
  });
}

/** A publication read off the stream as the message a subscriber got (`data` in the hosted dialect). */
export function replayed(p: Publication, hosted: boolean): Record<string, unknown> {
  const body = typeof p.body === 'string' ? (JSON.parse(p.body) as Record<string, unknown>) : p.body;
  const times = p.recvTs === undefined ? {} : { venue_ts: p.venueTs ?? p.recvTs, recv_ts: p.recvTs };
  return { ...body, ...(hosted ? { data: body } : {}), ...times, seq: p.seq, epoch: p.epoch, ts: p.ts };
}

/** Whether this hub's seq of `topic` reaches `seq` within REACH_MS (looked at every REACH_STEP_MS of the hub's clock). */
async function reaches(hub: ResumeHub, topic: string, seq: number): Promise<boolean> {
  for (let waited = 0; hub.seqOf(topic) < seq; waited += REACH_STEP_MS) {
    if (waited >= REACH_MS) return false;
    await new Promise<void>((r) => hub.clock.after(REACH_STEP_MS, r));
  }
  return true;
}
