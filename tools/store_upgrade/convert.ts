/**
 * Rewrites the values an earlier version kept as V8-serialized JavaScript
 * values into this version's layouts (bytes or KvU64, see
 * `src/storage/codec.ts`): the offline step of `deno task store-upgrade`.
 *
 * Each commit is bounded by KV's limits and carries a check that keeps it
 * right while processes serve: documents and the configuration are
 * checked one by one; blocks and pointers, which only head-moving commits
 * wrote, are covered by a check of the feed head read before them. A run
 * that is stopped halfway loses nothing; the next one finds what is left.
 * Once nothing is left, `["store_layout"]` says so, and later runs read only
 * that key.
 *
 * The values must be readable to be rewritten: the conversion runs on the
 * Deno version that wrote them or a newer one.
 * @module
 */

import { EXPIRY_WORK } from "../../src/domain/store.ts";
import { decodeBlock, decodePointer, NO_DATA } from "../../src/storage/codec.ts";
import { encodeBlock, encodeHead, encodePointer, isCurrentLayout } from "./earlier_layouts.ts";
import {
  decodeConfig,
  decodeDocument,
  encodeConfig,
  encodeDocument,
} from "../../src/storage/values_codec.ts";
import type { Feed } from "../../src/storage/feed.ts";
import { STORE_LAYOUT } from "../../src/storage/fence.ts";
import { keys } from "../../src/storage/keys.ts";
import {
  type CommitCost,
  cost,
  keyBytes,
  KV_READ_KEYS,
  plus,
  SMALL_VALUE_BYTES,
  within,
} from "../../src/storage/layout.ts";

/** Keys looked at per listing while looking for values to rewrite. */
const PAGE = 500;

/** What every conversion commit of blocks or pointers starts with: the head's check. */
const HEAD_CHECK = cost.check(keyBytes(keys.feedHead));

/** What a conversion works with: the KV, its feed, and how a commit is run. */
export interface Ctx {
  kv: Deno.Kv;
  feed: Feed;
  commit: <T>(write: () => Promise<T>) => Promise<T>;
}

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
    const stale: { entry: Deno.KvEntry<unknown>; value: Uint8Array }[] = [];
    let total = cost.none();
    for await (const entry of ctx.kv.list<unknown>({ prefix })) {
      if (isCurrentLayout(entry.value)) continue;
      const value = encode(entry.value);
      const key = keyBytes(entry.key);
      const next = plus(total, cost.check(key), cost.set(key, value.byteLength));
      if (stale.length > 0 && !within(next)) break;
      total = next;
      stale.push({ entry, value });
    }
    if (stale.length === 0) return;
    const op = ctx.kv.atomic();
    for (const { entry, value } of stale) op.check(entry).set(entry.key, value);
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
  /** Pending intents seen by the commits so far, with their due work's key. */
  let pending = new Map<string, Deno.KvKey>();
  let cursor: Deno.KvKey | undefined;
  for (;;) {
    const head = await ctx.feed.freshHead();
    const op = ctx.kv.atomic().check({ key: keys.feedHead, versionstamp: head.versionstamp });
    const seen = new Map(pending);
    /** Due work this commit adds (true) or removes (false), by the key's JSON. */
    const dueWork = new Map<string, { key: Deno.KvKey; add: boolean }>();
    let total: CommitCost = HEAD_CHECK;
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
        const parts = [cost.set(keyBytes(block.key), value.byteLength)];
        const changes: [string, Deno.KvKey | undefined][] = [];
        for (const { type, intent } of events) {
          if (type === "intent.pending" && intent.approval) {
            const key = keys.due(EXPIRY_WORK, Date.parse(intent.approval.expiresAt), intent.id);
            parts.push(cost.set(keyBytes(key), 0));
            changes.push([intent.id, key]);
          } else if (intent.state !== "pending") {
            const earlier = changes.findLast(([id]) => id === intent.id);
            const key = earlier ? earlier[1] : seen.get(intent.id);
            if (key === undefined) continue;
            parts.push(cost.remove(keyBytes(key)));
            changes.push([intent.id, undefined]);
          }
        }
        const next = plus(total, ...parts);
        if (count > 0 && !within(next)) {
          full = true;
          break;
        }
        total = next;
        op.set(block.key, value);
        for (const [id, key] of changes) {
          if (key) {
            seen.set(id, key);
            dueWork.set(JSON.stringify(key), { key, add: true });
            continue;
          }
          const ended = seen.get(id);
          if (ended === undefined) continue;
          seen.delete(id);
          const name = JSON.stringify(ended);
          // Added by this very commit: then it is simply not added.
          if (dueWork.get(name)?.add) dueWork.delete(name);
          else dueWork.set(name, { key: ended, add: false });
        }
        count++;
      }
      last = block.key;
    }
    for (const { key, add } of dueWork.values()) {
      if (add) op.set(key, NO_DATA);
      else op.delete(key);
    }
    // A failed check: another process appended meanwhile; read this round again.
    if (count > 0 && !(await ctx.commit(() => op.commit())).ok) continue;
    tell(count);
    pending = seen;
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
    let total = HEAD_CHECK;
    let count = 0;
    let listed = 0;
    let full = false;
    let last: Deno.KvKey | undefined;
    const entries = ctx.kv.list<unknown>(
      cursor ? { prefix: keys.intentsPrefix, start: cursor } : { prefix: keys.intentsPrefix },
      { limit: PAGE, batchSize: PAGE },
    );
    for await (const entry of entries) {
      listed++;
      const pointer = isCurrentLayout(entry.value) ? null : decodePointer(entry.value);
      if (pointer) {
        const next = plus(total, cost.set(keyBytes(entry.key), SMALL_VALUE_BYTES));
        if (count > 0 && !within(next)) {
          full = true;
          break;
        }
        total = next;
        op.set(entry.key, encodePointer(pointer));
        count++;
      }
      last = entry.key;
    }
    // A failed check: another process appended meanwhile; read this round again.
    if (count > 0 && !(await ctx.commit(() => op.commit())).ok) continue;
    tell(count);
    if (!full && listed < PAGE) return;
    cursor = nextKey(last!);
  }
}

/** The first key after `key` in KV's order: `key` with a zero byte part appended. */
function nextKey(key: Deno.KvKey): Deno.KvKey {
  return [...key, new Uint8Array(0)];
}
