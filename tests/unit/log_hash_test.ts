/**
 * RFC 6962 hashing and proofs: roots against the definition written out
 * plainly, inclusion and consistency proofs made and checked for every tree
 * size from 1 to 1,000 (a sample of indexes each) and around the tile
 * boundaries 256 and 65,536, and tampered proofs refused.
 */

import assert from "node:assert/strict";
import { base64urlnopad } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { sha256Base64url, sha256Of } from "../../protocol/log/_sha256.ts";
import {
  consistencyProofNodes,
  type HashReader,
  inclusionProofNodes,
  leafHash,
  memoryTree,
  nodeHash,
  proveConsistency,
  proveInclusion,
  treeHash,
  treeHashFrom,
  treeHashNodes,
  verifyConsistency,
  verifyInclusion,
} from "../../protocol/log/hash.ts";

/** MTH as RFC 6962 §2.1 states it. */
function mth(leaves: Uint8Array[]): Uint8Array {
  return leaves.length === 0 ? sha256(new Uint8Array()) : referenceRoots(leaves)(leaves.length);
}

function leaves(count: number): Uint8Array[] {
  return Array.from({ length: count }, (_, i) => leafHash(new TextEncoder().encode(`entry ${i}`)));
}

/** A few indexes below n: the ends, the middle, and two spread by a fixed stride. */
function sample(n: number, salt: number): number[] {
  return [...new Set([0, n - 1, Math.floor(n / 2), (salt * 7919) % n, (salt * 104729 + 13) % n])];
}

function flipped(hash: Uint8Array): Uint8Array {
  const copy = hash.slice();
  copy[0] ^= 1;
  return copy;
}

/**
 * The root of each prefix of `all` by the definition's recursion, each range
 * computed once (prefixes share most of them).
 */
function referenceRoots(all: Uint8Array[]): (n: number) => Uint8Array {
  const known = new Map<string, Uint8Array>();
  const range = (lo: number, hi: number): Uint8Array => {
    if (hi - lo === 1) return all[lo];
    const key = `${lo}:${hi}`;
    const hit = known.get(key);
    if (hit) return hit;
    let k = 1;
    while (k * 2 < hi - lo) k *= 2;
    const hash = nodeHash(range(lo, lo + k), range(lo + k, hi));
    known.set(key, hash);
    return hash;
  };
  return (n) => range(0, n);
}

const SMALL = leaves(1000);
const SMALL_TREE = memoryTree(SMALL);

Deno.test("leaf and node hashes are SHA-256 with the 0x00 and 0x01 prefixes", () => {
  const entry = new TextEncoder().encode("x");
  assert.deepEqual(leafHash(entry), sha256(new Uint8Array([0, ...entry])));
  const [a, b] = SMALL;
  assert.deepEqual(nodeHash(a, b), sha256(new Uint8Array([1, ...a, ...b])));
  assert.throws(() => nodeHash(a, new Uint8Array(31)), TypeError);
});

Deno.test("the log's SHA-256 agrees with noble's for every length to 1,100 bytes, in any parts", () => {
  const data = crypto.getRandomValues(new Uint8Array(1100));
  for (let length = 0; length <= 1100; length++) {
    const input = data.subarray(0, length);
    const expected = sha256(input);
    assert.deepEqual(sha256Of(input), expected, `length ${length}`);
    const cut = Math.floor(length / 3);
    const parts = [input.subarray(0, cut), input.subarray(cut, 2 * cut), input.subarray(2 * cut)];
    assert.deepEqual(sha256Of(...parts), expected, `length ${length} in three parts`);
  }
});

Deno.test("R's SHA-256 in base64url agrees with noble's, for views at any offset, and digests stay apart", () => {
  const data = crypto.getRandomValues(new Uint8Array(2100));
  for (let length = 0; length <= 2000; length += 7) {
    const input = data.subarray(length % 97, length % 97 + length);
    assert.equal(sha256Base64url(input), base64urlnopad.encode(sha256(input)), `length ${length}`);
  }
  // Digests carved from one slab are each their own: many at once, none overwritten.
  const inputs = Array.from({ length: 5000 }, (_, i) => data.subarray(i % 500, i % 500 + 40));
  const digests = inputs.map((input) => sha256Of(input));
  inputs.forEach((input, i) => assert.deepEqual(digests[i], sha256(input), `digest ${i}`));
});

Deno.test("the empty tree's root is SHA-256 of nothing", () => {
  assert.deepEqual(treeHash([]), sha256(new Uint8Array()));
});

Deno.test("every tree size from 1 to 1,000 has the root the definition gives", () => {
  let roots = 0;
  const reference = referenceRoots(SMALL);
  for (let n = 1; n <= 1000; n++) {
    const expected = reference(n);
    assert.deepEqual(treeHashFrom(n, SMALL_TREE), expected, `size ${n}`);
    roots++;
  }
  assert.deepEqual(treeHash(SMALL.slice(0, 37)), mth(SMALL.slice(0, 37)));
  assert.equal(roots, 1000);
});

Deno.test("inclusion proofs verify for every size from 1 to 1,000, and tampered ones do not", () => {
  for (let n = 1; n <= 1000; n++) {
    const rootHash = treeHashFrom(n, SMALL_TREE);
    for (const index of sample(n, n)) {
      const proof = proveInclusion(index, n, SMALL_TREE);
      const claim = { index, size: n, leafHash: SMALL[index], proof, rootHash };
      assert.ok(verifyInclusion(claim), `leaf ${index} of ${n}`);
      assert.ok(!verifyInclusion({ ...claim, leafHash: flipped(SMALL[index]) }));
      assert.ok(!verifyInclusion({ ...claim, proof: [...proof, rootHash] }));
      if (proof.length > 0) {
        assert.ok(!verifyInclusion({ ...claim, proof: proof.slice(1) }));
        const at = index % proof.length;
        const bad = proof.map((h, i) => i === at ? flipped(h) : h);
        assert.ok(!verifyInclusion({ ...claim, proof: bad }));
      }
      if (n > 1) {
        const other = (index + 1) % n;
        assert.ok(
          !verifyInclusion({ ...claim, index: other }),
          `leaf ${index} as ${other} of ${n}`,
        );
      }
    }
  }
});

Deno.test("consistency proofs verify for every size from 1 to 1,000, and tampered ones do not", () => {
  for (let n = 1; n <= 1000; n++) {
    const newRoot = treeHashFrom(n, SMALL_TREE);
    let power = 1;
    while (power * 2 <= n) power *= 2;
    const olds = new Set([1, n, Math.max(1, n - 1), power, 1 + ((n * 7919) % n)]);
    for (const m of olds) {
      const oldRoot = treeHashFrom(m, SMALL_TREE);
      const proof = proveConsistency(m, n, SMALL_TREE);
      const claim = { oldSize: m, oldRoot, newSize: n, newRoot, proof };
      assert.ok(verifyConsistency(claim), `${m} to ${n}`);
      assert.ok(!verifyConsistency({ ...claim, oldRoot: flipped(oldRoot) }), `${m} to ${n}`);
      assert.ok(!verifyConsistency({ ...claim, newRoot: flipped(newRoot) }), `${m} to ${n}`);
      assert.ok(!verifyConsistency({ ...claim, proof: [...proof, newRoot] }));
      if (proof.length > 0) {
        assert.ok(!verifyConsistency({ ...claim, proof: proof.slice(0, -1) }), `${m} to ${n}`);
        const bad = proof.map((h, i) => i === proof.length - 1 ? flipped(h) : h);
        assert.ok(!verifyConsistency({ ...claim, proof: bad }), `${m} to ${n}`);
      }
      if (m < n) {
        const later = treeHashFrom(m + 1, SMALL_TREE);
        assert.ok(!verifyConsistency({ ...claim, oldSize: m + 1, oldRoot: later }), `${m} to ${n}`);
      }
    }
  }
});

Deno.test("proofs verify around the tile boundaries (255/256/257, 65,535/65,536/65,537)", () => {
  const all = leaves(65537);
  const tree = memoryTree(all);
  for (const n of [255, 256, 257, 65535, 65536, 65537]) {
    const rootHash = treeHashFrom(n, tree);
    if (n < 1000) assert.deepEqual(rootHash, mth(all.slice(0, n)));
    for (const index of [...sample(n, 3), 255, 256].filter((i) => i < n)) {
      const proof = proveInclusion(index, n, tree);
      assert.ok(verifyInclusion({ index, size: n, leafHash: all[index], proof, rootHash }));
    }
    for (const m of [1, 255, 256, 257, 65535, 65536].filter((m) => m <= n)) {
      const proof = proveConsistency(m, n, tree);
      const oldRoot = treeHashFrom(m, tree);
      assert.ok(verifyConsistency({ oldSize: m, oldRoot, newSize: n, newRoot: rootHash, proof }));
    }
  }
  assert.deepEqual(treeHashFrom(65537, tree), nodeHash(treeHashFrom(65536, tree), all[65536]));
});

Deno.test("the nodes a computation reads are the ones it asks for, and only those", () => {
  for (const [index, size] of [[0, 1], [5, 13], [999, 1000], [256, 257]]) {
    const asked: string[] = [];
    const recording: HashReader = (level, i) => {
      asked.push(`${level}/${i}`);
      return SMALL_TREE(level, i);
    };
    proveInclusion(index, size, recording);
    assert.deepEqual(
      [...new Set(asked)],
      inclusionProofNodes(index, size).map((n) => `${n.level}/${n.index}`),
    );
    for (const node of inclusionProofNodes(index, size)) {
      assert.ok((node.index + 1) * 2 ** node.level <= size);
    }
  }
  assert.deepEqual(treeHashNodes(13), [{ level: 3, index: 0 }, { level: 2, index: 2 }, {
    level: 0,
    index: 12,
  }]);
  for (const node of consistencyProofNodes(7, 1000)) {
    assert.ok((node.index + 1) * 2 ** node.level <= 1000);
  }
});

Deno.test("proofs are refused for indexes and sizes outside the tree", () => {
  assert.throws(() => proveInclusion(5, 5, SMALL_TREE), RangeError);
  assert.throws(() => proveInclusion(-1, 5, SMALL_TREE), RangeError);
  assert.throws(() => proveConsistency(6, 5, SMALL_TREE), RangeError);
  assert.throws(() => proveConsistency(0, 5, SMALL_TREE), RangeError);
  assert.throws(() => treeHashFrom(0, SMALL_TREE), RangeError);
  assert.throws(() => treeHashFrom(1.5, SMALL_TREE), RangeError);
  assert.throws(() => proveInclusion(0, 2, () => new Uint8Array(3)), TypeError);
  const root = treeHashFrom(4, SMALL_TREE);
  const claim = { index: 4, size: 4, leafHash: SMALL[4], proof: [], rootHash: root };
  assert.equal(verifyInclusion(claim), false);
  assert.equal(
    verifyConsistency({ oldSize: 4, oldRoot: root, newSize: 4, newRoot: root, proof: [root] }),
    false,
  );
  assert.equal(
    verifyConsistency({ oldSize: 4, oldRoot: root, newSize: 4, newRoot: root, proof: [] }),
    true,
  );
  assert.equal(
    verifyConsistency({ oldSize: 0, oldRoot: root, newSize: 4, newRoot: root, proof: [] }),
    false,
  );
});
