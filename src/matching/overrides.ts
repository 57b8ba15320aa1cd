/**
 * Operator overrides of the matcher, in LMDB (`matching` sub-database): `link` puts two listings in
 * one group (with their relative orientation), `unlink` keeps them apart, whatever their
 * propositions say. `crossbook groups …` writes them from another process; the server re-reads the
 * table when its `version` changes (checked on a timer), as the key table does.
 */
import type { Database } from 'lmdb';

/** One operator decision about a pair of listings (`venue:marketId` keys, `a` < `b`). */
export interface Override {
  readonly a: string;
  readonly b: string;
  readonly action: 'link' | 'unlink';
  /** For `link`: one listing's YES is the other's NO. */
  readonly inverted: boolean;
  /** ISO time of the decision. */
  readonly at: string;
}

const PREFIX = 'o:';

/** The stored key of a pair: order-free. */
function pairKey(x: string, y: string): { a: string; b: string; key: string } {
  const [a, b] = x < y ? [x, y] : [y, x];
  return { a, b, key: `${PREFIX}${a}\u0000${b}` };
}

/** Whether a string is a `platform:id` listing key. */
export function isListingKey(s: string): boolean {
  const i = s.indexOf(':');
  return i > 0 && i < s.length - 1;
}

/** Overrides in LMDB, with the version counter another process bumps on every write. */
export class OverrideStore {
  private seenVersion = -1;

  constructor(private readonly db: Database) {}

  /** Records a link (replacing any earlier decision on the pair). */
  link(x: string, y: string, inverted: boolean): Override {
    return this.put(x, y, 'link', inverted);
  }

  /** Records that the pair must never be grouped (replacing any earlier decision). */
  unlink(x: string, y: string): Override {
    return this.put(x, y, 'unlink', false);
  }

  /** Every override, by pair. */
  list(): Override[] {
    const out: Override[] = [];
    for (const { value } of this.db.getRange({ start: PREFIX, end: 'o;' })) out.push(value as Override);
    return out;
  }

  /** The current overrides when another writer changed them since the last call, else undefined. */
  changed(): Override[] | undefined {
    const v = this.version();
    if (v === this.seenVersion) return undefined;
    this.seenVersion = v;
    return this.list();
  }

  private version(): number {
    return (this.db.get('override-version') as number | undefined) ?? 0;
  }

  private put(x: string, y: string, action: Override['action'], inverted: boolean): Override {
    if (x === y) throw new Error('an override needs two different listings');
    const { a, b, key } = pairKey(x, y);
    const o: Override = { a, b, action, inverted: action === 'link' && inverted, at: new Date().toISOString() };
    this.db.transactionSync(() => {
      this.db.putSync(key, o);
      this.db.putSync('override-version', this.version() + 1);
    });
    return o;
  }
}
