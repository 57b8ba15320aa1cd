import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkServerMessage } from '../contract/ws.js';
import { demoKey, lastSeqs, marketCount, marketIds, sameCounts, seqProblems, startCrossbook, statusOf, streamed, type CrossbookProcess } from './processes.js';
import { NATS_BIN, startNats, until, wsClient, type NatsProcess } from './support.js';

// Child processes (`crossbook serve`, built in dist/) killed with SIGKILL and started again. Every
// wait is a failure guard sized for a loaded machine, not a measurement.
const LONG = 60_000;
/** A test of several such waits in a row. */
const TEST = 300_000;

type Client = Awaited<ReturnType<typeof wsClient>>;

describe.skipIf(!NATS_BIN)('cluster processes: kill and restart an edge, the core, nats-server', () => {
  let nats: NatsProcess;
  let core: CrossbookProcess;
  let edge1: CrossbookProcess;
  let edge2: CrossbookProcess;
  let key: string;
  let ids: string[];

  beforeAll(async () => {
    nats = await startNats();
    core = await startCrossbook('core', nats.url);
    [edge1, edge2] = await Promise.all([startCrossbook('edge', nats.url), startCrossbook('edge', nats.url)]);
    key = demoKey(core);
    ids = await until(
      async () => {
        const got = await marketIds(core, key, 100);
        return got.length >= 50 ? got : undefined;
      },
      LONG,
      'the catalog on the core',
    );
  }, 120_000);

  afterAll(async () => {
    for (const p of [edge2, edge1, core]) await p?.kill('SIGTERM');
    await nats?.stop();
  }, 60_000);

  /** A client of `p` subscribed to the prices of `ids` (with `resume` when given), once confirmed. */
  const subscribe = async (p: CrossbookProcess, resume?: Record<string, number>): Promise<Client> => {
    const c = await wsClient(p.url, key);
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ids, ...(resume ? { resume } : {}) }));
    await until(() => c.messages.find((m) => m['type'] === 'subscribed'), LONG, `subscribed on ${p.url}`).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(c.messages.slice(0, 5))}`, { cause: e });
    });
    return c;
  };
  const updates = (c: Client, n: number, what: string): Promise<true> =>
    until(() => (streamed(c.messages).length >= n ? true : undefined), LONG, `${n} updates ${what}`);
  const closed = (c: Client): Promise<void> =>
    c.ws.readyState === c.ws.CLOSED ? Promise.resolve() : new Promise((resolve) => c.ws.once('close', () => resolve()));
  const link = (p: CrossbookProcess, want: (s: { link: string; epoch: number }) => boolean, what: string): Promise<true> =>
    until(async () => ((await statusOf(p).catch(() => undefined))?.cluster && want((await statusOf(p)).cluster!) ? true : undefined), LONG, what);

  it(
    'a client of an edge killed with SIGKILL resumes on the other with a gap-free seq sequence; /markets counts match',
    async () => {
      expect(await sameCounts([core, edge1, edge2], key)).toBeGreaterThan(0);

      const a = await subscribe(edge1);
      // Watches edge 2, to know when updates the client misses while it reconnects have passed.
      const watch = await subscribe(edge2);
      await updates(a, 20, 'on edge 1');
      await edge1.kill('SIGKILL');
      await until(() => closed(a).then(() => true), LONG, 'the client seeing edge 1 go');
      const last = lastSeqs(a.messages);
      const missed = (): number => Object.entries(lastSeqs(watch.messages)).reduce((n, [id, s]) => n + Math.max(0, s - (last[id] ?? s)), 0);
      await until(() => (missed() >= 10 ? true : undefined), LONG, 'updates missed by the client');

      const b = await subscribe(edge2, last);
      await updates(b, 20, 'after resuming on edge 2');
      expect(b.messages.filter((m) => m['code'] === 'RESYNC')).toEqual([]);
      expect(b.messages.filter((m) => m['snapshot'] === true && (m['market_id'] as string) in last)).toEqual([]);
      expect(seqProblems([...a.messages, ...b.messages])).toEqual([]);
      // The resumed updates filled the gap: some market got a replayed update the client had missed.
      expect(streamed(b.messages).some((m) => (m['seq'] as number) === (last[m['market_id'] as string] ?? -1) + 1)).toBe(true);
      expect(b.messages.flatMap((m) => checkServerMessage(m))).toEqual([]);
      b.ws.close();
      watch.ws.close();

      // Edge 1 starts again on its DATA_DIR from a new snapshot and answers like edge 2.
      await edge1.restart();
      expect(await sameCounts([core, edge1, edge2], key)).toBeGreaterThan(0);
    },
    TEST,
  );

  it(
    'edges keep serving while the core is killed, then follow the restarted core: a new epoch starts with a snapshot',
    async () => {
      const c = await subscribe(edge2);
      await updates(c, 10, 'before the core dies');
      const before = (await statusOf(edge2)).cluster!;
      const want = await sameCounts([core, edge1, edge2], key);

      await core.kill('SIGKILL');
      for (const e of [edge1, edge2]) await link(e, (s) => s.link === 'interrupted', `${e.url} saying interrupted`);
      expect((await statusOf(edge2)).status).not.toBe('ok');
      expect(await marketCount(edge1, key)).toBe(want);
      expect(await marketCount(edge2, key)).toBe(want);
      await until(() => c.messages.find((m) => m['code'] === 'FEED_INTERRUPTED'), LONG, 'FEED_INTERRUPTED');

      await core.restart();
      for (const e of [edge1, edge2]) await link(e, (s) => s.link === 'following' && s.epoch !== before.epoch, `${e.url} following the new core`);
      const epoch = (await statusOf(edge2)).cluster!.epoch;
      await until(() => (streamed(c.messages).filter((m) => m['epoch'] === epoch).length >= 10 ? true : undefined), LONG, 'updates of the new core');
      expect(seqProblems(c.messages)).toEqual([]);
      expect(c.messages.some((m) => m['snapshot'] === true && m['epoch'] === epoch)).toBe(true);
      expect(c.messages.flatMap((m) => checkServerMessage(m))).toEqual([]);
      c.ws.close();
      expect(await sameCounts([core, edge1, edge2], key)).toBeGreaterThanOrEqual(want);
    },
    TEST,
  );

  it(
    'a nats-server restart (store on disk) loses nothing for a client that stays or resumes',
    async () => {
      const c = await subscribe(edge1);
      await updates(c, 10, 'before NATS stops');
      const { rebootstraps } = (await statusOf(edge1)).cluster!;
      await nats.stop();
      await link(edge1, (s) => s.link === 'interrupted', 'edge 1 saying interrupted');
      await nats.restart();
      await link(edge1, (s) => s.link === 'following', 'edge 1 following again');
      const n = streamed(c.messages).length;
      const back = c.messages.length;
      await updates(c, n + 10, 'after NATS is back');
      expect(seqProblems(c.messages)).toEqual([]);
      // The edge followed on without starting again from a snapshot: the core sent again what NATS refused while stopping.
      expect((await statusOf(edge1)).cluster!.rebootstraps).toBe(rebootstraps);
      expect(c.messages.filter((m) => m['snapshot'] === true && c.messages.indexOf(m) >= back)).toEqual([]);
      c.ws.close();
      await closed(c);

      const last = lastSeqs(c.messages);
      const d = await subscribe(edge2, last);
      await updates(d, 10, 'resumed on edge 2');
      expect(d.messages.filter((m) => m['code'] === 'RESYNC')).toEqual([]);
      expect(seqProblems([...c.messages, ...d.messages])).toEqual([]);
      d.ws.close();
    },
    TEST,
  );
});
