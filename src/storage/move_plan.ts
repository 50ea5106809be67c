/**
 * What one move of the sequencer (`sequencer.ts`) carries within denokv's
 * limits, the feed blocks its events go into, and the mover's lease as
 * stored (`["feed_mover"]`, see `keys.ts`).
 * @module
 */

import type { StagedBlock } from "./codec.ts";
import { keys } from "./keys.ts";
import {
  BLOCK_BYTES,
  type CommitCost,
  cost,
  keyBytes,
  plus,
  SMALL_VALUE_BYTES,
  within,
} from "./layout.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const HEAD_KEY_BYTES = keyBytes(keys.feedHead);
const STAGED_KEY_BYTES = keyBytes(keys.staged("00000000000000000000"));
const BLOCK_KEY_BYTES = keyBytes(keys.events(Number.MAX_SAFE_INTEGER));
/** A move's fixed part: the head's check and value, and the lease. */
const MOVE_BASE: CommitCost = plus(
  cost.check(HEAD_KEY_BYTES),
  cost.set(HEAD_KEY_BYTES, SMALL_VALUE_BYTES),
  cost.set(keyBytes(keys.feedMover), 80),
);

/** Frames of consecutive staged blocks that go into one feed block. */
export interface FeedBlock {
  parts: Uint8Array[];
  count: number;
  bytes: number;
}

/**
 * How many of the listed blocks (oldest first) one move carries within
 * denokv's limits, and the feed blocks their events go into (staged blocks
 * joined while they fit one value).
 */
export function planMove(listed: readonly { block: StagedBlock }[]): {
  take: number;
  blocks: FeedBlock[];
} {
  let total = MOVE_BASE;
  const blocks: FeedBlock[] = [];
  let take = 0;
  for (const { block } of listed) {
    const size = block.frames.byteLength;
    const last = blocks.at(-1);
    const joins = last !== undefined && last.bytes + size <= BLOCK_BYTES;
    const parts = [
      cost.remove(STAGED_KEY_BYTES),
      { ...cost.none(), mutationBytes: size },
    ];
    if (!joins) parts.push(cost.set(BLOCK_KEY_BYTES, 1));
    const next = plus(total, ...parts);
    if (take > 0 && !within(next)) break;
    total = next;
    if (joins) {
      last.parts.push(block.frames);
      last.count += block.count;
      last.bytes += size;
    } else blocks.push({ parts: [block.frames], count: block.count, bytes: 1 + size });
    take++;
  }
  return { take, blocks };
}

/** The lease as stored: UTF-8 JSON `{"holder","until"}`. */
export function encodeLease(lease: { holder: string; until: number }): Uint8Array {
  return encoder.encode(JSON.stringify(lease));
}

export function decodeLease(value: unknown): { holder: string; until: number } | null {
  if (!(value instanceof Uint8Array)) return null;
  try {
    const lease = JSON.parse(decoder.decode(value));
    return typeof lease?.holder === "string" && typeof lease?.until === "number" ? lease : null;
  } catch {
    return null;
  }
}
