/**
 * The verifiable log's KV keys, each with the layout of its value. Every
 * value is bytes (a binary layout or UTF-8 text), never a JavaScript value,
 * so that any Deno version and any KV client reads them.
 *
 * | key | value |
 * |---|---|
 * | `["log", "state"]` | the tree as integrated: size (8 bytes, big-endian) ‖ root hash (32 bytes) |
 * | `["log", "tile", L, N]` | hash tile (L, N): its hashes, the widest so far (32 to 8,192 bytes) |
 * | `["log", "bundle", N]` | entry bundle N, the widest so far (C2SP tlog-tiles form): written by earlier versions, no longer read (bundles are made from the feed) |
 * | `["log", "leaves", B, C]` | the leaf index: for each leaf of chunk C (entries 4,096·C to 4,096·C + 4,095) whose hash begins with byte B, hash bytes 1–8 and its offset in the chunk (2 bytes, big-endian) (`leaf_index.ts`) |
 * | `["log", "leaves_indexed"]` | chunks of the leaf index written: every chunk below has its rows, or was completed before this key was first written (8 bytes, big-endian) |
 * | `["log", "leaf", leaf hash]` | the index of the entry with that leaf hash (8 bytes, big-endian): written by versions before the chunked leaf index, still read |
 * | `["log", "checkpoint"]` | the newest signed checkpoint: the signed note, UTF-8 |
 * | `["log", "identity"]` | UTF-8 JSON `{"origin","key_id","entries"}`: what the log is |
 * | `["log", "signer"]` | the signer key made at first start (when `LOG_SIGNING_KEY` is unset), UTF-8 |
 * | `["log", "integrator"]` | the integrator's lease: UTF-8 JSON `{"holder","until"}` |
 * | `["log", "witnessed"]` | the newest checkpoint with its witnesses' cosignatures (at least the quorum): the signed note, UTF-8 |
 * | `["log", "witness", vkey]` | the size the witness of that cosigner key last cosigned (8 bytes, big-endian) |
 * | `["log", "submitter"]` | the witness submitter's lease: UTF-8 JSON `{"holder","until"}` |
 * | `["log", "fork"]` | set once a fork is found: why, UTF-8; no checkpoint is signed while it is there |
 * @module
 */

import { HASH_SIZE } from "@intents/protocol/log/hash";

/** The log's keys. */
export const logKeys = {
  state: ["log", "state"] as const,
  tile: (level: number, index: number) => ["log", "tile", level, index] as const,
  leaves: (byte: number, chunk: number) => ["log", "leaves", byte, chunk] as const,
  leavesOf: (byte: number) => ["log", "leaves", byte] as const,
  leavesIndexed: ["log", "leaves_indexed"] as const,
  leaf: (hash: Uint8Array) => ["log", "leaf", hash] as const,
  checkpoint: ["log", "checkpoint"] as const,
  identity: ["log", "identity"] as const,
  signer: ["log", "signer"] as const,
  integrator: ["log", "integrator"] as const,
  witnessed: ["log", "witnessed"] as const,
  witness: (verifierKey: string) => ["log", "witness", verifierKey] as const,
  submitter: ["log", "submitter"] as const,
  fork: ["log", "fork"] as const,
};

/** The tree as integrated: its size, and its root hash (absent for the empty tree). */
export interface TreeState {
  size: number;
  rootHash: Uint8Array | null;
}

/** The empty tree, before the first integration. */
export const EMPTY_TREE: TreeState = { size: 0, rootHash: null };

/** An index or size as 8 bytes, big-endian. */
export function encodeIndex(value: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return bytes;
}

/**
 * The number {@link encodeIndex} wrote.
 *
 * @throws {TypeError} when the value is not 8 bytes of a safe integer.
 */
export function decodeIndex(value: unknown): number {
  if (!(value instanceof Uint8Array) || value.length !== 8) {
    throw new TypeError("a log index is 8 bytes");
  }
  const n = Number(new DataView(value.buffer, value.byteOffset, 8).getBigUint64(0));
  if (!Number.isSafeInteger(n)) throw new TypeError("a log index is below 2^53");
  return n;
}

/** The tree state's value: size ‖ root hash. */
export function encodeState(state: { size: number; rootHash: Uint8Array }): Uint8Array {
  const bytes = new Uint8Array(8 + HASH_SIZE);
  bytes.set(encodeIndex(state.size));
  bytes.set(state.rootHash, 8);
  return bytes;
}

/**
 * The tree state a value holds; the empty tree when there is none.
 *
 * @throws {TypeError} when the value has another layout.
 */
export function decodeState(value: unknown): TreeState {
  if (value === null) return EMPTY_TREE;
  if (!(value instanceof Uint8Array) || value.length !== 8 + HASH_SIZE) {
    throw new TypeError("the log's state has an unknown layout");
  }
  return { size: decodeIndex(value.subarray(0, 8)), rootHash: value.slice(8) };
}

/** What a log is, recorded once per store: a start that disagrees stops. */
export interface LogIdentity {
  origin: string;
  /** The key id, 8 lowercase hex digits. */
  key_id: string;
  /** The entry format (docs/interface.md §14). */
  entries: string;
}

/** The entry format this version writes: JCS of `{"record_sha256", "type"}`. */
export const ENTRY_FORMAT = "record_sha256+type/jcs";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 text as a value. */
export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * The text of a value; null when there is none.
 *
 * @throws {TypeError} when the value is not bytes.
 */
export function decodeText(value: unknown): string | null {
  if (value === null) return null;
  if (!(value instanceof Uint8Array)) throw new TypeError("a log value is bytes");
  return decoder.decode(value);
}

/** The identity's value. */
export function encodeIdentity(identity: LogIdentity): Uint8Array {
  return encoder.encode(JSON.stringify(identity));
}

/**
 * The identity a value holds; null when there is none.
 *
 * @throws {TypeError} when the value has another layout.
 */
export function decodeIdentity(value: unknown): LogIdentity | null {
  const text = decodeText(value);
  if (text === null) return null;
  const parsed = JSON.parse(text);
  if (
    typeof parsed?.origin !== "string" || typeof parsed?.key_id !== "string" ||
    typeof parsed?.entries !== "string"
  ) {
    throw new TypeError("the log's identity has an unknown layout");
  }
  return { origin: parsed.origin, key_id: parsed.key_id, entries: parsed.entries };
}
