import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { HopPairs, updateKey } from '../../src/capacity/hop-probe.js';
import { parseTopologies } from '../../src/capacity/topology-spec.js';
import { renderTopologyHtml, summarize, topologyResults } from '../../src/capacity/topology-report.js';
import { share, type TopologyReport } from '../../src/capacity/topology.js';
import { program } from '../../src/cli/main.js';

/** A report `crossbook bench --profile smoke --topology single,core+1,core+2` wrote (recorded, not made up). */
const recorded = (): TopologyReport => JSON.parse(readFileSync(join(__dirname, '../fixtures/capacity/topology-smoke.json'), 'utf8')) as TopologyReport;

describe('crossbook bench --topology', () => {
  it('parses single and core+N', () => {
    expect(parseTopologies('single,core+1,core+2')).toEqual([
      { name: 'single', edges: 0 },
      { name: 'core+1', edges: 1 },
      { name: 'core+2', edges: 2 },
    ]);
    expect(parseTopologies(' core+3 ')).toEqual([{ name: 'core+3', edges: 3 }]);
  });

  it('rejects an unknown shape, an edge count out of range and a repeat, naming what it accepts', () => {
    expect(() => parseTopologies('single,mesh')).toThrow(/topology "mesh": expected single or core\+N with N from 1 to 8/);
    expect(() => parseTopologies('core+0')).toThrow(/topology "core\+0"/);
    expect(() => parseTopologies('core+9')).toThrow(/topology "core\+9"/);
    expect(() => parseTopologies('core+-1')).toThrow(/topology "core\+-1"/);
    expect(() => parseTopologies('')).toThrow(/topology ""/);
    expect(() => parseTopologies('single,single')).toThrow(/"single" is listed twice/);
  });

  it('is a usage error on the command line', () => {
    const p = program().exitOverride();
    let stderr = '';
    const quiet = { writeErr: (s: string) => void (stderr += s), writeOut: () => undefined };
    p.configureOutput(quiet);
    for (const c of p.commands) (c as Command).exitOverride().configureOutput(quiet);
    expect(() => p.parse(['node', 'crossbook', 'bench', '--topology', 'core+12'])).toThrow();
    expect(stderr).toMatch(/--topology <list>' argument 'core\+12' is invalid\. topology "core\+12": expected single or core\+N/);
    stderr = '';
    expect(() => p.parse(['node', 'crossbook', 'bench', '--sim', 'nearby'])).toThrow();
    expect(stderr).toMatch(/argument 'nearby' is invalid\. Allowed choices are external, embedded/);
  });

  it('deals clients round-robin over the serving processes', () => {
    expect([0, 1, 2].map((i) => share(7, 3, i))).toEqual([3, 2, 2]);
    expect([0, 1].map((i) => share(1, 2, i))).toEqual([1, 0]);
    expect(share(10, 1, 0)).toBe(10);
  });
});

describe('the NATS hop', () => {
  it('keys an update by market and its envelope seq, and skips snapshots and replies', () => {
    expect(updateKey('{"type":"price_update","market_id":"KX-1","platform":"venue_a","yes":{"seq":3},"seq":41,"epoch":9,"ts":1700000000000}')).toBe('KX-1:41');
    expect(updateKey('{"type":"price_update","market_id":"KX-1","snapshot":true,"seq":40,"epoch":9,"ts":1}')).toBeUndefined();
    expect(updateKey('{"type":"subscribed","channel":"prices"}')).toBeUndefined();
  });

  it('pairs the core and edge copies of an update whichever arrives first, for every edge', () => {
    const h = new HopPairs();
    h.fromCore('a:1', 100);
    h.fromEdge('a:1', 103); // edge 1
    h.fromEdge('a:1', 105); // edge 2
    h.fromEdge('a:2', 200); // before the core's copy
    h.fromCore('a:2', 201);
    h.fromEdge('b:1', 300); // never from the core: unpaired
    expect(h.hops).toEqual([3, 5, -1]);
    h.reset();
    h.fromCore('b:1', 400);
    expect(h.hops).toEqual([]);
  });
});

describe('the topology report', () => {
  it('summarizes each topology at its last passing step and at the load all passed', () => {
    const s = summarize(recorded());
    expect(s.map((x) => x.name)).toEqual(['single', 'core+1', 'core+2']);
    for (const x of s) {
      expect(x.pass!.step).toBe(2);
      expect(x.common!.step).toBe(2);
      expect(x.floor).toBe(true);
    }
    expect(s[0]!.pass!.hop).toBeUndefined();
    expect(s[2]!.pass!.hop!.paired).toBeGreaterThan(0);
  });

  it('draws uPlot charts per topology with axes and legends, and every step with each process', () => {
    const html = renderTopologyHtml(recorded());
    expect(html).not.toContain('<svg');
    expect(html.match(/new uPlot\(/g)?.length).toBe(5);
    for (const label of ['WebSocket delivery p99 by topology', 'p99 (ms)', 'NATS hop', 'core+1 p99', '% of one core', '"5 WS + 2 REST","20 WS + 4 REST"'])
      expect(html, label).toContain(label);
    expect(html).toMatch(/nats-server \d+% \/ \d+ MiB/);
    expect(html).toMatch(/edge 2 \d+% \/ \d+ MiB/);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('writes a BENCHMARKS.md section with single as the baseline', () => {
    const r = topologyResults(recorded()) as { sections: { rows: Record<string, unknown>[]; ratio: { metric: string } }[] };
    const rows = r.sections[0]!.rows;
    expect(rows.map((x) => [x['label'], x['baseline']])).toEqual([
      ['single', true],
      ['core+1', false],
      ['core+2', false],
    ]);
    expect(r.sections[0]!.ratio.metric).toBe('rps'); // REST at the load every topology ran
    expect(rows[0]!['clients']).toBe(20);
    expect(rows[0]!['hop']).toBeUndefined();
    expect(rows[1]!['hop']).toMatch(/^-?[\d.]+ \/ -?[\d.]+$/);
  });

  it('says which topologies were skipped and why', () => {
    const r = recorded();
    const skipped: TopologyReport = {
      ...r,
      results: [
        r.results[0]!,
        { topology: { name: 'core+1', edges: 1 }, steps: [], skipped: 'nats-server is not installed (Debian: apt-get install nats-server)' },
      ],
    };
    expect(renderTopologyHtml(skipped)).toContain('core+1: not run: nats-server is not installed');
    const rows = (topologyResults(skipped) as { sections: { rows: Record<string, unknown>[] }[] }).sections[0]!.rows;
    expect(rows[1]!['label']).toMatch(/core\+1 \(not run: nats-server is not installed/);
    expect(summarize(skipped)[0]!.common!.step).toBe(2); // a skipped topology does not lower the common load
  });

  it('compares at the first step when a topology met no objective', () => {
    const r = recorded();
    const failing = { ...r.results[1]!, steps: [{ ...r.results[1]!.steps[0]!, ok: false, broken: ['WebSocket p99 759 ms > 10'] }] };
    const s = summarize({ ...r, results: [r.results[0]!, failing] });
    expect(s[1]!.pass).toBeUndefined();
    expect(s.map((x) => x.common?.step)).toEqual([1, 1]);
  });

  it('keeps the steps of a topology that stopped early and says why', () => {
    const r = recorded();
    const stopped = { ...r.results[2]!, steps: r.results[2]!.steps.slice(0, 1), failed: 'the core (http://127.0.0.1:1) did not answer /metrics' };
    const rep = { ...r, results: [r.results[0]!, stopped] };
    const s = summarize(rep);
    expect(s[1]).toMatchObject({ failed: stopped.failed, floor: false });
    expect(s[1]!.pass!.step).toBe(1);
    expect(renderTopologyHtml(rep)).toContain('stopped: the core (http://127.0.0.1:1) did not answer /metrics');
    const rows = (topologyResults(rep) as { sections: { rows: Record<string, unknown>[] }[] }).sections[0]!.rows;
    expect(rows[1]!['slo']).toMatch(/^stopped: the core/);
  });
});
