/**
 * Tiles as C2SP tlog-tiles defines them: the hash tile at level L and index
 * N holds the hashes of the perfect subtrees of height 8·L numbered
 * N·256 to N·256 + 255 (256 hashes of 32 bytes when full, the first W when
 * partial), served at `tile/{L}/{N}[.p/{W}]`, with N written in 3-digit path
 * elements (`x001/x234/067`); the entry bundle `tile/entries/{N}[.p/{W}]`
 * holds the entries of the level-0 tile N, each a big-endian uint16 length
 * then its bytes.
 *
 * A partial tile of width W is the first W hashes of the full tile that will
 * replace it, so one stored value serves every width up to its own.
 * @module
 */

import { concatBytes } from "./_bytes.ts";
import { HASH_SIZE, type HashReader, nodeHash, type TreeNode } from "./hash.ts";

/** The number of hashes (or entries) in a full tile (or bundle): 2^8. */
export const TILE_WIDTH = 256;

/** The height of a tile in tree levels. */
export const TILE_HEIGHT = 8;

/** The largest entry an entry bundle can carry (its length is a uint16). */
export const MAX_ENTRY_BYTES = 0xffff;

/** A hash tile, or with `level: "entries"` an entry bundle. */
export interface Tile {
  /** 0 to 63 for a hash tile; `"entries"` for an entry bundle. */
  level: number | "entries";
  /** The tile's index within its level, from 0. */
  index: number;
  /** How many hashes (or entries) it holds: 1 to 255 when partial, 256 when full. */
  width: number;
}

/**
 * The path of a tile, from the log's prefix: `tile/{L}/{N}[.p/{W}]` or
 * `tile/entries/{N}[.p/{W}]`.
 *
 * @throws {RangeError} when the level, index or width is out of range.
 *
 * @example
 * ```ts
 * tilePath({ level: 0, index: 1234067, width: 256 }); // "tile/0/x001/x234/067"
 * tilePath({ level: "entries", index: 5, width: 17 }); // "tile/entries/005.p/17"
 * ```
 */
export function tilePath(tile: Tile): string {
  assertTile(tile);
  let n = tile.index;
  let text = String(n % 1000).padStart(3, "0");
  while (n >= 1000) {
    n = Math.floor(n / 1000);
    text = `x${String(n % 1000).padStart(3, "0")}/${text}`;
  }
  const partial = tile.width === TILE_WIDTH ? "" : `.p/${tile.width}`;
  return `tile/${tile.level}/${text}${partial}`;
}

/**
 * The tile a path names, refusing every form but the canonical one: the
 * level without leading zeros and from 0 to 63 (or `entries`), the index in
 * 3-digit elements of which all but the last start with `x` and the first is
 * not `x000`, the width from 1 to 255 without leading zeros.
 *
 * @param path the path from the log's prefix, starting with `tile/`.
 * @throws {SyntaxError} when the path is not the canonical path of a tile.
 *
 * @example
 * ```ts
 * parseTilePath("tile/1/x001/067.p/3"); // { level: 1, index: 1067, width: 3 }
 * ```
 */
export function parseTilePath(path: string): Tile {
  const match =
    /^tile\/(0|[1-9][0-9]?|entries)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/
      .exec(path);
  const fail = (why: string) => new SyntaxError(`Cannot parse tile path "${path}": ${why}`);
  if (!match) throw fail("not of the form tile/{L}/{N}[.p/{W}]");
  const level = match[1] === "entries" ? "entries" : Number(match[1]);
  if (level !== "entries" && level > 63) throw fail("the level is above 63");
  const groups = match[2].split("/").map((group) => group.replace("x", ""));
  if (groups.length > 1 && groups[0] === "000") throw fail("the index has a leading zero group");
  let index = 0;
  for (const group of groups) index = index * 1000 + Number(group);
  if (!Number.isSafeInteger(index)) throw fail("the index is above 2^53 − 1");
  const width = match[3] === undefined ? TILE_WIDTH : Number(match[3]);
  if (match[3] !== undefined && width >= TILE_WIDTH) {
    throw fail("a partial tile's width is 1 to 255");
  }
  return { level, index, width };
}

/**
 * Every hash tile of the tree of `size` leaves (full ones, and the partial
 * one of each level where the level's count is not a multiple of 256), level
 * by level; the entry bundles are the level-0 tiles' twins.
 *
 * @throws {RangeError} when `size` is not a whole number from 0 to 2^53 − 1.
 *
 * @example
 * ```ts
 * tilesOfTree(256).map(tilePath); // ["tile/0/000", "tile/1/000.p/1"]
 * ```
 */
export function tilesOfTree(size: number): Tile[] {
  assertSize(size);
  const tiles: Tile[] = [];
  for (let level = 0, count = size; count > 0; level++, count = Math.floor(count / TILE_WIDTH)) {
    const full = Math.floor(count / TILE_WIDTH);
    for (let index = 0; index < full; index++) tiles.push({ level, index, width: TILE_WIDTH });
    if (count % TILE_WIDTH !== 0) tiles.push({ level, index: full, width: count % TILE_WIDTH });
  }
  return tiles;
}

/**
 * The tile of the tree of `size` leaves that holds what the hash of `node`
 * is computed from, with the width that tree gives it.
 *
 * @throws {RangeError} when the tree of `size` leaves does not contain the node.
 */
export function tileOfNode(node: TreeNode, size: number): Tile {
  assertSize(size);
  const { level, index } = node;
  if (!Number.isSafeInteger(level) || level < 0 || !Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`(${level}, ${index}) is not a subtree`);
  }
  if ((index + 1) * 2 ** level > size) {
    throw new RangeError(`a tree of size ${size} does not hold subtree (${level}, ${index})`);
  }
  const tileLevel = Math.floor(level / TILE_HEIGHT);
  const first = index * 2 ** (level % TILE_HEIGHT);
  const tileIndex = Math.floor(first / TILE_WIDTH);
  const count = Math.floor(size / TILE_WIDTH ** tileLevel);
  const width = Math.min(TILE_WIDTH, count - tileIndex * TILE_WIDTH);
  return { level: tileLevel, index: tileIndex, width };
}

/**
 * A {@link HashReader} over hash tiles: each subtree hash is read from, or
 * computed within, the tile {@link tileOfNode} names.
 *
 * @param size the tree's size, which gives each tile its width.
 * @param readTile the tile's hashes (`width` × 32 bytes, or more: a wider one serves too).
 * @throws {RangeError} from the reader when a tile is shorter than its width.
 */
export function tileHashReader(
  size: number,
  readTile: (tile: Tile) => Uint8Array,
): HashReader {
  return (level, index) => {
    const tile = tileOfNode({ level, index }, size);
    const data = readTile(tile);
    if (data.length < tile.width * HASH_SIZE) {
      throw new RangeError(`${tilePath(tile)} holds ${data.length} bytes, not ${tile.width * 32}`);
    }
    const span = 2 ** (level % TILE_HEIGHT);
    const first = (index * span) % TILE_WIDTH;
    return subtreeOfTile(data, first, span);
  };
}

/**
 * The contents of a hash tile: the hashes of the subtrees of height 8·L
 * numbered from N·256, as many as the tile's width, concatenated.
 *
 * @throws {RangeError} when `tile` is an entry bundle or out of range.
 */
export function tileData(tile: Tile, read: HashReader): Uint8Array<ArrayBuffer> {
  assertTile(tile);
  if (tile.level === "entries") throw new RangeError("an entry bundle holds entries, not hashes");
  const hashes: Uint8Array[] = [];
  for (let i = 0; i < tile.width; i++) {
    const hash = read(tile.level * TILE_HEIGHT, tile.index * TILE_WIDTH + i);
    if (hash.length !== HASH_SIZE) throw new TypeError("a tile hash is not 32 bytes");
    hashes.push(hash);
  }
  return concatBytes(...hashes);
}

/**
 * The hashes of a tile's data, one by one: views of `data` (copy one to
 * keep it apart from the tile).
 *
 * @throws {RangeError} when the data's length is not a multiple of 32 from 32 to 8,192.
 */
export function tileHashes(data: Uint8Array): Uint8Array[] {
  if (data.length === 0 || data.length % HASH_SIZE !== 0 || data.length > TILE_WIDTH * HASH_SIZE) {
    throw new RangeError(`a tile is 1 to 256 hashes of 32 bytes, not ${data.length} bytes`);
  }
  const hashes: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += HASH_SIZE) {
    hashes.push(data.subarray(at, at + HASH_SIZE));
  }
  return hashes;
}

/**
 * An entry bundle: each entry as a big-endian uint16 length, then its bytes.
 *
 * @throws {RangeError} when there are no entries, more than 256, or one longer than 65,535 bytes.
 */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  if (entries.length === 0 || entries.length > TILE_WIDTH) {
    throw new RangeError(`an entry bundle holds 1 to 256 entries, not ${entries.length}`);
  }
  let size = 0;
  for (const entry of entries) {
    if (entry.length > MAX_ENTRY_BYTES) {
      throw new RangeError(`an entry is at most ${MAX_ENTRY_BYTES} bytes, not ${entry.length}`);
    }
    size += 2 + entry.length;
  }
  // One array for the whole bundle: a typed array of its own per length costs more than the copy.
  const bundle = new Uint8Array(size);
  let at = 0;
  for (const entry of entries) {
    bundle[at] = entry.length >> 8;
    bundle[at + 1] = entry.length & 0xff;
    bundle.set(entry, at + 2);
    at += 2 + entry.length;
  }
  return bundle;
}

/**
 * The entries of a bundle: views of `bundle` (copy one to keep it apart).
 *
 * @param width how many entries the bundle must hold, when known.
 * @throws {SyntaxError} when a length runs past the end, or the count is not `width` (or 1 to 256).
 */
export function decodeEntryBundle(bundle: Uint8Array, width?: number): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (entries.length === (width ?? TILE_WIDTH)) {
      throw new SyntaxError(`an entry bundle holds more than ${width ?? TILE_WIDTH} entries`);
    }
    if (at + 2 > bundle.length) throw new SyntaxError("an entry bundle ends inside a length");
    const length = bundle[at] * 256 + bundle[at + 1];
    if (at + 2 + length > bundle.length) {
      throw new SyntaxError("an entry bundle ends inside an entry");
    }
    entries.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  const count = entries.length;
  if (width === undefined ? count === 0 || count > TILE_WIDTH : count !== width) {
    throw new SyntaxError(`an entry bundle holds ${count} entries, not ${width ?? "1 to 256"}`);
  }
  return entries;
}

/**
 * The hash of the perfect subtree over `span` consecutive tile hashes from
 * `first`: a copy of its own (a node's digest, or one hash copied).
 */
function subtreeOfTile(data: Uint8Array, first: number, span: number): Uint8Array {
  if (span === 1) return data.slice(first * HASH_SIZE, (first + 1) * HASH_SIZE);
  return subtreeWithin(data, first, span);
}

/** {@link subtreeOfTile}, a single hash as a view of the tile (read once, not kept). */
function subtreeWithin(data: Uint8Array, first: number, span: number): Uint8Array {
  if (span === 1) return data.subarray(first * HASH_SIZE, (first + 1) * HASH_SIZE);
  const half = span / 2;
  return nodeHash(subtreeWithin(data, first, half), subtreeWithin(data, first + half, half));
}

function assertSize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new RangeError(`a tree size is a whole number from 0 to 2^53 − 1, not ${size}`);
  }
}

function assertTile(tile: Tile): void {
  const { level, index, width } = tile;
  if (level !== "entries" && !(Number.isInteger(level) && level >= 0 && level <= 63)) {
    throw new RangeError(`a tile level is 0 to 63 or "entries", not ${level}`);
  }
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`a tile index is a whole number from 0 to 2^53 − 1, not ${index}`);
  }
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH) {
    throw new RangeError(`a tile width is 1 to 256, not ${width}`);
  }
}
