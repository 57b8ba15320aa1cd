import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { Matcher } from '../matching/matcher.js';

/** One market record as `crossbook match FILE` reads it (the dev-pairs `a`/`b` shape). */
const RecordSchema = z.object({
  platform: z.string().trim().min(1, 'platform must be a non-empty string'),
  market_id: z.string().nullable().optional(),
  title: z.string().trim().min(1, 'title must be a non-empty string'),
  event_title: z.string().optional(),
  outcome: z.string().optional(),
  close_time: z.union([z.string(), z.number()]).optional(),
  category: z.string().optional(),
  protocol: z.string().optional(),
});

type MarketRecord = z.infer<typeof RecordSchema>;

function describeIssue(i: number, e: z.ZodError): string {
  const first = e.issues[0];
  if (!first) return `record ${i}: invalid`;
  const path = first.path.length > 0 ? first.path.join('.') : '(record)';
  const missing = first.code === 'invalid_type' && /received undefined/.test(first.message);
  return `record ${i}: ${path}: ${missing ? 'required' : first.message}`;
}

/**
 * `crossbook match FILE`: reads a JSON array of market records `{platform, market_id, title,
 * event_title?, outcome?, close_time?}`, groups them with the matcher and prints
 * `{"groups": [...]}` with only the groups that hold markets of at least two platforms. Bad input
 * is reported on `err` with exit code 2.
 */
export function matchCommand(file: string, out: (s: string) => void, err: (s: string) => void): number {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    err(`match: cannot read ${file}: ${(e as Error).message}`);
    return 2;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    err(`match: ${file} is not valid JSON: ${(e as Error).message}`);
    return 2;
  }
  if (!Array.isArray(data)) {
    err(`match: ${file} must hold a JSON array of market records, got ${data === null ? 'null' : typeof data}`);
    return 2;
  }
  const records: MarketRecord[] = [];
  for (let i = 0; i < data.length; i++) {
    const r = RecordSchema.safeParse(data[i]);
    if (!r.success) {
      err(`match: ${describeIssue(i, r.error)}`);
      return 2;
    }
    records.push(r.data);
  }
  const matcher = new Matcher();
  for (const r of records) {
    // A record without an id is keyed by its title; the same key twice is one market updated.
    const key = `${r.platform}\u0000${r.market_id ?? `title:${r.title}`}`;
    matcher.upsert({ ...r, market_id: r.market_id ?? null, key });
  }
  const groups = matcher
    .groups()
    .filter((g) => new Set(g.members.map((m) => m.platform)).size >= 2)
    .map(({ members, ...fields }) => ({
      ...fields,
      markets: members.map((m) => ({ platform: m.platform, market_id: m.market_id, inverted: m.inverted, confidence: m.confidence, reasons: m.reasons })),
    }));
  out(JSON.stringify({ groups }, null, 2));
  return 0;
}
