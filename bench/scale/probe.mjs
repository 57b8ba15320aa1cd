// The acceptance check of issue 21 (SYNTHETIC world): node bench/scale/probe.mjs SCALE [settleSec]
// starts the built service (npx tsc -p . first) with CROSSBOOK__sim__scale=SCALE on a fresh DATA_DIR,
// prints the time to listen, to /status ok and to every venue live, then after settleSec (default 60)
// the RSS (anon/file), heap, and what /markets reports. NODE_ARGS passes node options to the service.
// The simulator runs as the service's child (sim.process child, the default): its RSS is printed on a
// line of its own; the service's RSS is the headline figure. CROSSBOOK__sim__process=inline measures both
// in one process.
// SNAPSHOT=1 then writes a heap snapshot of it and prints its bytes by component and, within each,
// by constructor (dist/src/capacity/heap-owners.js).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
const root = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'crossbook-probe-'));
const env = { ...process.env, BASE_URL: '', CROSSBOOK__sim__scale: process.argv[2], DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error' };
const t0 = performance.now();
const sec = () => ((performance.now() - t0) / 1000).toFixed(1);
const snapDir = mkdtempSync(join(tmpdir(), 'crossbook-probe-heap-'));
const snapArgs = process.env.SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : [];
const child = spawn(process.execPath, [...snapArgs, ...(process.env.NODE_ARGS ? process.env.NODE_ARGS.split(' ') : []), `${root}/bin/crossbook.js`, 'serve'], {
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const rss = (pid = child.pid) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(s)[1]) / 1024);
};
// The simulator child of the service, if any (Linux: /proc/<pid>/task/<pid>/children).
const simPid = () => {
  try {
    const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return kids.find((k) => readFileSync(`/proc/${k}/cmdline`, 'utf8').includes('child-entry'));
  } catch {
    return undefined;
  }
};
let simPeak = 0;
const simRss = () => {
  const pid = simPid();
  const r = pid ? rss(pid) : 0;
  simPeak = Math.max(simPeak, r);
  return r;
};
const rssParts = (pid = child.pid) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const g = (k) => Math.round(Number(new RegExp(k + ':\\s+(\\d+)').exec(s)[1]) / 1024);
  return `anon ${g('RssAnon')} file ${g('RssFile')} shmem ${g('RssShmem')}`;
};
const url = await new Promise((res) =>
  createInterface({ input: child.stdout }).on('line', (l) => {
    const m = /API:\s+(\S+)\/api\/v2/.exec(l);
    if (m) res(m[1]);
  }),
);
console.log(`listening after ${sec()} s, rss ${rss()} MiB`);
let ok = false,
  live = false,
  peak = 0;
for (let i = 0; i < 1200 && !live; i++) {
  await new Promise((r) => setTimeout(r, 500));
  peak = Math.max(peak, rss());
  simRss();
  const st = await (await fetch(`${url}/api/v2/status`)).json().catch(() => undefined);
  if (!st) continue;
  if (!ok && st.status === 'ok') {
    ok = true;
    console.log(`/status ok after ${sec()} s, rss ${rss()} MiB`);
  }
  const ps = Object.values(st.platforms ?? {});
  if (ps.length && ps.every((p) => p.feed_status === 'ok')) {
    live = true;
    console.log(`all venues live after ${sec()} s, rss ${rss()} MiB; active markets ${ps.reduce((a, p) => a + p.active_markets, 0)}`);
  }
}
const key = spawnSync(process.execPath, [`${root}/bin/crossbook.js`, 'keys', 'create', '--plan', 'enterprise', '--account', 'probe', '--data-dir', dataDir], {
  env,
  encoding: 'utf8',
})
  .stdout.trim()
  .split('\n')
  .at(-1);
await new Promise((r) => setTimeout(r, 1500));
const settle = Number(process.argv[3] ?? 60);
for (let i = 0; i < settle; i++) {
  await new Promise((r) => setTimeout(r, 1000));
  peak = Math.max(peak, rss());
  simRss();
}
const m = await (await fetch(`${url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': key } })).json();
const met = await (await fetch(`${url}/api/v2/metrics`, { headers: { 'x-api-key': key } })).text();
const mv = (n) => Math.round(Number(new RegExp('^' + n + ' (\\S+)', 'm').exec(met)?.[1]) / 2 ** 20);
console.log(
  `heap used ${mv('nodejs_heap_size_used_bytes')} total ${mv('nodejs_heap_size_total_bytes')} external ${mv('nodejs_external_memory_bytes')} MiB; rss ${rssParts()}`,
);
console.log(
  `after ${settle} s more: rss ${rss()} MiB (peak ${peak}), /markets total_count ${m.total_count}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
const sp = simPid();
console.log(
  sp ? `sim child (pid ${sp}, not in the figure above): rss ${simRss()} MiB (peak ${simPeak}); rss ${rssParts(sp)}` : 'sim child: none (sim.process inline)',
);
if (process.env.SNAPSHOT) {
  child.kill('SIGUSR2');
  let size = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 2000));
    const f = readdirSync(snapDir).find((n) => n.endsWith('.heapsnapshot'));
    const s = f ? statSync(join(snapDir, f)).size : -1;
    if (s > 0 && s === size) break;
    size = s;
  }
  const { heapOwners } = await import(`${root}/dist/src/capacity/heap-owners.js`);
  const f = readdirSync(snapDir).find((n) => n.endsWith('.heapsnapshot'));
  const r = heapOwners(join(snapDir, f), true);
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  for (const [c, b] of Object.entries(r.byComponent)) {
    const top = r.byName[c].slice(0, 8).map(([n, x]) => `${n} ${mib(x)}`);
    console.log(`${c.padEnd(10)} ${mib(b).padStart(7)} MiB ${String(Math.round(b / m.total_count)).padStart(5)} B/market  (${top.join('; ')})`);
  }
}
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
spawnSync('rm', ['-rf', dataDir, snapDir]);
