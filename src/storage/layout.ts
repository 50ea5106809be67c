/**
 * The block layout of the feed, and what fits in one Deno KV commit.
 *
 * The events of one commit are stored together, in blocks of at most
 * {@link BLOCK_BYTES} (a KV value holds at most 64 KiB), and a commit stays
 * within KV's per-commit limits ({@link KV_COMMIT_LIMITS}). Sizes are
 * estimated from above, so a planned commit never exceeds a limit.
 *
 * Why blocks: intent ids are chosen by clients, so their keys land at random
 * places in the store's B-tree, and SQLite rewrites a whole page for each.
 * Keeping the ~1 KB records in blocks that append at the end of the key
 * space, and only a small pointer under the random key, halves the storage
 * work per intent.
 * @module
 */

import type { DocumentRef, NewIntent } from "../domain/intent.ts";
import { keys } from "./keys.ts";

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

/** Limits a commit plan stays within. */
export type CommitLimits = { readonly [K in keyof typeof KV_COMMIT_LIMITS]: number };

/**
 * Largest estimated size of one block. Deno KV refuses values over 65,536
 * bytes serialized; estimates are from above (see {@link eventBytes}) and an
 * array adds a few bytes, so this leaves a margin.
 */
const BLOCK_BYTES = 64_000;

/** V8-serialized size of a string, from above: two bytes a character plus header. */
function valueStringBytes(s: string): number {
  return 2 * s.length + 8;
}

/** An RFC 3339 time as `Date#toISOString` writes it (years 0–9999): 24 characters. */
const TIME_BYTES = valueStringBytes("2026-01-01T00:00:00.000Z");

/**
 * The serialized size of an intent's stored event, from above: every string
 * at two bytes a character and a generous overhead for member names, numbers
 * and headers (an event with a 61,440-byte body serializes to about 61,800
 * bytes and is estimated at 62,000 to 65,000).
 */
function eventBytes(intent: NewIntent): number {
  let strings = valueStringBytes(intent.id) + valueStringBytes(intent.variant) +
    valueStringBytes(intent.refId) + valueStringBytes(intent.authorship.kind) + TIME_BYTES +
    valueStringBytes("intent.approval_added") + valueStringBytes("accepted");
  for (const signer of intent.authorship.signers) strings += valueStringBytes(signer);
  return intent.body.byteLength + strings + governanceBytes(intent.governance) + 256;
}

/**
 * What a record's approval adds, from above, as it stands once every signer
 * has approved (an approval's event holds the record so far).
 */
function governanceBytes(governance: NewIntent["governance"]): number {
  if (!governance) return 0;
  let bytes = TIME_BYTES + 128;
  for (const key of Object.keys(governance.signers)) {
    // The key in `signers` with its weight, and in `approvals` with a kind and a time.
    bytes += 2 * valueStringBytes(key) + valueStringBytes("Passkey") + TIME_BYTES + 64;
  }
  return bytes;
}

/** What a queue message asking for an intent's expiry adds to a commit, from above. */
const EXPIRY_MESSAGE_BYTES = 512;

/**
 * Whether an event of `size` estimated bytes starts a new block after a block
 * filled to `fill` (0: nothing open yet). The one rule for where blocks break.
 */
function startsBlock(fill: number, size: number): boolean {
  return fill === 0 || fill + size > BLOCK_BYTES;
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

/** Bytes of an encoded KV key, from above. */
export function keyBytes(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) {
    // Numbers (and anything else the service never uses) take a tag and 8 bytes;
    // 16 leaves room for other part types.
    n += typeof part === "string" ? keyStringBytes(part) : 16;
  }
  return n;
}

/** A number value (the head, a pointer's parts) serialized, from above. */
const NUMBER_VALUE_BYTES = 16;
const BLOCK_KEY_BYTES = keyBytes(keys.events(Number.MAX_SAFE_INTEGER));
const HEAD_KEY_BYTES = keyBytes(keys.feedHead);

/** What a commit that adds events costs before any event: the head's check and new value. */
const COMMIT_BASE = {
  checks: 1,
  mutations: 1,
  mutationBytes: 2 * HEAD_KEY_BYTES + NUMBER_VALUE_BYTES,
  keyBytes: HEAD_KEY_BYTES,
};

/** One intent to place in a commit, and the document read its commit checks, if any. */
export interface Placement {
  intent: NewIntent;
  ref?: DocumentRef;
}

/** The identity of a document read: a commit checks each distinct one once. */
export function refIdentity(ref: DocumentRef): string {
  return `${ref.kind}/${ref.id}@${ref.version}`;
}

/** The leading part of a list of placements that one commit carries, and its blocks. */
export interface CommitPlan {
  /** How many of the leading placements the commit carries (at least one). */
  count: number;
  /** For each of them, its block in the commit (numbered from 0). */
  blockOf: number[];
}

/**
 * Plans the next commit: the longest prefix of `placements` that stays within
 * `limits` — each intent's id check, pointer and event, each distinct
 * document check once, each block's key, and the feed head — and the blocks
 * its events go in. The first placement is always taken: alone, any intent
 * the service accepts fits.
 */
export function planCommit(
  placements: readonly Placement[],
  limits: CommitLimits = KV_COMMIT_LIMITS,
): CommitPlan {
  const total = { ...COMMIT_BASE };
  const refs = new Set<string>();
  const blockOf: number[] = [];
  let block = -1;
  let fill = 0;
  for (const { intent, ref } of placements) {
    const size = eventBytes(intent);
    const newBlock = startsBlock(fill, size);
    const identity = ref ? refIdentity(ref) : undefined;
    const newRef = identity !== undefined && !refs.has(identity);
    const idKey = keyBytes(keys.intent(intent.id));
    const refKey = newRef ? keyBytes(keys.document(ref!.kind, ref!.id)) : 0;
    const blockKey = newBlock ? BLOCK_KEY_BYTES : 0;
    const expiry = intent.state === "pending" ? 1 : 0;
    const add = {
      checks: 1 + (newRef ? 1 : 0),
      mutations: 1 + (newBlock ? 1 : 0) + expiry,
      // The id's check and pointer, the event, the document's check, the block's key.
      mutationBytes: 2 * idKey + 2 * NUMBER_VALUE_BYTES + size + refKey + blockKey +
        expiry * EXPIRY_MESSAGE_BYTES,
      keyBytes: idKey + blockKey,
    };
    if (
      blockOf.length > 0 && (
        total.checks + add.checks > limits.checks ||
        total.mutations + add.mutations > limits.mutations ||
        total.mutationBytes + add.mutationBytes > limits.mutationBytes ||
        total.keyBytes + add.keyBytes > limits.keyBytes
      )
    ) break;
    total.checks += add.checks;
    total.mutations += add.mutations;
    total.mutationBytes += add.mutationBytes;
    total.keyBytes += add.keyBytes;
    if (newRef) refs.add(identity);
    if (newBlock) {
      block++;
      fill = 0;
    }
    fill += size;
    blockOf.push(block);
  }
  return { count: blockOf.length, blockOf };
}
