/**
 * The pending limit of a governed document (docs/interface.md §12,
 * `MAX_PENDING_PER_SIGNER`) applied to the members of one commit, over the
 * counts `document_counts.ts` read.
 * @module
 */

import type { NewIntent } from "../domain/intent.ts";
import type { PendingIntent } from "../domain/store.ts";

/** Counts by key, as read and as changed so far. */
export interface AdmissionCounts<K> {
  /** The count of `key` as read. */
  stored(key: K): number;
  /** The count of `key` with the changes made so far. */
  current(key: K): number;
  /** Adds `by` to each of `keys`. */
  add(keys: readonly K[], by: number): void;
}

/**
 * Applies `maxPending` to the pending intents among `members` (indexes into
 * `batch`, in order), against the counts read; counts the admitted ones.
 *
 * @param countKeys the keys whose counts a new pending intent raises.
 * @returns the members refused (a key has `maxPending` pending already), and
 *   how many leading members the commit may carry: one whose admission
 *   depends on an earlier member of the same commit waits for the next one,
 *   where that member's outcome is known.
 */
export function admitPending<K>(
  batch: readonly PendingIntent[],
  members: readonly number[],
  counts: AdmissionCounts<K>,
  countKeys: (intent: NewIntent) => K[],
): { refused: number[]; carry: number } {
  const refused: number[] = [];
  let carry = members.length;
  members.forEach((i, k) => {
    const { intent, maxPending } = batch[i];
    if (intent.state !== "pending") return;
    const counted = countKeys(intent);
    const limit = maxPending ?? Infinity;
    if (counted.some((key) => counts.stored(key) >= limit)) refused.push(i);
    else if (counted.some((key) => counts.current(key) >= limit)) carry = Math.min(carry, k);
    else if (k < carry) counts.add(counted, 1);
  });
  return { refused, carry };
}
