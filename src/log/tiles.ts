/**
 * Reading the stored tree: the tiles a computation needs, fetched first in a
 * few reads, then read synchronously by the pure modules of
 * `protocol/log/` through a `(level, index) => hash` reader.
 * @module
 */

import { HASH_SIZE, type HashReader, type TreeNode } from "@intents/protocol/log/hash";
import { type Tile, tileHashReader, tileOfNode, tilePath } from "@intents/protocol/log/tile";
import { readMany } from "../storage/layout.ts";
import { logKeys } from "./keys.ts";

/**
 * The key of a hash tile, whatever its width (one value holds the widest).
 *
 * @throws {TypeError} for an entry bundle: bundles are not stored (`reader.ts`).
 */
export function tileKey(tile: Tile): Deno.KvKey {
  if (tile.level === "entries") throw new TypeError("entry bundles are not stored");
  return logKeys.tile(tile.level, tile.index);
}

/**
 * The stored data of `tiles`, by path at width 256 (one value serves every
 * width); missing ones are absent from the map.
 */
export async function readTiles(
  kv: Deno.Kv,
  tiles: readonly Tile[],
): Promise<Map<string, Uint8Array>> {
  const unique = new Map<string, Tile>();
  for (const tile of tiles) unique.set(fullPath(tile), tile);
  const list = [...unique.values()];
  const entries = await readMany(kv, list.map(tileKey));
  const found = new Map<string, Uint8Array>();
  entries.forEach((entry, i) => {
    if (entry.value instanceof Uint8Array) found.set(fullPath(list[i]), entry.value);
  });
  return found;
}

/** A tile's path at full width: the one name of its stored value. */
export function fullPath(tile: Tile): string {
  return tilePath({ ...tile, width: 256 });
}

/**
 * A reader of the tree of `size` leaves for a computation that reads
 * `nodes` (as `inclusionProofNodes` and the like list them), their tiles
 * fetched first.
 *
 * @throws {RangeError} from the reader when a tile it needs is not stored.
 */
export async function storedTreeReader(
  kv: Deno.Kv,
  size: number,
  nodes: readonly TreeNode[],
): Promise<HashReader> {
  const stored = await readTiles(kv, nodes.map((node) => tileOfNode(node, size)));
  return tileHashReader(size, (tile) => {
    const data = stored.get(fullPath(tile));
    if (data === undefined || data.length < tile.width * HASH_SIZE) {
      throw new RangeError(`${tilePath(tile)} is not stored`);
    }
    return data;
  });
}
