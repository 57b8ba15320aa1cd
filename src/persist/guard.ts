import { closeSync, fstatSync, openSync, statfsSync, statSync, writeSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import type { HoldableGate } from './opening.js';

/**
 * Why LMDB must never see a failed write: lmdb-js 3.x (`mdb_page_flush` in its patched mdb.c)
 * formats the message of a failed `pwrite` (ENOSPC, EFBIG, EIO) with `sprintf` into a 100-byte
 * `malloc`, on the writer thread, into a process-global pointer that the main thread reads and
 * clears without a lock. The message reaches 134 bytes (long file offsets, multi-page iovecs,
 * uninitialised iovec lengths), so a failed write overruns the heap and the process later aborts
 * in malloc ("corrupted top size", "invalid next size"). Retrying or stopping after the first
 * error is too late: the first error may already corrupt the heap.
 *
 * So LMDB only ever writes into space that is already allocated:
 * - the data file carries an allocated, zero-filled tail of `reserveBytes` past LMDB's last page
 *   (LMDB appends new pages there and rewrites freed pages inside the file, and overwriting
 *   allocated blocks needs no new space on tmpfs, ext4 or xfs; copy-on-write filesystems such as
 *   btrfs or ZFS allocate on every write, so there only the free-space margin below holds);
 * - the tail is topped up (under LMDB's write lock, so no page write races the zero fill) when
 *   less than half of it is left, and a top-up that fails pauses writing: the remaining half is
 *   room for the batches already queued;
 * - writing also pauses when the filesystem has less than `minFreeBytes` free (statfs), so the
 *   service stops before the disk is full and not at it.
 * While paused, every write through a guarded database is dropped (async) or refused (sync);
 * `check()` resumes once there is room again (hysteresis: twice the margin).
 */
export interface GuardOptions {
  /** Allocated room kept past LMDB's last page (default 8 MB). */
  readonly reserveBytes?: number;
  /** Pause writing when the filesystem has less free than this (default 2 MB). */
  readonly minFreeBytes?: number;
  /** How often the tail and free space are checked (ms, default 200). */
  readonly checkMs?: number;
}

/** The state of the write gate, for /status and logs. */
export interface GuardState {
  readonly paused: boolean;
  readonly reason: string | undefined;
  /** Writes dropped or refused while paused. */
  readonly dropped: number;
}

const CHUNK = 1024 * 1024;
const ZEROS = Buffer.alloc(CHUNK);

/** Writes the gate drops (async: resolved false) or refuses (sync: thrown) while paused. */
const ASYNC_WRITES = new Set(['put', 'remove', 'clearAsync', 'drop', 'transaction', 'childTransaction', 'ifVersion', 'ifNoExists', 'batch']);
const SYNC_WRITES = new Set(['putSync', 'removeSync', 'transactionSync', 'clearSync', 'dropSync']);

/** What the guard tells its store. */
export interface GuardEvents {
  /** Writing stopped; `failed` when a write (the tail top-up) failed, not just the margin. */
  paused(reason: string, failed: boolean): void;
  resumed(): void;
}

/** Thrown by a synchronous write while writing is paused. */
export class WritesPausedError extends Error {
  constructor(reason: string) {
    super(`persistence is paused (${reason}); nothing was written`);
    this.name = 'WritesPausedError';
  }
}

/** Why a file at the store's path is not written: it is not the one LMDB opened. */
const REPLACED = 'not the file this store opened (removed or replaced under the running service); writing stays paused until a restart';

/**
 * The LMDB write gate of one environment; see the module comment. It also holds writes while
 * another process opens the environment (`hold`/`release`, opening.ts).
 */
export class DiskGuard implements HoldableGate {
  private pausedFor: string | undefined;
  /** While another process opens the environment: resolves when writing may go on. */
  private held: { readonly until: Promise<void>; readonly go: () => void } | undefined;
  /** The last asynchronous write's promise (lmdb-js hands one promise to every write of a batch). */
  private lastAsync: Promise<unknown> | undefined;
  /** Called before every synchronous write (opening.ts: waits while another process opens). */
  beforeSyncWrite: (() => void) | undefined;
  private droppedWrites = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly reserve: number;
  private readonly minFree: number;
  /** The file LMDB opened, by device and inode: a file at the same path later (the directory removed and made again) is not written. */
  private identity: { readonly dev: number; readonly ino: number } | undefined;

  constructor(
    private readonly file: string,
    private readonly root: RootDatabase,
    private readonly events: GuardEvents,
    private readonly opts: GuardOptions = {},
  ) {
    this.reserve = opts.reserveBytes ?? 8 * 1024 * 1024;
    this.minFree = opts.minFreeBytes ?? 2 * 1024 * 1024;
  }

  get state(): GuardState {
    return { paused: this.pausedFor !== undefined, reason: this.pausedFor, dropped: this.droppedWrites };
  }

  get open(): boolean {
    return this.pausedFor === undefined;
  }

  /**
   * Tops the tail up to the whole reserve (pausing if it cannot), then checks every `checkMs`.
   */
  start(): void {
    const s = statSync(this.file);
    this.identity = { dev: s.dev, ino: s.ino };
    const low = this.freeProblem();
    if (low) this.pause(low);
    else this.failIf(this.topUp(true));
    this.timer ??= setInterval(() => this.check(), this.opts.checkMs ?? 200);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Defers every new asynchronous write until `release()`; resolves once the writes already issued
   * are committed (then this process commits nothing until released).
   */
  async hold(): Promise<void> {
    if (!this.held) {
      let go!: () => void;
      const until = new Promise<void>((r) => (go = r));
      this.held = { until, go };
    }
    // A write issued before the hold may still be queued behind a batch in flight: wait until the
    // last one seen is the one settled.
    let last: Promise<unknown> | undefined;
    do {
      last = this.lastAsync;
      // Committed is enough: the fsync that follows a commit (overlappingSync) writes only the
      // separate "synced" meta, never the shared last-committed id an open overwrites.
      await Promise.allSettled([last, this.root.committed]);
    } while (this.lastAsync !== last);
  }

  /** Lets the deferred writes go, in the order they were issued. */
  release(): void {
    const h = this.held;
    this.held = undefined;
    h?.go();
  }

  /** Stops writing (a failed write, a failed top-up, too little free space). */
  pause(reason: string, failed = false): void {
    if (this.pausedFor !== undefined) return;
    this.pausedFor = reason;
    this.events.paused(reason, failed);
  }

  /**
   * Pauses when free space is below the margin or the tail cannot be topped up; resumes when
   * paused and, with the tail topped up to the whole reserve, twice the margin is still free.
   */
  check(): void {
    try {
      this.checkRoom();
    } catch (e) {
      // The file or its directory went away or became unreadable (removed, unmounted): a throw
      // here would end the process from a timer. Writing stops with the reason instead, and
      // resumes only once a check can see the room again.
      this.pause(`cannot check the room left for ${this.file}: ${(e as Error).message}`, true);
    }
  }

  private checkRoom(): void {
    const file = this.sameFile();
    if (this.pausedFor === undefined) {
      const low = this.freeProblem();
      if (low) this.pause(low);
      else this.failIf(this.topUp(false));
      return;
    }
    const missing = Math.max(0, this.usedEnd() + this.reserve - file.size);
    if (freeBytes(this.file) < 2 * this.minFree + missing) return;
    if (this.topUp(true)) return;
    this.pausedFor = undefined;
    this.events.resumed();
  }

  private failIf(why: string | undefined): void {
    if (why) this.pause(why, true);
  }

  private freeProblem(): string | undefined {
    const free = freeBytes(this.file);
    return free < this.minFree ? `disk nearly full: ${free} bytes free in ${dirname(this.file)}, below the ${this.minFree}-byte margin` : undefined;
  }

  /**
   * Extends the allocated tail to `reserveBytes` past LMDB's last page when less than half is left
   * (or always, with `full`). Returns why it could not, or undefined.
   */
  private topUp(full: boolean): string | undefined {
    try {
      // While another process opens the environment this process starts no write transaction.
      if (this.held || !this.short(full)) return undefined;
      // Inside a synchronous write transaction nobody else writes pages, so the zero fill cannot
      // overwrite a page LMDB is appending. The transaction itself writes nothing.
      this.root.transactionSync(() => {
        const fd = openSync(this.file, 'r+');
        try {
          // Opened by path: checked again on the descriptor, in case the path changed since the stat.
          const size = this.opened(fstatSync(fd)).size;
          const usedEnd = this.usedEnd();
          const target = usedEnd + this.reserve;
          for (let pos = Math.max(size, usedEnd); pos < target; pos += CHUNK) writeSync(fd, ZEROS, 0, Math.min(CHUNK, target - pos), pos);
        } finally {
          closeSync(fd);
        }
      });
      return undefined;
    } catch (e) {
      return `cannot reserve room for the next writes in ${this.file}: ${(e as Error).message}`;
    }
  }

  /** Whether the allocated tail is below half the reserve (or below all of it, with `full`). */
  private short(full: boolean): boolean {
    const tail = this.sameFile().size - this.usedEnd();
    return full ? tail < this.reserve : tail < this.reserve / 2;
  }

  /** The file at the path, when it is still the one LMDB opened (else it throws: removed or replaced). */
  private sameFile(): Stats {
    return this.opened(statSync(this.file));
  }

  /** `s`, when it is of the file LMDB opened (else it throws). */
  private opened(s: Stats): Stats {
    if (this.identity && (s.ino !== this.identity.ino || s.dev !== this.identity.dev)) throw new Error(`${this.file}: ${REPLACED}`);
    return s;
  }

  /** The end of LMDB's last page in the file. */
  private usedEnd(): number {
    const s = this.root.getStats() as { lastPageNumber: number; pageSize: number };
    return (s.lastPageNumber + 1) * s.pageSize;
  }

  /** `db` with its writes going through this gate. */
  wrap(db: Database): Database {
    // One wrapper per method, made on first use: the proxy allocates nothing per call.
    const methods = new Map<string, unknown>();
    const gate = (name: string, fn: (...args: unknown[]) => unknown): unknown => {
      if (ASYNC_WRITES.has(name)) {
        const write = (args: unknown[]): unknown => {
          if (this.pausedFor === undefined) return (this.lastAsync = fn.apply(db, args) as Promise<unknown>);
          this.droppedWrites++;
          return Promise.resolve(false);
        };
        return (...args: unknown[]) => (this.held ? this.held.until.then(() => write(args)) : write(args));
      }
      if (SYNC_WRITES.has(name))
        return (...args: unknown[]) => {
          this.beforeSyncWrite?.();
          if (this.pausedFor === undefined) return fn.apply(db, args);
          this.droppedWrites++;
          throw new WritesPausedError(this.pausedFor);
        };
      return fn.bind(db);
    };
    return new Proxy(db, {
      get: (target, prop, receiver) => {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function' || typeof prop !== 'string') return v;
        let m = methods.get(prop);
        if (m === undefined) methods.set(prop, (m = gate(prop, v as (...args: unknown[]) => unknown)));
        return m;
      },
    });
  }
}

/** Bytes an unprivileged writer may still use on the filesystem holding `file`. */
function freeBytes(file: string): number {
  const s = statfsSync(dirname(file));
  return s.bavail * s.bsize;
}
