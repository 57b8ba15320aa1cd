import type { Retained } from './backpressure.js';
import { DATA, wire, type Conn, type Socket } from './conn.js';
import type { Topics } from './topics.js';

/**
 * A connection's subscriptions, kept in step in three places: its own `topics`, the hub's held
 * topics (`Topics.hold`/`release`, so a topic nobody holds costs nothing), and uWS's pub/sub (in
 * the connection's dialect, and not while it is coalescing: then its topics' latest messages are
 * retained for it instead).
 */
export class Subscriptions {
  constructor(
    private readonly topics: Topics,
    private readonly retained: Retained,
  ) {}

  sub(ws: Socket, c: Conn, topic: string, ch: string): void {
    if (!c.topics.has(topic)) {
      if (c.coalescing) this.retained.watch(topic);
      this.topics.hold(topic);
    }
    this.topics.changed();
    c.topics.set(topic, ch);
    if (!c.coalescing) ws.subscribe(wire(c, topic));
  }

  unsub(ws: Socket, c: Conn, topic: string): void {
    if (c.topics.has(topic)) {
      if (c.coalescing) this.retained.unwatch(topic);
      this.topics.release(topic);
    }
    this.topics.changed();
    c.topics.delete(topic);
    c.delivered.delete(topic);
    ws.unsubscribe(wire(c, topic));
  }

  /** The connection spoke the hosted dialect: from now on its streamed messages carry `data`. */
  speakHosted(ws: Socket, c: Conn): void {
    this.topics.changed();
    if (!c.coalescing)
      for (const t of c.topics.keys()) {
        ws.unsubscribe(t);
        ws.subscribe(t + DATA);
      }
    if (!c.hosted) this.topics.hostedConns++;
    c.hosted = true;
  }

  /** A connection closed: its holds and retained topics are given back (uWS drops its subscriptions itself). */
  closed(c: Conn): void {
    this.topics.changed();
    for (const t of c.topics.keys()) this.topics.release(t);
    if (c.hosted) this.topics.hostedConns--;
    if (c.coalescing) {
      c.coalescing = false;
      for (const t of c.topics.keys()) this.retained.unwatch(t);
    }
  }
}
