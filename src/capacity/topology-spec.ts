/** A deployment shape of `crossbook bench --topology`: one process, or a core and `edges` edges on NATS. */
export interface Topology {
  /** `single` or `core+N`. */
  readonly name: string;
  /** Serving edges; 0 = the single process (no NATS). */
  readonly edges: number;
}

/** The most edges a topology may ask for (each is a process on this machine). */
export const MAX_EDGES = 8;

/**
 * Parses `single,core+1,core+2`: each name once, `core+N` with N from 1 to {@link MAX_EDGES}.
 * Throws an Error that names the bad entry and what is accepted.
 */
export function parseTopologies(spec: string): Topology[] {
  const out: Topology[] = [];
  const names = spec.split(',').map((s) => s.trim());
  for (const name of names) {
    const m = /^core\+(\d+)$/.exec(name);
    const edges = name === 'single' ? 0 : m ? Number(m[1]) : NaN;
    if (!Number.isInteger(edges) || edges > MAX_EDGES || (m && edges < 1))
      throw new Error(`topology "${name}": expected single or core+N with N from 1 to ${MAX_EDGES} (e.g. single,core+1,core+2)`);
    if (out.some((t) => t.name === name)) throw new Error(`topology "${name}" is listed twice`);
    out.push({ name, edges });
  }
  return out;
}
