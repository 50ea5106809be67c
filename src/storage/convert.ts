/**
 * Rewrites the values an earlier version kept as V8-serialized JavaScript
 * values into this version's layouts (bytes or KvU64, see `codec.ts`), when
 * a server starts.
 *
 * Each commit is bounded by KV's limits and carries a check that keeps it
 * right while other processes serve: documents and the configuration are
 * checked one by one; blocks and pointers, which only head-moving commits
 * write, are covered by a check of the feed head read before them. A start
 * that is stopped halfway loses nothing; the next one finds what is left.
 * Once nothing is left, `["store_layout"]` says so, and later starts read
 * only that key.
 *
 * The values must be readable to be rewritten: the conversion runs on the
 * Deno version that wrote them or a newer one.
 * @module
 */

import { EXPIRY_WORK } from "../domain/store.ts";
import {
  decodeBlock,
  decodeConfig,
  decodeDocument,
  decodePointer,
  encodeBlock,
  encodeConfig,
  encodeDocument,
  encodeHead,
  encodePointer,
  isCurrentLayout,
  NO_DATA,
} from "./codec.ts";
import type { InsertContext } from "./append.ts";
import { keys } from "./keys.ts";
import { KV_COMMIT_LIMITS, KV_READ_KEYS } from "./layout.ts";

/** The layout this version writes, as `["store_layout"]` records it. */
export const STORE_LAYOUT = 2n;

/** What one conversion commit carries at most: within KV's limits, with room for keys. */
const COMMIT_BYTES = KV_COMMIT_LIMITS.mutationBytes - 64 * 1024;
const COMMIT_MUTATIONS = KV_COMMIT_LIMITS.mutations - 10;
/** Keys looked at per listing while looking for values to rewrite. */
const PAGE = 500;

type Ctx = Pick<InsertContext, "kv" | "feed" | "commit">;

/**
 * Rewrites every value of an earlier layout.
 *
 * @param progress told the running count after each commit.
 * @returns how many values were rewritten (0 when the store was current).
 */
export async function convertValues(
  ctx: Ctx,
  progress?: (rewritten: number) => void,
): Promise<number> {
  const layout = await ctx.kv.get<unknown>(keys.storeLayout);
  if (layout.value instanceof Deno.KvU64 && layout.value.value >= STORE_LAYOUT) return 0;
  let rewritten = 0;
  const tell = (n: number) => {
    rewritten += n;
    if (n > 0) progress?.(rewritten);
  };
  for (const kind of ["template", "policy"] as const) {
    await convertChecked(
      ctx,
      keys.documentsPrefix(kind),
      (v) => encodeDocument(decodeDocument(v)!),
      tell,
    );
  }
  await convertChecked(ctx, keys.config.slice(0, 1), (v) => encodeConfig(decodeConfig(v)!), tell);
  await convertHead(ctx, tell);
  await convertBlocks(ctx, tell);
  await convertPointers(ctx, tell);
  await ctx.commit(() => ctx.kv.set(keys.storeLayout, new Deno.KvU64(STORE_LAYOUT)));
  return rewritten;
}

/** Rewrites the values under `prefix`, each commit checking the entries it rewrites. */
async function convertChecked(
  ctx: Ctx,
  prefix: Deno.KvKey,
  encode: (value: unknown) => Uint8Array,
  tell: (n: number) => void,
): Promise<void> {
  for (;;) {
    const stale: Deno.KvEntry<unknown>[] = [];
    for await (const entry of ctx.kv.list<unknown>({ prefix })) {
      if (!isCurrentLayout(entry.value)) stale.push(entry);
      if (stale.length === KV_COMMIT_LIMITS.checks) break;
    }
    if (stale.length === 0) return;
    const op = ctx.kv.atomic();
    for (const entry of stale) op.check(entry).set(entry.key, encode(entry.value));
    // A failed check: someone rewrote one meanwhile; list again.
    if ((await ctx.commit(() => op.commit())).ok) tell(stale.length);
  }
}

/** Rewrites a feed head kept as a number. */
async function convertHead(ctx: Ctx, tell: (n: number) => void): Promise<void> {
  for (;;) {
    const entry = await ctx.kv.get<unknown>(keys.feedHead);
    if (entry.versionstamp === null || isCurrentLayout(entry.value)) return;
    const op = ctx.kv.atomic().check(entry).set(keys.feedHead, encodeHead(entry.value as number));
    if ((await ctx.commit(() => op.commit())).ok) {
      ctx.feed.forget();
      tell(1);
      return;
    }
  }
}

/**
 * Rewrites the blocks, oldest first. A pending intent found on the way gets
 * its expiry's due work (earlier versions kept it in a KV queue, which no
 * longer runs), removed again when a later event ends it.
 */
async function convertBlocks(ctx: Ctx, tell: (n: number) => void): Promise<void> {
  const pendingDue = new Map<string, Deno.KvKey>();
  let cursor: Deno.KvKey | undefined;
  for (;;) {
    const head = await ctx.feed.freshHead();
    const op = ctx.kv.atomic().check({ key: keys.feedHead, versionstamp: head.versionstamp });
    const due = new Map(pendingDue);
    let bytes = 0;
    let mutations = 0;
    let count = 0;
    let listed = 0;
    let full = false;
    /** The last block looked at: the next round starts after it. */
    let last: Deno.KvKey | undefined;
    const blocks = ctx.kv.list<unknown>(
      cursor ? { prefix: keys.eventsPrefix, start: cursor } : { prefix: keys.eventsPrefix },
      { limit: PAGE, batchSize: KV_READ_KEYS },
    );
    for await (const block of blocks) {
      listed++;
      if (!isCurrentLayout(block.value)) {
        const events = decodeBlock(block.value);
        const value = encodeBlock(events);
        const adds = 1 + events.length;
        if (
          count > 0 &&
          (bytes + value.byteLength > COMMIT_BYTES || mutations + adds > COMMIT_MUTATIONS)
        ) {
          full = true;
          break;
        }
        op.set(block.key, value);
        bytes += value.byteLength + 64;
        mutations++;
        count++;
        for (const { type, intent } of events) {
          if (type === "intent.pending" && intent.approval) {
            const key = keys.due(EXPIRY_WORK, Date.parse(intent.approval.expiresAt), intent.id);
            op.set(key, NO_DATA);
            due.set(intent.id, key);
            mutations++;
          } else if (intent.state !== "pending" && due.has(intent.id)) {
            op.delete(due.get(intent.id)!);
            due.delete(intent.id);
            mutations++;
          }
        }
      }
      last = block.key;
    }
    // A failed check: another process appended meanwhile; read this round again.
    if (count > 0 && !(await ctx.commit(() => op.commit())).ok) continue;
    tell(count);
    pendingDue.clear();
    for (const [id, key] of due) pendingDue.set(id, key);
    if (!full && listed < PAGE) return;
    cursor = nextKey(last!);
  }
}

/** Rewrites the pointers, a commit's worth at a time, covered by the head's check. */
async function convertPointers(ctx: Ctx, tell: (n: number) => void): Promise<void> {
  let cursor: Deno.KvKey | undefined;
  for (;;) {
    const head = await ctx.feed.freshHead();
    const op = ctx.kv.atomic().check({ key: keys.feedHead, versionstamp: head.versionstamp });
    let count = 0;
    let seen = 0;
    let last: Deno.KvKey | undefined;
    const listed = ctx.kv.list<unknown>(
      cursor ? { prefix: keys.intentsPrefix, start: cursor } : { prefix: keys.intentsPrefix },
      { limit: COMMIT_MUTATIONS, batchSize: 500 },
    );
    for await (const entry of listed) {
      seen++;
      last = entry.key;
      if (isCurrentLayout(entry.value)) continue;
      const pointer = decodePointer(entry.value);
      if (pointer) {
        op.set(entry.key, encodePointer(pointer));
        count++;
      }
    }
    if (count > 0 && !(await ctx.commit(() => op.commit())).ok) continue;
    tell(count);
    if (seen < COMMIT_MUTATIONS) return;
    cursor = nextKey(last!);
  }
}

/** The first key after `key` in KV's order: `key` with a zero byte part appended. */
function nextKey(key: Deno.KvKey): Deno.KvKey {
  return [...key, new Uint8Array(0)];
}
