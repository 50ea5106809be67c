/**
 * The block layout of the feed, and what fits in one Deno KV commit.
 *
 * The events of one commit are stored together, in blocks of at most
 * {@link BLOCK_BYTES} (a KV value holds at most 64 KiB), and every commit
 * stays within the strictest published per-commit limits, denokv's
 * ({@link KV_COMMIT_LIMITS}): a local SQLite file allows more, and nothing
 * may rely on that. Sizes are estimated from above, so a planned commit
 * never exceeds a limit.
 *
 * Why blocks: intent ids are chosen by clients, so their keys land at random
 * places in the store's B-tree, and SQLite rewrites a whole page for each.
 * Keeping the records in blocks that append at the end of the key space,
 * and only a small pointer under the random key, spares most of that work.
 * @module
 */

import type { DocumentRef, NewIntent } from "../domain/intent.ts";
import { EVENT_FRAME_BYTES } from "./codec.ts";

/**
 * The limits of one atomic commit, as denokv enforces them (denoland/denokv
 * `proto/limits.rs`; the managed KV of Deno Deploy and KV Connect alike):
 * check keys count toward the mutation size but not toward the key size.
 */
export const KV_COMMIT_LIMITS = {
  checks: 10,
  mutations: 1000,
  /** Keys of checks and mutations plus values. */
  mutationBytes: 819_200,
  /** Keys of mutations. */
  keyBytes: 81_920,
} as const;

/** The largest value KV stores, in bytes. */
export const KV_VALUE_BYTES = 65_536;
/** The largest key KV stores, encoded, in bytes. */
export const KV_KEY_BYTES = 2_048;
/** Keys one `getMany` reads at most. */
export const KV_READ_KEYS = 10;

/** Reads `readKeys`, {@link KV_READ_KEYS} at a time, all at once; the entries in key order. */
export async function readMany(
  kv: Deno.Kv,
  readKeys: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const reads: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
  for (let i = 0; i < readKeys.length; i += KV_READ_KEYS) {
    reads.push(kv.getMany(readKeys.slice(i, i + KV_READ_KEYS)));
  }
  return (await Promise.all(reads)).flat();
}

/** Limits a commit plan stays within. */
export type CommitLimits = { readonly [K in keyof typeof KV_COMMIT_LIMITS]: number };

/** Largest estimated size of one block; estimates are from above. */
export const BLOCK_BYTES = KV_VALUE_BYTES - 512;

/** Bytes of a string written as JSON (quotes included), from above. */
function jsonStringBytes(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Escapes (\", \\, \u00XX, a lone surrogate's \uXXXX) take up to 6 bytes.
    n += c < 0x20 || (c >= 0xd800 && c <= 0xdfff)
      ? 6
      : c === 0x22 || c === 0x5c
      ? 2
      : c < 0x80
      ? 1
      : c < 0x800
      ? 2
      : 3;
  }
  return n;
}

/** An RFC 3339 time as `Date#toISOString` writes it (years 0–9999), quoted. */
const TIME_BYTES = 26;
/** A JSON number: a safe integer or a position, at most 16 digits and a sign. */
const NUMBER_BYTES = 17;
/**
 * An event's JSON besides its strings and approval: member names, the type
 * (`intent.rejection_added` at most), variant, kind, state, `counted`, the
 * acceptance time and the position.
 */
const EVENT_FIXED_BYTES = 200 + TIME_BYTES + NUMBER_BYTES;

/**
 * The stored size of an intent's event in a block, from above, as it stands
 * once every signer has decided (a later event holds the record so far).
 */
export function eventBytes(intent: NewIntent): number {
  let meta = EVENT_FIXED_BYTES + jsonStringBytes(intent.id) + jsonStringBytes(intent.refId);
  for (const signer of intent.authorship.signers) meta += jsonStringBytes(signer) + 1;
  return EVENT_FRAME_BYTES + meta + approvalBytes(intent.quorum) + intent.body.byteLength;
}

/**
 * What an approval or rejection entry adds besides its key and time:
 * `{"key":,"kind":"Passkey","at":,"sig":"<43 characters>"},` and the comma
 * after the key in `signers`.
 */
const DECISION_ENTRY_BYTES = 90;

/**
 * What a record's approval adds, from above: each signer in `signers` with
 * its weight, and once among the approvals or rejections (each key decides
 * once) with a kind, a time and its signature's digest.
 */
function approvalBytes(quorum: NewIntent["quorum"]): number {
  if (!quorum) return 0;
  let bytes = 120 + NUMBER_BYTES + TIME_BYTES;
  for (const { keyText } of quorum.signers.values()) {
    bytes += 2 * jsonStringBytes(keyText) + NUMBER_BYTES + DECISION_ENTRY_BYTES + TIME_BYTES;
  }
  return bytes;
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

/** A pointer's or the head's value, from above. */
export const SMALL_VALUE_BYTES = 40;

/** What a part of a commit costs against each of {@link KV_COMMIT_LIMITS}. */
export type CommitCost = { -readonly [K in keyof typeof KV_COMMIT_LIMITS]: number };

/**
 * The costs of a commit's parts as Deno's client counts them before it
 * sends a commit (`op_kv_atomic_write`): the key of every check and mutation
 * once toward the mutation size, and a set's key again with its value, and
 * toward the key size. Sizes are from above.
 */
export const cost = {
  check: (key: number): CommitCost => ({
    checks: 1,
    mutations: 0,
    mutationBytes: key,
    keyBytes: 0,
  }),
  set: (key: number, value: number): CommitCost => ({
    checks: 0,
    mutations: 1,
    mutationBytes: 2 * key + value,
    keyBytes: key,
  }),
  remove: (key: number): CommitCost => ({
    checks: 0,
    mutations: 1,
    mutationBytes: key,
    keyBytes: 0,
  }),
  none: (): CommitCost => ({ checks: 0, mutations: 0, mutationBytes: 0, keyBytes: 0 }),
};

/** `a` plus each of `more`, as a new cost. */
export function plus(a: CommitCost, ...more: CommitCost[]): CommitCost {
  const sum = { ...a };
  for (const b of more) {
    sum.checks += b.checks;
    sum.mutations += b.mutations;
    sum.mutationBytes += b.mutationBytes;
    sum.keyBytes += b.keyBytes;
  }
  return sum;
}

/** True when a commit costing `total` stays within `limits`. */
export function within(total: CommitCost, limits: CommitLimits = KV_COMMIT_LIMITS): boolean {
  return total.checks <= limits.checks && total.mutations <= limits.mutations &&
    total.mutationBytes <= limits.mutationBytes && total.keyBytes <= limits.keyBytes;
}

/** One intent to place in a commit, and the document read its commit checks, if any. */
export interface Placement {
  intent: NewIntent;
  ref?: DocumentRef;
}

/** The identity of a document read: a commit checks each distinct one once. */
export function refIdentity(ref: DocumentRef): string {
  return `${ref.kind}/${ref.id}@${ref.version}`;
}
