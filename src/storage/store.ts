/**
 * The one module that owns every Deno KV key and every atomic commit.
 * It is handed an open `Deno.Kv`; it never opens one itself.
 *
 * Keys:
 * - `["intent_batches", receivedAtMs, seq, writer]` → {@link StoredIntent}[]: the
 *   intents of one commit, oldest first, in blocks of at most {@link BLOCK_BYTES}
 *   bytes; keyed by the first intent's time and acceptance counter and the
 *   writing store's random id, so listing them in reverse is newest first.
 * - `["intents", id]` → {@link IntentPointer}: where in which block the intent is.
 *   It is what makes an id unique (each commit checks it is absent).
 * - `["templates", id]`, `["policies", id]` → {@link StoredDocument}
 * - `["config", "runtime"]` → {@link StoredConfig}
 *
 * Why blocks: the intent ids are chosen by clients, so their keys land at
 * random places in the store's B-tree, and SQLite rewrites a whole page for
 * each. Keeping the ~1 KB records in blocks that append at the end, and only
 * a small pointer under the random key, halves the storage work per intent.
 *
 * Stores written by earlier versions kept each record under `["intents", id]`
 * with an index `["intents_by_time", receivedAtMs, seq, id]` → id;
 * {@link Store.migrateLegacyIntents} moves them into blocks.
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

/**
 * Where an intent is stored: the key parts of its block after the prefix
 * (`receivedAtMs`, `seq`, `writer`), and its index in the block.
 */
export type IntentPointer = [receivedAtMs: number, seq: number, writer: string, index: number];

/** An insert waiting to be committed: the record and the template/policy read it depends on. */
export interface PendingInsert {
  record: StoredIntent;
  ref: DocumentRef;
}

/** Every KV key the service uses, built in one place. */
export const keys = {
  intent: (id: string): Deno.KvKey => ["intents", id],
  intentBlock: (receivedAtMs: number, seq: number, writer: string): Deno.KvKey => [
    "intent_batches",
    receivedAtMs,
    seq,
    writer,
  ],
  intentBlockPrefix: ["intent_batches"] as Deno.KvKey,
  /** The index of the earlier layout, emptied by {@link Store.migrateLegacyIntents}. */
  legacyIntentIndexPrefix: ["intents_by_time"] as Deno.KvKey,
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

/** The cursor of a listing position: base64url of the {@link IntentPointer} of the last item. */
function encodeCursor(position: IntentPointer): string {
  return base64urlnopad.encode(new TextEncoder().encode(JSON.stringify(position)));
}

const WRITER_ID = /^[0-9a-f]{1,32}$/;

/** True when `value` has the shape of an {@link IntentPointer}. */
function isPointer(value: unknown): value is IntentPointer {
  return Array.isArray(value) && value.length === 4 &&
    Number.isSafeInteger(value[0]) && value[0] >= 0 &&
    Number.isSafeInteger(value[1]) && value[1] >= 0 &&
    typeof value[2] === "string" && WRITER_ID.test(value[2]) &&
    Number.isSafeInteger(value[3]) && value[3] >= 0;
}

/** The position a cursor stands for; throws {@link InvalidCursorError} for anything else. */
function decodeCursor(cursor: string): IntentPointer {
  let position: unknown;
  try {
    position = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(base64urlnopad.decode(cursor)),
    );
  } catch {
    throw new InvalidCursorError("cursor is not valid");
  }
  if (!isPointer(position)) throw new InvalidCursorError("cursor is not valid");
  return position;
}

/**
 * Largest estimated size of one block. Deno KV refuses values over 65,536
 * bytes serialized; estimates are from above (see {@link recordBytes}) and an
 * array adds a few bytes, so this leaves a margin.
 */
export const BLOCK_BYTES = 64_000;

/** V8-serialized size of a string, from above: two bytes a character plus header. */
function valueStringBytes(s: string): number {
  return 2 * s.length + 8;
}

/**
 * The serialized size of a record, from above: every string at two bytes a
 * character and a generous overhead for member names, numbers and headers (a
 * record with a 61,440-byte body serializes to about 61,700 bytes and is
 * estimated at 62,000 to 65,000).
 */
export function recordBytes(record: StoredIntent): number {
  let strings = valueStringBytes(record.id) + valueStringBytes(record.variant) +
    valueStringBytes(record.refId) + valueStringBytes(record.receivedAt) +
    valueStringBytes(record.authorship.kind);
  for (const signer of record.authorship.signers) strings += valueStringBytes(signer);
  return record.body.byteLength + strings + 256;
}

/**
 * Whether a record of `size` estimated bytes starts a new block after a block
 * filled to `fill` (0: nothing open yet). The one rule for where blocks break,
 * shared with the group commit's accounting.
 */
export function startsBlock(fill: number, size: number): boolean {
  return fill === 0 || fill + size > BLOCK_BYTES;
}

/**
 * Splits records, in order, into blocks of at most {@link BLOCK_BYTES}
 * estimated bytes (a record larger than that gets a block of its own).
 *
 * @returns for each record, the block it goes in; blocks are numbered from 0.
 */
export function planBlocks(sizes: readonly number[]): number[] {
  const blockOf: number[] = new Array(sizes.length);
  let block = -1;
  let fill = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (startsBlock(fill, sizes[i])) {
      block++;
      fill = 0;
    }
    fill += sizes[i];
    blockOf[i] = block;
  }
  return blockOf;
}

/** Estimated record bytes moved by one migration commit. */
const MIGRATION_BYTES = 600_000;

/** Hex characters of a writer id (64 random bits). */
export const WRITER_ID_LENGTH = 16;

/** A random id per store, part of its block keys, so that stores sharing one KV never collide. */
function newWriterId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, WRITER_ID_LENGTH);
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
    const entry = await this.kv.get<IntentPointer | StoredIntent>(keys.intent(id));
    if (entry.value === null) return null;
    // A record of the earlier layout, not yet migrated.
    if (!isPointer(entry.value)) return entry.value;
    const [ms, seq, writer, index] = entry.value;
    const block = await this.kv.get<StoredIntent[]>(keys.intentBlock(ms, seq, writer));
    const record = block.value?.[index];
    return record && record.id === id ? record : null;
  }

  /** This store's random id, the last part of the block keys it writes. */
  readonly writerId: string = newWriterId();

  /**
   * Inserts one intent in a single atomic commit: the id is new, the
   * template/policy read is unchanged, and the record (in a block of its own)
   * and its pointer are written together.
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
        const { ref } = batch[i];
        op.check({ key: keys.intent(batch[i].record.id), versionstamp: null });
        // Many intents of a batch name the same template: check it once.
        const refId = `${refCacheKey(ref.key)}@${ref.versionstamp}`;
        if (!checkedRefs.has(refId)) {
          checkedRefs.add(refId);
          op.check(ref);
        }
      }
      this.#writeBlocks(op, open.map((i) => batch[i].record));
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
   * Adds to `op` the blocks holding `records` (in order) and each record's pointer.
   */
  #writeBlocks(
    op: Deno.AtomicOperation,
    records: readonly StoredIntent[],
    options: { freshWriterIds?: boolean } = {},
  ): void {
    const blockOf = planBlocks(records.map(recordBytes));
    let start = 0;
    while (start < records.length) {
      let end = start + 1;
      while (end < records.length && blockOf[end] === blockOf[start]) end++;
      const first = records[start];
      // This store's time and counter make its keys unique; records of the
      // earlier layout may share them (their counters were per process).
      const writer = options.freshWriterIds ? newWriterId() : this.writerId;
      const blockKey = keys.intentBlock(first.receivedAtMs, first.seq, writer);
      const block: StoredIntent[] = [];
      for (let i = start; i < end; i++) {
        const record = records[i];
        const pointer: IntentPointer = [first.receivedAtMs, first.seq, writer, i - start];
        op.set(keys.intent(record.id), pointer);
        block.push(exactBody(record));
      }
      if (options.freshWriterIds) op.check({ key: blockKey, versionstamp: null });
      op.set(blockKey, block);
      start = end;
    }
  }

  /**
   * Lists intents newest first.
   *
   * The cursor is the position (block and index) of the last intent of a
   * page, encoded (base64url of an {@link IntentPointer}); the next page
   * starts just before it.
   *
   * @param options.limit page size (1–100).
   * @param options.cursor the `cursor` of the previous page.
   * @throws {InvalidCursorError} when the cursor is not one this store hands out.
   */
  async listIntents(
    options: { limit: number; cursor?: string },
  ): Promise<{ items: StoredIntent[]; cursor: string | null }> {
    const { limit } = options;
    const items: StoredIntent[] = [];
    let last: IntentPointer | null = null;
    let more = false;
    /** Takes records of `block` from index `from` down; false once the page is full. */
    const take = (block: StoredIntent[], key: Deno.KvKey, from: number): boolean => {
      for (let index = from; index >= 0; index--) {
        if (items.length === limit) {
          more = true;
          return false;
        }
        items.push(block[index]);
        last = [key[1] as number, key[2] as number, key[3] as string, index];
      }
      return true;
    };
    const prefix = keys.intentBlockPrefix;
    let end: Deno.KvKey | undefined;
    if (options.cursor !== undefined) {
      const [ms, seq, writer, index] = decodeCursor(options.cursor);
      end = keys.intentBlock(ms, seq, writer);
      const block = await this.kv.get<StoredIntent[]>(end);
      if (block.value && index > 0) {
        take(block.value, end, Math.min(index, block.value.length) - 1);
      }
    }
    if (!more) {
      // Blocks hold one record or more: limit + 1 blocks fill the page and show what lies beyond.
      const selector = end ? { prefix, end } : { prefix };
      const blocks = this.kv.list<StoredIntent[]>(selector, {
        reverse: true,
        limit: limit + 1,
        batchSize: 4,
      });
      for await (const block of blocks) {
        if (!take(block.value, block.key, block.value.length - 1)) break;
      }
    }
    return { items, cursor: more && last ? encodeCursor(last) : null };
  }

  /**
   * Moves intents stored by earlier versions (a record under `["intents", id]`
   * and an index entry) into blocks, oldest first, a few at a time, each step
   * one atomic commit that checks the entries it replaces. Safe to run from
   * several processes at once and to interrupt: what one step moved is moved
   * whole.
   *
   * @returns how many intents were moved.
   */
  async migrateLegacyIntents(): Promise<number> {
    let moved = 0;
    for (;;) {
      const index: Deno.KvEntry<string>[] = [];
      // Two checks each, and one per block (at most one block each): within KV's 100 checks.
      const listed = this.kv.list<string>({ prefix: keys.legacyIntentIndexPrefix }, { limit: 30 });
      for await (const entry of listed) index.push(entry);
      if (index.length === 0) return moved;
      const records: Deno.KvEntryMaybe<StoredIntent>[] = [];
      for (let i = 0; i < index.length; i += 10) {
        // getMany reads at most 10 keys at a time.
        const chunk = index.slice(i, i + 10).map((entry) => keys.intent(entry.value));
        records.push(...await this.kv.getMany<StoredIntent[]>(chunk));
      }
      const op = this.kv.atomic();
      const move: StoredIntent[] = [];
      let bytes = 0;
      for (let i = 0; i < index.length; i++) {
        const record = records[i];
        const value = record.value !== null && !isPointer(record.value) ? record.value : null;
        // Within Deno KV's 800 KiB of mutations per commit: records may be up to 64 KiB.
        if (value) bytes += recordBytes(value);
        if (i > 0 && bytes > MIGRATION_BYTES) break;
        op.check(index[i]).check(record).delete(index[i].key);
        if (value) move.push(value);
      }
      this.#writeBlocks(op, move, { freshWriterIds: true });
      const result = await retryWhileLocked(() => op.commit());
      // A failed check: another process moved some of them first; read again.
      if (result.ok) moved += move.length;
    }
  }

  /**
   * Checks that the intents are stored whole: every pointer leads to a block
   * record of its id, every block record has the pointer that leads to it,
   * and nothing of the earlier layout is left.
   *
   * @returns every stored intent.
   * @throws {Error} naming the first inconsistency.
   */
  async auditIntents(): Promise<StoredIntent[]> {
    const positions = new Map<string, string>();
    const records: StoredIntent[] = [];
    for await (const block of this.kv.list<StoredIntent[]>({ prefix: keys.intentBlockPrefix })) {
      const [, ms, seq, writer] = block.key;
      if (!Array.isArray(block.value) || block.value.length === 0) {
        throw new Error(`block ${JSON.stringify(block.key)} is not a list of records`);
      }
      block.value.forEach((record, index) => {
        if (positions.has(record.id)) throw new Error(`intent ${record.id} is stored twice`);
        positions.set(record.id, JSON.stringify([ms, seq, writer, index]));
        records.push(record);
      });
    }
    let pointers = 0;
    for await (const entry of this.kv.list<unknown>({ prefix: ["intents"] })) {
      const id = entry.key[1] as string;
      if (!isPointer(entry.value)) throw new Error(`intent ${id} has no pointer`);
      if (positions.get(id) !== JSON.stringify(entry.value)) {
        throw new Error(`the pointer of intent ${id} does not lead to it`);
      }
      pointers++;
    }
    if (pointers !== positions.size) throw new Error("a block record has no pointer");
    for await (const _ of this.kv.list({ prefix: keys.legacyIntentIndexPrefix }, { limit: 1 })) {
      throw new Error("entries of the earlier layout are left");
    }
    return records;
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
