/**
 * Which ids of a commit are taken, found as cheaply as each allows: by a
 * read made ahead (see `read_ahead.ts`), by a check in the commit itself
 * while the commit has checks to spare (denokv allows ten, the head and each
 * document take one), or else by a read now.
 *
 * Reads are covered by the commit's check of the feed head: every write of
 * a pointer moves the head, so what a read found is still true when the head
 * the commit checks is the one the read saw, or one that only this process's
 * own commits led to from there (`Feed.storedSince`), the ids of which count
 * as taken. A read now comes after the head was learned, so it saw that head
 * or a later one; a later one fails the commit's check, and it is tried again.
 * @module
 */

import type { Feed, Head } from "./feed.ts";
import { keys } from "./keys.ts";
import type { ReadAhead } from "./read_ahead.ts";
import { readMany } from "./read_many.ts";

/** What is known of one id before its commit. */
export type IdState = "taken" | "free" | "check";

/** What finding taken ids works with. */
export interface TakenIdsContext {
  kv: Deno.Kv;
  feed: Feed;
  ahead?: ReadAhead;
}

/**
 * The state of each id of a commit about to check `head`: "taken", "free",
 * or "check" (not read: the commit checks it is free, for at most `spare`
 * ids).
 */
export async function findTakenIds(
  ctx: TakenIdsContext,
  ids: readonly string[],
  head: Head,
  spare: number,
): Promise<IdState[]> {
  const ahead = ids.map((id) => ctx.ahead?.take(id));
  // Reads still in flight are waited for: each began before this commit's turn.
  const waits = new Set<Promise<void>>();
  for (const read of ahead) if (read && read.head === undefined) waits.add(read.done);
  if (waits.size > 0) await Promise.all(waits);
  const since = new Map<string | null, Set<string> | null>();
  const states: (IdState | undefined)[] = ahead.map((read, k) => {
    if (!read || read.head === undefined) return undefined;
    if (!since.has(read.head)) {
      const stored = ctx.feed.storedSince(read.head, head.versionstamp);
      since.set(read.head, stored && new Set(stored));
    }
    const stored = since.get(read.head);
    if (!stored) return undefined;
    return read.taken.has(ids[k]) || stored.has(ids[k]) ? "taken" : "free";
  });
  const unread: number[] = [];
  for (let k = 0; k < ids.length; k++) {
    if (states[k] !== undefined) continue;
    if (spare > 0) {
      states[k] = "check";
      spare--;
    } else unread.push(k);
  }
  if (unread.length > 0) {
    const read = await readMany(ctx.kv, unread.map((k) => keys.intent(ids[k])));
    unread.forEach((k, u) => states[k] = read[u].versionstamp !== null ? "taken" : "free");
  }
  return states as IdState[];
}
