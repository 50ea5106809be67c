/**
 * Integration: the tree extended by the events after its size, in bounded
 * steps. One step reads the tree's state, the events that follow it in the
 * feed (the event with id n is the entry at index n − 1), computes their
 * entries, the tiles that change and the new root (`appendLeaves`, reading
 * only the rightmost stored tile of each level), and writes, in ONE commit
 * checked against the state as read: the changed hash tiles, the leaf
 * index's rows of a chunk completed (`leaf_index.ts`), and the new state.
 * Entry bundles are not stored: the entries are the feed's events'
 * commitments, fixed with the events, and a bundle is made from them when
 * read (`reader.ts`). Two integrators that read the same state cannot both
 * commit, and both compute the same tree from the same feed, so they never
 * diverge; a process that dies between steps leaves a whole state, from
 * which any process resumes.
 * @module
 */

import { canonicalViewOfParsed } from "@intents/protocol/jcs";
import {
  entryOfCanonicalRecord,
  entryOfRecordSha256,
  isRecordSha256,
} from "@intents/protocol/log/entry";
import { leafHash } from "@intents/protocol/log/hash";
import { type Tile, TILE_WIDTH } from "@intents/protocol/log/tile";
import { appendLeaves } from "@intents/protocol/log/tile_append";
import type { IntentEvent } from "../domain/intent.ts";
import { recordValue } from "../domain/record.ts";
import type { Store } from "../domain/store.ts";
import { retryWhileLocked } from "../storage/retry.ts";
import { decodeState, encodeState, logKeys, type TreeState } from "./keys.ts";
import { dueChunk, writeDue } from "./leaf_index.ts";
import { fullPath, readTiles, tileKey } from "./tiles.ts";

/**
 * Entries one step integrates at most, three tiles' worth: a step stays well
 * within denokv's limits (1,000 mutations, 800 KiB a commit: about 40 KB
 * and a few mutations here, 256 more and 45 KB when it completes a chunk
 * of the leaf index), and over a networked KV, where a step costs several
 * round trips, the tree keeps up with a few thousand events a second.
 */
export const STEP_ENTRIES = 768;
/** Event bytes one step reads at most (records up to 64 KiB each): bounded memory. */
const STEP_READ_BYTES = 1 << 20;

/** What a step did. */
export type StepResult =
  /**
   * It extended the tree by `count` entries to `state`; `end` when its read
   * found the feed's end (fewer events than it asked for, within its bytes),
   * or the end of what `recent` held; `recent` when the entries came from it.
   */
  | {
    outcome: "integrated";
    state: TreeState & { rootHash: Uint8Array };
    count: number;
    end: boolean;
    recent: boolean;
  }
  /** The tree already covers the feed. */
  | { outcome: "caught_up"; state: TreeState }
  /** Another process extended the tree first: read again. */
  | { outcome: "lost" };

/** What {@link integrateStep} works with. */
export interface StepOptions {
  kv: Deno.Kv;
  /** The feed, read through the storage port. */
  store: Pick<Store, "readEvents">;
  /** Entries at most (default {@link STEP_ENTRIES}). */
  limit?: number;
  /**
   * The entries of the events after a position, from this process's own
   * moves (`entry_tap.ts`): the step reads the feed only when this gives none.
   */
  recent?: (after: number, limit: number) => Uint8Array[];
  /** Written in the step's commit too: the integrator's lease, renewed by its work. */
  also?: { key: Deno.KvKey; value: Uint8Array };
}

/**
 * The entry of an event: the commitment to its type and its record as the
 * feed serves it (docs/interface.md §14). Its `R` was computed as the event
 * was stored when the request's JCS was at hand; otherwise (events of
 * decisions, expiries, earlier versions, a stored `R` that is malformed)
 * from the record, its value built once rather than written as text and
 * read back.
 */
export function eventEntry(event: IntentEvent): Uint8Array {
  if (isRecordSha256(event.recordSha256)) {
    return entryOfRecordSha256(event.type, event.recordSha256);
  }
  return entryOfCanonicalRecord(event.type, canonicalViewOfParsed(recordValue(event.intent)));
}

/**
 * One step of integration (see the module's documentation).
 *
 * @throws {Error} when the feed's positions are not the dense run after the
 *   tree's size, or a stored tile the step needs is missing (neither
 *   happens on a store only this version writes).
 */
export async function integrateStep(options: StepOptions): Promise<StepResult> {
  const { kv, limit = STEP_ENTRIES } = options;
  const [entry, indexed] = await kv.getMany<[Uint8Array, Uint8Array]>([
    logKeys.state,
    logKeys.leavesIndexed,
  ]);
  const state = decodeState(entry.value);
  // A step ends at the last tile edge it reaches, so that a full tile is written once, not first
  // as a partial one and again as a full one by the next step.
  const cap = Math.min(limit, STEP_ENTRIES);
  const edge = Math.floor((state.size + cap) / TILE_WIDTH) * TILE_WIDTH;
  const max = edge > state.size ? edge - state.size : cap;
  const recent = options.recent?.(state.size, max) ?? [];
  const read = recent.length > 0
    ? { entries: recent, end: recent.length < max }
    : await readEntries(options.store, state.size, max);
  if (read === null) {
    // Nothing to add: a chunk of the leaf index still due (one an earlier version completed) is
    // written all the same.
    const due = await dueChunk(kv, indexed, state.size, state.size, []);
    if (due === null || due.rows.length === 0) return { outcome: "caught_up", state };
    const op = kv.atomic().check(entry).check(indexed);
    writeDue(op, due);
    return (await commitStep(op, options)) ? { outcome: "caught_up", state } : { outcome: "lost" };
  }
  const { entries } = read;
  const leaves = entries.map(leafHash);

  const held = rightmostTiles(state.size);
  const stored = await readTiles(kv, held);
  const tileData = (tile: Tile): Uint8Array => {
    const data = stored.get(fullPath(tile));
    if (data === undefined) throw new Error(`the log's ${fullPath(tile)} is not stored`);
    return data;
  };
  const { size, writes, rootHash } = appendLeaves(state.size, leaves, tileData);

  const op = kv.atomic().check(entry).check(indexed);
  for (const write of writes) op.set(tileKey(write.tile), write.data);
  const due = await dueChunk(kv, indexed, state.size, size, writes);
  if (due !== null) writeDue(op, due);
  op.set(logKeys.state, encodeState({ size, rootHash }));
  if (!(await commitStep(op, options))) return { outcome: "lost" };
  return {
    outcome: "integrated",
    state: { size, rootHash },
    count: entries.length,
    end: read.end,
    recent: recent.length > 0,
  };
}

/** Commits a step's writes with the lease's renewal (`also`); false when its checks failed. */
async function commitStep(op: Deno.AtomicOperation, options: StepOptions): Promise<boolean> {
  if (options.also) op.set(options.also.key, options.also.value);
  return (await retryWhileLocked(() => op.commit())).ok;
}

/**
 * The entries of the events after position `size`, at most `max` (fewer
 * once their records pass 1 MiB), read from the feed, and whether the read
 * found the feed's end; null when there are none.
 *
 * @throws {Error} when the feed's positions are not the dense run after `size`.
 */
export async function readEntries(
  store: StepOptions["store"],
  size: number,
  max: number,
): Promise<{ entries: Uint8Array[]; end: boolean } | null> {
  const events = await store.readEvents({ after: size, limit: max, maxBytes: STEP_READ_BYTES });
  if (events.length === 0) return null;
  let bytes = 0;
  events.forEach((event, i) => {
    if (event.position !== size + 1 + i) {
      throw new Error(`the feed gave position ${event.position} after ${size + i}`);
    }
    bytes += event.intent.body.byteLength;
  });
  return {
    entries: events.map(eventEntry),
    end: events.length < max && bytes < STEP_READ_BYTES,
  };
}

/** The partial tile of each level of the tree of `size` leaves: all that appending to it reads. */
function rightmostTiles(size: number): Tile[] {
  const tiles: Tile[] = [];
  for (let level = 0, count = size; count > 0; level++, count = Math.floor(count / TILE_WIDTH)) {
    if (count % TILE_WIDTH !== 0) {
      tiles.push({ level, index: Math.floor(count / TILE_WIDTH), width: count % TILE_WIDTH });
    }
  }
  return tiles;
}
