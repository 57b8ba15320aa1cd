import type { PubAck } from '@nats-io/jetstream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ClusterLink } from '../../src/cluster/link.js';
import { PUBLISH_ATTEMPTS, RETRY_MS, SEQ_HEADER, StreamPublisher } from '../../src/cluster/publisher.js';

/** JetStream's publish as the NATS client answers it: each call settled by the test, in any order. */
function fakeStream(): { link: ClusterLink; calls: { n: number; ok: () => void; refuse: () => void }[] } {
  const calls: { n: number; ok: () => void; refuse: () => void }[] = [];
  let seq = 0;
  const publish = (_subject: string, _body: Uint8Array, opts: { headers: { get(k: string): string } }): Promise<PubAck> =>
    new Promise((resolve, reject) =>
      calls.push({
        n: Number(opts.headers.get(SEQ_HEADER)),
        ok: () => resolve({ seq: ++seq, stream: 's', duplicate: false, domain: '' } as PubAck),
        refuse: () => reject(new Error('JetStreamNotEnabled')),
      }),
    );
  return { link: { js: { publish } } as unknown as ClusterLink, calls };
}

describe('StreamPublisher: a refused publish is sent again before anything newer', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('resends a refused message after RETRY_MS, holding newer ones behind it', async () => {
    const { link, calls } = fakeStream();
    const p = new StreamPublisher(link, 1, () => undefined);
    p.send('a', new Uint8Array(0));
    p.send('b', new Uint8Array(0));
    expect(calls.map((c) => c.n)).toEqual([1, 2]);
    calls[0]!.refuse();
    calls[1]!.ok();
    await vi.advanceTimersByTimeAsync(0);
    p.send('c', new Uint8Array(0));
    // 3 waits behind the refused 1.
    expect(calls.map((c) => c.n)).toEqual([1, 2]);
    expect(p.drained).toBe(false);
    expect(p.stats).toMatchObject({ failed: 1, buffered: 2, dropped: 0 });
    await vi.advanceTimersByTimeAsync(RETRY_MS);
    expect(calls.map((c) => c.n)).toEqual([1, 2, 1, 3]);
    calls[2]!.ok();
    calls[3]!.ok();
    await vi.advanceTimersByTimeAsync(0);
    expect(p.drained).toBe(true);
    expect(p.stats).toMatchObject({ published: 3, failed: 1, dropped: 0, buffered: 0, inFlight: 0 });
  });

  it('drops a message refused PUBLISH_ATTEMPTS times, counted', async () => {
    const { link, calls } = fakeStream();
    const p = new StreamPublisher(link, 1, () => undefined);
    p.send('a', new Uint8Array(0));
    for (let i = 0; i < PUBLISH_ATTEMPTS; i++) {
      calls.at(-1)!.refuse();
      await vi.advanceTimersByTimeAsync(RETRY_MS);
    }
    expect(calls.length).toBe(PUBLISH_ATTEMPTS);
    expect(p.stats).toMatchObject({ failed: PUBLISH_ATTEMPTS, dropped: 1, buffered: 0 });
    expect(p.drained).toBe(true);
  });
});
