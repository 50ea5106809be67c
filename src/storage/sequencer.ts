/**
 * The sequencer moves staged events into the feed in commit order, each move
 * one commit checked against the head it read (docs/architecture.md, "The
 * feed", says why positions stay dense and what it costs).
 * @module
 */

import { decodeStaged, readStaged, type StagedBlock, type StoredEvent } from "./codec.ts";
import type { Feed, Head } from "./feed.ts";
import { encodeIndex, encodeIndexedHead, nextVersionstamp, type StagedRef } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { delay } from "../timing.ts";
import { ClockCache } from "../clock_cache.ts";
import { decodeLease, encodeLease } from "./values_codec.ts";

/** Staged events older than this are moved by whoever finds them, whoever holds the lease. */
export const STALE_MS = 500;
/** How long a lease lasts unless its holder's next move renews it. */
const LEASE_MS = 1_000;
/** How often a holder with nothing to move looks again, and how many looks before it lets go. */
const IDLE_LOOK_MS = 10;
const IDLE_LOOKS = 20;
/** How often each process looks for staged events waiting too long (the watch). */
export const WATCH_MS = 500;
/** How often a process that left its events to another holder looks whether they were moved. */
const CONFIRM_MS = 100;
/** Staged blocks one move reads, at most (one read, one snapshot). */
const LIST_LIMIT = 64;
/** Own staged events remembered for this process's listeners, at most. */
const OWN_REMEMBERED = 4_096;

/** What the sequencer works with. */
export interface SequencerOptions {
  kv: Deno.Kv;
  feed: Feed;
  /** Runs one commit (retried while locked, its outcome recorded): `CommitLog.run`. */
  commit: <T>(write: () => Promise<T>) => Promise<T>;
  now: () => Date;
  /** Told of each move: how long each staged commit it moved waited, in ms (for metrics). */
  onMoved?: (waitsMs: number[]) => void;
  /** Runs before each look of the watch: true when it staged what to move at once (taken in). */
  beforeLook?: () => Promise<boolean>;
}

/** A staged block as listed: what a feed index says of it, its header and its bytes. */
interface Listed {
  ref: StagedRef;
  block: StagedBlock;
  value: Uint8Array;
}

/** Moves staged events into the feed for one store (one process). */
export class Sequencer {
  readonly #o: SequencerOptions;
  /** This process's name in the lease. */
  readonly #holder = crypto.randomUUID();
  /** Until when this process holds the lease, as far as it knows (0: it does not). */
  #heldUntil = 0;
  /** The latest versionstamp this process staged, and when it staged its oldest unmoved one. */
  #ownLatest = "";
  #ownSince: number | undefined;
  /** Staged blocks known moved: every versionstamp up to this one. */
  #movedThrough = "";
  /** Events this process staged, by versionstamp, until moved: told without decoding. */
  readonly #own = new ClockCache<StoredEvent[]>(OWN_REMEMBERED);
  #running: Promise<void> | undefined;
  /** True while another process holds the lease and this one leaves its events to it. */
  #othersMove = false;
  #again = false;
  #wake: (() => void) | undefined;
  #stopped = false;
  /** The watch's timer, and its look under way. */
  #watch: ReturnType<typeof setInterval> | undefined;
  #looking = false;
  /** Waiting for blocks up to a versionstamp to be moved. */
  readonly #waiters = new Set<{ through: string; done: () => void }>();

  constructor(options: SequencerOptions) {
    this.#o = options;
  }

  /** Starts the watch: every {@link WATCH_MS}, moves what waits past {@link STALE_MS}. */
  watch(): void {
    if (this.#watch !== undefined || this.#stopped) return;
    this.#watch = setInterval(() => void this.#look(), WATCH_MS);
  }

  async #look(): Promise<void> {
    if (this.#looking) return;
    this.#looking = true;
    try {
      const all = (await this.#o.beforeLook?.()) ?? false;
      // The holder moves everything staged while it holds the lease.
      if (all || this.#heldUntil <= this.#o.now().getTime()) await this.moveStale({ all });
    } catch {
      // A failed look leaves the events staged: the next look moves them.
    } finally {
      this.#looking = false;
    }
  }

  /** Told by a commit of this process that staged `events` under `versionstamp`. */
  staged(versionstamp: string, events: StoredEvent[]): void {
    // Told late: a move already carried it (its listing saw the commit before this did).
    if (versionstamp <= this.#movedThrough) return;
    if (versionstamp > this.#ownLatest) this.#ownLatest = versionstamp;
    this.#ownSince ??= this.#o.now().getTime();
    if (this.#o.feed.hasOwnEventListeners) this.#own.set(versionstamp, events);
    this.kick();
  }

  /** True while this process has staged events it does not know to be moved. */
  get #ownWaiting(): boolean {
    return this.#ownLatest > this.#movedThrough;
  }

  /**
   * Resolves once this process's events staged so far are in the feed, when
   * this process is the one moving them (at once otherwise, or after
   * `timeoutMs`): a reader in the same process then reads its own writes.
   */
  async settled(timeoutMs = 1_000): Promise<void> {
    if (!this.#ownWaiting || this.#stopped || this.#othersMove || !this.#running) return;
    const through = this.#ownLatest;
    await new Promise<void>((resolve) => {
      const waiter = { through, done: () => finish() };
      const timer = setTimeout(() => finish(), timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve();
      };
      this.#waiters.add(waiter);
    });
  }

  /**
   * Moves staged events that wait longer than {@link STALE_MS} (or, with
   * `all`, every staged event), whoever holds the lease: the watch's move, and
   * with `all` a barrier after which everything staged before is in the feed.
   *
   * @returns whether anything was moved.
   */
  async moveStale(options: { all?: boolean; rounds?: number } = {}): Promise<boolean> {
    const { all = false, rounds = 8 } = options;
    let movedAny = false;
    for (let round = 0; round < rounds; round++) {
      const first = await this.#first();
      if (!first) return movedAny;
      if (!all && !this.#stale(first)) return movedAny;
      const moved = await this.#moveOnce();
      if (moved > 0) movedAny = true;
    }
    return movedAny;
  }

  /**
   * Moves what this process staged, whoever holds the lease, then lets the
   * lease go: a stopping process leaves nothing of its own waiting.
   *
   * @param deadlineMs gives up at this `performance.now()` time.
   */
  async drain(deadlineMs: number): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#watch);
    this.#wake?.();
    await this.#running?.catch(() => {});
    while (this.#ownWaiting && performance.now() < deadlineMs) {
      try {
        if ((await this.#moveOnce()) === 0 && !(await this.#confirmOwn())) {
          await delay(IDLE_LOOK_MS);
        }
      } catch {
        await delay(IDLE_LOOK_MS);
      }
    }
    await this.#release().catch(() => {});
  }

  /**
   * Starts a move now (or again once the one under way ends), also for a
   * commit whose answer was lost: the store applied it all the same.
   */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      this.#wake?.();
      return;
    }
    this.#running = this.#run().catch(() => {
      // A failed move leaves the events staged: a later move, a reader or another process moves them.
    }).finally(() => {
      this.#running = undefined;
      this.#othersMove = false;
      // Staged while the run let go of the lease: another run moves it, and its readers wait on.
      if (this.#again && !this.#stopped) this.kick();
      // Nobody moves for this process now: readers waiting on it read what there is.
      if (!this.#running) { for (const waiter of this.#waiters) waiter.done(); }
    });
  }

  /** Moves while this process holds the lease or its own events wait too long. */
  async #run(): Promise<void> {
    this.#again = false;
    let idle = 0;
    while (!this.#stopped) {
      this.#othersMove = !(await this.#mayMove());
      if (this.#othersMove) {
        // Another process moves: make sure this process's events get moved.
        if (!this.#ownWaiting || await this.#confirmOwn()) return;
        const since = this.#ownSince ?? this.#o.now().getTime();
        if (this.#o.now().getTime() - since < STALE_MS) {
          // Not woken by this process's next commits: they are the holder's to move too.
          await delay(CONFIRM_MS);
          continue;
        }
        // They waited too long: move them, whoever holds the lease.
      }
      const moved = await this.#moveOnce();
      if (moved !== 0) {
        idle = 0;
        continue;
      }
      this.#again = false;
      if (++idle >= IDLE_LOOKS && !this.#ownWaiting) {
        await this.#release();
        return;
      }
      await this.#sleep(IDLE_LOOK_MS);
    }
  }

  /** True when no other process holds a lease that is still running. */
  async #mayMove(): Promise<boolean> {
    const now = this.#o.now().getTime();
    if (this.#heldUntil > now) return true;
    const entry = await this.#o.kv.get<unknown>(keys.feedMover);
    const lease = decodeLease(entry.value);
    return !lease || lease.holder === this.#holder || lease.until <= now;
  }

  /** Reads whether this process's staged events were moved (by anyone); true when they were. */
  async #confirmOwn(): Promise<boolean> {
    const head = await this.#o.feed.freshHead();
    this.#movedUpTo(head.through ?? "");
    return !this.#ownWaiting;
  }

  /** The first staged block not yet in the feed, if any, as the head read now says. */
  async #first(): Promise<Listed | undefined> {
    const head = await this.#o.feed.freshHead();
    if (head.form !== "staged") return undefined;
    this.#movedUpTo(head.through ?? "");
    return (await this.#waiting(head, 1))[0];
  }

  /**
   * Whether the first staged block waits too long: staged more than
   * {@link STALE_MS} ago by the stager's clock, or first seen here that long
   * ago (so that a stager whose clock runs ahead cannot hold the feed back).
   */
  #stale(first: Listed): boolean {
    const now = this.#o.now().getTime();
    if (this.#firstSeen?.versionstamp !== first.ref.versionstamp) {
      this.#firstSeen = { versionstamp: first.ref.versionstamp, at: now };
    }
    return first.block.atMs <= now - STALE_MS || this.#firstSeen.at <= now - STALE_MS;
  }
  #firstSeen: { versionstamp: string; at: number } | undefined;

  #movedUpTo(through: string): void {
    if (through <= this.#movedThrough) return;
    this.#movedThrough = through;
    for (const versionstamp of [...this.#own.keys()]) {
      if (versionstamp <= through) this.#own.delete(versionstamp);
    }
    if (!this.#ownWaiting) this.#ownSince = undefined;
    for (const waiter of this.#waiters) if (waiter.through <= through) waiter.done();
  }

  /**
   * One move: the oldest staged blocks not yet in the feed, indexed at the
   * positions after the head in one commit that checks and moves it.
   *
   * @returns how many blocks were moved; 0 when none was staged; -1 when
   *   another process moved first (what is left is read again next time).
   */
  async #moveOnce(): Promise<number> {
    const known = this.#o.feed.known;
    const head = known?.form === "staged" ? known : await this.#o.feed.freshHead();
    if (head.form !== "staged") return 0;
    const listed = await this.#waiting(head, LIST_LIMIT);
    if (listed.length === 0) {
      this.#movedUpTo(head.through ?? "");
      return 0;
    }
    const count = listed.reduce((sum, m) => sum + m.block.count, 0);
    const position = head.position + count;
    const through = listed[listed.length - 1].ref.versionstamp;
    const until = this.#o.now().getTime() + LEASE_MS;
    const op = this.#o.kv.atomic()
      .check({ key: keys.feedHead, versionstamp: head.versionstamp })
      .set(keys.events(position), encodeIndex(listed.map((m) => m.ref)))
      .set(keys.feedHead, encodeIndexedHead({ position, through }))
      .set(keys.feedMover, encodeLease({ holder: this.#holder, until }));
    const result = await this.#o.commit(() => op.commit());
    if (!result.ok) {
      this.#heldUntil = 0;
      await this.#o.feed.freshHead();
      return -1;
    }
    this.#heldUntil = until;
    const at = this.#o.now().getTime();
    this.#o.onMoved?.(listed.map((m) => at - m.block.atMs));
    const { versionstamp } = result;
    const moved: Head = { position, versionstamp, form: "staged", through, indexed: true };
    this.#o.feed.advanced(moved, this.#eventsOf(listed));
    this.#movedUpTo(through);
    return listed.length;
  }

  /** The first staged blocks after those the feed indexed by `head`, at most `limit` (one read). */
  async #waiting(head: Head, limit: number): Promise<Listed[]> {
    const listed: Listed[] = [];
    const iter = this.#o.kv.list<unknown>(
      { prefix: keys.stagedPrefix, start: keys.staged(nextVersionstamp(head.through ?? "")) },
      { limit, batchSize: limit },
    );
    for await (const entry of iter) listed.push(toListed(entry));
    return listed;
  }

  /** The events of moved blocks, for this process's listeners: remembered, or decoded. */
  #eventsOf(moving: readonly Listed[]): StoredEvent[] {
    if (!this.#o.feed.hasOwnEventListeners) return [];
    return moving.flatMap((m) => this.#own.get(m.ref.versionstamp) ?? decodeStaged(m.value));
  }

  /** Lets the lease go, if this process holds it, so that another may take it at once. */
  async #release(): Promise<void> {
    if (this.#heldUntil === 0) return;
    this.#heldUntil = 0;
    const entry = await this.#o.kv.get<unknown>(keys.feedMover);
    if (decodeLease(entry.value)?.holder !== this.#holder) return;
    await this.#o.commit(() =>
      this.#o.kv.atomic().check(entry)
        .set(keys.feedMover, encodeLease({ holder: this.#holder, until: 0 }))
        .commit()
    );
  }

  /** Waits `ms`, or less when more is staged or the sequencer stops. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#wake?.(), ms);
      this.#wake = () => {
        this.#wake = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function toListed(entry: Deno.KvEntry<unknown>): Listed {
  const versionstamp = entry.key[1];
  if (typeof versionstamp !== "string" || !(entry.value instanceof Uint8Array)) {
    throw new TypeError("a staged entry has an unknown layout");
  }
  const block = readStaged(entry.value);
  return { ref: { versionstamp, count: block.count }, block, value: entry.value };
}
