/**
 * The storage port (`src/domain/store.ts`) on an open `Deno.Kv`, which it
 * never opens itself; keys are listed in `keys.ts`.
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
import { documentQuorum, ruledQuorum } from "../domain/governance.ts";
import { isJsonMediaType } from "../media_type.ts";
import { DocumentCache } from "./document_cache.ts";
import { Lanes } from "../timing.ts";
import { Sequencer } from "./sequencer.ts";
import type { FeedMetrics } from "./feed_metrics.ts";
import { insertStaged, type StagedContext } from "./staged_insert.ts";
import { changeStaged } from "./staged_change.ts";
import { type FencedFrom, fenceHead, STORE_LAYOUT } from "./fence.ts";
import { Feed } from "./feed.ts";
import { NO_DATA } from "./codec.ts";
import { decodeConfig, decodeDocument, encodeConfig, encodeDocument } from "./values_codec.ts";
import { documentVersion, keys } from "./keys.ts";
import { getIntentEntry, listIntents } from "./read_intents.ts";
import { CommitLog } from "./commits.ts";
import { takeInEarlier } from "./take_in.ts";
import { KvWebhookStore } from "./kv_webhook_store.ts";

/** Ids one staged commit checks when its intents share one document: denokv's ten checks less its. */
const STAGED_IDS_PER_COMMIT = 9;

/** Moves a flush makes at most (each of up to 64 staged commits). */
const FLUSH_ROUNDS = 64;
/** How often, at most, a process looks for intents of a version before the feed to take in. */
const TAKE_IN_MS = 1_000;

/** Options of {@link KvStore}. */
export interface KvStoreOptions {
  /** The clock that stamps acceptance times; defaults to the system clock. */
  now?: () => Date;
  /** Where the feed's moves and contended writes are counted (`GET /metrics`); none by default. */
  metrics?: FeedMetrics;
}

/** The service's storage on one `Deno.Kv`. */
export class KvStore implements Store {
  readonly #kv: Deno.Kv;
  readonly #now: () => Date;
  readonly #feed: Feed;
  readonly #documents = new DocumentCache();
  /** Every write goes through it. */
  readonly #commits: CommitLog;
  readonly #sequencer: Sequencer;
  readonly #staged: StagedContext;
  /** The fence, once this process made sure of it (`fence.ts`): every write waits for it. */
  #fenced: Promise<FencedFrom> | undefined;
  /** When this process last looked for intents of a version before the feed (Unix ms). */
  #lookedForEarlier = 0;
  /** Keeps apart this process's commits of one document's counts, and its passes taking in. */
  readonly #lanes = new Lanes();
  /** Webhook endpoints, leases and attempts on the same KV and commit log. */
  readonly webhooks: KvWebhookStore;

  /** @param kv an open KV handle; the caller closes it. */
  constructor(kv: Deno.Kv, options: KvStoreOptions = {}) {
    this.#kv = kv;
    this.#now = options.now ?? (() => new Date());
    this.#feed = new Feed(kv);
    this.#commits = new CommitLog(this.#now);
    const base = { kv, feed: this.#feed, commit: this.#commit, now: this.#now };
    this.#sequencer = new Sequencer({
      ...base,
      onMoved: options.metrics?.moved,
      beforeLook: async () => await this.#takeIn() > 0,
    });
    this.#staged = {
      ...base,
      staged: (versionstamp, events) => this.#sequencer.staged(versionstamp, events),
      lanes: this.#lanes,
      contended: options.metrics?.contended,
      failed: () => this.#sequencer.kick(),
      staleRef: (ref) => this.#documents.stale(ref),
    };
    this.webhooks = new KvWebhookStore({
      ...base,
      moveAll: () => this.moveAll(),
      settled: () => this.#sequencer.settled(),
    });
  }

  /** How `createWriter` best feeds this store: commits of up to nine ids, several at once. */
  commitShape(batchMax: number): { inFlight: number; batchMax: number } {
    const perCommit = Math.min(batchMax, STAGED_IDS_PER_COMMIT);
    return { inFlight: Math.max(1, Math.ceil(batchMax / perCommit)), batchMax: perCommit };
  }

  /** Makes sure of the fence (`fence.ts`), once per process, before any write: what the head was. */
  prepare(): Promise<FencedFrom> {
    return this.#fenced ??= fenceHead(this.#kv).then(async (from) => {
      await this.#feed.freshHead();
      return from;
    }).catch((error) => {
      this.#fenced = undefined;
      throw error;
    });
  }

  /** True when the store may hold JavaScript values of earlier versions (see `["store_layout"]`). */
  async earlierValues(): Promise<boolean> {
    const layout = (await this.#kv.get<unknown>(keys.storeLayout)).value;
    return !(layout instanceof Deno.KvU64 && layout.value >= STORE_LAYOUT);
  }

  /** Starts the sequencer's watch (`drain` stops it). */
  start(): void {
    this.#sequencer.watch();
  }

  /** Moves every event staged so far, by any process, into the feed. */
  async moveAll(): Promise<void> {
    await this.#takeIn(true);
    await this.#sequencer.moveStale({ all: true, rounds: FLUSH_ROUNDS });
  }

  /** Moves what this process staged into the feed, until `deadlineMs` (`performance.now()`). */
  async drain(deadlineMs: number): Promise<void> {
    await this.#sequencer.drain(deadlineMs);
  }

  async findDocument(kind: DocumentKind, id: string): Promise<DocumentRef | null> {
    const cached = this.#documents.ref(kind, id);
    if (cached) return cached;
    const found = await this.#readDocument(kind, id);
    if (found === null) return null;
    const { doc, versionstamp, ruled } = found;
    const content = { bytes: doc.bytes, json: isJsonMediaType(doc.contentType) };
    // The quorum (and its compiled rules) is read from the document once and kept with the
    // reference. A document stored as ruled whose rules no longer compile governs nothing
    // this version can judge: it is not found, as versions before rules do not find it.
    const quorum = ruled ? ruledQuorum(content) : documentQuorum(content);
    if (ruled && quorum === null) return null;
    const ref: DocumentRef = { kind, id, version: documentVersion(versionstamp, ruled), quorum };
    this.#documents.found(kind, id, doc, ref);
    return ref;
  }

  async getDocument(kind: DocumentKind, id: string): Promise<StoredDocument | null> {
    const now = this.#now().getTime();
    const cached = this.#documents.document(kind, id, now);
    if (cached !== undefined) return cached;
    const found = await this.#readDocument(kind, id);
    if (found === null) this.#documents.missing(kind, id, now);
    else this.#documents.found(kind, id, found.doc);
    return found?.doc ?? null;
  }

  /**
   * A document where this version stores it: as before, or, with rules, apart. The place of
   * documents without rules is read first, so that reading one costs what it did.
   */
  async #readDocument(kind: DocumentKind, id: string) {
    for (const ruled of [false, true]) {
      const entry = await this.#kv.get<unknown>(keys.document(kind, id, ruled));
      const doc = decodeDocument(entry.value);
      if (entry.versionstamp !== null && doc !== null) {
        return { doc, versionstamp: entry.versionstamp, ruled };
      }
    }
    return null;
  }

  async putDocument(
    kind: DocumentKind,
    id: string,
    doc: StoredDocument,
    options: { ruled?: boolean } = {},
  ): Promise<"created" | "exists"> {
    const key = keys.document(kind, id, options.ruled);
    const result = await this.#commit(() => {
      const op = this.#kv.atomic().check({ key, versionstamp: null });
      // A document with rules is stored apart; stored as before already, it stays there.
      if (options.ruled) op.check({ key: keys.document(kind, id), versionstamp: null });
      return op.set(key, encodeDocument(doc)).commit();
    });
    // Stored now, or before (perhaps by another process, under its first content type).
    if (result.ok) this.#documents.found(kind, id, doc);
    else this.#documents.stored(kind, id);
    return result.ok ? "created" : "exists";
  }

  async insertIntents(batch: readonly PendingIntent[]): Promise<BatchResult[]> {
    await this.prepare();
    return await insertStaged(this.#staged, batch);
  }

  async getIntent(id: string): Promise<StoredIntent | null> {
    return (await getIntentEntry(this.#kv, id))?.intent ?? null;
  }

  async changeIntent(id: string, decide: DecideChange): Promise<StoredIntent | null> {
    await this.prepare();
    return await changeStaged(this.#staged, id, decide);
  }

  async listIntents(
    options: { limit: number; before?: number; state?: IntentState; now?: Date },
  ): Promise<IntentPage> {
    // Intents are listed from the feed: what is staged goes in first, so that
    // every intent answered before the listing is in it.
    await this.moveAll();
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
    await this.#sequencer.settled();
    return await this.#feed.isPosition(position);
  }

  async readEvents(
    options: { after: number; limit: number; maxBytes?: number },
  ): Promise<IntentEvent[]> {
    // A reader in the process that staged events sees them once its own moves land.
    await this.#sequencer.settled();
    return await this.#feed.readEvents(options);
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

  /** {@link takeInEarlier}, at most every {@link TAKE_IN_MS} unless `now`. */
  #takeIn(now = false): Promise<number> {
    const at = this.#now().getTime();
    if (!now && at - this.#lookedForEarlier < TAKE_IN_MS) return Promise.resolve(0);
    this.#lookedForEarlier = at;
    return this.takeInEarlier();
  }

  /**
   * Takes in every intent a version before the feed stored (`take_in.ts`).
   *
   * @returns how many this call took in.
   */
  takeInEarlier(): Promise<number> {
    // One pass at a time: two would race for a block, and one return with it half taken in.
    return this.#lanes.run("take in", async () => {
      await this.prepare();
      let taken = 0;
      for (let more = 1; more > 0; taken += more) more = await takeInEarlier(this.#staged);
      return taken;
    });
  }

  /** Runs one write through the commit log (bound, so it can be handed on). */
  readonly #commit = <T>(write: () => Promise<T>): Promise<T> => this.#commits.run(write);
}
