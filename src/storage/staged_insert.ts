/**
 * Storing new intents: each commit checks only what its intents touch (each
 * id free, each document read unchanged, the pending counts of its document
 * as read), points each id at its event and stages the events
 * (docs/architecture.md, "Staged commits").
 * @module
 */

import type { DocumentRef, NewIntent, StoredIntent } from "../domain/intent.ts";
import { startApproval } from "../domain/governance.ts";
import { recordSha256Of } from "../domain/record.ts";
import {
  type BatchResult,
  EXPIRY_WORK,
  type InsertResult,
  type PendingIntent,
} from "../domain/store.ts";
import { encodeStaged, NO_DATA, type StoredEvent } from "./codec.ts";
import { encodeStagedPointer } from "./index_codec.ts";
import { Lanes } from "../timing.ts";
import { contendedAttempts } from "./retry.ts";
import { countedDocument, DocumentCounts, documentIdentity } from "./document_counts.ts";
import { documentEntry, keys } from "./keys.ts";
import { readMany, refIdentity } from "./layout.ts";
import { planStagedCommit } from "./staged_plan.ts";

/** What a staged write works with. */
export interface StagedContext {
  kv: Deno.Kv;
  /** The clock that stamps acceptance and staging times. */
  now: () => Date;
  /** Runs a commit (retried while locked, its outcome recorded): `CommitLog.run`. */
  commit: <T>(write: () => Promise<T>) => Promise<T>;
  /** Told of each commit that staged events: its versionstamp (the staged key's) and the events. */
  staged: (versionstamp: string, events: StoredEvent[]) => void;
  /** Keeps this process's commits of one document's counts apart. */
  lanes: Lanes;
  /** Told when a write gives up under contention (for metrics). */
  contended?: () => void;
  /** Told when a commit failed its checks: applied all the same, its answer lost, perhaps. */
  failed?: () => void;
  /** Told of a document read found changed, to drop it from a cache. */
  staleRef?: (ref: DocumentRef) => void;
}

/** The event that stores a new intent, accepted or pending at `receivedAt`. */
function newEvent(intent: NewIntent, stampedAt: string): StoredEvent {
  const { quorum, approvals, ruled, receivedAt: seenAt, canonical, ...rest } = intent;
  // Under rules the record keeps the time the rules saw (docs/interface.md §15).
  const receivedAt = seenAt ?? stampedAt;
  const stored: StoredIntent = { ...rest, receivedAt };
  if (quorum) stored.approval = startApproval(quorum, approvals ?? [], receivedAt, ruled);
  // Its submission's keys are counted in the commit that stores it (`document_counts.ts`).
  if (stored.state === "pending") stored.counted = true;
  const type = stored.state === "pending" ? "intent.pending" : "intent.accepted";
  const event: StoredEvent = { type, intent: stored, first: true };
  // The log's commitment to the record, made while the request's JCS is at hand.
  if (canonical) event.recordSha256 = recordSha256Of(stored, canonical);
  return event;
}

/**
 * Inserts intents with distinct ids, in as few commits as denokv's limits
 * allow, side by side, each committed again until settled (see `settle`).
 *
 * @returns one result per input, in order; "created" only after its commit
 *   succeeded; "failed" with the error of a commit that threw (e.g.
 *   `StorageUnavailableError`): what it carried is not written.
 * @throws {RangeError} when two inserts share an id.
 */
export async function insertStaged(
  ctx: StagedContext,
  batch: readonly PendingIntent[],
): Promise<BatchResult[]> {
  const ids = new Set<string>();
  for (const { intent } of batch) {
    if (ids.has(intent.id)) throw new RangeError("a batch must not repeat an intent id");
    ids.add(intent.id);
  }
  const results: (InsertResult | undefined)[] = new Array(batch.length);
  const receivedAt = ctx.now().toISOString();
  const groups: number[][] = [];
  for (let open = batch.map((_, i) => i); open.length > 0;) {
    const count = planStagedCommit(open.map((i) => batch[i]));
    groups.push(open.slice(0, count));
    open = open.slice(count);
  }
  const failed: (BatchResult | undefined)[] = results;
  await Promise.all(groups.map(async (group) => {
    const pending = group.find((i) => batch[i].intent.state === "pending");
    const commit = () => commitGroup(ctx, { batch, group, receivedAt, results });
    try {
      if (pending === undefined) await commit();
      else await ctx.lanes.run(documentIdentity(countedDocument(batch[pending].intent)), commit);
    } catch (error) {
      for (const i of group) if (results[i] === undefined) failed[i] = { outcome: "failed", error };
    }
  }));
  return failed as BatchResult[];
}

/** One group of a batch, committed until each member is settled. */
interface Group {
  batch: readonly PendingIntent[];
  group: readonly number[];
  receivedAt: string;
  results: (InsertResult | undefined)[];
}

async function commitGroup(ctx: StagedContext, g: Group): Promise<void> {
  const { batch, results } = g;
  let open = [...g.group];
  let attempts = contendedAttempts(ctx.contended);
  // Each intent's event (its R hashed) made once: a commit tried again carries the same.
  const made = new Map<number, StoredEvent>();
  while (open.length > 0) {
    await attempts.next();
    let members = open;
    const pendingOf = members.filter((i) => batch[i].intent.state === "pending");
    let counts: DocumentCounts | undefined;
    if (pendingOf.length > 0) {
      counts = await DocumentCounts.read(ctx.kv, countedDocument(batch[pendingOf[0]].intent));
      const { refused, carry } = counts.admit(batch, members);
      if (refused.length > 0) {
        await settle(ctx, batch, refused, results, true);
        open = open.filter((i) => results[i] === undefined);
        attempts = contendedAttempts(ctx.contended);
        continue;
      }
      members = members.slice(0, carry);
    }
    const at = ctx.now();
    const events = members.map((i) => {
      let event = made.get(i);
      if (event === undefined) made.set(i, event = newEvent(batch[i].intent, g.receivedAt));
      return event;
    });
    const op = ctx.kv.atomic();
    const checked = new Set<string>();
    for (const i of members) {
      const { ref } = batch[i];
      if (checked.has(refIdentity(ref))) continue;
      checked.add(refIdentity(ref));
      op.check(documentEntry(ref));
    }
    members.forEach((i, k) => {
      const key = keys.intent(batch[i].intent.id);
      op.check({ key, versionstamp: null }).set(key, encodeStagedPointer(k));
      const intent = events[k].intent;
      // Its expiry falls due in the commit that stores it: never one without the other.
      if (intent.state === "pending") {
        op.set(keys.due(EXPIRY_WORK, Date.parse(intent.approval!.expiresAt), intent.id), NO_DATA);
      }
    });
    if (counts?.changed) counts.write(op);
    op.set(keys.staged(ctx.kv.commitVersionstamp()), encodeStaged(events, at.getTime()));
    const result = await ctx.commit(() => op.commit());
    if (result.ok) {
      members.forEach((i, k) => results[i] = { outcome: "created", intent: events[k].intent });
      ctx.staged(result.versionstamp, events);
      open = open.filter((i) => results[i] === undefined);
      attempts = contendedAttempts(ctx.contended);
      continue;
    }
    // A check failed: find which. A taken id or a changed document settles its intent; a
    // changed count (another commit under the same document) is tried again.
    ctx.failed?.();
    const settled = await settle(ctx, batch, members, results, false);
    if (settled > 0) attempts = contendedAttempts(ctx.contended);
    open = open.filter((i) => results[i] === undefined);
  }
}

/**
 * Reads the documents and ids of `members` and settles those that cannot be
 * stored: a taken id is "exists", a changed document "reference_changed"
 * (docs/interface.md §4 orders a missing document, 400, before a taken id,
 * 409, and the id before the pending limit); with `refused`, the others are
 * "too_many_pending".
 *
 * @returns how many were settled.
 */
async function settle(
  ctx: StagedContext,
  batch: readonly PendingIntent[],
  members: readonly number[],
  results: (InsertResult | undefined)[],
  refused: boolean,
): Promise<number> {
  const read = await readMany(ctx.kv, [
    ...members.map((i) => documentEntry(batch[i].ref).key),
    ...members.map((i) => keys.intent(batch[i].intent.id)),
  ]);
  let settled = 0;
  members.forEach((i, k) => {
    const { ref } = batch[i];
    const taken = read[members.length + k].versionstamp !== null;
    if (refused && !taken) results[i] = { outcome: "too_many_pending" };
    else if (read[k].versionstamp !== documentEntry(ref).versionstamp) {
      results[i] = { outcome: "reference_changed" };
      ctx.staleRef?.(ref);
    } else if (taken) results[i] = { outcome: "exists" };
    else return;
    settled++;
  });
  return settled;
}
