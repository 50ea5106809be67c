/**
 * Taking in the blocks of a version from before the feed, also while it
 * runs beside this one (docs/architecture.md, "Stores of earlier versions").
 * @module
 */

import type { Authorship, NewIntent, StoredIntent, Variant } from "../domain/intent.ts";
import { encodeStaged, type StoredEvent } from "./codec.ts";
import { encodeStagedPointer } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { KV_COMMIT_LIMITS, KV_KEY_BYTES, readMany } from "./layout.ts";
import { planStagedCommit } from "./staged_plan.ts";
import type { StagedContext } from "./staged_insert.ts";

/** An intent as the version before the feed kept it in its block. */
interface EarlierIntent {
  id: string;
  variant: Variant;
  refId: string;
  authorship: Authorship;
  receivedAt: string;
  body: Uint8Array;
}

/** A slice's commit leaves room for the block's check and removal. */
const SLICE_LIMITS = {
  ...KV_COMMIT_LIMITS,
  checks: KV_COMMIT_LIMITS.checks - 1,
  mutations: KV_COMMIT_LIMITS.mutations - 1,
  mutationBytes: KV_COMMIT_LIMITS.mutationBytes - 2 * KV_KEY_BYTES,
};

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** The body as the feed stores bodies (one line); the earlier version kept it as received. */
function normalBody(body: Uint8Array): Uint8Array {
  return encoder.encode(JSON.stringify(JSON.parse(utf8.decode(body))));
}

/** True for an id's entry the earlier version wrote: its pointer into a block. */
const isEarlierPointer = (value: unknown) => Array.isArray(value) && value.length === 4;

/** Where an earlier version's id entry points (its block's key and index), or null. */
export function earlierPointer(value: unknown): { key: Deno.KvKey; index: number } | null {
  if (!isEarlierPointer(value)) return null;
  const [ms, seq, writer, index] = value as [number, number, string, number];
  return { key: [...keys.earlierBlocksPrefix, ms, seq, writer], index };
}

/** The record of the intent at `index` of an earlier version's block, as this version keeps it. */
export function earlierRecord(block: unknown, index: number): StoredIntent | undefined {
  if (!Array.isArray(block)) return undefined;
  const intent = block[index] as EarlierIntent | undefined;
  return intent && { ...newIntentOf(intent), receivedAt: intent.receivedAt };
}

function newIntentOf(intent: EarlierIntent): NewIntent & { state: "accepted" } {
  return {
    id: intent.id,
    variant: intent.variant,
    refId: intent.refId,
    authorship: intent.authorship,
    body: normalBody(intent.body),
    state: "accepted",
  };
}

/**
 * Takes in the first block of the earlier version, if there is one.
 *
 * @returns how many intents this call took in; 0 when there was no block
 *   (or another process took it in first).
 */
export async function takeInEarlier(ctx: StagedContext): Promise<number> {
  const listed = ctx.kv.list<unknown>({ prefix: keys.earlierBlocksPrefix }, { limit: 1 });
  let block: Deno.KvEntry<unknown> | undefined;
  for await (const entry of listed) block = entry;
  if (!block || !Array.isArray(block.value)) return 0;
  const intents = block.value as EarlierIntent[];
  const entries = await readMany(ctx.kv, intents.map((intent) => keys.intent(intent.id)));
  // Those whose id still points into the block: the rest were taken in by an earlier attempt.
  const open = intents.flatMap((_, k) => isEarlierPointer(entries[k].value) ? [k] : []);
  let taken = 0;
  if (open.length === 0) {
    // Nothing left in it (its last commit was refused, or its pointers were rewritten): drop it.
    await ctx.commit(() => ctx.kv.atomic().check(block).delete(block.key).commit());
    return 0;
  }
  const news: NewIntent[] = open.map((k) => newIntentOf(intents[k]));
  while (taken < open.length) {
    const rest = news.slice(taken);
    const count = planStagedCommit(rest.map((intent) => ({ intent })), SLICE_LIMITS);
    const carried: StoredEvent[] = rest.slice(0, count).map((intent, i) => ({
      type: "intent.accepted",
      intent: { ...intent, receivedAt: intents[open[taken + i]].receivedAt },
      first: true,
    }));
    const op = ctx.kv.atomic();
    open.slice(taken, taken + count).forEach((k, i) => {
      op.check(entries[k] as Deno.KvEntry<unknown>)
        .set(keys.intent(intents[k].id), encodeStagedPointer(i));
    });
    op.set(keys.staged(ctx.kv.commitVersionstamp()), encodeStaged(carried, ctx.now().getTime()));
    if (taken + count === open.length) op.check(block).delete(block.key);
    const result = await ctx.commit(() => op.commit());
    // Another process took some of them in first: it goes on with the block.
    if (!result.ok) return taken;
    ctx.staged(result.versionstamp, carried);
    taken += count;
  }
  return taken;
}
