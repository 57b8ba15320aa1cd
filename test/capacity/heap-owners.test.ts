import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { heapOwners, LARGE_OBJECT_BYTES } from '../../src/capacity/heap-owners.js';

const dir = mkdtempSync(join(tmpdir(), 'cb-heap-owners-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A heap snapshot of a bare Node process holding one instance of a class the breakdown knows
 * (SimWorld, the simulator) with a large array and a large Map, and a small array.
 */
function snapshot(): string {
  const file = join(dir, 'world.heapsnapshot');
  const program = `
    class SimWorld {
      constructor() {
        this.levels = new Array(50000).fill(1.5);
        this.byId = new Map();
        for (let i = 0; i < 20000; i++) this.byId.set('m' + i, i);
        this.small = [1, 2, 3];
      }
    }
    class Capture {
      constructor() {
        this.pending = new Array(40000).fill('frame');
      }
    }
    globalThis.world = new SimWorld();
    globalThis.capture = new Capture();
    require('node:v8').writeHeapSnapshot(${JSON.stringify(file)});
  `;
  const r = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return file;
}

describe('heapOwners', () => {
  it('lists the large objects with their component and the path that holds them', () => {
    const r = heapOwners(snapshot(), true);
    const sim = r.large!.filter((o) => o.component === 'simulator');
    expect(sim.every((o) => o.bytes >= LARGE_OBJECT_BYTES)).toBe(true);
    const levels = sim.find((o) => o.holder.endsWith('object SimWorld.levels → object Array.elements'));
    expect(levels).toMatchObject({ label: 'array' });
    expect(levels!.bytes).toBeGreaterThanOrEqual(50000 * 8);
    // An array's elements and a Map's hash table are the large objects, each reached through its owner.
    expect(sim.some((o) => o.holder.endsWith('object SimWorld.byId → object Map.table'))).toBe(true);
    expect(sim.some((o) => o.holder.includes('.small'))).toBe(false);
    // Largest first; the breakdown without detail lists none.
    expect(r.large!.map((o) => o.bytes)).toEqual([...r.large!.map((o) => o.bytes)].sort((a, b) => b - a));
    expect(heapOwners(snapshot(), false).large).toBeUndefined();
  });

  it("prices the capture writer's buffers as their own component", () => {
    const r = heapOwners(snapshot(), true);
    expect(r.large!.some((o) => o.component === 'capture' && o.holder.endsWith('object Capture.pending → object Array.elements'))).toBe(true);
    expect(r.byComponent.capture).toBeGreaterThanOrEqual(40000 * 8);
  });
});
