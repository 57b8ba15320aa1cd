import { expect, vi } from 'vitest';

type Msg = Record<string, unknown>;

/**
 * Waits for the first message in `msgs` (a socket's received messages, in order) that `pred`
 * accepts, removes it and returns it. The wait is a failure guard sized for a loaded machine; when
 * it runs out, the failure names the predicate, what was waiting untaken (types and counts) and
 * any error the server sent, so a CI log alone says what came instead.
 */
export async function takeMessage(msgs: Msg[], pred: (m: Msg) => boolean): Promise<Msg> {
  let found: Msg | undefined;
  try {
    await vi.waitFor(
      () => {
        found = msgs.find(pred);
        expect(found).toBeDefined();
      },
      { timeout: 30_000, interval: 10 },
    );
  } catch (e) {
    throw new Error(`no message matched ${pred.toString()} in 30 s; ${untaken(msgs)}`, { cause: e });
  }
  msgs.splice(msgs.indexOf(found!), 1);
  return found!;
}

/** What `msgs` holds: how many of each type, and the error messages whole. */
function untaken(msgs: readonly Msg[]): string {
  const types = new Map<string, number>();
  for (const m of msgs) types.set(String(m['type']), (types.get(String(m['type'])) ?? 0) + 1);
  const errors = msgs.filter((m) => m['type'] === 'error').map((m) => JSON.stringify(m));
  const tally = [...types].map(([t, n]) => `${t} ×${n}`).join(', ');
  return `untaken: ${msgs.length} (${tally || 'none'})${errors.length > 0 ? `; errors: ${errors.join(' ')}` : ''}`;
}
