/**
 * What fits in one Deno KV commit and read: denokv's limits
 * ({@link KV_COMMIT_LIMITS}; a local file allows more, and nothing may rely
 * on that), and sizes estimated from above, so a planned commit never
 * exceeds a limit (docs/decisions.md says why events are kept in blocks).
 * @module
 */

import type { DocumentRef, NewIntent } from "../domain/intent.ts";
import { EVENT_FRAME_BYTES } from "./codec.ts";

/** One atomic commit's limits, as denokv enforces them (`proto/limits.rs`). */
export const KV_COMMIT_LIMITS = {
  checks: 10,
  mutations: 1000,
  /** Keys of checks and mutations plus values. */
  mutationBytes: 819_200,
  /** Keys of mutations. */
  keyBytes: 81_920,
} as const;

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

/** Largest estimated size of one block: KV stores values of up to 64 KiB. */
export const BLOCK_BYTES = 65_536 - 512;

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
/** `"recordSha256":"<43 characters>",`: the `R` a new intent's event carries. */
const RECORD_SHA256_BYTES = 61;
/** An event's JSON besides its strings and approval (member names, type, state…). */
const EVENT_FIXED_BYTES = 200 + TIME_BYTES + NUMBER_BYTES + RECORD_SHA256_BYTES;

/** An intent's event's size in a block, from above, once every signer has decided. */
export function eventBytes(intent: NewIntent): number {
  let meta = EVENT_FIXED_BYTES + jsonStringBytes(intent.id) + jsonStringBytes(intent.refId);
  for (const signer of intent.authorship.signers) meta += jsonStringBytes(signer) + 1;
  const ruled = intent.ruled ? RULED_BYTES : 0;
  return EVENT_FRAME_BYTES + meta + approvalBytes(intent.quorum) + ruled + intent.body.byteLength;
}

/** What an approval under rules adds: both kinds and sixteen rule indices, from above. */
const RULED_BYTES = 128;

/** An approval or rejection entry besides its key and time: `{"key":,"kind":,"at":,"sig":}`. */
const DECISION_ENTRY_BYTES = 90;

/** What a record's approval adds, from above: each signer with its weight and its decision. */
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
 * The costs of a commit's parts as Deno's client counts them
 * (`op_kv_atomic_write`): every key once toward the mutation size, a set's
 * key again with its value, and toward the key size.
 */
export const cost = {
  check: (key: number): CommitCost => ({ ...cost.none(), checks: 1, mutationBytes: key }),
  set: (key: number, value: number): CommitCost => ({
    ...cost.none(),
    mutations: 1,
    mutationBytes: 2 * key + value,
    keyBytes: key,
  }),
  remove: (key: number): CommitCost => ({ ...cost.none(), mutations: 1, mutationBytes: key }),
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
