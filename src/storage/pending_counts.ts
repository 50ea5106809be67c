/**
 * How many intents each key has pending under each governed document
 * (docs/interface.md §12, `MAX_PENDING_PER_SIGNER`), kept in KV under
 * `["pending_by_signer", kind, documentId, key]` (see `keys.ts`).
 *
 * The counts change only in the commits that store a pending intent (up, one
 * per key that signed its submission) and that end one (down: an acceptance,
 * a rejection, the expiry). Both kinds of commit check and move the feed
 * head, so, as with the ids (`taken_ids.ts`), a read of the counts made after
 * the head was learned is still true when the commit's check of that head
 * passes: a count is never written from a stale read, and a commit that
 * admits a pending intent saw every pending intent committed before it. So
 * the limit holds exactly, across any number of processes sharing the KV.
 * @module
 */

import type { DocumentKind, NewIntent, StoredIntent } from "../domain/intent.ts";
import { keys } from "./keys.ts";
import { readMany } from "./read_many.ts";

/** The document kind of an intent's variant. */
function kindOf(variant: "A" | "B"): DocumentKind {
  return variant === "A" ? "template" : "policy";
}

/** The count keys a new pending intent moves: one per key that signed its submission. */
export function newIntentCountKeys(intent: NewIntent): Deno.KvKey[] {
  const kind = kindOf(intent.variant);
  return (intent.approvals ?? []).map((a) => keys.pendingBySigner(kind, intent.refId, a.key));
}

/**
 * The count keys a stored intent moved when it was stored pending (none when
 * it was not counted): its submission's keys are its first approvals, one per
 * key of its authorship.
 */
export function storedIntentCountKeys(intent: StoredIntent): Deno.KvKey[] {
  if (!intent.counted || !intent.approval) return [];
  const kind = kindOf(intent.variant);
  return intent.approval.approvals
    .slice(0, intent.authorship.signers.length)
    .map((a) => keys.pendingBySigner(kind, intent.refId, a.key));
}

/** Counts read, and changed, by key. */
export class PendingCounts {
  readonly #counts = new Map<string, { key: Deno.KvKey; read: number; now: number }>();

  /** The counts of `countKeys` as KV holds them now (0 where absent). */
  static async read(kv: Deno.Kv, countKeys: readonly Deno.KvKey[]): Promise<PendingCounts> {
    const counts = new PendingCounts();
    const distinct = new Map<string, Deno.KvKey>();
    for (const key of countKeys) distinct.set(JSON.stringify(key), key);
    const entries = await readMany(kv, [...distinct.values()]);
    for (const entry of entries) {
      const value = entry.value instanceof Deno.KvU64 ? Number(entry.value.value) : 0;
      counts.#counts.set(JSON.stringify(entry.key), { key: entry.key, read: value, now: value });
    }
    return counts;
  }

  /** The count of `key` as read. */
  stored(key: Deno.KvKey): number {
    return this.#counts.get(JSON.stringify(key))?.read ?? 0;
  }

  /** The count of `key` with the changes made so far. */
  current(key: Deno.KvKey): number {
    return this.#counts.get(JSON.stringify(key))?.now ?? 0;
  }

  /** Adds `by` (which may be negative) to each of `countKeys`; a count never goes below 0. */
  add(countKeys: readonly Deno.KvKey[], by: number): void {
    for (const key of countKeys) {
      const id = JSON.stringify(key);
      const entry = this.#counts.get(id) ?? { key, read: 0, now: 0 };
      entry.now = Math.max(0, entry.now + by);
      this.#counts.set(id, entry);
    }
  }

  /** Writes every changed count into `op`: its new value, or its removal at 0. */
  write(op: Deno.AtomicOperation): void {
    for (const { key, read, now } of this.#counts.values()) {
      if (now === read) continue;
      if (now === 0) op.delete(key);
      else op.set(key, new Deno.KvU64(BigInt(now)));
    }
  }
}
