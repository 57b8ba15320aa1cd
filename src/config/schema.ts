import { z } from 'zod';
import { trustProxyEntry } from '../server/client-address.js';

/** A slug appears in paths, parameter names and channel names, so it is kept URL- and identifier-safe. */
const slug = z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'must be lowercase letters, digits or _ (start with a letter, at most 32)');

export const PROTOCOLS = ['kalshi', 'polymarket', 'polymarket_us', 'predictit', 'manifold', 'exchange'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

const feeRule = z
  .object({
    when: z
      .object({
        live: z.boolean().optional(),
        leagues: z.array(z.string().min(1)).optional(),
        futures: z.boolean().optional(),
      })
      .strict()
      .optional(),
    rate: z.number().min(0).max(1),
    round: z.enum(['none', 'ceil_cent']).default('none'),
  })
  .strict();

export const feeSchedule = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none'), note: z.string().default('') }).strict(),
  z
    .object({
      kind: z.literal('taker_quadratic'),
      rules: z.array(feeRule).min(1),
      note: z.string().default(''),
    })
    .strict(),
  z.object({ kind: z.literal('profit_share'), rate: z.number().min(0).max(1), note: z.string().default('') }).strict(),
]);
export type FeeSchedule = z.infer<typeof feeSchedule>;
export type FeeRule = z.infer<typeof feeRule>;

export const capabilities = z
  .object({
    orderbook: z.boolean(),
    yesOnlyBook: z.boolean(),
    trades: z.boolean(),
    smartMoney: z.boolean(),
    fadeFinder: z.boolean(),
    urlMatcher: z.boolean(),
    catalog: z.boolean(),
    walletData: z.boolean(),
  })
  .strict();
export type Capabilities = z.infer<typeof capabilities>;

const connection = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('sim') }).strict(),
  z
    .object({
      mode: z.literal('live'),
      rest: z.url(),
      ws: z.url().optional(),
      /** Extra REST bases some protocols need (Polymarket Gamma and data-api). */
      extra: z.record(z.string(), z.url()).optional(),
    })
    .strict(),
]);

export const venueConfig = z
  .object({
    label: z.string().regex(/^venue_[a-h]$/, 'must be one of venue_a … venue_h'),
    slug,
    name: z.string().min(1),
    protocol: z.enum(PROTOCOLS),
    capabilities,
    fees: feeSchedule,
    web: z
      .object({
        hosts: z.array(z.string().min(1)),
        marketUrl: z.string().min(1),
        deepLink: z.string().optional(),
      })
      .strict(),
    /** Market ids are served as `<slug>_<venue id>` (spec 2.2, venue_g and venue_h). */
    idPrefix: z.boolean().default(false),
    freshness: z.object({ catalogMaxAgeSec: z.number().int().positive(), quoteMaxAgeSec: z.number().int().positive() }).strict(),
    connection,
    enabled: z.boolean().default(true),
  })
  .strict();
export type VenueConfig = z.infer<typeof venueConfig>;

export const venueRegistry = z
  .object({ $comment: z.string().optional(), venues: z.array(venueConfig).length(8) })
  .strict()
  .superRefine((r, ctx) => {
    const seen = new Map<string, number>();
    r.venues.forEach((v, i) => {
      for (const key of [`label:${v.label}`, `slug:${v.slug}`]) {
        const prev = seen.get(key);
        if (prev !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['venues', i, key.split(':')[0]!],
            message: `duplicate ${key.replace(':', ' ')} (also venues.${prev})`,
          });
        seen.set(key, i);
      }
    });
  });
export type VenueRegistry = z.infer<typeof venueRegistry>;

/** What owns the public HTTP port (`server.front`). */
export const SERVER_FRONTS = ['guard', 'off'] as const;
/** Where the embedded simulator runs: a child process of the service (as a real venue, the default) or inside it. */
export const SIM_PROCESSES = ['child', 'inline'] as const;
export type SimProcessMode = (typeof SIM_PROCESSES)[number];
export type ServerFront = (typeof SERVER_FRONTS)[number];

/** Whether a string is a web origin (scheme, host, optional port; nothing after). */
function isOrigin(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === s;
  } catch {
    return false;
  }
}

export const appConfig = z
  .object({
    $comment: z.string().optional(),
    server: z
      .object({
        host: z.string().min(1),
        port: z.number().int().min(0).max(65535),
        baseUrl: z.url().nullable(),
        /**
         * guard: the HTTP/1 front (src/server/guard.ts) owns the public port; off: uWS listens on it
         * directly, for deployments behind a proxy that speaks HTTP/1.1 upstream (README: Deployment).
         */
        front: z.enum(SERVER_FRONTS, {
          error: 'must be "guard" (the HTTP/1 front on the public port) or "off" (uWebSockets.js on the public port, behind a proxy speaking HTTP/1.1 to it)',
        }),
        /**
         * Addresses or CIDRs of the proxies in front (nginx): only from these peers are
         * X-Forwarded-For and X-Real-IP believed (src/server/client-address.ts).
         */
        trustProxy: z.array(
          z.string().refine(trustProxyEntry, { error: 'must be an IPv4 or IPv6 address, or one with a /prefix length (127.0.0.1, 10.0.0.0/8, ::1)' }),
          { error: 'must be a list of proxy addresses or CIDRs, e.g. ["127.0.0.1"]' },
        ),
        /** Origins whose browser pages may call the API (CORS, preflight answered); `*` for any. */
        corsOrigins: z
          .array(
            z.string().refine((o) => o === '*' || isOrigin(o), {
              error: 'must be an origin: scheme://host[:port] with no path, such as "https://dash.example.com", or "*" for any origin',
            }),
          )
          .max(100),
      })
      .strict(),
    dataDir: z.string().min(1),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    sim: z
      .object({
        embedded: z.boolean(),
        /**
         * child: the service starts the simulator as a child process and reaches it over loopback, as
         * a real venue (src/sim/child.ts); inline: inside the service's process, for tests that drive
         * its world object.
         */
        process: z.enum(SIM_PROCESSES, {
          error:
            'must be "child" (the simulator in a child process of the service, the default) or "inline" (inside the service\'s process, for tests that drive its world)',
        }),
        seed: z.number().int(),
        ticksPerSecond: z.number().min(0).max(1_000_000),
        /** Trades the simulator keeps per venue for its trade endpoints. */
        tradeLog: z.number().int().min(100),
        /** World size: multiplies games per league and adds seasons of futures (1 ≈ 1,075 markets, +≈ 660 per unit; see src/sim/size.ts). */
        scale: z.number().min(0.1).max(5_000),
        host: z.string().min(1),
        basePort: z.number().int().min(0).max(65535),
      })
      .strict(),
    persistence: z
      .object({
        $comment: z.string().optional(),
        snapshotIntervalMs: z.number().int().min(100),
        /**
         * One-minute candles older than this are removed (hourly); the hour and day candles built
         * from them are kept. At least a day: a late minute rebuilds its day candle from the minutes.
         */
        minuteCandleRetentionDays: z.number().min(1),
        /**
         * Before start reads the data file, walk it in a child process and refuse to start on damage:
         * `state` the databases start reads into memory, `full` every database (history logs too:
         * gigabytes on a large instance), `off` trust the file.
         */
        checkOnStart: z.enum(['state', 'full', 'off'], { error: 'must be "state", "full" or "off"' }).default('state'),
      })
      .strict(),
    /** The capture log (src/capture/): every frame each feed receives, kept in DATA_DIR/capture for replay. */
    capture: z
      .object({
        $comment: z.string().optional(),
        /** false: nothing is captured (the feeds run without a sink). */
        enabled: z.boolean(),
        /** Whole segments (a venue's hour) are dropped once older than `days` or past `bytes` in total, oldest first. */
        retention: z
          .object({
            days: z.number().positive().max(3650),
            bytes: z
              .number()
              .int()
              .min(16 * 1024 * 1024),
          })
          .strict(),
        /** How often the books are checkpointed (normalized books with the sequence number they cover). */
        checkpointIntervalMs: z.number().int().min(1000),
        /** The history index behind `as_of` reads (src/history/): false saves its second pass over every frame. */
        history: z.boolean().optional(),
        /** At shutdown, how long the history index may take to catch up on what the capture holds beyond it and write its open slice (default 10 s: inside the shipped systemd unit's 30 s stop timeout); past it the catch-up stops and an unwritten open slice is dropped. */
        historyCloseMs: z.number().int().min(0).max(3_600_000).optional(),
        /** How long an `as_of` read of a moment the history index may not have reached waits for it to catch up (default 5 s); past it the read answers 503 `as_of.index_behind` with Retry-After. 0: never wait. */
        asOfWaitMs: z.number().int().min(0).max(600_000).optional(),
        /** The normalized cache behind GET /replay (src/capture/normcache.ts), on by default: written on the history index's thread from the events it maps (needs `history`); off, /replay maps every window from the frames. */
        replayCache: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** What is held in memory beyond current state (older trades are read from LMDB). */
    memory: z.object({ recentTrades: z.number().int().min(1_000).max(10_000_000) }).strict(),
    /** The WebSocket's in-band login window and the lifetime of POST /ws-token's tokens (src/ws/auth.ts). */
    websocket: z
      .object({
        /** A connection opened without a key is closed (4002) unless it logs in within this. */
        authTimeoutMs: z.number().int().min(100).max(60_000),
        /** A token opens one connection within this many seconds. */
        tokenTtlSec: z.number().int().min(10).max(3_600),
        /** Market ids a key's connections may subscribe or unsubscribe together per second, and at once (src/ws/key-budget.ts). */
        keyIdsPerSecond: z.number().int().min(1),
        keyIdsBurst: z.number().int().min(1),
        /** WebSocket replays (src/ws/replay-session.ts) running at once on this server, all keys together; 0 turns them off. */
        replayMaxConcurrent: z.number().int().min(0).max(64).default(2),
      })
      .strict()
      .default({ authTimeoutMs: 5_000, tokenTtlSec: 300, keyIdsPerSecond: 2_000, keyIdsBurst: 10_000, replayMaxConcurrent: 2 }),
    api: z
      .object({
        /** /trades: window of an unfiltered request without start_time (spec 4.16 rule 2). */
        tradesDefaultWindowHours: z.number().positive(),
        /** Trades older than this are pruned: the moving retention boundary (rule 1). */
        tradesRetentionDays: z.number().positive(),
        /** Feature flag of rule 4: 422 history_outside_hot_window instead of clamping. */
        tradesStrictHotWindow: z.boolean(),
        /** Where the 422 points for older history. */
        historicalDataUrl: z.url().nullable(),
      })
      .strict(),
    /** Wallet scoring and alert thresholds (src/signals/wallets.ts, alerts.ts); a missing key keeps the built-in default. */
    signals: z
      .object({
        $comment: z.string(),
        wallets: z
          .object({
            horizonMs: z.number().int().min(1_000),
            goodMoveUnits: z.number().int().min(1).max(10_000),
            smartMinEntries: z.number().int().min(1),
            smartMinHitRate: z.number().min(0).max(1),
            fadeMinEntries: z.number().int().min(1),
            fadeMinMissRate: z.number().min(0).max(1),
            warmMinScored: z.number().int().min(0),
            /** Minute volume buckets kept per token (venue_b volume endpoints read up to this far back). */
            volumeRetentionMs: z.number().int().min(60_000),
            /** Smart-wallet entries kept for Smart Activity. */
            smartFlowMs: z.number().int().min(60_000),
            /** Positions held in memory over all wallets; past it the least recently traded is evicted. */
            maxPositions: z.number().int().min(1),
          })
          .partial()
          .strict(),
        alerts: z
          .object({
            smartMinUsd: z.number().min(0),
            fadeMinUsd: z.number().min(0),
            insiderMinMoveUnits: z.number().int().min(1).max(10_000),
            insiderMinUsd: z.number().min(0),
            insiderMinSizeRatio: z.number().min(0),
            insiderPriorMinEntries: z.number().int().min(0),
            insiderPriorMinHitRate: z.number().min(0).max(1),
            insiderFreshMaxEntries: z.number().int().min(0),
            insiderFreshMinUsd: z.number().min(0),
            insiderFreshMinShare: z.number().min(0).max(1),
            anonymousMinUsd: z.number().min(0),
            hookMinCostUsd: z.number().min(0),
            hookMinGainUnits: z.number().int().min(1).max(10_000),
            hookMinSpikeUnits: z.number().int().min(1).max(10_000),
            hookMinFraction: z.number().min(0).max(1),
            hookWindowMs: z.number().int().min(1_000),
            hookImpliedExits: z.boolean(),
            cooldownMs: z.number().int().min(0),
          })
          .partial()
          .strict(),
      })
      .partial()
      .strict()
      .optional(),
    /** Opportunity lifecycle (src/signals/lifecycle/): how long closed ones are kept, how many are tracked open. */
    lifecycle: z
      .object({
        $comment: z.string().optional(),
        retentionHours: z.number().positive(),
        maxOpen: z.number().int().min(1),
        pruneIntervalMs: z.number().int().min(1_000),
      })
      .strict()
      .optional(),
    /** Webhook delivery (src/webhooks/). */
    webhooks: z
      .object({
        /** Deliveries waiting per endpoint; past it the oldest is dropped and counted. */
        queueSize: z.number().int().min(1),
        /** Deliveries in flight per endpoint. */
        concurrency: z.number().int().min(1).max(64),
        timeoutMs: z.number().int().min(100),
        /** Attempts per delivery, the first included. */
        maxAttempts: z.number().int().min(1).max(20),
        /** Retry n waits backoffBaseMs × 2^(n−1), at most backoffMaxMs. */
        backoffBaseMs: z.number().int().min(1),
        backoffMaxMs: z.number().int().min(1),
        /** Deliver to link-local and cloud metadata addresses (refused by default: they reach the host's credentials). */
        allowLinkLocal: z.boolean(),
        /** How often the endpoint table is re-read (the CLI writes it beside the running server). */
        pollMs: z.number().int().min(50),
      })
      .strict()
      .optional(),
    /** Scaling out on NATS JetStream (src/cluster/): the role of this process and the stream's window. */
    cluster: z
      .object({
        $comment: z.string().optional(),
        /** single: one process, no NATS; core: feeds + publisher; edge: follows a core, serves clients. */
        role: z.enum(['single', 'core', 'edge']),
        natsUrl: z.string().min(1).optional(),
        stream: z.string().regex(/^[A-Za-z0-9_-]+$/),
        bucket: z.string().regex(/^[A-Za-z0-9_-]+$/),
        /** Replay window of the stream: age and count, whichever is reached first. */
        maxAgeMs: z.number().int().min(1_000),
        maxMsgs: z.number().int().min(1_000),
        /** How often the core stores its snapshot for edges that start. */
        snapshotIntervalMs: z.number().int().min(100),
        /** How long an edge waits for the core's first snapshot. */
        bootstrapTimeoutMs: z.number().int().min(100),
        /** A core's buffer while NATS is away (messages; oldest dropped past it). Default 100,000. */
        publishBuffer: z.number().int().min(1).optional(),
      })
      .strict()
      .optional(),
    ingest: z
      .object({
        reconnectMinMs: z.number().int().positive(),
        reconnectMaxMs: z.number().int().positive(),
        heartbeatMs: z.number().int().positive(),
        catalogRefreshMs: z.number().int().positive(),
        pollMs: z.number().int().positive(),
      })
      .strict(),
  })
  .strict();
export type AppConfigFile = z.infer<typeof appConfig>;

/** The whole validated configuration the service runs with. */
export interface Config extends AppConfigFile {
  readonly venues: readonly VenueConfig[];
}
