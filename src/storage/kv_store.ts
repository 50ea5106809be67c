/**
 * The storage port (`src/domain/store.ts`) on Deno KV: the one place that
 * reads and commits KV entries. It is handed an open `Deno.Kv`; it never
 * opens one itself. Keys are listed in `keys.ts`.
 * @module
 */

import type {
  DocumentKind,
  DocumentRef,
  IntentEvent,
  IntentState,
  StoredConfig,
  StoredDocument,
  StoredIntent,
} from "../domain/intent.ts";
import type {
  BatchResult,
  CommitAttempt,
  DecideChange,
  DueEntry,
  DueWork,
  IntentPage,
  PendingIntent,
  Store,
} from "../domain/store.ts";
import { documentQuorum } from "../domain/governance.ts";
import { isJsonMediaType } from "../media_type.ts";
import { DocumentCache } from "./document_cache.ts";
import { appendChange, insertIntents, WriteLayoutChanged } from "./append.ts";
import { Lanes } from "./contention.ts";
import { Sequencer } from "./sequencer.ts";
import type { FeedMetrics } from "./feed_metrics.ts";
import { insertStaged, type StagedInsertContext } from "./staged_insert.ts";
import { changeStaged } from "./staged_change.ts";
import {
  beginLayout,
  fenceEarlierStaged,
  switchToStaged,
  type WriteLayout,
} from "./write_layout.ts";
import { Feed } from "./feed.ts";
import { NO_DATA } from "./codec.ts";
import { decodeConfig, decodeDocument, encodeConfig, encodeDocument } from "./values_codec.ts";
import { convertValues } from "./convert.ts";
import { keys } from "./keys.ts";
import { getIntentEntry, listIntents } from "./read_intents.ts";
import { CommitLog } from "./commits.ts";
import { ReadAhead } from "./read_ahead.ts";
import { moveEarlierBlocks } from "./upgrade.ts";
import { KvWebhookStore } from "./webhooks.ts";

/** Ids one staged commit checks when its intents share one document: denokv's ten checks less its. */
const STAGED_IDS_PER_COMMIT = 9;

/** Moves a flush makes at most (each of up to 64 staged commits). */
const FLUSH_ROUNDS = 64;

/** Options of {@link KvStore}. */
export interface KvStoreOptions {
  /** The clock that stamps acceptance times; defaults to the system clock. */
  now?: () => Date;
  /**
   * A second handle on the same local KV file, for reads made ahead of
   * commits: on a file, a handle's reads wait behind its commits, and a second
   * one reads beside them. Default: the store's own handle (on a networked KV
   * reads and commits go out side by side anyway). The caller closes it.
   */
  readKv?: Deno.Kv;
  /**
   * The write layout an empty store begins (`write_layout.ts`, `layoutFor`);
   * default "staged". A store that has a head keeps its own.
   */
  beginLayout?: "head" | "staged";
  /** Where the feed's moves and contended writes are counted (`GET /metrics`); none by default. */
  metrics?: FeedMetrics;
}

/** The service's storage on one `Deno.Kv`. */
export class KvStore implements Store {
  readonly #kv: Deno.Kv;
  readonly #now: () => Date;
  readonly #feed: Feed;
  /** Found documents and their references (immutable, never deleted), and recent misses. */
  readonly #documents = new DocumentCache();
  /** Every write goes through it: retries, storage failures, the latest outcome. */
  readonly #commits: CommitLog;
  readonly #ahead: ReadAhead;
  readonly #sequencer: Sequencer;
  readonly #staged: StagedInsertContext;
  readonly #beginLayout: "head" | "staged";
  /** The write layout as last seen: "staged" never changes back. */
  #layout: WriteLayout | undefined;
  /** Webhook endpoints, leases and attempts on the same KV, written through the same commit log. */
  readonly webhooks: KvWebhookStore;

  /** @param kv an open KV handle; the caller closes it. */
  constructor(kv: Deno.Kv, options: KvStoreOptions = {}) {
    this.#kv = kv;
    this.#now = options.now ?? (() => new Date());
    this.#feed = new Feed(kv);
    this.#commits = new CommitLog(this.#now);
    this.#ahead = new ReadAhead(options.readKv ?? kv);
    this.#beginLayout = options.beginLayout ?? "staged";
    this.#sequencer = new Sequencer({
      kv,
      feed: this.#feed,
      commit: this.#commit,
      now: this.#now,
      onMoved: options.metrics?.moved,
    });
    this.#feed.onPoll = async () => {
      if (this.#staged_()) await this.#sequencer.moveStale();
    };
    this.#staged = {
      kv,
      now: this.#now,
      commit: this.#commit,
      staged: (versionstamp, events) => this.#sequencer.staged(versionstamp, events),
      lanes: new Lanes(),
      contended: options.metrics?.contended,
      failed: () => this.#sequencer.kick(),
      staleRef: (ref) => this.#documents.stale(ref),
    };
    this.webhooks = new KvWebhookStore(kv, {
      feed: this.#feed,
      commit: this.#commit,
      now: this.#now,
      settleFeed: () => this.flushStaged(),
      settled: async () => this.#staged_() ? await this.#sequencer.settled() : undefined,
    });
  }

  /**
   * Starts reading an intent's id ahead of the commit that will store it
   * (see `read_ahead.ts`): the group commit asks as each insert arrives.
   */
  readAhead(id: string): void {
    // The staged layout checks every id in its commit: nothing to read ahead.
    if (!this.#staged_()) this.#ahead.ask(id);
  }

  /**
   * How the writer best feeds this store's commits (`writer.ts`): in the
   * head layout, one commit at a time of up to `batchMax`; in the staged
   * layout, commits of as many ids as denokv's ten checks allow beside one
   * document's, several at once, `batchMax` inserts in all.
   */
  commitShape(batchMax: number): { inFlight: number; batchMax: number } {
    if (!this.#staged_()) return { inFlight: 1, batchMax };
    const perCommit = Math.min(batchMax, STAGED_IDS_PER_COMMIT);
    return { inFlight: Math.max(1, Math.ceil(batchMax / perCommit)), batchMax: perCommit };
  }

  /** The store's write layout (`write_layout.ts`); an empty store begins the one it was given. */
  async writeLayout(): Promise<WriteLayout> {
    if (this.#staged_()) return "staged";
    // A head-layout commit finds a switch by its failed head check.
    if (this.#layout === "head") return "head";
    const head = await this.#feed.freshHead();
    const layout = (head.layout ?? "head") === "empty"
      ? await beginLayout(this.#kv, this.#beginLayout)
      : head.layout ?? "head";
    // Before this process stages anything: no earlier process moves (and deletes) its blocks.
    if (layout === "staged" && !head.indexed) {
      await fenceEarlierStaged(this.#kv);
      await this.#feed.freshHead();
    }
    this.#layout = layout;
    return layout;
  }

  /**
   * Switches the store to the staged layout: the operator's step once no
   * process of a version that writes the head layout runs (see `write_layout.ts`).
   */
  async switchWriteLayout(): Promise<{ before: WriteLayout; after: WriteLayout }> {
    const switched = await switchToStaged(this.#kv);
    this.#layout = switched.after;
    await this.#feed.freshHead();
    return switched;
  }

  /**
   * Moves into the feed events staged longer than a reader should wait
   * (the scheduler's looks and the cron job do this, as readers do), so the
   * feed's bound holds even when the process that staged them is gone.
   */
  async settleFeed(): Promise<void> {
    if (await this.writeLayout() === "staged") await this.#sequencer.moveStale();
  }

  /**
   * Moves every event staged so far, by any process, into the feed: a
   * listing, a new webhook endpoint's start and tests see every intent
   * answered before them in it.
   */
  async flushStaged(): Promise<void> {
    if (await this.#readLayout() === "staged") {
      await this.#sequencer.moveStale({ all: true, rounds: FLUSH_ROUNDS });
    }
  }

  /**
   * Moves what this process staged into the feed (a stopping process leaves
   * nothing of its own staged), until `deadlineMs` (`performance.now()` time).
   */
  async drain(deadlineMs: number): Promise<void> {
    if (this.#staged_()) await this.#sequencer.drain(deadlineMs);
  }

  /**
   * Brings data of earlier versions to this version's layout at start, in
   * bounded commits (`convert.ts`, then `upgrade.ts`); a start resumes them.
   *
   * @param progress told after each commit of the conversion.
   * @returns how many values were rewritten and how many intents were moved.
   */
  upgrade(
    progress?: (rewritten: number) => void,
  ): Promise<{ rewritten: number; moved: number; layout: WriteLayout }> {
    return this.#appending(async () => {
      const ctx = { kv: this.#kv, feed: this.#feed, commit: this.#commit };
      const rewritten = await convertValues(ctx, progress);
      const moved = await moveEarlierBlocks(ctx);
      return { rewritten, moved, layout: await this.writeLayout() };
    });
  }

  async findDocument(kind: DocumentKind, id: string): Promise<DocumentRef | null> {
    const cached = this.#documents.ref(kind, id);
    if (cached) return cached;
    const entry = await this.#kv.get<unknown>(keys.document(kind, id));
    const doc = decodeDocument(entry.value);
    if (entry.versionstamp === null || doc === null) return null;
    // The quorum is read from the document once and kept with the reference.
    const ref: DocumentRef = {
      kind,
      id,
      version: entry.versionstamp,
      quorum: documentQuorum({ bytes: doc.bytes, json: isJsonMediaType(doc.contentType) }),
    };
    this.#documents.found(kind, id, doc, ref);
    return ref;
  }

  async getDocument(kind: DocumentKind, id: string): Promise<StoredDocument | null> {
    const now = this.#now().getTime();
    const cached = this.#documents.document(kind, id, now);
    if (cached !== undefined) return cached;
    const entry = await this.#kv.get<unknown>(keys.document(kind, id));
    const doc = decodeDocument(entry.value);
    if (doc === null) this.#documents.missing(kind, id, now);
    else this.#documents.found(kind, id, doc);
    return doc;
  }

  async putDocument(
    kind: DocumentKind,
    id: string,
    doc: StoredDocument,
  ): Promise<"created" | "exists"> {
    const key = keys.document(kind, id);
    const result = await this.#commit(() =>
      this.#kv.atomic().check({ key, versionstamp: null }).set(key, encodeDocument(doc)).commit()
    );
    // Stored now, or before (perhaps by another process, under its first content type).
    if (result.ok) this.#documents.found(kind, id, doc);
    else this.#documents.stored(kind, id);
    return result.ok ? "created" : "exists";
  }

  async insertIntents(batch: readonly PendingIntent[]): Promise<BatchResult[]> {
    if (!this.#staged_() && await this.writeLayout() !== "staged") {
      const results: (BatchResult | undefined)[] = await this.#appending(() =>
        insertIntents({
          kv: this.#kv,
          feed: this.#feed,
          now: this.#now,
          staleRef: (ref) => this.#documents.stale(ref),
          commit: this.#commit,
          ahead: this.#ahead,
        }, batch)
      );
      const left = batch.flatMap((_, i) => results[i] === undefined ? [i] : []);
      if (left.length === 0) return results as BatchResult[];
      // The store was switched to the staged layout meanwhile: the rest are stored there.
      await this.#switchedMeanwhile();
      const rest = await insertStaged(this.#staged, left.map((i) => batch[i]));
      left.forEach((i, k) => results[i] = rest[k]);
      return results as BatchResult[];
    }
    return await insertStaged(this.#staged, batch);
  }

  async getIntent(id: string): Promise<StoredIntent | null> {
    return (await getIntentEntry(this.#kv, id))?.intent ?? null;
  }

  async changeIntent(id: string, decide: DecideChange): Promise<StoredIntent | null> {
    if (!this.#staged_() && await this.writeLayout() !== "staged") {
      try {
        // In this store's turn: no other change of this process can come between
        // the read and the commit, so only other processes make it try again.
        return await this.#appending(() =>
          appendChange({ kv: this.#kv, feed: this.#feed, commit: this.#commit }, id, decide)
        );
      } catch (error) {
        if (!(error instanceof WriteLayoutChanged)) throw error;
        await this.#switchedMeanwhile();
      }
    }
    return await changeStaged(this.#staged, id, decide);
  }

  async listIntents(
    options: { limit: number; before?: number; state?: IntentState; now?: Date },
  ): Promise<IntentPage> {
    // Intents are listed from the feed: what is staged goes in first, so that
    // every intent answered before the listing is in it.
    await this.flushStaged();
    return listIntents(this.#kv, { ...options, now: options.now ?? this.#now() });
  }

  async listDueWork(options: { kind: string; limit: number }): Promise<DueEntry[]> {
    const { kind, limit } = options;
    const entries: DueEntry[] = [];
    const listed = this.#kv.list<unknown>({ prefix: keys.duePrefix(kind) }, {
      limit,
      batchSize: Math.min(limit, 100),
    });
    for await (const entry of listed) {
      const [, , at, id] = entry.key;
      if (typeof at !== "number" || typeof id !== "string") continue;
      entries.push({ kind, at, id, version: entry.versionstamp });
    }
    return entries;
  }

  async putDueWork(work: DueWork): Promise<void> {
    await this.#commit(() => this.#kv.set(keys.due(work.kind, work.at, work.id), NO_DATA));
  }

  async dropDueWork(entry: DueEntry): Promise<boolean> {
    const key = keys.due(entry.kind, entry.at, entry.id);
    const result = await this.#commit(() =>
      this.#kv.atomic().check({ key, versionstamp: entry.version }).delete(key).commit()
    );
    return result.ok;
  }

  async isPosition(position: number): Promise<boolean> {
    // A position this process handed out is one its own moves made.
    if (this.#staged_()) await this.#sequencer.settled();
    return await this.#feed.isPosition(position);
  }

  async readEvents(
    options: { after: number; limit: number; maxBytes?: number },
  ): Promise<IntentEvent[]> {
    if (await this.#readLayout() !== "staged") return await this.#feed.readEvents(options);
    // A reader in the process that staged events sees them once its own moves land.
    await this.#sequencer.settled();
    const events = await this.#feed.readEvents(options);
    // At the end of the feed, events staged too long ago are moved first (their mover may be gone).
    if (events.length < options.limit && await this.#sequencer.moveStale()) {
      return await this.#feed.readEvents(options);
    }
    return events;
  }

  waitForEvents(
    after: number,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<boolean> {
    return this.#feed.waitForEvents(after, options);
  }

  onOwnEvents(listener: (events: IntentEvent[]) => void): () => void {
    return this.#feed.onOwnEvents(listener);
  }

  async getConfig(): Promise<{ value: StoredConfig | null; version: string | null }> {
    const entry = await this.#kv.get<unknown>(keys.config);
    return { value: decodeConfig(entry.value), version: entry.versionstamp };
  }

  async setConfig(
    value: StoredConfig,
    expected?: readonly (string | null)[],
  ): Promise<string | null> {
    if (expected === undefined) {
      const result = await this.#commit(() => this.#kv.set(keys.config, encodeConfig(value)));
      return result.versionstamp;
    }
    const current = await this.#kv.get(keys.config);
    if (!expected.includes(current.versionstamp)) return null;
    const result = await this.#commit(() =>
      this.#kv.atomic().check(current).set(keys.config, encodeConfig(value)).commit()
    );
    return result.ok ? result.versionstamp : null;
  }

  async ping(): Promise<boolean> {
    await this.#kv.get(keys.health);
    return true;
  }

  lastCommit(): CommitAttempt | null {
    return this.#commits.last();
  }

  /**
   * Runs work that moves the feed head after the work of this store before
   * it. Commits that move the head cannot both succeed from the same head, so
   * within one process they take turns rather than fail and retry against
   * each other; processes sharing the KV still race, and the loser retries.
   */
  #appending<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.#lane.then(work, work);
    this.#lane = turn.catch(() => {});
    return turn;
  }
  #lane: Promise<unknown> = Promise.resolve();

  /** True once the store is known to be in the staged layout (by this process's reads or writes). */
  /** Learns a switch to the staged layout a head-layout commit found (fenced as at start). */
  async #switchedMeanwhile(): Promise<void> {
    this.#layout = undefined;
    await this.writeLayout();
  }

  #staged_(): boolean {
    // A head of this version: no earlier process moves staged blocks (`fenceEarlierStaged`).
    const known = this.#feed.known;
    if (this.#layout !== "staged" && known?.layout === "staged" && known.indexed) {
      this.#layout = "staged";
    }
    return this.#layout === "staged";
  }

  /** The layout as a reader needs it: known, or learned once. */
  async #readLayout(): Promise<WriteLayout> {
    if (this.#staged_()) return "staged";
    return this.#layout ?? await this.writeLayout();
  }

  /** Runs one write through the commit log (bound, so it can be handed on). */
  readonly #commit = <T>(write: () => Promise<T>): Promise<T> => this.#commits.run(write);
}
