import type { Config } from '../config/schema.js';
import type { FeedEndpoints } from '../venues/protocol.js';

/** The service's one message to its simulator child: the configuration and the ports to keep. */
export interface StartMessage {
  readonly type: 'start';
  readonly config: Config;
  /** Venue label → port; empty on the first start (free ports), the first start's ports on a restart. */
  readonly ports: Readonly<Record<string, number>>;
}

/** The child's answer: every enabled venue's endpoints, or why it could not start. */
export type FromChild =
  { readonly type: 'ready'; readonly endpoints: Readonly<Record<string, FeedEndpoints>> } | { readonly type: 'failed'; readonly message: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Guard of {@link StartMessage} (the parent is trusted: this checks the shape, not every key). */
export function isStartMessage(m: unknown): m is StartMessage {
  return isRecord(m) && m['type'] === 'start' && isRecord(m['config']) && isRecord(m['ports']);
}

/** Guard of {@link FromChild}. */
export function isFromChild(m: unknown): m is FromChild {
  if (!isRecord(m)) return false;
  if (m['type'] === 'ready') return isRecord(m['endpoints']);
  return m['type'] === 'failed' && typeof m['message'] === 'string';
}
