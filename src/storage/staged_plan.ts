/**
 * What one request commit carries within denokv's limits: each intent's id
 * check and pointer, its document's check once, for a pending intent its
 * due expiry and its one document's counts, and one staged block of every
 * event, which must fit one KV value. Sizes are from above (`layout.ts`).
 * @module
 */

import { EXPIRY_WORK } from "../domain/store.ts";
import { STAGED_HEADER_BYTES } from "./codec.ts";
import { countedDocument, documentIdentity } from "./document_counts.ts";
import { STAGED_POINTER_BYTES } from "./index_codec.ts";
import { documentEntry, keys } from "./keys.ts";
import {
  BLOCK_BYTES,
  type CommitCost,
  type CommitLimits,
  cost,
  eventBytes,
  keyBytes,
  KV_COMMIT_LIMITS,
  type Placement,
  plus,
  refIdentity,
  within,
} from "./layout.ts";

/** A staged block's key: the prefix and a 20-character versionstamp. */
const STAGED_KEY_BYTES = keyBytes(keys.staged("00000000000000000000"));
/** A document's counts, from above: sixteen keys of up to 89 characters and their counts. */
const COUNTS_VALUE_BYTES = 16 * 120 + 2;
/** Earlier per-key counts a document's first counts commit removes, at most (sixteen signers). */
const EARLIER_COUNT_KEYS = 16;

/** What the staged block costs before its events: its key and header. */
const COMMIT_BASE: CommitCost = cost.set(STAGED_KEY_BYTES, STAGED_HEADER_BYTES);

/**
 * How many of the leading `placements` the next staged commit carries (at
 * least one: alone, any intent the service accepts fits).
 */
export function planStagedCommit(
  placements: readonly Placement[],
  limits: CommitLimits = KV_COMMIT_LIMITS,
): number {
  let total = COMMIT_BASE;
  let staged = STAGED_HEADER_BYTES;
  const refs = new Set<string>();
  const counted = new Set<string>();
  let count = 0;
  for (const { intent, ref } of placements) {
    const size = eventBytes(intent);
    const idKey = keyBytes(keys.intent(intent.id));
    const parts: CommitCost[] = [
      cost.check(idKey),
      // The pointer under its id, and its event in the staged block.
      cost.set(idKey, STAGED_POINTER_BYTES),
      { ...cost.none(), mutationBytes: size },
    ];
    const identity = ref ? refIdentity(ref) : undefined;
    const newRef = identity !== undefined && !refs.has(identity);
    if (newRef) parts.push(cost.check(keyBytes(documentEntry(ref!).key)));
    let newCounts: string | undefined;
    if (intent.state === "pending") {
      parts.push(cost.set(keyBytes(keys.due(EXPIRY_WORK, 0, intent.id)), 0));
      const doc = countedDocument(intent);
      const docIdentity = documentIdentity(doc);
      // One document's counts a commit: its lane keeps this process's commits of them apart.
      if (count > 0 && counted.size > 0 && !counted.has(docIdentity)) break;
      if (!counted.has(docIdentity)) {
        newCounts = docIdentity;
        const countKey = keyBytes(keys.pendingCounts(doc.kind, doc.id));
        parts.push(cost.check(countKey), cost.set(countKey, COUNTS_VALUE_BYTES));
        const earlierKey = keyBytes(keys.pendingBySigner(doc.kind, doc.id, "x".repeat(100)));
        for (let i = 0; i < EARLIER_COUNT_KEYS; i++) parts.push(cost.remove(earlierKey));
      }
    }
    const next = plus(total, ...parts);
    if (count > 0 && (!within(next, limits) || staged + size > BLOCK_BYTES)) break;
    total = next;
    staged += size;
    if (newRef) refs.add(identity);
    if (newCounts !== undefined) counted.add(newCounts);
    count++;
  }
  return count;
}
