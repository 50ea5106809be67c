/**
 * C2SP tlog-tiles: canonical paths round-trip and every other form is
 * refused; the tiles of a tree are the specification's; hashes and proofs
 * read from tiles equal those read from the whole tree; entry bundles
 * round-trip.
 */

import assert from "node:assert/strict";
import {
  leafHash,
  memoryTree,
  proveConsistency,
  proveInclusion,
  treeHashFrom,
} from "../../protocol/log/hash.ts";
import {
  decodeEntryBundle,
  encodeEntryBundle,
  parseTilePath,
  type Tile,
  tileData,
  tileHashes,
  tileHashReader,
  tileOfNode,
  tilePath,
  tilesOfTree,
} from "../../protocol/log/tile.ts";

Deno.test("canonical tile paths round-trip", () => {
  const cases: [Tile, string][] = [
    [{ level: 0, index: 0, width: 256 }, "tile/0/000"],
    [{ level: 0, index: 1234067, width: 256 }, "tile/0/x001/x234/067"],
    [{ level: 4, index: 1234067, width: 1 }, "tile/4/x001/x234/067.p/1"],
    [{ level: 63, index: 999, width: 255 }, "tile/63/999.p/255"],
    [{ level: 1, index: 1000, width: 17 }, "tile/1/x001/000.p/17"],
    [{ level: 2, index: 1000000, width: 256 }, "tile/2/x001/x000/000"],
    [{ level: "entries", index: 5, width: 256 }, "tile/entries/005"],
    [{ level: "entries", index: 12345, width: 3 }, "tile/entries/x012/345.p/3"],
    [
      { level: 0, index: Number.MAX_SAFE_INTEGER, width: 256 },
      "tile/0/x009/x007/x199/x254/x740/991",
    ],
  ];
  for (const [tile, path] of cases) {
    assert.equal(tilePath(tile), path);
    assert.deepEqual(parseTilePath(path), tile);
  }
});

Deno.test("non-canonical and malformed tile paths are refused", () => {
  const refused = [
    "tile/00/000", // a leading zero in the level
    "tile/01/000",
    "tile/64/000", // a level above 63
    "tile/-1/000",
    "tile/+1/000",
    "tile/0/0", // an index element of fewer than 3 digits
    "tile/0/0000",
    "tile/0/x000/001", // a leading zero group
    "tile/0/x001", // the last element with an x
    "tile/0/001/002", // an element but the last without an x
    "tile/0/X001/002",
    "tile/0/x1/002",
    "tile/0/x0001/002",
    "tile/0/000.p/0", // widths out of 1–255
    "tile/0/000.p/256",
    "tile/0/000.p/01",
    "tile/0/000.p/",
    "tile/0/000.p",
    "tile/0/000.p/1/",
    "tile/0/000/",
    "/tile/0/000",
    "tile/0/",
    "tile/data/000",
    "tile/8/0/000", // Go's sumdb form with a height
    "tile/entries/x000/001",
    "tile/entries/0",
    "tile/0/x009/x007/x199/x254/x740/992", // above 2^53 − 1
    "tile/0/0a0",
    "tile/0/ 000",
    "tile/0/000\n",
  ];
  for (const path of refused) {
    assert.throws(() => parseTilePath(path), SyntaxError, path);
  }
  assert.throws(() => tilePath({ level: 64, index: 0, width: 256 }), RangeError);
  assert.throws(() => tilePath({ level: 0, index: -1, width: 256 }), RangeError);
  assert.throws(() => tilePath({ level: 0, index: 0, width: 0 }), RangeError);
  assert.throws(() => tilePath({ level: 0, index: 0, width: 257 }), RangeError);
});

Deno.test("the tiles of a tree are the specification's examples", () => {
  const of70000 = tilesOfTree(70000);
  const level = (l: number) => of70000.filter((t) => t.level === l);
  assert.equal(level(0).filter((t) => t.width === 256).length, 273);
  assert.deepEqual(level(0).at(-1), { level: 0, index: 273, width: 112 });
  assert.deepEqual(level(1), [{ level: 1, index: 0, width: 256 }, {
    level: 1,
    index: 1,
    width: 17,
  }]);
  assert.deepEqual(level(2), [{ level: 2, index: 0, width: 1 }]);
  assert.equal(of70000.length, 273 + 1 + 2 + 1);
  assert.deepEqual(tilesOfTree(256).map(tilePath), ["tile/0/000", "tile/1/000.p/1"]);
  assert.deepEqual(tilesOfTree(0), []);
  assert.deepEqual(tilesOfTree(1).map(tilePath), ["tile/0/000.p/1"]);
});

Deno.test("hashes and proofs read from tiles equal those read from the whole tree", () => {
  const leaves = Array.from(
    { length: 70000 },
    (_, i) => leafHash(new Uint8Array([i >> 16, i >> 8, i])),
  );
  const tree = memoryTree(leaves);
  for (const size of [1, 255, 256, 257, 1000, 65535, 65536, 65537, 70000]) {
    const tiles = new Map<string, Uint8Array>();
    for (const tile of tilesOfTree(size)) tiles.set(tilePath(tile), tileData(tile, tree));
    let reads = 0;
    const fromTiles = tileHashReader(size, (tile) => {
      reads++;
      const data = tiles.get(tilePath(tile));
      if (!data) throw new Error(`no ${tilePath(tile)} for size ${size}`);
      return data;
    });
    assert.deepEqual(treeHashFrom(size, fromTiles), treeHashFrom(size, tree), `size ${size}`);
    for (const index of [0, size - 1, Math.floor(size / 3)]) {
      assert.deepEqual(proveInclusion(index, size, fromTiles), proveInclusion(index, size, tree));
    }
    for (const old of [1, Math.ceil(size / 2), size]) {
      assert.deepEqual(proveConsistency(old, size, fromTiles), proveConsistency(old, size, tree));
    }
    assert.ok(reads > 0);
  }
  // A partial tile is the first hashes of the full one that replaces it.
  const full = tileData({ level: 0, index: 0, width: 256 }, tree);
  assert.deepEqual(tileData({ level: 0, index: 0, width: 7 }, tree), full.slice(0, 7 * 32));
  assert.equal(tileHashes(full).length, 256);
  assert.deepEqual(tileHashes(full)[255], leaves[255]);
  assert.throws(() => tileHashes(new Uint8Array(33)), RangeError);
  assert.throws(() => tileHashes(new Uint8Array(0)), RangeError);
});

Deno.test("a node's tile has the width the tree gives it", () => {
  assert.deepEqual(tileOfNode({ level: 0, index: 300 }, 1000), { level: 0, index: 1, width: 256 });
  assert.deepEqual(tileOfNode({ level: 0, index: 999 }, 1000), { level: 0, index: 3, width: 232 });
  assert.deepEqual(tileOfNode({ level: 9, index: 0 }, 1024), { level: 1, index: 0, width: 4 });
  assert.deepEqual(tileOfNode({ level: 8, index: 0 }, 256), { level: 1, index: 0, width: 1 });
  assert.throws(() => tileOfNode({ level: 8, index: 1 }, 256), RangeError);
  assert.throws(() => tileOfNode({ level: 0, index: 5 }, 5), RangeError);
});

Deno.test("entry bundles round-trip, and malformed ones are refused", () => {
  const entries = [new Uint8Array(0), new Uint8Array([1, 2, 3]), new Uint8Array(300).fill(7)];
  const bundle = encodeEntryBundle(entries);
  assert.deepEqual([...bundle.slice(0, 7)], [0, 0, 0, 3, 1, 2, 3]);
  assert.deepEqual([...bundle.slice(7, 9)], [1, 44]);
  assert.deepEqual(decodeEntryBundle(bundle), entries);
  assert.deepEqual(decodeEntryBundle(bundle, 3), entries);
  assert.throws(() => decodeEntryBundle(bundle, 2), SyntaxError);
  assert.throws(() => decodeEntryBundle(bundle.slice(0, -1)), SyntaxError);
  assert.throws(() => decodeEntryBundle(new Uint8Array([0])), SyntaxError);
  assert.throws(() => decodeEntryBundle(new Uint8Array()), SyntaxError);
  const max = new Uint8Array(0xffff);
  assert.deepEqual(decodeEntryBundle(encodeEntryBundle([max])), [max]);
  assert.throws(() => encodeEntryBundle([new Uint8Array(0x10000)]), RangeError);
  assert.throws(() => encodeEntryBundle([]), RangeError);
  assert.throws(() => encodeEntryBundle(Array(257).fill(new Uint8Array(1))), RangeError);
  assert.throws(() => decodeEntryBundle(encodeEntryBundle(Array(256).fill(max)).slice(2)));
});
