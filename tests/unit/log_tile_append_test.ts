/**
 * A tree grown as tiles, one batch of leaves at a time, holds the tiles and
 * the root the whole tree gives, at every step.
 */

import assert from "node:assert/strict";
import { leafHash, memoryTree, treeHash, treeHashFrom } from "../../protocol/log/hash.ts";
import { appendLeaves } from "../../protocol/log/tile_append.ts";
import { type Tile, tileData, tilePath, tilesOfTree } from "../../protocol/log/tile.ts";

Deno.test("tiles grown batch by batch are the whole tree's tiles, with its root", () => {
  const leaves = Array.from(
    { length: 66000 },
    (_, i) => leafHash(new TextEncoder().encode(`${i}`)),
  );
  const tree = memoryTree(leaves);
  // One value per tile: the widest so far, read back as a prefix.
  const store = new Map<string, Uint8Array>();
  const key = (tile: Tile) => tilePath({ ...tile, width: 256 });
  const read = (tile: Tile) => {
    const data = store.get(key(tile));
    if (!data || data.length < tile.width * 32) throw new Error(`no ${tilePath(tile)}`);
    return data;
  };
  const batches = [1, 1, 253, 1, 1, 255, 256, 257, 1, 7000, 1, 57973];
  let size = 0;
  for (const count of batches) {
    const result = appendLeaves(size, leaves.slice(size, size + count), read);
    for (const { tile, data } of result.writes) {
      assert.ok(data.length === tile.width * 32);
      store.set(key(tile), data);
    }
    size = result.size;
    assert.deepEqual(result.rootHash, treeHashFrom(size, tree), `root of ${size}`);
    for (const tile of tilesOfTree(size)) {
      assert.deepEqual(read(tile).slice(0, tile.width * 32), tileData(tile, tree), tilePath(tile));
    }
  }
  assert.equal(size, 66000);
  assert.deepEqual(appendLeaves(0, [leaves[0]], read).rootHash, treeHash([leaves[0]]));
});

Deno.test("only the tiles that change are written", () => {
  const leaves = Array.from({ length: 600 }, (_, i) => leafHash(new Uint8Array([i >> 8, i])));
  const first = appendLeaves(0, leaves.slice(0, 300), () => {
    throw new Error("an empty tree has no tiles");
  });
  assert.deepEqual(first.writes.map((w) => tilePath(w.tile)), [
    "tile/0/000",
    "tile/0/001.p/44",
    "tile/1/000.p/1",
  ]);
  const stored = new Map(first.writes.map((w) => [w.tile.level + "/" + w.tile.index, w.data]));
  const asked: string[] = [];
  const second = appendLeaves(300, leaves.slice(300, 301), (tile) => {
    asked.push(tilePath(tile));
    return stored.get(tile.level + "/" + tile.index)!;
  });
  assert.deepEqual(second.writes.map((w) => tilePath(w.tile)), ["tile/0/001.p/45"]);
  assert.deepEqual(asked.sort(), ["tile/0/001.p/44", "tile/1/000.p/1"]);
  assert.deepEqual(second.rootHash, treeHash(leaves.slice(0, 301)));
  assert.throws(() => appendLeaves(0, [], () => new Uint8Array()), RangeError);
  assert.throws(() => appendLeaves(0, [new Uint8Array(31)], () => new Uint8Array()), TypeError);
});
