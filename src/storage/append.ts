/**
 * Appending to the feed: the one atomic commit that stores accepted intents.
 *
 * Each commit checks the feed head's version and moves the head past the
 * events it adds, so the store itself orders commits: two commits that read
 * the same head cannot both succeed, and the loser reads the new head and
 * tries again. Positions are therefore dense and in commit order — an event
 * is never placed behind one a reader may already have passed.
 * @module
 */

import type { DocumentRef, NewIntent, StoredIntent } from "../domain/intent.ts";
import {
  type DecideChange,
  EXPIRY_WORK,
  type InsertResult,
  type PendingIntent,
} from "../domain/store.ts";
import { encodeBlock, encodeHead, encodePointer, NO_DATA, type StoredEvent } from "./codec.ts";
import type { Feed, Head } from "./feed.ts";
import { keys } from "./keys.ts";
import { planCommit, refIdentity } from "./layout.ts";
import { readMany } from "./read_many.ts";
import type { ReadAhead } from "./read_ahead.ts";
import { getIntentEntry } from "./read_intents.ts";

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
  moved: { from: Head; position: number; ids?: readonly string[] },
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
    ctx.feed.advanced(head, moved.from.versionstamp, moved.ids);
  }
  return result.ok;
}

/** The record of a new intent, accepted or pending at `receivedAt`, at feed position `position`. */
function storedIntent(intent: NewIntent, receivedAt: string, position: number): StoredIntent {
  const { governance, ...rest } = intent;
  const stored: StoredIntent = { ...rest, receivedAt, position };
  if (governance) {
    stored.approval = {
      threshold: governance.threshold,
      signers: governance.signers,
      approvals: governance.approvals.map((a) => ({ ...a, at: receivedAt })),
      expiresAt: new Date(Date.parse(receivedAt) + governance.windowS * 1000).toISOString(),
    };
  }
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
 * its template/policy read unchanged and the feed head unmoved. Ids are read
 * after the head: a pointer is written only by commits that move the head,
 * so the head's check covers those reads, and a commit needs no check per id
 * (denokv allows ten checks a commit). A batch goes in as few commits as
 * KV's limits allow; an intent whose id is taken is settled on reading, and
 * when a commit fails on a document's check, the documents are read to find
 * which, those intents are settled, and the rest go again — one intent's
 * conflict never fails another's.
 *
 * The intents of one call share one acceptance time, taken as their first
 * commit starts.
 *
 * @returns one result per input, in order; "created" only after its commit succeeded.
 * @throws {RangeError} when two inserts share an id: both would read it free
 *   and both would claim "created".
 * @throws {StorageUnavailableError} when the storage cannot write; the KV
 *   error of another failed commit or read. What that commit carried is then
 *   not written.
 */
export async function insertIntents(
  ctx: InsertContext,
  batch: readonly PendingIntent[],
): Promise<InsertResult[]> {
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
    if (attempt > MAX_ATTEMPTS) throw new Error("the feed head stays contended");
    const plan = planCommit(open.map((i) => batch[i]));
    // Known without waiting, the head costs no read.
    const head = feed.known ?? await feed.head();
    const taken = await takenIds(ctx, batch, open.slice(0, plan.count), results, head);
    if (taken.size > 0) {
      // Settled on reading; the others are planned again without them.
      open = open.filter((i) => !taken.has(i));
      continue;
    }
    const members = open.slice(0, plan.count);
    const op = kv.atomic();
    const checked = new Set<string>();
    const events: StoredEvent[] = members.map((i, k) => {
      const { intent, ref } = batch[i];
      const identity = refIdentity(ref);
      // Many intents of a batch name the same template: check it once.
      if (!checked.has(identity)) {
        checked.add(identity);
        op.check({ key: keys.document(ref.kind, ref.id), versionstamp: ref.version });
      }
      const stored = storedIntent(intent, receivedAt, head.position + k + 1);
      // Its expiry falls due in the commit that stores it: never one without the other.
      if (stored.state === "pending") op.set(expiryKey(stored), NO_DATA);
      return {
        type: stored.state === "pending" ? "intent.pending" : "intent.accepted",
        intent: stored,
      };
    });
    const position = addEvents(op, head, events, plan.blockOf);
    const ids = events.map((e) => e.intent.id);
    if (await commitEvents(ctx, op, { from: head, position, ids })) {
      members.forEach((i, k) => results[i] = { outcome: "created", intent: events[k].intent });
      open = open.slice(plan.count);
      stalls = 0;
      continue;
    }
    // Another process moved the head first: read the ids again after it.
    if ((await feed.freshHead()).versionstamp !== head.versionstamp) continue;
    // A document's check failed: learn which, settle those, and try the others again.
    const settled = await changedDocuments(ctx, batch, members, results);
    if (settled.size === 0 && ++stalls > MAX_STALLS) {
      // Every check passes on reading yet the commit keeps failing: give up
      // rather than spin; the callers answer with an error and store nothing.
      throw new Error("atomic commit keeps failing with passing checks");
    }
    open = open.filter((i) => !settled.has(i));
  }
  return results as InsertResult[];
}

/**
 * Finds which ids of `members` are taken, as of `head`, and settles those:
 * "exists", or "reference_changed" when their document changed as well
 * (CONTRACT §4 orders a missing template or policy, 400, before an existing
 * id, 409). A read made ahead serves when its snapshot's head led to `head`
 * through this process's own commits alone (their ids count as taken);
 * other ids are read now, after `head` was learned, which the commit's check
 * of `head` covers.
 *
 * @returns the indices settled.
 */
async function takenIds(
  ctx: InsertContext,
  batch: readonly PendingIntent[],
  members: readonly number[],
  results: (InsertResult | undefined)[],
  head: Head,
): Promise<Set<number>> {
  const ahead = members.map((i) => ctx.ahead?.take(batch[i].intent.id));
  // Reads still in flight are waited for: each began before this commit's turn.
  const waits = new Set<Promise<void>>();
  for (const read of ahead) if (read && read.head === undefined) waits.add(read.done);
  if (waits.size > 0) await Promise.all(waits);
  const since = new Map<string | null, Set<string> | null>();
  const known: (boolean | undefined)[] = ahead.map((read, k) => {
    if (!read || read.head === undefined) return undefined;
    if (!since.has(read.head)) {
      const stored = ctx.feed.storedSince(read.head, head.versionstamp);
      since.set(read.head, stored && new Set(stored));
    }
    const stored = since.get(read.head);
    const id = batch[members[k]].intent.id;
    return stored ? read.taken.has(id) || stored.has(id) : undefined;
  });
  const unknown = members.filter((_, k) => known[k] === undefined);
  if (unknown.length > 0) {
    const read = await readMany(ctx.kv, unknown.map((i) => keys.intent(batch[i].intent.id)));
    let u = 0;
    members.forEach((_, k) => {
      if (known[k] === undefined) known[k] = read[u++].versionstamp !== null;
    });
  }
  const taken = members.filter((_, k) => known[k]);
  if (taken.length === 0) return new Set();
  const changed = await changedDocuments(ctx, batch, taken, results);
  for (const i of taken) if (!changed.has(i)) results[i] = { outcome: "exists" };
  return new Set(taken);
}

/**
 * Reads the documents of `members` and settles those whose document changed
 * since it was found ("reference_changed").
 *
 * @returns the indices settled.
 */
async function changedDocuments(
  ctx: InsertContext,
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
    const op = kv.atomic().check({ key: keys.intent(id), versionstamp: entry.version });
    // The commit that ends a pending intent removes its due expiry.
    if (entry.intent.state === "pending" && change.intent.state !== "pending") {
      op.delete(expiryKey(entry.intent));
    }
    const position = addEvents(op, head, [{ type: change.type, intent: change.intent }], [0]);
    if (await commitEvents(ctx, op, { from: head, position })) return change.intent;
    // The head moved, the intent changed, or both: read both again.
    await feed.freshHead();
    entry = await getIntentEntry(kv, id);
  }
  throw new Error("the intent keeps changing under its change");
}
