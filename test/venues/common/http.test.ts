import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { getJson, VenueHttpError } from '../../../src/venues/common/http.js';

// The network is the one thing replaced here (fetch), so each failure a venue gives can be staged.
const schema = z.object({ ok: z.boolean() });
type Step = { status: number; body?: string; headers?: Record<string, string> } | Error;

/** A body whose stream fails after its first bytes, as when the timeout fires mid-body. */
const CUT = '<cut>';
function cutBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode('{"ok":'));
      c.error(new Error('terminated'));
    },
  });
}

function stage(steps: Step[]): { calls: () => number } {
  let n = 0;
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => {
      const s = steps[Math.min(n++, steps.length - 1)]!;
      if (s instanceof Error) throw s;
      if (s.body === CUT) return new Response(cutBody(), { status: s.status, headers: s.headers });
      return new Response(s.body ?? '{"ok":true}', { status: s.status, headers: s.headers });
    }),
  );
  return { calls: () => n };
}

/** Settles `p` while advancing fake time; resolves with its value or its error. */
async function run<T>(p: Promise<T>): Promise<T | Error> {
  const out = p.then(
    (v) => v,
    (e: Error) => e,
  );
  await vi.runAllTimersAsync();
  return out;
}

describe('getJson retries a request in place', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('tries again after a 5xx and a network error, doubling the wait, and returns the page', async () => {
    const f = stage([{ status: 503 }, new TypeError('fetch failed'), { status: 200 }]);
    const t0 = Date.now();
    expect(await run(getJson('http://venue/markets', schema))).toEqual({ ok: true });
    expect(f.calls()).toBe(3);
    expect(Date.now() - t0).toBe(500 + 1000);
  });

  it('takes a body cut short for a network failure and tries again, not for a malformed document', async () => {
    const f = stage([{ status: 200, body: CUT }, { status: 200 }]);
    expect(await run(getJson('http://venue/markets', schema))).toEqual({ ok: true });
    expect(f.calls()).toBe(2);
    stage([{ status: 200, body: CUT }]);
    const e = await run(getJson('http://venue/markets', schema));
    expect(e).toBeInstanceOf(VenueHttpError);
    expect((e as VenueHttpError).kind).toBe('network');
    expect((e as VenueHttpError).message).toMatch(/body cut short: terminated/);
  });

  it("waits what a 429's Retry-After says", async () => {
    const f = stage([{ status: 429, headers: { 'retry-after': '2' } }, { status: 200 }]);
    const t0 = Date.now();
    expect(await run(getJson('http://venue/markets', schema))).toEqual({ ok: true });
    expect(f.calls()).toBe(2);
    expect(Date.now() - t0).toBe(2000);
  });

  it('gives up after the last attempt and says how many it took', async () => {
    const f = stage([{ status: 502, body: 'bad gateway' }]);
    const e = await run(getJson('http://venue/markets', schema));
    expect(f.calls()).toBe(3);
    expect(e).toBeInstanceOf(VenueHttpError);
    expect((e as VenueHttpError).status).toBe(502);
    expect((e as Error).message).toMatch(/502 bad gateway \(after 3 attempts\)$/);
  });

  it('does not retry what another attempt would repeat: a 404, bad JSON, a body off its schema', async () => {
    for (const [step, kind] of [
      [{ status: 404 }, 'status'],
      [{ status: 200, body: '{"ok":' }, 'json'],
      [{ status: 200, body: '{"ok":"yes"}' }, 'schema'],
    ] as const) {
      const f = stage([step, { status: 200 }]);
      const e = await run(getJson('http://venue/markets', schema));
      expect(f.calls()).toBe(1);
      expect((e as VenueHttpError).kind).toBe(kind);
      expect((e as Error).message).not.toContain('attempts');
    }
  });
});
