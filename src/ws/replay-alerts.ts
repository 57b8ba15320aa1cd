import { VirtualClock } from '../core/clock.js';
import { FADE_TYPES, type Alert, type AlertEngine } from '../signals/alerts.js';
import type { EngineState } from '../state/engine.js';
import type { VenueDirectory } from '../venues/directory.js';
import { Retained } from './backpressure.js';
import { wire, type Conn } from './conn.js';
import { alertTopic, type AlertChannel } from './protocol.js';
import { Publisher } from './publish.js';
import { HubRouter, routeAlert } from './route.js';
import { Topics } from './topics.js';

/** What a replay of the alert channels reads: the alerts the alert engine stored as it raised them (src/signals/alerts.ts). */
export type StoredAlerts = Pick<AlertEngine, 'stored' | 'oldestStored' | 'flushed' | 'options'>;

/** Alerts read from the store at once: a replay holds one page, however long its window. */
const PAGE = 256;

/** What one replay's alerts are read from and sent through. */
export interface AlertReplayDeps {
  readonly store: StoredAlerts;
  /** The service's state: its catalog names an alert's market (title, the hosted dialect's market_slug and close day), as live read it. */
  readonly state: EngineState;
  readonly venues: VenueDirectory;
  readonly channels: readonly AlertChannel[];
  /** The replay's connection (its dialect, read at each seek as the replay's router reads it). */
  readonly conn: Conn;
  /** End of the window (inclusive). */
  readonly to: number;
  /** Sends one message of the replay to its client (`topic`: the uWS topic it went out on live). */
  readonly send: (topic: string, msg: string | Uint8Array) => void;
  /** One turn of the event loop, taken between pages that held nothing for the replay. */
  readonly yieldToLoop: () => Promise<void>;
}

/** The channel an alert goes out on live. */
const channelOf = (a: Alert): AlertChannel => (FADE_TYPES.includes(a.type) ? 'fade_finder' : 'smart_money');

/**
 * The alert channels of a WebSocket replay: the alerts live sent on smart_money / fade_finder,
 * read back from the alert engine's store (the pipeline replay cannot raise them again: the wallet
 * ledger behind them is restored from LMDB, not built from the capture). A cursor over the
 * window's stored alerts, a page at a time in creation order, that the replay session asks for the
 * next alert's time (to interleave it with the pipeline's items and pace it) and then sends it
 * through the live path's own router (`routeAlert`: the same bodies, and the hosted dialect's
 * fade_finder_update after each fade) on topics of its own, so each channel counts its seq from 1
 * in each epoch, and `ts` is the alert's creation time (when live sent it). A seek starts the cursor
 * again at the first alert created at or after the new position, under that epoch.
 */
export class AlertReplay {
  private page: Alert[] = [];
  private i = 0;
  private cursor: number | undefined;
  private ended = false;
  private from = 0;
  /** Bumped by a seek: a page read that was waiting for the store's writes is dropped. */
  private gen = 0;
  private clock = new VirtualClock(0);
  private router: HubRouter | undefined;

  constructor(
    private readonly d: AlertReplayDeps,
    at: number,
  ) {
    this.seek(at);
  }

  /** Seeks so far (the first position counts as one): a caller that waited sees whether the cursor moved meanwhile. */
  get seeks(): number {
    return this.gen;
  }

  /** Sends from `at` on, under the epoch `at`, with each channel's seq from 1 again. */
  seek(at: number): void {
    this.gen++;
    this.from = at;
    this.page = [];
    this.i = 0;
    this.cursor = undefined;
    this.ended = false;
    const held = new Set<string>();
    const topics = new Topics((t) => (held.has(t) ? 1 : 0), undefined, false);
    if (this.d.conn.hosted) topics.hostedConns = 1;
    for (const ch of this.d.channels) {
      topics.hold(alertTopic(ch));
      held.add(wire(this.d.conn, alertTopic(ch)));
    }
    topics.changed();
    this.clock = new VirtualClock(at);
    const pub = new Publisher(this.d.send, topics, new Retained(), this.clock, at);
    this.router = new HubRouter({ state: this.d.state, venues: this.d.venues, games: undefined, topics, pub, bookDepth: 0 });
  }

  /** The creation time of the next alert to send, or undefined when the window holds no more (reads the next page when one is spent). */
  async next(): Promise<number | undefined> {
    while (this.i >= this.page.length) {
      if (this.ended) return undefined;
      const gen = this.gen;
      // Alerts raised up to now are read with the rest (an alert's write is in flight for a moment).
      await this.d.store.flushed();
      if (gen !== this.gen) continue;
      const p = this.d.store.stored({ from: this.from, to: this.d.to, cursor: this.cursor, limit: PAGE });
      this.page = p.alerts.filter((a) => this.d.channels.includes(channelOf(a)));
      this.i = 0;
      this.cursor = p.cursor;
      this.ended = p.cursor === undefined;
      // A window of many alerts of the other channel: the event loop turns between its pages.
      if (this.page.length === 0 && !this.ended) await this.d.yieldToLoop();
    }
    return this.page[this.i]!.createdAt;
  }

  /** Sends the alert `next()` announced, as live sent it, at its creation time. */
  send(): void {
    const a = this.page[this.i++];
    const router = this.router;
    if (a === undefined || router === undefined) return;
    this.clock.run(a.createdAt, () => routeAlert(router, this.d.state, a));
  }
}
