import { expect, vi } from 'vitest';

/**
 * Waits for the first message in `msgs` (a socket's received messages, in order) that `pred`
 * accepts, removes it and returns it. The wait is a failure guard sized for a loaded machine.
 */
export async function takeMessage(msgs: Record<string, unknown>[], pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await vi.waitFor(
    () => {
      found = msgs.find(pred);
      expect(found).toBeDefined();
    },
    { timeout: 30_000, interval: 10 },
  );
  msgs.splice(msgs.indexOf(found!), 1);
  return found!;
}
