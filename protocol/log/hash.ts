/**
 * The Merkle tree of the log, as RFC 6962 §2.1 defines it: a leaf hash is
 * SHA-256(0x00 ‖ entry), an interior node SHA-256(0x01 ‖ left ‖ right), the
 * tree of n leaves splits at the largest power of two below n; inclusion
 * proofs (§2.1.1) and consistency proofs (§2.1.2) are made as RFC 6962 makes
 * them and checked as RFC 9162 §2.1.3.2 and §2.1.4.2 check them.
 *
 * Everything here reads stored hashes through a {@link HashReader}: the hash
 * of the perfect subtree `(level, index)`, which covers the leaves
 * `index · 2^level` to `(index + 1) · 2^level − 1`. Those are exactly the
 * hashes tiles hold (`tile.ts`), and a server that reads them from storage
 * first asks which ones a computation needs ({@link treeHashNodes},
 * {@link inclusionProofNodes}, {@link consistencyProofNodes}), fetches them,
 * then runs the computation over what it fetched.
 *
 * Sizes and indexes are numbers up to 2^53 − 1; no bitwise operator touches
 * them (those cut at 32 bits).
 * @module
 */

import { equalBytes } from "./_bytes.ts";
import { sha256Of, sha256Prefixed } from "./_sha256.ts";

/** Whether two hashes (or any byte strings) are equal; not in constant time: hashes are public. */
export { equalBytes };

/** The size of every hash of the log, in bytes (SHA-256). */
export const HASH_SIZE = 32;

/** The domain separation bytes of RFC 6962 §2.1. */
const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

/** A perfect subtree: the `index`-th run of `2^level` leaves. */
export interface TreeNode {
  /** The height above the leaves (0: a leaf hash). */
  level: number;
  /** The position among the subtrees of that height, from 0. */
  index: number;
}

/**
 * Reads the hash of a perfect subtree of the tree at hand.
 *
 * @throws whatever the reader throws when it lacks the hash.
 */
export type HashReader = (level: number, index: number) => Uint8Array;

/**
 * The leaf hash of an entry: SHA-256(0x00 ‖ entry) (RFC 6962 §2.1).
 *
 * @example
 * ```ts
 * leafHash(new TextEncoder().encode("entry")).length; // 32
 * ```
 */
export function leafHash(entry: Uint8Array): Uint8Array<ArrayBuffer> {
  return sha256Prefixed(LEAF_PREFIX, entry);
}

/**
 * The hash of an interior node: SHA-256(0x01 ‖ left ‖ right) (RFC 6962 §2.1).
 *
 * @throws {TypeError} when a child is not 32 bytes.
 */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array<ArrayBuffer> {
  assertHash(left, "a left child");
  assertHash(right, "a right child");
  return sha256Prefixed(NODE_PREFIX, left, right);
}

/**
 * The root hash of the tree whose leaf hashes are given, in order; the empty
 * tree's is SHA-256 of nothing (RFC 6962 §2.1), where Go's `tlog.TreeHash`
 * answers 32 zero bytes (the log never signs a checkpoint of size 0).
 *
 * @throws {TypeError} when a leaf hash is not 32 bytes.
 *
 * @example
 * ```ts
 * const a = leafHash(new Uint8Array([1]));
 * const b = leafHash(new Uint8Array([2]));
 * treeHash([a, b]); // nodeHash(a, b)
 * ```
 */
export function treeHash(leafHashes: readonly Uint8Array[]): Uint8Array {
  if (leafHashes.length === 0) return sha256Of();
  return treeHashFrom(leafHashes.length, memoryTree(leafHashes));
}

/**
 * A reader of every perfect subtree of the tree of these leaf hashes, built
 * in memory (about two hashes per leaf): what an auditor that recomputed the
 * tree from the entries, or a test, reads proofs from.
 *
 * @throws {TypeError} when a leaf hash is not 32 bytes.
 */
export function memoryTree(leafHashes: readonly Uint8Array[]): HashReader {
  const levels: Uint8Array[][] = [leafHashes.map((hash) => {
    assertHash(hash, "a leaf hash");
    return hash;
  })];
  while (levels[levels.length - 1].length > 1) {
    const below = levels[levels.length - 1];
    const above: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) above.push(nodeHash(below[i], below[i + 1]));
    levels.push(above);
  }
  return (level, index) => {
    const hash = levels[level]?.[index];
    if (hash === undefined) throw new RangeError(`the tree holds no subtree (${level}, ${index})`);
    return hash;
  };
}

/**
 * The root hash of the tree of `size` leaves from its stored subtree hashes:
 * at most one hash per bit of `size` is read.
 *
 * @throws {RangeError} when `size` is not a whole number from 1 to 2^53 − 1.
 * @throws {TypeError} when the reader answers something other than 32 bytes.
 */
export function treeHashFrom(size: number, read: HashReader): Uint8Array {
  assertCount(size, "a tree size", 1);
  return rangeHash(0, size, checked(read));
}

/**
 * The inclusion proof of the leaf at `index` in the tree of `size` leaves
 * (RFC 6962 §2.1.1 `PATH`): sibling hashes from the leaf up to the root.
 *
 * @throws {RangeError} when `index` is not below `size`, or either is not a whole number.
 * @throws {TypeError} when the reader answers something other than 32 bytes.
 */
export function proveInclusion(index: number, size: number, read: HashReader): Uint8Array[] {
  assertCount(size, "a tree size", 1);
  assertCount(index, "a leaf index", 0);
  if (index >= size) throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  const reader = checked(read);
  const path = (lo: number, hi: number): Uint8Array[] => {
    if (hi - lo === 1) return [];
    const k = splitPoint(hi - lo);
    return index < lo + k
      ? [...path(lo, lo + k), rangeHash(lo + k, hi, reader)]
      : [...path(lo + k, hi), rangeHash(lo, lo + k, reader)];
  };
  return path(0, size);
}

/** What {@link verifyInclusion} checks. */
export interface InclusionClaim {
  /** The leaf's index, from 0. */
  index: number;
  /** The size of the tree the proof is for. */
  size: number;
  /** The leaf hash (see {@link leafHash}). */
  leafHash: Uint8Array;
  /** The proof, leaf side first. */
  proof: readonly Uint8Array[];
  /** The root hash of the tree of `size` leaves. */
  rootHash: Uint8Array;
}

/**
 * Whether an inclusion proof shows the leaf hash at its index under the root
 * hash (RFC 9162 §2.1.3.2). A proof of the wrong length, or any hash that is
 * not 32 bytes, does not verify.
 *
 * @returns false when the proof does not verify; it never throws.
 */
export function verifyInclusion(claim: InclusionClaim): boolean {
  const { index, size, proof } = claim;
  if (!isCount(size, 1) || !isCount(index, 0) || index >= size) return false;
  if (!isHash(claim.leafHash) || !isHash(claim.rootHash) || !proof.every(isHash)) return false;
  let fn = index;
  let sn = size - 1;
  let r: Uint8Array = claim.leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(r, claim.rootHash);
}

/**
 * The consistency proof between the tree of `oldSize` leaves and the tree of
 * `newSize` leaves that extends it (RFC 6962 §2.1.2 `PROOF`); empty when the
 * sizes are equal.
 *
 * @throws {RangeError} unless 1 ≤ `oldSize` ≤ `newSize` ≤ 2^53 − 1.
 * @throws {TypeError} when the reader answers something other than 32 bytes.
 */
export function proveConsistency(oldSize: number, newSize: number, read: HashReader): Uint8Array[] {
  assertCount(oldSize, "an old tree size", 1);
  assertCount(newSize, "a new tree size", 1);
  if (oldSize > newSize) {
    throw new RangeError(`a tree of ${newSize} cannot extend one of ${oldSize}`);
  }
  const reader = checked(read);
  // SUBPROOF(m, D[lo:hi], b), with m counted from lo.
  const subproof = (m: number, lo: number, hi: number, whole: boolean): Uint8Array[] => {
    if (m === hi - lo) return whole ? [] : [rangeHash(lo, hi, reader)];
    const k = splitPoint(hi - lo);
    return m <= k
      ? [...subproof(m, lo, lo + k, whole), rangeHash(lo + k, hi, reader)]
      : [...subproof(m - k, lo + k, hi, false), rangeHash(lo, lo + k, reader)];
  };
  return subproof(oldSize, 0, newSize, true);
}

/** What {@link verifyConsistency} checks. */
export interface ConsistencyClaim {
  /** The smaller tree's size (at least 1). */
  oldSize: number;
  /** The smaller tree's root hash. */
  oldRoot: Uint8Array;
  /** The larger tree's size (at least `oldSize`). */
  newSize: number;
  /** The larger tree's root hash. */
  newRoot: Uint8Array;
  /** The proof, as {@link proveConsistency} makes it. */
  proof: readonly Uint8Array[];
}

/**
 * Whether a consistency proof shows that the tree of `newSize` leaves
 * extends the tree of `oldSize` leaves (RFC 9162 §2.1.4.2). Equal sizes need
 * an empty proof and equal roots.
 *
 * @returns false when the proof does not verify; it never throws.
 */
export function verifyConsistency(claim: ConsistencyClaim): boolean {
  const { oldSize, newSize, oldRoot, newRoot } = claim;
  if (!isCount(oldSize, 1) || !isCount(newSize, 1) || oldSize > newSize) return false;
  if (!isHash(oldRoot) || !isHash(newRoot) || !claim.proof.every(isHash)) return false;
  if (oldSize === newSize) return claim.proof.length === 0 && equalBytes(oldRoot, newRoot);
  if (claim.proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...claim.proof] : [...claim.proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Uint8Array = path[0];
  let sr: Uint8Array = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(fr, oldRoot) && equalBytes(sr, newRoot);
}

/** The subtree hashes {@link treeHashFrom} reads for a tree of `size` leaves, in reading order. */
export function treeHashNodes(size: number): TreeNode[] {
  return nodesRead((read) => treeHashFrom(size, read));
}

/** The subtree hashes {@link proveInclusion} reads, in reading order, without repeats. */
export function inclusionProofNodes(index: number, size: number): TreeNode[] {
  return nodesRead((read) => proveInclusion(index, size, read));
}

/** The subtree hashes {@link proveConsistency} reads, in reading order, without repeats. */
export function consistencyProofNodes(oldSize: number, newSize: number): TreeNode[] {
  return nodesRead((read) => proveConsistency(oldSize, newSize, read));
}

/** The nodes a computation reads, found by running it over a reader of placeholder hashes. */
function nodesRead(run: (read: HashReader) => unknown): TreeNode[] {
  const seen = new Map<string, TreeNode>();
  const placeholder = new Uint8Array(HASH_SIZE);
  run((level, index) => {
    const key = `${level}/${index}`;
    if (!seen.has(key)) seen.set(key, { level, index });
    return placeholder;
  });
  return [...seen.values()];
}

/**
 * MTH(D[lo:hi]) from stored perfect subtrees: [lo, hi) splits into the
 * largest aligned power-of-two runs, whose hashes fold from the right.
 */
function rangeHash(lo: number, hi: number, read: HashReader): Uint8Array {
  const hashes: Uint8Array[] = [];
  while (lo < hi) {
    let level = 0;
    while (2 ** (level + 1) <= hi - lo && lo % 2 ** (level + 1) === 0) level++;
    hashes.push(read(level, lo / 2 ** level));
    lo += 2 ** level;
  }
  let hash = hashes[hashes.length - 1];
  for (let i = hashes.length - 2; i >= 0; i--) hash = nodeHash(hashes[i], hash);
  return hash;
}

/** The largest power of two below n (n ≥ 2): where RFC 6962 splits a tree of n leaves. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

function checked(read: HashReader): HashReader {
  return (level, index) => {
    const hash = read(level, index);
    assertHash(hash, `the hash read for (${level}, ${index})`);
    return hash;
  };
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_SIZE;
}

function assertHash(value: unknown, what: string): asserts value is Uint8Array {
  if (!isHash(value)) throw new TypeError(`${what} is not ${HASH_SIZE} bytes`);
}

function isCount(value: number, min: number): boolean {
  return Number.isSafeInteger(value) && value >= min;
}

function assertCount(value: number, what: string, min: number): void {
  if (!isCount(value, min)) {
    throw new RangeError(`${what} is a whole number from ${min} to 2^53 − 1, not ${value}`);
  }
}
