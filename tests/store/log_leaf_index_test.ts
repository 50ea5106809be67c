/**
 * The log's leaf index (`src/log/leaf_index.ts`) on real stores: every
 * entry is found by its leaf hash below the size asked, through the rows of
 * complete chunks, the scan of the chunk not yet complete, or the rows a
 * row per leaf that earlier versions wrote; candidates whose prefix matches
 * are confirmed against the stored leaf hash.
 */

import assert from "node:assert/strict";
import { leafHash } from "../../protocol/log/hash.ts";
import { type Tile, tileHashes } from "../../protocol/log/tile.ts";
import { integrateStep } from "../../src/log/integrate.ts";
import { encodeIndex, logKeys } from "../../src/log/keys.ts";
import { CHUNK_ENTRIES, chunkRows, findLeaf, offsetsInRow } from "../../src/log/leaf_index.ts";
import { fullPath, readTiles } from "../../src/log/tiles.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { insertMany } from "../support/store_kit.ts";
import { storeTest } from "../support/stores.ts";

/** Leaf hashes of the stored tree's first `size` leaves, from its level-0 tiles. */
async function storedLeaves(kv: Deno.Kv, size: number): Promise<Uint8Array[]> {
  const tiles: Tile[] = [];
  for (let index = 0; index * 256 < size; index++) tiles.push({ level: 0, index, width: 256 });
  const stored = await readTiles(kv, tiles);
  return tiles.flatMap((tile) => {
    const data = stored.get(fullPath(tile));
    assert.ok(data, `level-0 tile ${tile.index} is stored`);
    return tileHashes(data);
  }).slice(0, size);
}

Deno.test("a chunk's rows hold each leaf once, under its first byte, found by prefix", () => {
  const leaves = Array.from(
    { length: CHUNK_ENTRIES },
    (_, i) => leafHash(new Uint8Array([i >> 8, i])),
  );
  // Two leaves that share their first nine bytes, and differ after.
  leaves[10] = new Uint8Array(32).fill(7);
  leaves[4000] = new Uint8Array(32).fill(7);
  leaves[4000][31] = 8;
  const rows = chunkRows(3, leaves);
  const byKey = new Map(rows.map((row) => [JSON.stringify(row.key), row.value]));
  assert.equal(rows.reduce((n, row) => n + row.value.length / 10, 0), CHUNK_ENTRIES);
  for (const [offset, leaf] of leaves.entries()) {
    const row = byKey.get(JSON.stringify(["log", "leaves", leaf[0], 3]));
    assert.ok(row, `a row for byte ${leaf[0]}`);
    assert.ok(offsetsInRow(row, leaf).includes(offset), `offset ${offset}`);
  }
  const both = offsetsInRow(byKey.get(JSON.stringify(["log", "leaves", 7, 3]))!, leaves[10]);
  assert.deepEqual(both, [10, 4000]);
  const absent = new Uint8Array(32).fill(7);
  absent[5] = 0;
  assert.deepEqual(offsetsInRow(byKey.get(JSON.stringify(["log", "leaves", 7, 3]))!, absent), []);
  assert.throws(() => chunkRows(0, leaves.slice(1)), RangeError);
});

storeTest("every entry is found by its leaf hash below the size asked, none above", async (t) => {
  const kv = await t.open();
  const store = new KvStore(kv);
  try {
    await store.prepare();
    const total = 2 * CHUNK_ENTRIES + 300;
    await insertMany(store, "leaf", total);
    await store.moveAll();
    for (;;) {
      const step = await integrateStep({ kv, store });
      if (step.outcome !== "integrated") break;
    }
    const leaves = await storedLeaves(kv, total);
    assert.equal(leaves.length, total);
    // One row per first byte for each complete chunk, none for the one under way.
    const rows = await Array.fromAsync(kv.list({ prefix: ["log", "leaves"] }));
    for (const chunk of [0, 1]) {
      const of = rows.filter((row) => row.key[3] === chunk).length;
      assert.ok(of > 200 && of <= 256, `${of} rows for chunk ${chunk}`);
    }
    assert.ok(rows.every((row) => row.key[3] === 0 || row.key[3] === 1));
    assert.deepEqual((await kv.get(logKeys.leavesIndexed)).value, encodeIndex(2));

    const sample = [0, 1, 255, 256, 2048, 4095, 4096, 4097, 4351, 8191, 8192, 8193, total - 1];
    for (let i = 0; i < 40; i++) sample.push(Math.floor(Math.random() * total));
    for (const index of sample) {
      assert.equal(await findLeaf(kv, leaves[index], total), index, `index ${index}`);
    }
    // Below a smaller size (a served checkpoint behind the tree): found below it, not above.
    assert.equal(await findLeaf(kv, leaves[4100], 4200), 4100);
    assert.equal(await findLeaf(kv, leaves[4300], 4200), null);
    assert.equal(await findLeaf(kv, leaves[100], 4000), 100);
    assert.equal(await findLeaf(kv, leaves[4000], 4000), null);
    assert.equal(await findLeaf(kv, leaves[0], 0), null);
    assert.equal(await findLeaf(kv, new Uint8Array(32), total), null);
    assert.equal(await findLeaf(kv, leaves[5].subarray(1), total), null);

    // A row whose prefix matches but whose leaf differs is not taken for it.
    const forged = leaves[17].slice();
    forged[31] ^= 1;
    assert.equal(await findLeaf(kv, forged, total), null);

    // Chunks an earlier version completed after this one began counting (a rolling upgrade): no
    // rows yet, found by the scan of the newest complete chunks, then indexed by the next steps.
    for (const row of rows) await kv.delete(row.key);
    await kv.set(logKeys.leavesIndexed, encodeIndex(0));
    for (const index of [0, 17, 4095, 4200, 8191, 8300]) {
      assert.equal(await findLeaf(kv, leaves[index], total), index, `unindexed ${index}`);
    }
    for (const indexed of [1, 2]) {
      const step = await integrateStep({ kv, store });
      assert.equal(step.outcome, "caught_up");
      assert.deepEqual((await kv.get(logKeys.leavesIndexed)).value, encodeIndex(indexed));
    }
    const again = await Array.fromAsync(kv.list({ prefix: ["log", "leaves"] }));
    assert.deepEqual(again.map((row) => row.value), rows.map((row) => row.value));
    assert.equal(await findLeaf(kv, leaves[17], total), 17);

    // A store whose tree earlier versions built: no count, no chunk rows, a row per leaf.
    for (const row of rows) await kv.delete(row.key);
    await kv.delete(logKeys.leavesIndexed);
    for (const index of [5, 3000]) await kv.set(logKeys.leaf(leaves[index]), encodeIndex(index));
    assert.equal(await findLeaf(kv, leaves[5], total), 5);
    assert.equal(await findLeaf(kv, leaves[3000], total), 3000);
    assert.equal(await findLeaf(kv, leaves[3000], 3000), null);
    assert.equal(await findLeaf(kv, leaves[8200], total), 8200);
  } finally {
    await store.drain(performance.now() + 2000);
    kv.close();
  }
});
