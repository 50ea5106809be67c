/**
 * The leaf index: which entry has a given leaf hash, for `GET
 * /log/proof?leaf=` (docs/interface.md §14). A row per leaf keyed by its
 * hash would land each leaf on a page of the store's B-tree of its own (a
 * random key), the largest part of what the log cost a write; so the index
 * is kept per **chunk** of {@link CHUNK_ENTRIES} entries instead, written
 * once, in the integration step that completes the chunk, as one row per
 * first byte of the leaf hashes it holds (`["log", "leaves", byte, chunk]`,
 * 256 rows at most, each appended after the same byte's rows of earlier
 * chunks). A row lists, for each of its leaves, the next
 * {@link PREFIX_BYTES} bytes of the hash and the leaf's offset in the chunk
 * (2 bytes, big-endian).
 *
 * `["log", "leaves_indexed"]` counts the chunks indexed: it is first written
 * as the number of chunks complete then (completed by an earlier version,
 * whose rows per leaf cover them), and a step that finds a complete chunk
 * above it writes that chunk's rows (one a step: what an earlier version
 * completed during a rolling upgrade, the entries this version integrated
 * into it included).
 *
 * A lookup reads the rows of the hash's first byte (one list: a row per
 * 4,096 entries of the log), scans the level-0 tiles of the chunk not yet
 * complete (and of the newest four complete ones that have no rows yet: up
 * to 80 tiles, only while the count lags), and confirms each candidate
 * against the stored leaf hash; the row per leaf of earlier versions
 * (`["log", "leaf", hash]`) is read too.
 * @module
 */

import { equalBytes, HASH_SIZE } from "@intents/protocol/log/hash";
import { type Tile, TILE_WIDTH, tileHashes } from "@intents/protocol/log/tile";
import { decodeIndex, encodeIndex, logKeys } from "./keys.ts";
import { fullPath, readTiles } from "./tiles.ts";

/** Entries a chunk of the index covers: 16 level-0 tiles. */
export const CHUNK_ENTRIES = 4_096;
const CHUNK_TILES = CHUNK_ENTRIES / TILE_WIDTH;
/** Bytes of a leaf hash, after the first, that a row keeps. */
const PREFIX_BYTES = 8;
/** Complete chunks without rows that a lookup scans at most, the newest (see {@link findLeaf}). */
const SCAN_COMPLETE_CHUNKS = 4;
const RECORD_BYTES = PREFIX_BYTES + 2;

/**
 * The rows of chunk `chunk` whose leaves' hashes are `leaves` (all
 * {@link CHUNK_ENTRIES} of them, in order).
 *
 * @throws {RangeError} when `leaves` is not a whole chunk.
 */
export function chunkRows(
  chunk: number,
  leaves: readonly Uint8Array[],
): { key: Deno.KvKey; value: Uint8Array }[] {
  if (leaves.length !== CHUNK_ENTRIES) {
    throw new RangeError(`a chunk has ${CHUNK_ENTRIES} leaves, not ${leaves.length}`);
  }
  const counts = new Uint16Array(256);
  for (const leaf of leaves) counts[leaf[0]]++;
  const rows: Uint8Array[] = [];
  for (let byte = 0; byte < 256; byte++) {
    if (counts[byte] > 0) rows[byte] = new Uint8Array(counts[byte] * RECORD_BYTES);
  }
  const filled = new Uint16Array(256);
  leaves.forEach((leaf, offset) => {
    const at = filled[leaf[0]]++ * RECORD_BYTES;
    const row = rows[leaf[0]];
    row.set(leaf.subarray(1, 1 + PREFIX_BYTES), at);
    row[at + PREFIX_BYTES] = offset >> 8;
    row[at + PREFIX_BYTES + 1] = offset & 0xff;
  });
  const written: { key: Deno.KvKey; value: Uint8Array }[] = [];
  rows.forEach((value, byte) => written.push({ key: logKeys.leaves(byte, chunk), value }));
  return written;
}

/** The offsets in a row's chunk of the leaves whose hash `hash` may be (prefix equal). */
export function offsetsInRow(row: Uint8Array, hash: Uint8Array): number[] {
  const offsets: number[] = [];
  for (let at = 0; at + RECORD_BYTES <= row.length; at += RECORD_BYTES) {
    let same = true;
    for (let i = 0; i < PREFIX_BYTES && same; i++) same = row[at + i] === hash[1 + i];
    if (same) offsets.push((row[at + PREFIX_BYTES] << 8) | row[at + PREFIX_BYTES + 1]);
  }
  return offsets;
}

/** A chunk of the index a step writes, and the count of chunks indexed after it. */
export interface DueChunk {
  rows: { key: Deno.KvKey; value: Uint8Array }[];
  indexed: number;
}

/**
 * What a step that grows the tree from `from` to `to` leaves writes of the
 * index, given the count as read (`indexed`): the rows of the first chunk
 * not indexed when the tree completes it (its level-0 tiles as the step
 * writes them, or as stored), or only the first count; null for nothing.
 *
 * @throws {Error} when a level-0 tile of that chunk is not stored whole.
 */
export async function dueChunk(
  kv: Deno.Kv,
  indexed: Deno.KvEntryMaybe<Uint8Array>,
  from: number,
  to: number,
  writes: readonly { tile: Tile; data: Uint8Array }[],
): Promise<DueChunk | null> {
  const first = indexed.value === null;
  const count = first ? Math.floor(from / CHUNK_ENTRIES) : decodeIndex(indexed.value);
  if (count >= Math.floor(to / CHUNK_ENTRIES)) return first ? { rows: [], indexed: count } : null;
  return { rows: chunkRows(count, await chunkLeaves(kv, count, writes)), indexed: count + 1 };
}

/** Adds what {@link dueChunk} gave to a step's commit. */
export function writeDue(op: Deno.AtomicOperation, due: DueChunk): void {
  for (const row of due.rows) op.set(row.key, row.value);
  op.set(logKeys.leavesIndexed, encodeIndex(due.indexed));
}

/** The leaf hashes of chunk `chunk`: its level-0 tiles as written by a step, or as stored. */
async function chunkLeaves(
  kv: Deno.Kv,
  chunk: number,
  writes: readonly { tile: Tile; data: Uint8Array }[],
): Promise<Uint8Array[]> {
  const tiles: Tile[] = [];
  for (let index = chunk * CHUNK_TILES; index < (chunk + 1) * CHUNK_TILES; index++) {
    tiles.push({ level: 0, index, width: TILE_WIDTH });
  }
  const written = new Map<number, Uint8Array>();
  for (const { tile, data } of writes) if (tile.level === 0) written.set(tile.index, data);
  const stored = await readTiles(kv, tiles.filter((tile) => !written.has(tile.index)));
  return tiles.flatMap((tile) => {
    const data = written.get(tile.index) ?? stored.get(fullPath(tile));
    if (data === undefined || data.length !== TILE_WIDTH * HASH_SIZE) {
      throw new Error(`the log's ${fullPath(tile)} is not stored whole`);
    }
    return tileHashes(data);
  });
}

/**
 * The index of the first entry below `size` whose leaf hash is `hash`, or
 * null. `size` is at most the integrated tree's.
 */
export async function findLeaf(
  kv: Deno.Kv,
  hash: Uint8Array,
  size: number,
): Promise<number | null> {
  if (hash.length !== HASH_SIZE || size <= 0) return null;
  const [kept, indexed] = await kv.getMany<[Uint8Array, Uint8Array]>([
    logKeys.leaf(hash),
    logKeys.leavesIndexed,
  ]);
  const complete = Math.floor(size / CHUNK_ENTRIES);
  const withRows = Math.min(indexed.value === null ? 0 : decodeIndex(indexed.value), complete);
  // The chunk under way, and the complete ones whose rows are not written yet (a rolling upgrade:
  // an earlier version completed them), the newest few.
  const scanFrom = Math.max(withRows, complete - SCAN_COMPLETE_CHUNKS) * CHUNK_ENTRIES;
  const [rows, scanned] = await Promise.all([
    candidatesInRows(kv, hash, withRows),
    scanTiles(kv, hash, scanFrom, size),
  ]);
  if (kept.value !== null) {
    const index = decodeIndex(kept.value);
    if (index < size) rows.push(index);
  }
  const confirmed = await confirm(kv, hash, rows);
  const found = [...confirmed, ...scanned];
  return found.length === 0 ? null : Math.min(...found);
}

/** Candidates from the rows of the chunks below `complete` (a prefix matches). */
async function candidatesInRows(
  kv: Deno.Kv,
  hash: Uint8Array,
  complete: number,
): Promise<number[]> {
  const candidates: number[] = [];
  if (complete === 0) return candidates;
  const rows = kv.list<Uint8Array>({
    prefix: logKeys.leavesOf(hash[0]),
    end: logKeys.leaves(hash[0], complete),
  }, { batchSize: 1_000 });
  for await (const { key, value } of rows) {
    const chunk = key[3];
    if (typeof chunk !== "number" || !(value instanceof Uint8Array)) {
      throw new TypeError("a leaf index row has an unknown layout");
    }
    for (const offset of offsetsInRow(value, hash)) candidates.push(chunk * CHUNK_ENTRIES + offset);
  }
  return candidates;
}

/** The indexes in [from, size) whose stored leaf hash is `hash`: their level-0 tiles read. */
async function scanTiles(
  kv: Deno.Kv,
  hash: Uint8Array,
  from: number,
  size: number,
): Promise<number[]> {
  const first = from / TILE_WIDTH;
  const last = first + (SCAN_COMPLETE_CHUNKS + 1) * CHUNK_TILES;
  const indexes: number[] = [];
  for (let t = first; t * TILE_WIDTH < size && t < last; t++) indexes.push(t);
  const found: number[] = [];
  for (const [t, leaves] of await levelZero(kv, indexes)) {
    leaves.forEach((leaf, j) => {
      if (t * TILE_WIDTH + j < size && equalBytes(leaf, hash)) found.push(t * TILE_WIDTH + j);
    });
  }
  return found;
}

/** Those of `candidates` whose stored leaf hash is `hash`. */
async function confirm(kv: Deno.Kv, hash: Uint8Array, candidates: number[]): Promise<number[]> {
  const tiles = await levelZero(kv, [
    ...new Set(candidates.map((i) => Math.floor(i / TILE_WIDTH))),
  ]);
  return candidates.filter((index) => {
    const leaf = tiles.get(Math.floor(index / TILE_WIDTH))?.[index % TILE_WIDTH];
    return leaf !== undefined && equalBytes(leaf, hash);
  });
}

/** The leaf hashes of the stored level-0 tiles of these indexes (those stored), by index. */
async function levelZero(kv: Deno.Kv, indexes: number[]): Promise<Map<number, Uint8Array[]>> {
  const tiles = indexes.map((index): Tile => ({ level: 0, index, width: TILE_WIDTH }));
  const stored = await readTiles(kv, tiles);
  const leaves = new Map<number, Uint8Array[]>();
  for (const tile of tiles) {
    const data = stored.get(fullPath(tile));
    if (data !== undefined) leaves.set(tile.index, tileHashes(data));
  }
  return leaves;
}
