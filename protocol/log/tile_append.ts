/**
 * Growing a tree kept as tiles: which tiles change when leaf hashes are
 * appended, with their new contents, and the new root hash, so that a server
 * that stores tiles (one value per tile, the widest so far, which serves
 * every narrower width as its prefix) never holds the tree any other way.
 * @module
 */

import { concatBytes } from "./_bytes.ts";
import { HASH_SIZE, nodeHash, treeHashFrom } from "./hash.ts";
import { type Tile, TILE_WIDTH, tileHashes, tileHashReader, tilePath } from "./tile.ts";

/** A tile to store: its coordinates (with its new width) and its data. */
export interface TileWrite {
  /** The tile, with its new width. */
  tile: Tile;
  /** Its hashes, `width` × 32 bytes. */
  data: Uint8Array;
}

/** What {@link appendLeaves} computed. */
export interface AppendResult {
  /** The new tree size. */
  size: number;
  /** The tiles that are new or wider, level by level, left to right. */
  writes: TileWrite[];
  /** The root hash of the new tree. */
  rootHash: Uint8Array;
}

/**
 * Appends leaf hashes to the tree of `size` leaves held as tiles.
 *
 * @param size the tree's size before (0 for an empty tree).
 * @param leafHashes the new leaves' hashes, in order (at least one).
 * @param readTile the stored data of a tile of the tree before, at least
 *   `width` hashes; it is asked only for the rightmost tile of a level, and
 *   for the root only for tiles no write replaces.
 * @throws {RangeError} when `size` is not a whole number, there is no leaf
 *   hash, or the new size passes 2^53 − 1.
 * @throws {TypeError} when a leaf hash is not 32 bytes.
 *
 * @example
 * ```ts
 * import { leafHash } from "./hash.ts";
 *
 * const { writes, rootHash } = appendLeaves(0, [leafHash(new Uint8Array([1]))], () => {
 *   throw new Error("an empty tree has no tiles");
 * });
 * writes.length; // 1: tile/0/000.p/1
 * ```
 */
export function appendLeaves(
  size: number,
  leafHashes: readonly Uint8Array[],
  readTile: (tile: Tile) => Uint8Array,
): AppendResult {
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new RangeError(`a tree size is a whole number from 0 to 2^53 − 1, not ${size}`);
  }
  if (leafHashes.length === 0) throw new RangeError("at least one leaf hash is appended");
  const newSize = size + leafHashes.length;
  if (!Number.isSafeInteger(newSize)) throw new RangeError("the tree would pass 2^53 − 1 leaves");
  for (const hash of leafHashes) {
    if (!(hash instanceof Uint8Array) || hash.length !== HASH_SIZE) {
      throw new TypeError("a leaf hash is 32 bytes");
    }
  }
  const writes: TileWrite[] = [];
  let pending: readonly Uint8Array[] = leafHashes;
  for (let level = 0; pending.length > 0; level++) {
    const held = Math.floor(size / TILE_WIDTH ** level);
    let index = Math.floor(held / TILE_WIDTH);
    let current = held % TILE_WIDTH === 0 ? [] : tileHashes(
      readTile({ level, index, width: held % TILE_WIDTH }).subarray(
        0,
        (held % TILE_WIDTH) * HASH_SIZE,
      ),
    );
    const above: Uint8Array[] = [];
    for (const hash of pending) {
      current.push(hash);
      if (current.length < TILE_WIDTH) continue;
      writes.push({ tile: { level, index, width: TILE_WIDTH }, data: concatBytes(...current) });
      above.push(perfectHash(current));
      index++;
      current = [];
    }
    if (current.length > 0) {
      writes.push({ tile: { level, index, width: current.length }, data: concatBytes(...current) });
    }
    pending = above;
  }
  const written = new Map(writes.map((w) => [tilePath({ ...w.tile, width: TILE_WIDTH }), w.data]));
  const rootHash = treeHashFrom(
    newSize,
    tileHashReader(
      newSize,
      (tile) => written.get(tilePath({ ...tile, width: TILE_WIDTH })) ?? readTile(tile),
    ),
  );
  return { size: newSize, writes, rootHash };
}

/** The root of the perfect tree over a power-of-two count of hashes. */
function perfectHash(hashes: readonly Uint8Array[]): Uint8Array {
  let level = [...hashes];
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i], level[i + 1]));
    level = next;
  }
  return level[0];
}
