import type * as UWS from 'uWebSockets.js';
import type { KeyRecord } from '../access/keys.js';
import type { Plan } from '../access/plans.js';
import type { MessageBudget } from './protocol.js';

/** One WebSocket connection's state (uWS's user data of the socket). */
export interface Conn {
  /** The key's record and plan; both undefined until an in-band login (`{"action":"auth",…}`) when the upgrade carried no key. */
  key: KeyRecord | undefined;
  plan: Plan | undefined;
  /** Cancels the close of a connection that has not logged in yet (set while it waits). */
  authTimer: (() => void) | undefined;
  /** topic → channel, for coalesced catch-up and unsubscribe-all. */
  readonly topics: Map<string, string>;
  /** Highest seq delivered per topic while coalescing. */
  readonly delivered: Map<string, number>;
  coalescing: boolean;
  /** When coalescing began (ms). */
  coalescingSince: number;
  closed: boolean;
  /** A warning that waits for room in uWS's buffer (see `Backpressure.sendWhenRoom`). */
  notice: string | undefined;
  /** A close that waits for room in uWS's buffer for its close frame (see `Backpressure.endWhenRoom`). */
  closing: { readonly code: number; readonly reason: string; readonly since: number } | undefined;
  rateWindow: number;
  rateCount: number;
  readonly budget: MessageBudget;
  /** Spoke the hosted dialect (`action`): streamed messages carry `data`. */
  hosted: boolean;
}

/**
 * What the rooms use of a uWS socket: a small interface, so each room can be driven in a unit test
 * by a socket that records what it was asked to do (uWS's own `WebSocket<Conn>` satisfies it).
 */
export interface Socket {
  getUserData(): Conn;
  send(message: string | ArrayBuffer | Uint8Array): unknown;
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  getBufferedAmount(): number;
  end(code?: number, reason?: string): void;
  close(): void;
  cork(cb: () => void): unknown;
}

/** A connection that has authenticated: its key and plan are known. */
export type Authed = Conn & { key: KeyRecord; plan: Plan };

export function isAuthed(c: Conn): c is Authed {
  return c.key !== undefined && c.plan !== undefined;
}

/** uWS's socket of a connection. */
export type UwsSocket = UWS.WebSocket<Conn>;

/** A new connection's state (`key` and `plan` undefined: it logs in with its first message). */
export function newConn(key: KeyRecord | undefined, plan: Plan | undefined, budget: MessageBudget): Conn {
  return {
    key,
    plan,
    authTimer: undefined,
    topics: new Map(),
    delivered: new Map(),
    coalescing: false,
    coalescingSince: 0,
    closed: false,
    notice: undefined,
    closing: undefined,
    rateWindow: 0,
    rateCount: 0,
    hosted: false,
    budget,
  };
}

/**
 * Topic suffix of the hosted dialect: a connection that speaks it (sends `action`) gets each
 * streamed message with its body again under `data`; the others keep the leaner messages.
 */
export const DATA = '|data';

/** The uWS topic a connection listens on for `topic`: its `DATA` twin in the hosted dialect. */
export function wire(c: Conn, topic: string): string {
  return c.hosted ? topic + DATA : topic;
}
