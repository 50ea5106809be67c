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
  InsertResult,
  IntentPage,
  PendingIntent,
  Store,
} from "../domain/store.ts";
import { documentQuorum } from "../domain/governance.ts";
import { LruCache } from "../lru.ts";
import { appendChange, insertIntents } from "./append.ts";
import { Feed } from "./feed.ts";
import { expiryMessage, isExpiryMessage, keys } from "./keys.ts";
import { getIntentEntry, listIntents } from "./read_intents.ts";
import { CommitLog } from "./commits.ts";
import { moveEarlierBlocks } from "./upgrade.ts";

/** Template/policy references remembered (a few hundred bytes each). */
const DOCUMENT_REFS_CACHED = 1024;

function documentCacheKey(kind: DocumentKind, id: string): string {
  return `${kind}/${id}`;
}

/** Options of {@link KvStore}. */
export interface KvStoreOptions {
  /** The clock that stamps acceptance times; defaults to the system clock. */
  now?: () => Date;
}

/** The service's storage on one `Deno.Kv`. */
export class KvStore implements Store {
  readonly #kv: Deno.Kv;
  readonly #now: () => Date;
  readonly #feed: Feed;
  /** Found document references: documents are immutable and never deleted. */
  readonly #refs = new LruCache<DocumentRef>(DOCUMENT_REFS_CACHED);
  /** Every write goes through it: retries, storage failures, the latest outcome. */
  readonly #commits: CommitLog;

  /** @param kv an open KV handle; the caller closes it. */
  constructor(kv: Deno.Kv, options: KvStoreOptions = {}) {
    this.#kv = kv;
    this.#now = options.now ?? (() => new Date());
    this.#feed = new Feed(kv);
    this.#commits = new CommitLog(this.#now);
  }

  /**
   * Moves intents stored before the feed existed into it (see `upgrade.ts`);
   * run at start, before serving.
   *
   * @returns how many intents were moved.
   */
  upgrade(): Promise<number> {
    return this.#appending(() =>
      moveEarlierBlocks({ kv: this.#kv, feed: this.#feed, commit: this.#commit })
    );
  }

  async findDocument(kind: DocumentKind, id: string): Promise<DocumentRef | null> {
    const cacheKey = documentCacheKey(kind, id);
    const cached = this.#refs.get(cacheKey);
    if (cached) return cached;
    const entry = await this.#kv.get<StoredDocument>(keys.document(kind, id));
    if (entry.versionstamp === null) return null;
    // The quorum is read from the document once and kept with the reference.
    const ref: DocumentRef = {
      kind,
      id,
      version: entry.versionstamp,
      quorum: documentQuorum(entry.value),
    };
    this.#refs.set(cacheKey, ref);
    return ref;
  }

  async getDocument(kind: DocumentKind, id: string): Promise<StoredDocument | null> {
    const entry = await this.#kv.get<StoredDocument>(keys.document(kind, id));
    return entry.value;
  }

  async putDocument(
    kind: DocumentKind,
    id: string,
    doc: StoredDocument,
  ): Promise<"created" | "exists"> {
    const key = keys.document(kind, id);
    const result = await this.#commit(() =>
      this.#kv.atomic().check({ key, versionstamp: null }).set(key, doc).commit()
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

  async scheduleExpiry(id: string, delayMs: number): Promise<void> {
    await this.#commit(() =>
      this.#kv.enqueue(expiryMessage(id), { delay: Math.max(0, Math.ceil(delayMs)) })
    );
  }

  listenExpiries(expire: (id: string) => Promise<void>): void {
    // One listener per KV handle; it ends when the handle is closed.
    this.#kv.listenQueue(async (message: unknown) => {
      if (isExpiryMessage(message)) await expire(message.expire);
    }).catch(() => {
      // The KV was closed.
    });
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

  async getConfig(): Promise<{ value: StoredConfig | null; version: string | null }> {
    const entry = await this.#kv.get<StoredConfig>(keys.config);
    return { value: entry.value, version: entry.versionstamp };
  }

  async setConfig(
    value: StoredConfig,
    expected?: readonly (string | null)[],
  ): Promise<string | null> {
    if (expected === undefined) {
      const result = await this.#commit(() => this.#kv.set(keys.config, value));
      return result.versionstamp;
    }
    const current = await this.#kv.get(keys.config);
    if (!expected.includes(current.versionstamp)) return null;
    const result = await this.#commit(() =>
      this.#kv.atomic().check(current).set(keys.config, value).commit()
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
