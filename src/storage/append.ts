/**
 * Appending to the feed in the head layout (`write_layout.ts`): the one
 * atomic commit that stores accepted intents, as versions before the staged
 * layout wrote, kept for stores not yet switched.
 *
 * Each commit checks the feed head's version and moves the head past the
 * events it adds, so the store itself orders commits: two commits that read
 * the same head cannot both succeed, and the loser reads the new head and
 * tries again. Positions are therefore dense and in commit order — an event
 * is never placed behind one a reader may already have passed.
 * @module
 */

import { admitPending } from "./admit_pending.ts";
import type { DocumentRef, NewIntent, StoredIntent } from "../domain/intent.ts";
import { startApproval } from "../domain/governance.ts";
import {
  type DecideChange,
  EXPIRY_WORK,
  type InsertResult,
  type PendingIntent,
  StorageUnavailableError,
} from "../domain/store.ts";
import { encodeBlock, encodeHead, encodePointer, NO_DATA, type StoredEvent } from "./codec.ts";
import type { Feed, Head } from "./feed.ts";
import { keys } from "./keys.ts";
import { KV_COMMIT_LIMITS, planCommit, refIdentity } from "./layout.ts";
import { findTakenIds } from "./taken_ids.ts";
import { readMany } from "./read_many.ts";
import { changedDocuments, settleTaken } from "./settle.ts";
import type { ReadAhead } from "./read_ahead.ts";
import { getIntentEntry } from "./read_intents.ts";
import { newIntentCountKeys, PendingCounts, storedIntentCountKeys } from "./pending_counts.ts";

/**
 * Adds to `op` the events after `head`, in the blocks `blockOf` assigns, each
 * intent's pointer, and the head's check and new value.
 *
 * @returns the head position after these events.
 */
export function addEvents(
  op: Deno.AtomicOperation,
  head: Head,
  events: readonly StoredEvent[],
  blockOf: readonly number[],
): number {
  op.check({ key: keys.feedHead, versionstamp: head.versionstamp });
  let start = 0;
  while (start < events.length) {
    let end = start + 1;
    while (end < events.length && blockOf[end] === blockOf[start]) end++;
    const last = head.position + end;
    for (let i = start; i < end; i++) {
      op.set(keys.intent(events[i].intent.id), encodePointer([last, i - start]));
    }
    op.set(keys.events(last), encodeBlock(events.slice(start, end)));
    start = end;
  }
  const position = head.position + events.length;
  op.set(keys.feedHead, encodeHead(position));
  return position;
}

/**
 * Commits an operation that moved the feed head from `moved.from` to
 * `moved.position` (see {@link addEvents}), storing the intents `moved.ids`,
 * and tells the feed the new head when it succeeded.
 *
 * @returns whether the commit succeeded; false when one of its checks failed.
 * @throws the error of a commit that threw; the feed then reads its head anew,
 *   since the outcome may be unknown (a networked KV).
 */
export async function commitEvents(
  ctx: Pick<InsertContext, "feed" | "commit">,
  op: Deno.AtomicOperation,
  moved: {
    from: Head;
    position: number;
    ids?: readonly string[];
    /** The events added, for the feed's listeners (`Store.onOwnEvents`). */
    events?: readonly StoredEvent[];
  },
): Promise<boolean> {
  let result: Deno.KvCommitResult | Deno.KvCommitError;
  try {
    result = await ctx.commit(() => op.commit());
  } catch (error) {
    ctx.feed.forget();
    throw error;
  }
  if (result.ok) {
    const head = { position: moved.position, versionstamp: result.versionstamp };
    ctx.feed.advanced(head, moved.from.versionstamp, moved.ids, moved.events);
  }
  return result.ok;
}

/** The record of a new intent, accepted or pending at `receivedAt`, at feed position `position`. */
function storedIntent(intent: NewIntent, receivedAt: string, position: number): StoredIntent {
  const { quorum, approvals, ...rest } = intent;
  const stored: StoredIntent = { ...rest, receivedAt, position };
  if (quorum) stored.approval = startApproval(quorum, approvals ?? [], receivedAt);
  // Its submission's keys are counted in the commit that stores it (`pending_counts.ts`).
  if (stored.state === "pending") stored.counted = true;
  return stored;
}

/** What {@link insertIntents} works with. */
export interface InsertContext {
  kv: Deno.Kv;
  feed: Feed;
  /** The clock that stamps the acceptance time. */
  now: () => Date;
  /** Called for a document read found stale, so a cache can drop it. */
  staleRef: (ref: DocumentRef) => void;
  /** Runs a commit (retried while locked, its outcome recorded): `CommitLog.run`. */
  commit: <T>(write: () => Promise<T>) => Promise<T>;
  /** Ids read ahead of their commit, when any were. */
  ahead?: ReadAhead;
}

/**
 * Thrown by a change in the head layout that finds the store switched to
 * the staged layout (`write_layout.ts`): the caller makes it there.
 */
export class WriteLayoutChanged extends Error {
  override name = "WriteLayoutChanged";
}

/** Failed commits in a row, with every check passing on reading, before giving up. */
const MAX_STALLS = 3;
/** Failed commits of one call, for any reason, before giving up. */
const MAX_ATTEMPTS = 200;

/** The due-work key of a pending record's expiry. */
function expiryKey(intent: StoredIntent): Deno.KvKey {
  return keys.due(EXPIRY_WORK, Date.parse(intent.approval!.expiresAt), intent.id);
}

/**
 * Inserts intents with distinct ids, each in an atomic commit that checks
 * its template/policy read unchanged and the feed head unmoved. An id is
 * checked in the commit while it has checks to spare (denokv allows ten),
 * else read, before or after the head was learned, under the head's check
 * (see `taken_ids.ts`). A batch goes in as few commits as KV's limits allow;
 * an intent whose id is taken is settled on reading, and when a commit fails
 * on a check, the documents and checked ids are read to find which, those
 * intents are settled, and the rest go again — one intent's conflict never
 * fails another's. An intent to be stored pending with `maxPending` is
 * refused ("too_many_pending", after its id was found free) when a key that
 * signed its submission has that many pending under its document, by counts
 * read under the head's check (`pending_counts.ts`).
 *
 * The intents of one call share one acceptance time, taken as their first
 * commit starts.
 *
 * @returns one result per input, in order; "created" only after its commit
 *   succeeded; undefined for those left when the store was found switched to
 *   the staged layout (`write_layout.ts`), which the caller stores there.
 * @throws {RangeError} when two inserts share an id: both would read it free
 *   and both would claim "created".
 * @throws {StorageUnavailableError} when the storage cannot write; the KV
 *   error of another failed commit or read. What that commit carried is then
 *   not written.
 */
export async function insertIntents(
  ctx: InsertContext,
  batch: readonly PendingIntent[],
): Promise<(InsertResult | undefined)[]> {
  if (batch.length > 1) {
    const ids = new Set<string>();
    for (const { intent } of batch) {
      if (ids.has(intent.id)) throw new RangeError("a batch must not repeat an intent id");
      ids.add(intent.id);
    }
  }
  const { kv, feed } = ctx;
  const results: (InsertResult | undefined)[] = new Array(batch.length);
  const receivedAt = ctx.now().toISOString();
  let open = batch.map((_, i) => i);
  let stalls = 0;
  for (let attempt = 1; open.length > 0; attempt++) {
    if (attempt > MAX_ATTEMPTS) throw new StorageUnavailableError("contended");
    const plan = planCommit(open.map((i) => batch[i]));
    let members = open.slice(0, plan.count);
    // Known without waiting, the head costs no read.
    const head = feed.known ?? await feed.head();
    if (head.layout === "staged") break;
    const docs = new Set(members.map((i) => refIdentity(batch[i].ref)));
    let ids = members.map((i) => batch[i].intent.id);
    const spare = KV_COMMIT_LIMITS.checks - 1 - docs.size;
    let states = await findTakenIds(ctx, ids, head, spare);
    const taken = members.filter((_, k) => states[k] === "taken");
    if (taken.length > 0) {
      // Settled on reading; the others are planned again without them.
      await settleTaken(ctx, batch, taken, results);
      open = open.filter((i) => results[i] === undefined);
      continue;
    }
    let counts: PendingCounts | undefined;
    const pending = members.filter((i) => batch[i].intent.state === "pending");
    if (pending.length > 0) {
      // Read after the head: its check in the commit covers them.
      const countKeys = pending.flatMap((i) => newIntentCountKeys(batch[i].intent));
      counts = await PendingCounts.read(kv, countKeys);
      const { refused, carry } = admitPending(batch, members, counts, newIntentCountKeys);
      if (refused.length > 0) {
        // The id comes first (docs/interface.md §4): one the commit was to check is read now.
        const unread = refused.filter((i) => states[members.indexOf(i)] === "check");
        const found = await readMany(kv, unread.map((i) => keys.intent(batch[i].intent.id)));
        const taken = unread.filter((_, u) => found[u].versionstamp !== null);
        await settleTaken(ctx, batch, taken, results);
        for (const i of refused) results[i] ??= { outcome: "too_many_pending" };
        open = open.filter((i) => results[i] === undefined);
        continue;
      }
      // A prefix of a plan is a plan: the rest goes in the next commit.
      members = members.slice(0, carry);
      ids = ids.slice(0, carry);
      states = states.slice(0, carry);
    }
    const op = kv.atomic();
    for (const identity of new Set(members.map((i) => refIdentity(batch[i].ref)))) {
      // Many intents of a batch name the same template: each is checked once.
      const { ref } = batch[members.find((i) => refIdentity(batch[i].ref) === identity)!];
      op.check({ key: keys.document(ref.kind, ref.id), versionstamp: ref.version });
    }
    ids.forEach((id, k) => {
      if (states[k] === "check") op.check({ key: keys.intent(id), versionstamp: null });
    });
    const events: StoredEvent[] = members.map((i, k) => {
      const stored = storedIntent(batch[i].intent, receivedAt, head.position + k + 1);
      // Its expiry falls due in the commit that stores it: never one without the other.
      if (stored.state === "pending") op.set(expiryKey(stored), NO_DATA);
      return {
        type: stored.state === "pending" ? "intent.pending" : "intent.accepted",
        intent: stored,
      };
    });
    counts?.write(op);
    const position = addEvents(op, head, events, plan.blockOf.slice(0, members.length));
    if (await commitEvents(ctx, op, { from: head, position, ids, events })) {
      members.forEach((i, k) => results[i] = { outcome: "created", intent: events[k].intent });
      open = open.slice(members.length);
      stalls = 0;
      continue;
    }
    // Another process moved the head first: find the ids again after it.
    if ((await feed.freshHead()).versionstamp !== head.versionstamp) continue;
    // A check of a document or an id failed: learn which, settle those, and try the others again.
    await changedDocuments(ctx, batch, members, results);
    const checked = members.filter((i, k) => states[k] === "check" && results[i] === undefined);
    const found = await readMany(kv, checked.map((i) => keys.intent(batch[i].intent.id)));
    await settleTaken(
      ctx,
      batch,
      checked.filter((_, c) => found[c].versionstamp !== null),
      results,
    );
    const settled = members.filter((i) => results[i] !== undefined);
    if (settled.length === 0 && ++stalls > MAX_STALLS) {
      // Every check passes on reading yet the commit keeps failing: give up
      // rather than spin; the callers answer with an error and store nothing.
      throw new Error("atomic commit keeps failing with passing checks");
    }
    open = open.filter((i) => results[i] === undefined);
  }
  return results;
}

/** Changes of one intent tried, at most, when other processes keep changing it first. */
const MAX_CHANGE_ATTEMPTS = 100;

/**
 * Changes a stored intent (an approval, its acceptance, its expiry): reads
 * it, asks `decide` for the next record, and appends the event in one atomic
 * commit that checks the intent's pointer is as it was read and the feed head
 * unmoved; it points the id at the new event and moves the head. A moved head
 * is read again and the commit tried again; a changed intent is read again
 * and `decide` asked again.
 *
 * @returns the new record; null when there is no such intent or `decide` left it.
 */
export async function appendChange(
  ctx: Pick<InsertContext, "kv" | "feed" | "commit">,
  id: string,
  decide: DecideChange,
): Promise<StoredIntent | null> {
  const { kv, feed } = ctx;
  let entry = await getIntentEntry(kv, id);
  for (let attempt = 1; attempt <= MAX_CHANGE_ATTEMPTS; attempt++) {
    if (!entry) return null;
    const change = decide(entry.intent);
    if (!change) return null;
    const head = await feed.head();
    if (head.layout === "staged") throw new WriteLayoutChanged();
    const op = kv.atomic().check({ key: keys.intent(id), versionstamp: entry.version });
    // The commit that ends a pending intent removes its due expiry and counts
    // its submission's keys down, from counts read after the head it checks.
    if (entry.intent.state === "pending" && change.intent.state !== "pending") {
      op.delete(expiryKey(entry.intent));
      const countKeys = storedIntentCountKeys(entry.intent);
      if (countKeys.length > 0) {
        const counts = await PendingCounts.read(kv, countKeys);
        counts.add(countKeys, -1);
        counts.write(op);
      }
    }
    const events = [{ type: change.type, intent: change.intent }];
    const position = addEvents(op, head, events, [0]);
    if (await commitEvents(ctx, op, { from: head, position, events })) return change.intent;
    // The head moved, the intent changed, or both: read both again.
    await feed.freshHead();
    entry = await getIntentEntry(kv, id);
  }
  throw new StorageUnavailableError("contended");
}
