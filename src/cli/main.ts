import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, ConfigError } from '../config/load.js';
import { ListenError } from '../server/guard.js';
import type { Config } from '../config/schema.js';
import { log, setLogLevel } from '../core/log.js';
import { PersistenceError } from '../persist/store.js';
import { SimStartError } from '../sim/child.js';
import { PROTOCOL_MODULES } from '../venues/index.js';
import { feesReport } from './arb.js';
import { addCapture } from './capture.js';
import { addGroups } from './groups.js';
import { dataCommand } from './data.js';
import { keysCommand } from './keys.js';
import { matchCommand } from './match.js';
import { addWebhooks } from './webhooks.js';
import { addMcp } from './mcp.js';
import { normalizeFile } from './normalize.js';
import type { ReplayCliOptions } from './replay.js';
import type { BacktestCliOptions } from './backtest.js';
import { writeExternalSimConfig } from './sim.js';
import type { Profile } from '../capacity/profiles.js';
import { parseTopologies, type Topology } from '../capacity/topology-spec.js';

interface ServeOptions {
  port?: string;
  dataDir?: string;
  seed?: string;
  rate?: string;
  venueNames?: string;
  role?: string;
  nats?: string;
  record?: string;
}

function config(opts: ServeOptions): Config {
  const overrides: Record<string, unknown> = {};
  if (opts.port !== undefined) overrides['server'] = { port: Number(opts.port) };
  if (opts.dataDir !== undefined) overrides['dataDir'] = opts.dataDir;
  if (opts.role !== undefined || opts.nats !== undefined)
    overrides['cluster'] = { ...(opts.role !== undefined ? { role: opts.role } : {}), ...(opts.nats !== undefined ? { natsUrl: opts.nats } : {}) };
  if (opts.seed !== undefined || opts.rate !== undefined)
    overrides['sim'] = {
      ...(opts.seed !== undefined ? { seed: Number(opts.seed) } : {}),
      ...(opts.rate !== undefined ? { ticksPerSecond: Number(opts.rate) } : {}),
    };
  const c = loadConfig({ overrides, ...(opts.venueNames !== undefined ? { venueNames: opts.venueNames } : {}) });
  setLogLevel(c.logLevel);
  return c;
}

async function serve(opts: ServeOptions): Promise<void> {
  const { startService } = await import('../service.js');
  const c = config(opts);
  const { FileRecording } = await import('../replay/input.js');
  const recording = opts.record === undefined ? undefined : new FileRecording(opts.record);
  const svc = await startService(c, { tap: recording });
  const lines = [
    `crossbook is running`,
    `  API:     ${svc.url}/api/v2   (status: ${svc.url}/api/v2/status)`,
    `  dashboard: ${svc.url}/${svc.demoKey ? `#key=${svc.demoKey}` : ''}`,
    ...(svc.demoKey ? [`  demo key: ${svc.demoKey}   (try: curl -H 'X-API-Key: ${svc.demoKey}' ${svc.url}/api/v2/status)`] : []),
    ...(c.cluster && c.cluster.role !== 'single' ? [`  role:    ${c.cluster.role} on NATS ${c.cluster.natsUrl ?? process.env['NATS_URL']}`] : []),
    `  data:    ${svc.persistence.dir}${svc.restored.markets ? ` (restored ${svc.restored.markets} markets)` : ''}`,
    `  venues:  ${c.venues
      .filter((v) => v.enabled)
      .map((v) => `${v.slug} (${v.protocol}, ${v.connection.mode})`)
      .join(', ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ sig }, 'shutting down: snapshotting state');
    svc.close().then(
      () => {
        recording?.close();
        process.exit(0);
      },
      (e: unknown) => {
        log.error({ err: String(e) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

async function sim(opts: { seed?: string; rate?: string; basePort?: string; configOut?: string }): Promise<void> {
  const { startSim } = await import('../sim/runner.js');
  const c = config(opts);
  const cfg: Config = { ...c, sim: { ...c.sim, basePort: opts.basePort !== undefined ? Number(opts.basePort) : c.sim.basePort || 9100 } };
  const s = await startSim(cfg);
  // Written before the banner, so a script that waits for the banner finds the file.
  if (opts.configOut !== undefined)
    writeExternalSimConfig(
      opts.configOut,
      [...s.servers].map(([label, srv]) => [label, srv.endpoints] as const),
    );
  process.stdout.write(`crossbook venue simulator (seed ${cfg.sim.seed}, ${cfg.sim.ticksPerSecond} ticks/s)\n`);
  for (const [label, srv] of s.servers)
    process.stdout.write(
      `  ${label} (${srv.venue.protocol}): rest ${srv.endpoints.rest}${srv.endpoints.ws ? `  ws ${srv.endpoints.ws}` : ''}${srv.endpoints.extra ? `  ${JSON.stringify(srv.endpoints.extra)}` : ''}\n`,
    );
  const stop = (): void => void s.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Builds the command tree (exported for tests). */
export function program(): Command {
  const p = new Command('crossbook').description('Self-hostable prediction-market intelligence service (Market Aggregation API v2)').showHelpAfterError();
  for (const add of [addServe, addSim, addNormalize, addReplay, addBacktest, addMatch, addBench, addSoak, addArb, addKeys, addData, addWebhooks, addMcp])
    add(p);
  addGroups(p, config, out, err);
  addCapture(p, config, err);
  return p;
}

const out = (s: string): void => void process.stdout.write(`${s}\n`);
const err = (s: string): void => void process.stderr.write(`${s}\n`);

function addServe(p: Command): void {
  p.command('serve')
    .description('run the service (embedded simulator on the default config)')
    .option('--port <n>', 'HTTP port (env PORT)')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .option('--seed <n>', 'simulator seed (env SIM_SEED)')
    .option('--rate <n>', 'simulator book changes per second (env SIM_RATE)')
    .option('--role <role>', 'single (one process, no NATS), core (feeds + publisher to NATS) or edge (follows a core); README: Scaling out')
    .option('--nats <url>', 'NATS server of the core and edges (env NATS_URL)')
    .option('--record <file>', 'write every event applied and every flush of the turn to this NDJSON file, for `crossbook replay --input`')
    .option(
      '--venue-names <preset>',
      'venue names: neutral (venue_a…venue_h) or hosted (kalshi, polymarket, …; env CROSSBOOK_VENUE_NAMES); see config/venue-names.json',
    )
    .action(serve);
}

function addSim(p: Command): void {
  p.command('sim')
    .description('run only the venue simulator, each venue on its own loopback port')
    .option('--seed <n>', 'world seed')
    .option('--rate <n>', 'book changes per second')
    .option('--base-port <n>', 'first port (venue_a); the others follow; 0 picks free ports', '9100')
    .option(
      '--config-out <file>',
      'write a CROSSBOOK_CONFIG file that points `crossbook serve` at this simulator (venues live at its URLs, sim.embedded false)',
    )
    .action(sim);
}

function addNormalize(p: Command): void {
  p.command('normalize')
    .description('run a file of raw venue frames (JSON array or JSON lines) through the adapters and print normalized events as JSON lines')
    .addOption(new Option('--protocol <name>', 'wire protocol of the frames').choices(Object.keys(PROTOCOL_MODULES)).makeOptionMandatory())
    .option('--book', 'print the rebuilt books instead: {instrument: {bids, asks}}, cents, best first')
    .option('--venue <label>', 'venue whose registry entry to use (default: the first speaking the protocol)')
    .option('--markets <file>', "the venue's market list (polymarket: a Gamma /markets response), read first so tokens resolve to markets and YES/NO")
    .argument('<file>')
    .action((file: string, o: { protocol: string; book?: boolean; venue?: string; markets?: string }) => {
      process.exitCode = normalizeFile(loadConfig(), o.protocol, file, o, out, err);
    });
}

function addReplay(p: Command): void {
  p.command('replay')
    .description(
      'run a recording (serve --record) through the pipelines on a virtual clock and write events.ndjson, opportunities.ndjson and books.ndjson to --out',
    )
    .option(
      '--input <file>',
      'a recording (serve --record: NDJSON of {type:"event",seq,event} | {type:"flush",seq,at}); without it, the capture log of DATA_DIR',
    )
    .option('--data-dir <dir>', 'data directory whose capture log is replayed (env DATA_DIR)')
    .option('--out <dir>', 'where the output files go')
    .option('--from <time>', 'first receive time replayed (ms since the epoch or ISO 8601)')
    .option('--to <time>', 'replay stops before this receive time')
    .option('--venues <list>', 'comma-separated venues (slugs or labels) whose events are replayed')
    .option('--speed <n>', 'N× the recorded pace, or max', 'max')
    .action(async (o: ReplayCliOptions) => {
      const c = config(o);
      setLogLevel(c.logLevel);
      const { replayCommand } = await import('./replay.js');
      try {
        const r = await replayCommand(c, o, log);
        out(
          `replayed ${r.events} events and ${r.flushes} flushes: ${r.closed.length} closed and ${r.open.length} open opportunities, ${r.books.length} books → ${o.out}`,
        );
      } catch (e) {
        err(`crossbook replay: ${(e as Error).message}`);
        process.exitCode = 2;
      }
    });
}

function addBacktest(p: Command): void {
  p.command('backtest')
    .description(
      'replay a window with a simulated taker acting on every opportunity the engine opened, latency ms after it, against the recorded books (depth and taker fees); writes report.json and report.html to --out. Input: the capture log of DATA_DIR (--data-dir), or --input, a recording of `serve --record`',
    )
    .option(
      '--input <file>',
      'NDJSON of replay items ({type:"event",seq,event} | {type:"flush",seq,at}), as serve --record writes them; without it, the capture log of DATA_DIR',
    )
    .option('--data-dir <dir>', 'data directory whose capture log is backtested (env DATA_DIR)')
    .option('--from <time>', 'first signal traded (ms since the epoch or ISO 8601); earlier items only warm the books up')
    .option('--to <time>', 'the replay stops after this receive time')
    .option('--strategy <kind>', 'arb or ev', 'arb')
    .option('--min-roi <pct>', 'skip opportunities opening below this net ROI percent', '0')
    .option('--platforms <list>', 'comma-separated venues (slugs or labels): only opportunities whose every leg is on one')
    .option('--latency-ms <list>', 'the taker acts this long after the signal; a comma-separated list runs the sweep in one pass', '250')
    .option('--max-usd <n>', 'dollars put on one opportunity at most', '500')
    .option('--fees <model>', "venue-schedule (each venue's taker fee) or none", 'venue-schedule')
    .option('--out <dir>', 'report directory', 'backtest-report')
    .action(async (o: BacktestCliOptions) => {
      const c = config(o);
      setLogLevel(c.logLevel);
      const { backtestCommand } = await import('./backtest.js');
      try {
        const r = await backtestCommand(c, o, log);
        out(`replayed ${r.events} events → ${r.out}/report.json, ${r.out}/report.html`);
        for (const l of r.lines) out(l);
      } catch (e) {
        err(`crossbook backtest: ${(e as Error).message}`);
        process.exitCode = 2;
      }
    });
}

function addMatch(p: Command): void {
  p.command('match')
    .description(
      'group a JSON array of market records {platform, market_id, title, event_title?, outcome?, close_time?} into cross-venue match groups (the live matcher, offline)',
    )
    .argument('<file>')
    .action((file: string) => {
      process.exitCode = matchCommand(file, out, err);
    });
}

function addBench(p: Command): void {
  p.command('bench')
    .description('capacity planning: run the service under stepped load until an objective breaks; writes an HTML + JSON report')
    .option('--profile <name>', 'load profile from config/bench-profiles.json (trading, dashboard, rest, topology, smoke, scale)', 'trading')
    .option('--out <dir>', 'report directory', 'bench-report')
    .option('--max-minutes <n>', 'stop stepping after this long', '10')
    .option('--markets <n[,n…]>', 'world size: the simulator lists at least n markets (sim.scale); with --profile scale, the sizes of the study', '')
    .option('--no-results', 'do not write bench/results/capacity-<profile>.json (BENCHMARKS.md)')
    .addOption(
      new Option(
        '--sim <where>',
        'the simulator in its own process (crossbook sim, as a real venue: the service CPU is its own) or embedded in the service (--profile scale keeps it embedded: it prices the simulator with the rest)',
      )
        .choices(['external', 'embedded'])
        .default('external'),
    )
    .option(
      '--topology <list>',
      'compare deployments in one run: single, core+N (nats-server, a core and N edges; README: Scaling out), e.g. single,core+1,core+2',
      topologyArg,
    )
    .action(async (o: BenchOptions, cmd: Command) => {
      const { loadProfile } = await import('../capacity/profiles.js');
      const profile = loadProfile(o.profile);
      if (o.topology) {
        if (o.profile === 'scale' || o.markets) cmd.error('error: --topology runs a stepped profile (trading, dashboard, rest, smoke), without --markets');
        await benchTopologies(o, o.topology, profile);
        return;
      }
      const sizes = o.markets ? o.markets.split(',').map(Number) : [];
      if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 10_000_000))
        throw new Error(`--markets takes whole numbers from 1 to 10,000,000, got "${o.markets}"`);
      const command = `crossbook bench --profile ${o.profile}${o.markets ? ` --markets ${o.markets}` : ''}${o.sim === 'embedded' ? ' --sim embedded' : ''}`;
      if (o.profile === 'scale') {
        const { runScaleCommand } = await import('../capacity/scale-command.js');
        await runScaleCommand({ profile, sizes, outDir: o.out, maxMinutes: Number(o.maxMinutes), results: o.results, command, log: out });
        return;
      }
      if (sizes.length > 1) throw new Error('--markets takes one size except with --profile scale');
      const { runBench } = await import('../capacity/run.js');
      await runBench({
        profileName: o.profile,
        profile,
        outDir: o.out,
        maxMinutes: Number(o.maxMinutes),
        results: o.results && o.profile !== 'smoke' && sizes.length === 0,
        command,
        markets: sizes[0],
        sim: o.sim,
        log: out,
      });
    });
}

interface BenchOptions {
  profile: string;
  out: string;
  maxMinutes: string;
  markets: string;
  results: boolean;
  sim: 'external' | 'embedded';
  topology?: Topology[];
}

/** Parses --topology for commander: a bad list is a usage error naming what is accepted. */
function topologyArg(v: string): Topology[] {
  try {
    return parseTopologies(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

async function benchTopologies(o: BenchOptions, topologies: Topology[], profile: Profile): Promise<void> {
  const { runTopologies } = await import('../capacity/topology.js');
  const { writeTopologyReport, writeTopologyResults } = await import('../capacity/topology-report.js');
  const command = `crossbook bench --profile ${o.profile} --topology ${topologies.map((t) => t.name).join(',')}`;
  const r = await runTopologies({ profileName: o.profile, profile, topologies, maxMinutes: Number(o.maxMinutes), command, log: out });
  const files = writeTopologyReport(o.out, r);
  if (o.results && o.profile !== 'smoke') out(`results: ${writeTopologyResults(r)}`);
  out(`report: ${files.html} (data: ${files.json})`);
}

function addSoak(p: Command): void {
  p.command('soak')
    .description('run the embedded default under steady load for a while and report memory, event-loop lag and p99 over time (npm run soak)')
    .option('--minutes <n>', 'how long (env SOAK_MINUTES)', process.env['SOAK_MINUTES'] ?? '30')
    .option('--out <dir>', 'report directory', 'bench-report')
    .option('--no-results', 'do not write bench/results/soak.json (BENCHMARKS.md)')
    .option('--production-windows', "keep the service's 48 h / 24 h / 100,000-trade memory windows (they then fill for days, not within the run)")
    .action(async (o: { minutes: string; out: string; results: boolean; productionWindows?: boolean }) => {
      const { runSoak } = await import('../capacity/soak.js');
      const minutes = Number(o.minutes);
      if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, got "${o.minutes}"`);
      await runSoak({
        minutes,
        sampleSeconds: minutes < 5 ? 15 : 30,
        ticksPerSecond: 1000,
        clients: 200,
        subscriptions: 20,
        restRate: 200,
        scaledWindows: o.productionWindows !== true,
        outDir: o.out,
        results: o.results,
        command: `crossbook soak --minutes ${minutes}`,
        log: out,
      });
    });
}

function addArb(p: Command): void {
  p.command('arb')
    .description('arbitrage tools')
    .option('--fees', 'print the fee schedule in force per venue')
    .action((o: { fees?: boolean }) => {
      if (!o.fees) {
        err('crossbook arb: nothing to do; try --fees (live opportunities are at GET /api/v2/arb)');
        process.exitCode = 2;
        return;
      }
      out(feesReport(loadConfig()));
    });
}

function addKeys(p: Command): void {
  const keys = p.command('keys').description('manage API keys (works while the server runs, same DATA_DIR)');
  keys
    .command('create')
    .description('create a key; prints it as the last line')
    .requiredOption('--plan <plan>', 'free, dev, pro or enterprise')
    .option('--account <name>', 'account name', 'default')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: { plan: string; account: string; dataDir?: string }) => {
      process.exitCode = await keysCommand(config(o), 'create', o, out, err);
    });
  keys
    .command('list')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: { dataDir?: string }) => {
      process.exitCode = await keysCommand(config(o), 'list', {}, out, err);
    });
  keys
    .command('revoke')
    .argument('<key-or-id>')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (key: string, o: { dataDir?: string }) => {
      process.exitCode = await keysCommand(config(o), 'revoke', { key }, out, err);
    });
  keys
    .command('plan')
    .description('move a key to another plan (open WebSocket connections drop what the new plan does not include)')
    .argument('<key-or-id>')
    .argument('<plan>', 'free, dev, pro or enterprise')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (key: string, plan: string, o: { dataDir?: string }) => {
      process.exitCode = await keysCommand(config(o), 'plan', { key, plan }, out, err);
    });
}

function addData(p: Command): void {
  const data = p.command('data').description('check, repair and back up the data file (DATA_DIR/crossbook.mdb)');
  const dir = '--data-dir <dir>';
  const dirHelp = 'data directory (env DATA_DIR)';
  data
    .command('check')
    .description('walk every database and list any damage (exit 1 if damaged)')
    .option(dir, dirHelp)
    .action(async (o: { dataDir?: string }) => {
      process.exitCode = await dataCommand(config(o).dataDir, 'check', {}, out, err);
    });
  data
    .command('repair')
    .description('copy what can still be read into a new file and keep the damaged one beside it (stop the service first)')
    .option(dir, dirHelp)
    .action(async (o: { dataDir?: string }) => {
      process.exitCode = await dataCommand(config(o).dataDir, 'repair', {}, out, err);
    });
  data
    .command('backup')
    .description('write a consistent copy of the data file into DIR while the service runs')
    .argument('<dir>')
    .option('--compact', 'compact while copying (slower, smaller)')
    .option(dir, dirHelp)
    .action(async (to: string, o: { dataDir?: string; compact?: boolean }) => {
      process.exitCode = await dataCommand(config(o).dataDir, 'backup', { dir: to, compact: o.compact ?? false }, out, err);
    });
}

/** Entry point of bin/crossbook.js. Configuration, data, port and simulator-start errors print one clear line and exit 2. */
export async function run(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (e) {
    if (e instanceof ConfigError || e instanceof PersistenceError || e instanceof ListenError || e instanceof SimStartError) {
      process.stderr.write(`crossbook: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}
