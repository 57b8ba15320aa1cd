import { Packr } from 'msgpackr';
import type { NormalizedEvent } from '../core/types.js';
import type { Publication } from '../ws/hub.js';

/** Subjects of the hub's publications: `crossbook.ws.<channel>.<venue>.<market>` (the topic's parts). */
export const WS_SUBJECTS = 'crossbook.ws';
/** Subjects of the normalized events an edge applies to its state: `crossbook.ev.<venue>.<market>`. */
export const EV_SUBJECTS = 'crossbook.ev';
/** The core's heartbeat (every second, in the stream): an edge that hears nothing for a while knows the stream stalled. */
export const HB_SUBJECT = 'crossbook.hb';

/**
 * One subject token from a topic part: percent-encoded, with the characters NATS gives a meaning
 * (`.` separates tokens, `*` and `>` are wildcards) encoded too, so any market id maps to one token.
 */
export function subjectToken(part: string): string {
  const t = encodeURIComponent(part).replace(/[.*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return t === '' ? '%' : t;
}

/** The subject a hub topic (`<channel>:<venue>:<market>`, `status:<venue>`, `arb:<group>`) is published on. */
export function wsSubject(topic: string): string {
  return `${WS_SUBJECTS}.${topic.split(':').map(subjectToken).join('.')}`;
}

/** The subject a normalized event is published on. */
export function evSubject(ev: NormalizedEvent): string {
  const market = 'marketId' in ev && typeof ev.marketId === 'string' ? `.${subjectToken(ev.marketId)}` : '';
  return `${EV_SUBJECTS}.${subjectToken(ev.venue)}${market}`;
}

/** A message of the stream, decoded. */
export type StreamMessage = { readonly kind: 'ws'; readonly p: Publication } | { readonly kind: 'ev'; readonly ev: NormalizedEvent } | { readonly kind: 'hb' };

// Plain records (no shared structures): every message is decodable on its own, by any edge.
const packr = new Packr({ useRecords: false });

/** msgpackr body of a stream message. */
export function encodeBody(value: Publication | NormalizedEvent): Uint8Array {
  return packr.pack(value);
}

/** Decodes a stream message by its subject. */
export function decodeMessage(subject: string, data: Uint8Array): StreamMessage {
  if (subject === HB_SUBJECT) return { kind: 'hb' };
  const value: unknown = packr.unpack(data);
  return subject.startsWith(`${WS_SUBJECTS}.`) ? { kind: 'ws', p: value as Publication } : { kind: 'ev', ev: value as NormalizedEvent };
}

/** Decodes a publication's body read by stream sequence. */
export function decodePublication(data: Uint8Array): Publication {
  return packr.unpack(data) as Publication;
}
