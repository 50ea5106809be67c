/**
 * Settling the inserts of a batch that cannot be stored: their document
 * changed since it was found, or their id is taken (`staged_insert.ts`).
 * @module
 */

import type { DocumentRef } from "../domain/intent.ts";
import type { InsertResult, PendingIntent } from "../domain/store.ts";
import { keys } from "./keys.ts";
import { readMany } from "./read_many.ts";

/** What settling reads with, and whom it tells of a stale document read. */
export interface SettleContext {
  kv: Deno.Kv;
  /** Called for a document read found stale, so a cache can drop it. */
  staleRef: (ref: DocumentRef) => void;
}

/**
 * Reads the documents of `members` and settles those whose document changed
 * since it was found ("reference_changed").
 *
 * @returns the indices settled.
 */
export async function changedDocuments(
  ctx: SettleContext,
  batch: readonly PendingIntent[],
  members: readonly number[],
  results: (InsertResult | undefined)[],
): Promise<Set<number>> {
  const docs = await readMany(
    ctx.kv,
    members.map((i) => keys.document(batch[i].ref.kind, batch[i].ref.id)),
  );
  const settled = new Set<number>();
  members.forEach((i, k) => {
    if (docs[k].versionstamp !== batch[i].ref.version) {
      results[i] = { outcome: "reference_changed" };
      ctx.staleRef(batch[i].ref);
      settled.add(i);
    }
  });
  return settled;
}

/**
 * Settles intents whose id is taken: "exists", or "reference_changed" when
 * their document changed as well (docs/interface.md §4 orders a missing
 * template or policy, 400, before an existing id, 409).
 */
export async function settleTaken(
  ctx: SettleContext,
  batch: readonly PendingIntent[],
  taken: readonly number[],
  results: (InsertResult | undefined)[],
): Promise<void> {
  if (taken.length === 0) return;
  const changed = await changedDocuments(ctx, batch, taken, results);
  for (const i of taken) if (!changed.has(i)) results[i] = { outcome: "exists" };
}
