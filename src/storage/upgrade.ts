/**
 * Moves intents stored before the feed existed into it, when a server starts.
 *
 * Before the feed, the intents of one commit were a block under
 * `["intent_batches", receivedAtMs, seq, writer]`, and each id's pointer was
 * `[receivedAtMs, seq, writer, index]`. Those blocks are read in key order —
 * their acceptance order, by time — and appended to the feed, a few blocks
 * per atomic commit that checks and deletes the blocks it moves and
 * rewrites their pointers. An interrupted move loses nothing, and another
 * start finishes it; processes that start together move each block once.
 * @module
 */

import type { Authorship, NewIntent, StoredIntent, Variant } from "../domain/intent.ts";
import { addEvents, commitEvents, type InsertContext } from "./append.ts";
import type { StoredEvent } from "./codec.ts";
import { keys } from "./keys.ts";
import { cost, keyBytes, KV_COMMIT_LIMITS, planCommit, plus } from "./layout.ts";

/** An intent as the layout before the feed kept it. */
interface EarlierIntent {
  id: string;
  variant: Variant;
  refId: string;
  authorship: Authorship;
  receivedAt: string;
  body: Uint8Array;
}

/** Earlier blocks moved per commit, at most (each holds at most about 64 KB). */
const BLOCKS_PER_COMMIT = 8;

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The body as the feed stores bodies: one line, every number as JCS writes
 * it. The earlier layout kept the bytes as received, which passed the strict
 * reader and therefore parse to the values that were verified.
 */
function normalBody(body: Uint8Array): Uint8Array {
  return encoder.encode(JSON.stringify(JSON.parse(utf8.decode(body))));
}

/**
 * Moves every block of the earlier layout into the feed.
 *
 * @returns how many intents were moved.
 */
export async function moveEarlierBlocks(
  ctx: Pick<InsertContext, "kv" | "feed" | "commit">,
): Promise<number> {
  const { kv, feed } = ctx;
  let moved = 0;
  for (;;) {
    const blocks: Deno.KvEntry<EarlierIntent[]>[] = [];
    const listed = kv.list<EarlierIntent[]>(
      { prefix: keys.earlierBlocksPrefix },
      { limit: BLOCKS_PER_COMMIT },
    );
    for await (const entry of listed) blocks.push(entry);
    if (blocks.length === 0) return moved;
    // The intents as the feed keeps them: each body on one line, numbers as JCS writes them.
    const moving = blocks.map((block) =>
      block.value.map((intent): NewIntent => ({
        id: intent.id,
        variant: intent.variant,
        refId: intent.refId,
        authorship: intent.authorship,
        body: normalBody(intent.body),
        state: "accepted",
      }))
    );
    // As many whole blocks as one commit carries (always the first), each
    // checked and deleted beside its intents' events.
    let take = blocks.length;
    for (; take > 0; take--) {
      const intents = moving.slice(0, take).flat();
      const deletes = plus(
        cost.none(),
        ...blocks.slice(0, take).flatMap((
          b,
        ) => [cost.check(keyBytes(b.key)), cost.remove(keyBytes(b.key))]),
      );
      const left = {
        checks: KV_COMMIT_LIMITS.checks - deletes.checks,
        mutations: KV_COMMIT_LIMITS.mutations - deletes.mutations,
        mutationBytes: KV_COMMIT_LIMITS.mutationBytes - deletes.mutationBytes,
        keyBytes: KV_COMMIT_LIMITS.keyBytes - deletes.keyBytes,
      };
      if (planCommit(intents.map((intent) => ({ intent })), left).count === intents.length) break;
    }
    if (take === 0) throw new Error("an earlier block does not fit one commit");
    const head = await feed.freshHead();
    const op = kv.atomic();
    for (const block of blocks.slice(0, take)) op.check(block).delete(block.key);
    const earlier = blocks.slice(0, take).flatMap((block) => block.value);
    const intents = moving.slice(0, take).flat();
    const events: StoredEvent[] = intents.map((intent, k) => {
      const stored: StoredIntent = {
        ...intent,
        receivedAt: earlier[k].receivedAt,
        position: head.position + k + 1,
        state: "accepted",
      };
      return { type: "intent.accepted", intent: stored };
    });
    const { blockOf } = planCommit(intents.map((intent) => ({ intent })));
    // A failed check: another process moved some of them, or appended, first; read again.
    const position = addEvents(op, head, events, blockOf);
    const ids = events.map((e) => e.intent.id);
    if (await commitEvents(ctx, op, { from: head, position, ids })) moved += events.length;
  }
}
