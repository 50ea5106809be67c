/**
 * Group commit: concurrent intent inserts share Deno KV atomic commits.
 *
 * A file-backed KV commit costs about 255 µs whatever it carries, so one
 * commit per request caps a server near 4,000 inserts/s. Here an insert that
 * arrives while no commit is in flight starts one at once (no timer, so no
 * added latency at low load); inserts that arrive while a commit is in flight
 * queue up and go together in the next one. Each batch stays within Deno KV's
 * per-commit limits by count, checks, mutations and bytes.
 *
 * The intents of one batch are stamped with one acceptance time, taken when
 * their commit starts (their `received_at`).
 *
 * Every promise of the single-commit path holds: an insert answers "created"
 * only after the commit carrying it resolved ok; a failed check of one member
 * never fails the others (the store finds out which check failed and commits
 * the rest again); the template/policy check is in the same commit as the
 * write; a KV error rejects every waiter of that commit and, the commit being
 * atomic, leaves nothing half-written.
 * @module
 */

import type { IntentWriter } from "../domain/submit.ts";
import {
  type InsertOutcome,
  keys,
  type PendingInsert,
  recordBytes,
  startsBlock,
  WRITER_ID_LENGTH,
} from "./store.ts";

/**
 * Deno KV's limits on one atomic commit, as enforced by Deno 2.9 (checked by
 * committing past each one). Check keys count toward the mutation size but
 * not toward the key size.
 */
export const KV_COMMIT_LIMITS = {
  checks: 100,
  mutations: 1000,
  /** Keys of checks and mutations plus serialized values. */
  mutationBytes: 819_200,
  /** Keys of mutations. */
  keyBytes: 81_920,
} as const;

/** Commits a batch of inserts with distinct ids; one outcome per input, in order. */
export type CommitBatch = (batch: readonly PendingInsert[]) => Promise<InsertOutcome[]>;

/** Options of {@link createGroupCommitWriter}. */
export interface GroupCommitOptions {
  /** The most inserts one commit carries (at least 1). */
  batchMax: number;
  /** Commits one batch, e.g. `(b) => store.insertIntents(b)`. */
  commit: CommitBatch;
  /** Limits to stay within; defaults to {@link KV_COMMIT_LIMITS}. */
  limits?: typeof KV_COMMIT_LIMITS;
  /** The clock that stamps each batch; defaults to the system clock. */
  now?: () => Date;
}

/** What one insert adds to a commit, estimated from above. */
export interface InsertCost {
  /** Bytes toward the total mutation size, the template/policy check excluded. */
  mutationBytes: number;
  /** Bytes toward the total key size. */
  keyBytes: number;
  /** Bytes of the template/policy check, counted once per distinct reference. */
  refCheckBytes: number;
  /** Estimated serialized bytes of the record, which decide the blocks (`planBlocks`). */
  recordBytes: number;
}

/** Bytes of one string part in an encoded KV key: tag, UTF-8 with NUL escaped, terminator. */
function keyStringBytes(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Surrogate halves count 3 each: a pair is 4 bytes, a lone one 3.
    n += c === 0 ? 2 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return n;
}

function keyBytes(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) {
    // Numbers (and anything else the service never uses) take a tag and 8 bytes;
    // 16 leaves room for other part types.
    n += typeof part === "string" ? keyStringBytes(part) : 16;
  }
  return n;
}

/** Key bytes of a block (two numbers and a writer id), from above. */
const BLOCK_KEY_BYTES = keyBytes(keys.intentBlock(0, 0, "0".repeat(WRITER_ID_LENGTH)));

/**
 * Estimates, from above, what one insert adds to a commit: the id check, the
 * pointer, the record in its block, and the template/policy check; and what
 * each block adds (see `store.ts` for the layout).
 */
export function insertCost(pending: PendingInsert): InsertCost {
  const { record, ref } = pending;
  const intentKey = keyStringBytes("intents") + keyStringBytes(record.id);
  // A pointer: an array of three numbers and a 16-character string.
  const pointerValue = 96;
  const bytes = recordBytes(record);
  return {
    mutationBytes: intentKey /* check */ + intentKey + pointerValue + bytes,
    keyBytes: intentKey,
    refCheckBytes: keyBytes(ref.key),
    recordBytes: bytes,
  };
}

function refIdentity(pending: PendingInsert): string {
  const { key, versionstamp } = pending.ref;
  return `${String(key[0])}/${String(key[1])}@${versionstamp}`;
}

interface Waiter {
  pending: PendingInsert;
  cost: InsertCost;
  resolve: (outcome: InsertOutcome) => void;
  reject: (error: unknown) => void;
}

/** A batch taken from the queue: members with distinct ids, and later inserts of those ids. */
interface Batch {
  members: Waiter[];
  /** Index into `members` of the first insert of the same id, per duplicate. */
  duplicates: { waiter: Waiter; of: number }[];
}

/**
 * Builds a writer that groups concurrent inserts into shared commits.
 *
 * Within a batch, a later insert of an id already in it is not committed: it
 * waits for the first; when that one is created or already existed, it
 * answers "exists" (the first wins); otherwise it is queued again and tried on
 * its own.
 *
 * @example
 * ```ts
 * const store = new Store(kv);
 * const writer = createGroupCommitWriter({ batchMax: 32, commit: (b) => store.insertIntents(b) });
 * const outcome = await writer.insert({ record, ref });
 * ```
 * @throws {RangeError} when `batchMax` is not a whole number of at least 1.
 */
export function createGroupCommitWriter(options: GroupCommitOptions): IntentWriter {
  const { batchMax, commit, now = () => new Date() } = options;
  const limits = options.limits ?? KV_COMMIT_LIMITS;
  if (!Number.isInteger(batchMax) || batchMax < 1) {
    throw new RangeError("batchMax must be a whole number of at least 1");
  }
  let queue: Waiter[] = [];
  let running = false;

  /** Takes the longest prefix of the queue that fits one commit (always at least one). */
  function takeBatch(): Batch {
    const members: Waiter[] = [];
    const duplicates: Batch["duplicates"] = [];
    const ids = new Map<string, number>();
    const refs = new Set<string>();
    let checks = 0;
    let mutations = 0;
    let mutationBytes = 0;
    let keyBytesTotal = 0;
    // The block being filled, as the store will plan it (`planBlocks`).
    let blockFill = 0;
    let taken = 0;
    for (; taken < queue.length; taken++) {
      const waiter = queue[taken];
      const first = ids.get(waiter.pending.record.id);
      if (first !== undefined) {
        duplicates.push({ waiter, of: first });
        continue;
      }
      const { cost } = waiter;
      const ref = refIdentity(waiter.pending);
      const newRef = !refs.has(ref);
      const newBlock = startsBlock(blockFill, cost.recordBytes);
      const addChecks = newRef ? 2 : 1;
      const addMutations = newBlock ? 2 : 1;
      const addKeyBytes = cost.keyBytes + (newBlock ? BLOCK_KEY_BYTES : 0);
      const addBytes = cost.mutationBytes + (newRef ? cost.refCheckBytes : 0) +
        (newBlock ? BLOCK_KEY_BYTES : 0);
      if (
        members.length > 0 && (
          members.length + 1 > batchMax ||
          checks + addChecks > limits.checks ||
          mutations + addMutations > limits.mutations ||
          mutationBytes + addBytes > limits.mutationBytes ||
          keyBytesTotal + addKeyBytes > limits.keyBytes
        )
      ) break;
      ids.set(waiter.pending.record.id, members.length);
      if (newRef) refs.add(ref);
      members.push(waiter);
      checks += addChecks;
      mutations += addMutations;
      mutationBytes += addBytes;
      keyBytesTotal += addKeyBytes;
      blockFill = (newBlock ? 0 : blockFill) + cost.recordBytes;
    }
    queue = taken === queue.length ? [] : queue.slice(taken);
    return { members, duplicates };
  }

  async function commitBatch({ members, duplicates }: Batch): Promise<void> {
    // The members are accepted together: one time for all of them, taken as
    // their commit starts. A block of intents then covers one millisecond, so
    // blocks written by several processes list newest first by that time.
    const at = now();
    const receivedAt = at.toISOString();
    const receivedAtMs = at.getTime();
    for (const { pending: { record } } of members) {
      record.receivedAt = receivedAt;
      record.receivedAtMs = receivedAtMs;
    }
    let outcomes: InsertOutcome[] | undefined;
    try {
      outcomes = await commit(members.map((m) => m.pending));
      if (outcomes.length !== members.length) {
        throw new Error(`commit returned ${outcomes.length} outcomes for ${members.length}`);
      }
    } catch (error) {
      outcomes = undefined;
      for (const m of members) m.reject(error);
    }
    if (outcomes) { for (let i = 0; i < members.length; i++) members[i].resolve(outcomes[i]); }
    const retry: Waiter[] = [];
    for (const { waiter, of } of duplicates) {
      const first = outcomes?.[of];
      if (first === "created" || first === "exists") waiter.resolve("exists");
      else retry.push(waiter);
    }
    // Their first did not take the id: they are next in line, in arrival order.
    if (retry.length > 0) queue = retry.concat(queue);
  }

  async function run(): Promise<void> {
    try {
      while (queue.length > 0) await commitBatch(takeBatch());
    } finally {
      running = false;
    }
  }

  return {
    insert(pending: PendingInsert): Promise<InsertOutcome> {
      return new Promise<InsertOutcome>((resolve, reject) => {
        queue.push({ pending, cost: insertCost(pending), resolve, reject });
        if (!running) {
          running = true;
          // A microtask, not a timer: inserts made in the same turn join the
          // first commit, and a lone insert is not delayed.
          queueMicrotask(() => void run());
        }
      });
    },
  };
}
