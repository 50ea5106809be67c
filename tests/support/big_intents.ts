/**
 * Intents as large as the service stores them, for the tests that drive the
 * store's commit paths against KV's per-commit limits: ids of 128
 * characters, bodies of an exact size up to `MAX_STORED_BODY_BYTES`,
 * governed intents with sixteen signers, and a `KvStore` on a test store.
 * @module
 */

import type { DocumentKind, DocumentRef, NewIntent } from "../../src/domain/intent.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { keys } from "../../src/storage/keys.ts";
import type { TestStore } from "./stores.ts";

const utf8 = new TextEncoder();

/** A character of four UTF-8 bytes (a surrogate pair in JavaScript). */
export const FOUR_BYTE_CHAR = "\u{1F511}";

/**
 * An id of 128 characters, the most an id may have, unique by `n` (< 10,000):
 * four digits, then `char` 124 times.
 */
export function longId(n: number, char = FOUR_BYTE_CHAR): string {
  return String(n).padStart(4, "0") + char.repeat(124);
}

/**
 * A request body of exactly `bytes` bytes of UTF-8 JSON naming `id`, or the
 * smallest such body when `bytes` is less.
 */
export function bodyOf(id: string, bytes: number): Uint8Array {
  const start = `{"payload":{"id":${JSON.stringify(id)},"template_id":"t"},"pad":"`;
  const pad = Math.max(0, bytes - utf8.encode(start).length - 2);
  return utf8.encode(`${start}${"x".repeat(pad)}"}`);
}

/**
 * Sixteen signer keys of 89 characters, as long as a base58 key gets (an
 * uncompressed P-256 passkey key), so a governed record is as large as it gets.
 */
export const SIGNER_KEYS: readonly string[] = Array.from(
  { length: 16 },
  (_, i) => `${"ABCDEFGHJKLMNPQR"[i]}${"z".repeat(88)}`,
);

/** Options of {@link bigIntent}. */
export interface BigIntentOptions {
  /** Body size in bytes (see {@link bodyOf}). */
  bodyBytes: number;
  refId?: string;
  variant?: "A" | "B";
  /** Pending under a 16-of-16 quorum of {@link SIGNER_KEYS}, approved by the first so far. */
  pending?: boolean;
  /** Approval window of a pending intent, in seconds. */
  windowS?: number;
  /** How many of {@link SIGNER_KEYS} signed a pending intent's submission (a Multisig); default 1. */
  submittedBy?: number;
}

/** A verified intent as the store receives it. */
export function bigIntent(id: string, options: BigIntentOptions): NewIntent {
  const intent: NewIntent = {
    id,
    variant: options.variant ?? "A",
    refId: options.refId ?? "t",
    authorship: {
      kind: (options.submittedBy ?? 1) > 1 ? "Multisig" : "Ed25519",
      signers: SIGNER_KEYS.slice(0, options.submittedBy ?? 1),
    },
    body: bodyOf(id, options.bodyBytes),
    state: options.pending ? "pending" : "accepted",
  };
  if (options.pending) {
    intent.quorum = {
      signers: new Map(SIGNER_KEYS.map((key) => [key, { keyText: key, weight: 1 }])),
      threshold: SIGNER_KEYS.length,
      unsigned: false,
      approvalWindowS: options.windowS ?? 3600,
    };
    intent.approvals = SIGNER_KEYS.slice(0, options.submittedBy ?? 1).map((key) => ({
      key,
      kind: "Ed25519" as const,
      sig: `digest-of-${key.slice(0, 1)}`,
    }));
  }
  return intent;
}

/** Stores a small document and returns the reference an insert checks. */
export async function addDocument(
  store: KvStore,
  kind: DocumentKind,
  id: string,
): Promise<DocumentRef> {
  await store.putDocument(kind, id, { contentType: "text/plain", bytes: utf8.encode(id) });
  const ref = await store.findDocument(kind, id);
  if (!ref) throw new Error(`document ${kind}/${id} not found after storing it`);
  return ref;
}

/**
 * How many commits wrote the feed's blocks: the distinct versionstamps among
 * them (every block of one commit has its versionstamp).
 */
export async function blockCommits(kv: Deno.Kv): Promise<number> {
  const stamps = new Set<string>();
  for await (const block of kv.list({ prefix: keys.eventsPrefix })) stamps.add(block.versionstamp);
  return stamps.size;
}

/** A clock a test moves by hand. */
export interface Clock {
  ms: number;
}

/**
 * Runs `fn` with a `KvStore` on a handle of `store` of its own, its clock
 * `clock`, and closes the handle afterwards.
 */
export async function withKvStore(
  store: TestStore,
  clock: Clock,
  fn: (kvStore: KvStore, kv: Deno.Kv) => Promise<void>,
): Promise<void> {
  const kv = await store.open();
  try {
    await fn(new KvStore(kv, { now: () => new Date(clock.ms) }), kv);
  } finally {
    kv.close();
  }
}
