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
  CommitAttempt,
  DecideChange,
  DueEntry,
  DueWork,
  InsertResult,
  IntentPage,
  PendingIntent,
  Store,
} from "../domain/store.ts";
import { documentQuorum } from "../domain/governance.ts";
import { isJsonMediaType } from "../media_type.ts";
import { ClockCache } from "../clock_cache.ts";
import { appendChange, insertIntents } from "./append.ts";
import { Feed } from "./feed.ts";
import { decodeConfig, decodeDocument, encodeConfig, encodeDocument, NO_DATA } from "./codec.ts";
import { convertValues } from "./convert.ts";
import { keys } from "./keys.ts";
import { getIntentEntry, listIntents } from "./read_intents.ts";
import { CommitLog } from "./commits.ts";
import { ReadAhead } from "./read_ahead.ts";
import { moveEarlierBlocks } from "./upgrade.ts";
import { KvWebhookStore } from "./webhooks.ts";

/** Template/policy references remembered (a few hundred bytes each). */
const DOCUMENT_REFS_CACHED = 1024;

function documentCacheKey(kind: DocumentKind, id: string): string {
  return `${kind}/${id}`;
}

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
}

/** The service's storage on one `Deno.Kv`. */
export class KvStore implements Store {
  readonly #kv: Deno.Kv;
  readonly #now: () => Date;
  readonly #feed: Feed;
  /** Found document references: documents are immutable and never deleted. */
  readonly #refs = new ClockCache<DocumentRef>(DOCUMENT_REFS_CACHED);
  /** Every write goes through it: retries, storage failures, the latest outcome. */
  readonly #commits: CommitLog;
  readonly #ahead: ReadAhead;
  /** Webhook endpoints, leases and attempts on the same KV, written through the same commit log. */
  readonly webhooks: KvWebhookStore;

  /** @param kv an open KV handle; the caller closes it. */
  constructor(kv: Deno.Kv, options: KvStoreOptions = {}) {
    this.#kv = kv;
    this.#now = options.now ?? (() => new Date());
    this.#feed = new Feed(kv);
    this.#commits = new CommitLog(this.#now);
    this.#ahead = new ReadAhead(options.readKv ?? kv);
    this.webhooks = new KvWebhookStore(kv, {
      feed: this.#feed,
      commit: this.#commit,
      now: this.#now,
    });
  }

  /**
   * Starts reading an intent's id ahead of the commit that will store it
   * (see `read_ahead.ts`): the group commit asks as each insert arrives.
   */
  readAhead(id: string): void {
    this.#ahead.ask(id);
  }

  /**
   * Brings data written by earlier versions to this version's layout; run at
   * start, before serving. Values written as JavaScript values are rewritten
   * as bytes (see `convert.ts`), then intents stored before the feed existed
   * are moved into it (see `upgrade.ts`). Both go in bounded commits; an
   * interrupted start leaves nothing half-done, and the next one goes on.
   *
   * @param progress told after each commit of the conversion.
   * @returns how many values were rewritten and how many intents were moved.
   */
  upgrade(
    progress?: (rewritten: number) => void,
  ): Promise<{ rewritten: number; moved: number }> {
    return this.#appending(async () => {
      const ctx = { kv: this.#kv, feed: this.#feed, commit: this.#commit };
      const rewritten = await convertValues(ctx, progress);
      const moved = await moveEarlierBlocks(ctx);
      return { rewritten, moved };
    });
  }

  async findDocument(kind: DocumentKind, id: string): Promise<DocumentRef | null> {
    const cacheKey = documentCacheKey(kind, id);
    const cached = this.#refs.get(cacheKey);
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
    this.#refs.set(cacheKey, ref);
    return ref;
  }

  async getDocument(kind: DocumentKind, id: string): Promise<StoredDocument | null> {
    const entry = await this.#kv.get<unknown>(keys.document(kind, id));
    return decodeDocument(entry.value);
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
    return result.ok ? "created" : "exists";
  }

  insertIntents(batch: readonly PendingIntent[]): Promise<InsertResult[]> {
    return this.#appending(() =>
      insertIntents({
        kv: this.#kv,
        feed: this.#feed,
        now: this.#now,
        staleRef: (ref) => this.#refs.delete(documentCacheKey(ref.kind, ref.id)),
        commit: this.#commit,
        ahead: this.#ahead,
      }, batch)
    );
  }

  async getIntent(id: string): Promise<StoredIntent | null> {
    return (await getIntentEntry(this.#kv, id))?.intent ?? null;
  }

  changeIntent(id: string, decide: DecideChange): Promise<StoredIntent | null> {
    // In this store's turn: no other change of this process can come between
    // the read and the commit, so only other processes make it try again.
    return this.#appending(() =>
      appendChange({ kv: this.#kv, feed: this.#feed, commit: this.#commit }, id, decide)
    );
  }

  listIntents(
    options: { limit: number; before?: number; state?: IntentState; now?: Date },
  ): Promise<IntentPage> {
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

  isPosition(position: number): Promise<boolean> {
    return this.#feed.isPosition(position);
  }

  readEvents(options: { after: number; limit: number; maxBytes?: number }): Promise<IntentEvent[]> {
    return this.#feed.readEvents(options);
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

  /** Runs one write through the commit log (bound, so it can be handed on). */
  readonly #commit = <T>(write: () => Promise<T>): Promise<T> => this.#commits.run(write);
}
