/**
 * The one module that owns every Deno KV key and every atomic commit.
 * It is handed an open `Deno.Kv`; it never opens one itself.
 *
 * Keys:
 * - `["intents", id]` → {@link StoredIntent}
 * - `["intents_by_time", receivedAtMs, seq, id]` → id (index, newest first by reverse listing)
 * - `["templates", id]`, `["policies", id]` → {@link StoredDocument}
 * - `["config", "runtime"]` → {@link StoredConfig}
 * @module
 */

import { base64urlnopad } from "@scure/base";

/** Kinds of content-addressed documents. */
export type DocumentKind = "template" | "policy";

/** A stored template or policy: the exact bytes and the content type they came with. */
export interface StoredDocument {
  contentType: string;
  bytes: Uint8Array;
}

/** Who authorized an intent. */
export interface Authorship {
  kind: "Ed25519" | "Passkey" | "Multisig" | "Unsigned";
  signers: string[];
}

/** An accepted intent as kept in KV. The request body is kept as the exact bytes received. */
export interface StoredIntent {
  id: string;
  variant: "A" | "B";
  /** The template id (Variant A) or policy id (Variant B). */
  refId: string;
  authorship: Authorship;
  /** RFC 3339 time of acceptance. */
  receivedAt: string;
  /** Milliseconds since the epoch of `receivedAt`; orders the index. */
  receivedAtMs: number;
  /**
   * This process's acceptance counter: orders intents accepted in the same
   * millisecond, newest first, in the index.
   */
  seq: number;
  body: Uint8Array;
}

/** The runtime configuration as kept in KV. */
export interface StoredConfig {
  evidence_extractor_url: string;
  updated_at: string;
}

/** A read document together with the versionstamp its commit must check. */
export interface DocumentRef {
  key: Deno.KvKey;
  versionstamp: string;
}

/** Outcome of an intent insert. */
export type InsertOutcome = "created" | "exists" | "reference_changed";

/** An insert waiting to be committed: the record and the template/policy read it depends on. */
export interface PendingInsert {
  record: StoredIntent;
  ref: DocumentRef;
}

/** Every KV key the service uses, built in one place. */
export const keys = {
  intent: (id: string): Deno.KvKey => ["intents", id],
  intentIndex: (record: Pick<StoredIntent, "receivedAtMs" | "seq" | "id">): Deno.KvKey => [
    "intents_by_time",
    record.receivedAtMs,
    record.seq,
    record.id,
  ],
  intentIndexPrefix: ["intents_by_time"] as Deno.KvKey,
  document: (kind: DocumentKind, id: string): Deno.KvKey => [
    kind === "template" ? "templates" : "policies",
    id,
  ],
  config: ["config", "runtime"] as Deno.KvKey,
  health: ["health"] as Deno.KvKey,
};

/**
 * The record with a body that owns exactly its bytes: Deno KV serializes a
 * typed array's whole underlying buffer, so a view into a larger buffer would
 * store (and count against the 64 KiB value limit) more than the body.
 */
function exactBody(record: StoredIntent): StoredIntent {
  const { body } = record;
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return record;
  return { ...record, body: body.slice() };
}

/** Thrown when a list cursor is not one this store handed out. */
export class InvalidCursorError extends Error {
  override name = "InvalidCursorError";
}

/** Attempts of a write that finds a shared KV file locked by another process. */
const LOCKED_ATTEMPTS = 25;

/**
 * Runs a KV write, trying again while SQLite reports the file locked: with
 * several processes on one KV file, a writer whose snapshot is stale gets
 * SQLITE_BUSY at once rather than waiting, and nothing was written, so a
 * retry is safe (its checks run again).
 */
async function retryWhileLocked<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
    } catch (error) {
      const locked = error instanceof Error && /database is locked/i.test(error.message);
      if (!locked || attempt >= LOCKED_ATTEMPTS) throw error;
      // Jittered backoff so racing processes do not collide again in step.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.random() * Math.min(64, 2 ** attempt))
      );
    }
  }
}

/** Template/policy references a store remembers (a few hundred bytes each). */
const DOCUMENT_REFS_CACHED = 1024;

function refCacheKey(key: Deno.KvKey): string {
  return `${String(key[0])}/${String(key[1])}`;
}

/** The cursor of an index position: base64url of `[receivedAtMs, seq, id]`. */
function encodeCursor(key: Deno.KvKey): string {
  return base64urlnopad.encode(new TextEncoder().encode(JSON.stringify(key.slice(1))));
}

/** The index key a cursor stands for; throws {@link InvalidCursorError} for anything else. */
function decodeCursor(cursor: string): Deno.KvKey {
  let position: unknown;
  try {
    position = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(base64urlnopad.decode(cursor)),
    );
  } catch {
    throw new InvalidCursorError("cursor is not valid");
  }
  if (
    !Array.isArray(position) || position.length !== 3 ||
    !Number.isSafeInteger(position[0]) || position[0] < 0 ||
    !Number.isSafeInteger(position[1]) || position[1] < 0 ||
    typeof position[2] !== "string" || position[2].length === 0 || position[2].length > 256
  ) {
    throw new InvalidCursorError("cursor is not valid");
  }
  return [...keys.intentIndexPrefix, ...position];
}

/** Data functions over one `Deno.Kv`. */
export class Store {
  /** @param kv an open KV handle; the caller closes it. */
  constructor(readonly kv: Deno.Kv) {}

  /** Reads a template or policy with the versionstamp a later commit checks. */
  async getDocument(
    kind: DocumentKind,
    id: string,
  ): Promise<{ doc: StoredDocument; ref: DocumentRef } | null> {
    const entry = await this.kv.get<StoredDocument>(keys.document(kind, id));
    if (entry.versionstamp === null) return null;
    return { doc: entry.value, ref: { key: entry.key, versionstamp: entry.versionstamp } };
  }

  /**
   * The reference a submit commit checks for a template or policy, or null
   * when there is none. Documents are immutable and never deleted, so a found
   * reference stays valid: it is remembered (bounded) and the KV read is
   * skipped next time. The commit still checks it, so the template/policy
   * check stays atomic with the write; absence is never remembered, as a
   * document may be added at any time.
   */
  async getDocumentRef(kind: DocumentKind, id: string): Promise<DocumentRef | null> {
    const key = keys.document(kind, id);
    const cacheKey = refCacheKey(key);
    const cached = this.#refs.get(cacheKey);
    if (cached) {
      // Re-insert: the map's order is its eviction order (least recently used first).
      this.#refs.delete(cacheKey);
      this.#refs.set(cacheKey, cached);
      return cached;
    }
    const entry = await this.kv.get(key);
    if (entry.versionstamp === null) return null;
    const ref = { key, versionstamp: entry.versionstamp };
    this.#refs.set(cacheKey, ref);
    if (this.#refs.size > DOCUMENT_REFS_CACHED) {
      this.#refs.delete(this.#refs.keys().next().value!);
    }
    return ref;
  }

  /** Found document references, least recently used first. */
  readonly #refs = new Map<string, DocumentRef>();

  /** Stores a document under its id unless present: documents are immutable. */
  async putDocument(
    kind: DocumentKind,
    id: string,
    doc: StoredDocument,
  ): Promise<"created" | "exists"> {
    const key = keys.document(kind, id);
    const result = await retryWhileLocked(() =>
      this.kv.atomic().check({ key, versionstamp: null }).set(key, doc).commit()
    );
    return result.ok ? "created" : "exists";
  }

  /** Reads one intent. */
  async getIntent(id: string): Promise<StoredIntent | null> {
    const entry = await this.kv.get<StoredIntent>(keys.intent(id));
    return entry.value;
  }

  /**
   * Inserts one intent in a single atomic commit: the id is new, the
   * template/policy read is unchanged, and the record and its index entry are
   * written together.
   */
  async insertIntent(pending: PendingInsert): Promise<InsertOutcome> {
    const [outcome] = await this.insertIntents([pending]);
    return outcome;
  }

  /**
   * Inserts several intents with distinct ids in one atomic commit when they
   * all can be; when the shared commit fails, finds out which check failed
   * for which intent and commits the rest again, so that one intent's
   * conflict never fails another's. The caller keeps the batch within Deno
   * KV's per-commit limits (see `group_commit.ts`).
   *
   * @returns one outcome per input, in order; "created" only after its commit succeeded.
   * @throws {RangeError} when two inserts share an id: checks see the state
   *   before the commit, so both would pass and both would claim "created".
   * @throws the KV error of a failed commit or read; nothing of the call is then written.
   */
  async insertIntents(batch: readonly PendingInsert[]): Promise<InsertOutcome[]> {
    if (batch.length > 1) {
      const ids = new Set<string>();
      for (const { record } of batch) {
        if (ids.has(record.id)) throw new RangeError("a batch must not repeat an intent id");
        ids.add(record.id);
      }
    }
    const outcomes: (InsertOutcome | undefined)[] = new Array(batch.length);
    let open = batch.map((_, i) => i);
    let stalls = 0;
    while (open.length > 0) {
      const op = this.kv.atomic();
      const checkedRefs = new Set<string>();
      for (const i of open) {
        const { record, ref } = batch[i];
        const key = keys.intent(record.id);
        op.check({ key, versionstamp: null });
        // Many intents of a batch name the same template: check it once.
        const refId = `${refCacheKey(ref.key)}@${ref.versionstamp}`;
        if (!checkedRefs.has(refId)) {
          checkedRefs.add(refId);
          op.check(ref);
        }
        op.set(key, exactBody(record))
          .set(keys.intentIndex(record), record.id);
      }
      const result = await retryWhileLocked(() => op.commit());
      if (result.ok) {
        for (const i of open) outcomes[i] = "created";
        break;
      }
      // Some check failed: learn which, settle those, and retry the others.
      // getMany reads at most 10 keys: five intents (id and reference) per read,
      // all reads at once.
      const reads: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
      for (let j = 0; j < open.length; j += 5) {
        const readKeys: Deno.KvKey[] = [];
        for (const i of open.slice(j, j + 5)) {
          readKeys.push(keys.intent(batch[i].record.id), batch[i].ref.key);
        }
        reads.push(this.kv.getMany(readKeys));
      }
      const entries = (await Promise.all(reads)).flat();
      const still: number[] = [];
      open.forEach((i, k) => {
        const [existing, doc] = [entries[2 * k], entries[2 * k + 1]];
        // CONTRACT §4 orders a missing template/policy (400) before an existing id (409).
        if (doc.versionstamp !== batch[i].ref.versionstamp) {
          outcomes[i] = "reference_changed";
          this.#refs.delete(refCacheKey(batch[i].ref.key));
        } else if (existing.versionstamp !== null) outcomes[i] = "exists";
        else still.push(i);
      });
      if (still.length === open.length && ++stalls > 3) {
        // Every check passes on reading yet the commit keeps failing: give up
        // rather than spin; the callers answer 500 and store nothing.
        throw new Error("atomic commit keeps failing with passing checks");
      }
      open = still;
    }
    return outcomes as InsertOutcome[];
  }

  /**
   * Lists intents newest first.
   *
   * The cursor is the index position of the last intent of a page, encoded
   * (base64url of `[receivedAtMs, seq, id]`); the next page starts below it.
   *
   * @param options.limit page size (1–100).
   * @param options.cursor the `cursor` of the previous page.
   * @throws {InvalidCursorError} when the cursor is not one this store hands out.
   */
  async listIntents(
    options: { limit: number; cursor?: string },
  ): Promise<{ items: StoredIntent[]; cursor: string | null }> {
    const prefix = keys.intentIndexPrefix;
    const end = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const selector = end ? { prefix, end } : { prefix };
    const entries: Deno.KvEntry<string>[] = [];
    for await (
      const entry of this.kv.list<string>(selector, { reverse: true, limit: options.limit })
    ) entries.push(entry);
    let next: string | null = null;
    if (entries.length === options.limit) {
      const last = entries[entries.length - 1].key;
      // Only hand out a cursor when something lies beyond it.
      for await (const _ of this.kv.list({ prefix, end: last }, { reverse: true, limit: 1 })) {
        next = encodeCursor(last);
      }
    }
    const ids = entries.map((entry) => entry.value);
    const items: StoredIntent[] = [];
    for (let i = 0; i < ids.length; i += 10) {
      // getMany reads at most 10 keys at a time.
      const chunk = ids.slice(i, i + 10).map((id) => keys.intent(id));
      for (const entry of await this.kv.getMany<StoredIntent[]>(chunk)) {
        if (entry.value) items.push(entry.value);
      }
    }
    return { items, cursor: next };
  }

  /** Reads the runtime configuration and its versionstamp (null when never set). */
  async getConfig(): Promise<{ value: StoredConfig | null; versionstamp: string | null }> {
    const entry = await this.kv.get<StoredConfig>(keys.config);
    return { value: entry.value, versionstamp: entry.versionstamp };
  }

  /**
   * Writes the runtime configuration.
   *
   * @param expected when given, the write happens only if the current
   *   versionstamp is one of these (`null` standing for "never set").
   * @returns the new versionstamp, or null when `expected` did not match.
   */
  async setConfig(
    value: StoredConfig,
    expected?: readonly (string | null)[],
  ): Promise<string | null> {
    if (expected === undefined) {
      const result = await retryWhileLocked(() => this.kv.set(keys.config, value));
      return result.versionstamp;
    }
    const current = await this.kv.get(keys.config);
    if (!expected.includes(current.versionstamp)) return null;
    const result = await retryWhileLocked(() =>
      this.kv.atomic().check(current).set(keys.config, value).commit()
    );
    return result.ok ? result.versionstamp : null;
  }

  /** True when KV answers a read. */
  async ping(): Promise<boolean> {
    await this.kv.get(keys.health);
    return true;
  }
}
