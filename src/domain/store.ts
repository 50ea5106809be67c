/**
 * What the service needs of its storage: the port that `src/storage/`
 * implements on Deno KV. The use cases and the HTTP edge know only this.
 * @module
 */

import type {
  DocumentKind,
  DocumentRef,
  EventType,
  IntentEvent,
  IntentState,
  NewIntent,
  StoredConfig,
  StoredDocument,
  StoredIntent,
} from "./intent.ts";

/** An intent to store, with the template or policy read that its commit checks. */
export interface PendingIntent {
  intent: NewIntent;
  ref: DocumentRef;
  /**
   * For an intent stored pending: the most intents each key that signed its
   * submission may have pending under its document, this one included
   * (`MAX_PENDING_PER_SIGNER`); unlimited when absent.
   */
  maxPending?: number;
}

/** What became of one insert. */
export type InsertResult =
  | { outcome: "created"; intent: StoredIntent }
  | { outcome: "exists" }
  | { outcome: "reference_changed" }
  /** A key that signed it has `maxPending` intents pending under its document; nothing stored. */
  | { outcome: "too_many_pending" };

/**
 * What became of one insert of a batch: its result, or the error of the
 * commit that carried it (a batch may go in several commits; each is
 * atomic, and one failing fails only its own inserts).
 */
export type BatchResult = InsertResult | { outcome: "failed"; error: unknown };

/** Stores verified intents: one commit per insert, or concurrent inserts grouped. */
export interface IntentWriter {
  /**
   * Stores one intent unless its id is taken or its template/policy read is
   * stale; "created" only after the commit that carries it succeeded.
   */
  insert(pending: PendingIntent): Promise<InsertResult>;
}

/** What a change makes of an intent: its next record, and the event that records it. */
export interface IntentChange {
  intent: StoredIntent;
  type: EventType;
}

/**
 * Decides a change from the intent as it stands: its next record, or null to
 * leave it as it is. It may throw to refuse; the refusal reaches the caller.
 */
export type DecideChange = (intent: StoredIntent) => IntentChange | null;

/**
 * The due-work kind of a pending intent's expiry. The store writes it at the
 * intent's deadline in the commit that stores the intent pending, and
 * removes it in the commit that ends the pending state (an acceptance, a
 * rejection, the expiry itself).
 */
export const EXPIRY_WORK = "expire";

/** Work that falls due at a time, kept in the store until done. */
export interface DueWork {
  /** What to do, e.g. {@link EXPIRY_WORK}. */
  kind: string;
  /** What it is about, e.g. an intent id. */
  id: string;
  /** When it falls due: Unix milliseconds. */
  at: number;
}

/** Due work as read from the store, with the version its removal checks. */
export interface DueEntry extends DueWork {
  version: string;
}

/** One page of intents, newest first. */
export interface IntentPage {
  items: StoredIntent[];
  /** The position to pass as `before` for the next page; null on the last page. */
  next: number | null;
}

/**
 * Why the storage cannot write, when the cause is known to be the storage
 * itself: it is full, it is read-only, or another process holds its lock
 * past the retries, or the disk fails, or other writes to the same keys (an
 * intent's, a document's pending counts) kept winning past the retries. Such
 * a write may succeed later or on another instance.
 */
export type StorageFailure = "full" | "read_only" | "locked" | "io" | "contended";

/** A short phrase per storage failure, safe to show (no paths, no internals). */
export const STORAGE_FAILURE_TEXT: Readonly<Record<StorageFailure, string>> = {
  full: "storage full",
  read_only: "storage is read-only",
  locked: "storage is locked by another process",
  io: "storage I/O error",
  contended: "other writes to the same data keep coming first",
};

/**
 * Thrown by a {@link Store} write that failed because the storage cannot
 * write (see {@link StorageFailure}). Nothing of that write was stored; the
 * edge answers `unavailable`, which a client may retry. The storage's
 * own error is the `cause`.
 */
export class StorageUnavailableError extends Error {
  override name = "StorageUnavailableError";
  /**
   * @param failure what is wrong with the storage.
   * @param options `cause`: the storage's own error.
   */
  constructor(readonly failure: StorageFailure, options?: ErrorOptions) {
    super(STORAGE_FAILURE_TEXT[failure], options);
  }
}

/** The outcome of the store's latest commit attempt (for readiness). */
export interface CommitAttempt {
  /** When the attempt ended. */
  at: Date;
  /** True when the storage carried the commit out (one that its checks refused included). */
  ok: boolean;
  /** When not ok: a short phrase for operators, e.g. "storage full". */
  failure?: string;
}

/** The storage port. */
export interface Store {
  /**
   * The reference an intent's commit checks for a template or policy, or
   * null when there is none. Documents are immutable, so a found reference
   * may be remembered; an absence never is.
   */
  findDocument(kind: DocumentKind, id: string): Promise<DocumentRef | null>;
  /**
   * A template or policy, or null. A found document may be remembered, and
   * an absence for a moment (`GET /templates/{id}` reads it at every call):
   * one stored meanwhile by another process may read as absent that long.
   */
  getDocument(kind: DocumentKind, id: string): Promise<StoredDocument | null>;
  /**
   * Stores a document under its id unless present: documents are immutable.
   * One with rules (`ruled`) is stored where versions before rules do not
   * look (docs/interface.md §15); both places are read. Like every write of
   * the port, it throws {@link StorageUnavailableError} when the storage
   * cannot write.
   */
  putDocument(
    kind: DocumentKind,
    id: string,
    doc: StoredDocument,
    options?: { ruled?: boolean },
  ): Promise<"created" | "exists">;

  /**
   * Stores intents with distinct ids, each exactly once, stamping their
   * acceptance time and their feed positions in the commit that stores them.
   *
   * @returns one result per input, in order.
   * @throws the error of a commit, when the store cannot say which inserts it failed.
   */
  insertIntents(batch: readonly PendingIntent[]): Promise<BatchResult[]>;
  /** One intent by its stored id, as its latest event left it, or null. */
  getIntent(id: string): Promise<StoredIntent | null>;
  /**
   * Changes a stored intent (an approval, its acceptance, its expiry): reads
   * it, asks `decide` for its next record, and stores that as a new event in
   * one commit checked against the intent as it was read. When another change
   * came first (another process), it reads again and asks again, so a
   * decision is always made on what the intent holds.
   *
   * @returns the new record; null when there is no such intent or `decide` left it.
   */
  changeIntent(id: string, decide: DecideChange): Promise<StoredIntent | null>;
  /**
   * Intents newest first, as they stand at `now` (default: the store's clock).
   *
   * @param options.before only intents stored at feed positions below this one.
   * @param options.state only intents in this state at `now`.
   */
  listIntents(
    options: { limit: number; before?: number; state?: IntentState; now?: Date },
  ): Promise<IntentPage>;

  /**
   * Due work of one kind, earliest first (by its time, then id): at most
   * `limit` entries, due or not.
   */
  listDueWork(options: { kind: string; limit: number }): Promise<DueEntry[]>;
  /** Adds work that falls due at `work.at` (kept until done or dropped). */
  putDueWork(work: DueWork): Promise<void>;
  /**
   * Removes an entry of due work that needs doing no more, unless it changed
   * since it was read.
   *
   * @returns whether it was removed.
   */
  dropDueWork(entry: DueEntry): Promise<boolean>;

  /** True when `position` is one the feed has handed out: from 1 to its newest event. */
  isPosition(position: number): Promise<boolean>;
  /**
   * The events after position `after`, in feed order: at most `limit` of
   * them, and no more once their bodies pass `maxBytes` (at least one, when
   * there is one).
   */
  readEvents(options: { after: number; limit: number; maxBytes?: number }): Promise<IntentEvent[]>;
  /**
   * Resolves once the feed holds an event after `after` (true), or when
   * `timeoutMs` passes or `signal` aborts first (false). Events stored by
   * other processes sharing the storage count too.
   */
  waitForEvents(
    after: number,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<boolean>;
  /**
   * Calls `listener` with the events of each commit this store makes, in
   * feed order, as it commits them (before waiting readers wake): what a
   * reader would read back, without the read. Events of other processes are
   * not told.
   *
   * @returns a function that stops the calls.
   */
  onOwnEvents(listener: (events: IntentEvent[]) => void): () => void;

  /** The runtime configuration and its version (null when never set). */
  getConfig(): Promise<{ value: StoredConfig | null; version: string | null }>;
  /**
   * Writes the runtime configuration.
   *
   * @param expected when given, the write happens only if the current version
   *   is one of these (`null` standing for "never set").
   * @returns the new version, or null when `expected` did not match.
   */
  setConfig(value: StoredConfig, expected?: readonly (string | null)[]): Promise<string | null>;

  /** True when the storage answers a read. */
  ping(): Promise<boolean>;
  /**
   * The latest commit attempt of this process, or null before the first.
   * Kept in memory as commits happen: asking costs no storage access.
   */
  lastCommit(): CommitAttempt | null;
}
