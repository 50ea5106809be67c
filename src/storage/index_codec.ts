/**
 * The values that say where events are (`keys.ts` documents each): a feed
 * index, the feed head (in this version's form and in earlier ones), and the
 * pointer `["intents", id]` holds into the staged block of its commit.
 * @module
 */

import { LayoutError } from "./codec.ts";

/** The first byte of a feed index. */
const INDEX_LAYOUT = 4;
/** The first byte of the feed head that says how far staged commits were indexed. */
const INDEXED_HEAD_LAYOUT = 5;
/** The first byte of an intent's pointer into its commit's staged block. */
const STAGED_POINTER_LAYOUT = 2;
/** A staged pointer's bytes: its layout and the event's index. */
export const STAGED_POINTER_BYTES = 3;
/** A versionstamp's bytes: 20 hexadecimal digits. */
const VERSIONSTAMP_BYTES = 10;
/** A feed index's bytes per staged block: its versionstamp and its count of events. */
const REF_BYTES = VERSIONSTAMP_BYTES + 2;

/** A staged block as a feed index names it: its commit's versionstamp and how many events it holds. */
export interface StagedRef {
  versionstamp: string;
  count: number;
}

/** The feed head: the newest position, and the versionstamp of the last staged block indexed. */
export interface IndexedHead {
  position: number;
  /** "" before any staged block was indexed. */
  through: string;
}

function writeVersionstamp(out: Uint8Array, at: number, versionstamp: string): void {
  if (!/^[0-9a-f]{20}$/.test(versionstamp)) throw new RangeError("not a versionstamp");
  for (let i = 0; i < VERSIONSTAMP_BYTES; i++) {
    out[at + i] = parseInt(versionstamp.slice(2 * i, 2 * i + 2), 16);
  }
}

function readVersionstamp(bytes: Uint8Array, at: number): string {
  let text = "";
  for (let i = 0; i < VERSIONSTAMP_BYTES; i++) {
    text += bytes[at + i].toString(16).padStart(2, "0");
  }
  return text;
}

/** A feed index naming staged blocks, in feed order. */
export function encodeIndex(refs: readonly StagedRef[]): Uint8Array {
  const out = new Uint8Array(1 + REF_BYTES * refs.length);
  const view = new DataView(out.buffer);
  out[0] = INDEX_LAYOUT;
  refs.forEach((ref, i) => {
    const at = 1 + REF_BYTES * i;
    writeVersionstamp(out, at, ref.versionstamp);
    view.setUint16(at + VERSIONSTAMP_BYTES, ref.count);
  });
  return out;
}

/** The staged blocks a feed index names, or null for a value of another layout. */
export function decodeIndex(value: unknown): StagedRef[] | null {
  if (!(value instanceof Uint8Array) || value[0] !== INDEX_LAYOUT) return null;
  if ((value.byteLength - 1) % REF_BYTES !== 0) throw new LayoutError("a feed index is cut short");
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const refs: StagedRef[] = [];
  for (let at = 1; at < value.byteLength; at += REF_BYTES) {
    refs.push({
      versionstamp: readVersionstamp(value, at),
      count: view.getUint16(at + VERSIONSTAMP_BYTES),
    });
  }
  return refs;
}

/** The feed head in this version's form, which no earlier version reads. */
export function encodeIndexedHead(head: IndexedHead): Uint8Array {
  const out = new Uint8Array(1 + 8 + VERSIONSTAMP_BYTES);
  out[0] = INDEXED_HEAD_LAYOUT;
  new DataView(out.buffer).setBigUint64(1, BigInt(head.position));
  if (head.through !== "") writeVersionstamp(out, 9, head.through);
  return out;
}

/** A feed head of this layout, or null for a value of another layout. */
export function decodeIndexedHead(value: unknown): IndexedHead | null {
  if (!(value instanceof Uint8Array) || value[0] !== INDEXED_HEAD_LAYOUT) return null;
  if (value.byteLength !== 1 + 8 + VERSIONSTAMP_BYTES) {
    throw new LayoutError("the feed head is cut short");
  }
  const position = new DataView(value.buffer, value.byteOffset, 9).getBigUint64(1);
  if (position > BigInt(Number.MAX_SAFE_INTEGER)) throw new LayoutError("the feed head is too far");
  const through = readVersionstamp(value, 9);
  return { position: Number(position), through: /^0+$/.test(through) ? "" : through };
}

/**
 * `["intents", id]`'s value: the index of its event in its own commit's
 * staged block. One value per index, made once and shared (a commit copies
 * what it sets; nothing writes into it), since a typed array of its own for
 * each intent costs more than the rest of its pointer.
 */
export function encodeStagedPointer(index: number): Uint8Array {
  let out = stagedPointers[index];
  if (out === undefined) {
    out = new Uint8Array(STAGED_POINTER_BYTES);
    out[0] = STAGED_POINTER_LAYOUT;
    new DataView(out.buffer).setUint16(1, index);
    stagedPointers[index] = out;
  }
  return out;
}

/** The pointers made so far, by index. */
const stagedPointers: Uint8Array[] = [];

/** The index a staged pointer holds, or null for a value of another layout. */
export function decodeStagedPointer(value: unknown): number | null {
  if (!(value instanceof Uint8Array) || value.byteLength !== 3) return null;
  if (value[0] !== STAGED_POINTER_LAYOUT) return null;
  return new DataView(value.buffer, value.byteOffset, 3).getUint16(1);
}

/** The versionstamp just after `versionstamp` (20 hexadecimal digits); the first after "". */
export function nextVersionstamp(versionstamp: string): string {
  const n = versionstamp === "" ? 0n : BigInt(`0x${versionstamp}`) + 1n;
  return n.toString(16).padStart(20, "0");
}

/** The first byte of the feed head in the staged layout. */
const STAGED_HEAD_LAYOUT = 2;

/**
 * The forms of the feed head: "head", where every commit checked and moved
 * it; "staged", where a mover moves staged events; "empty", no head yet.
 */
export type HeadForm = "head" | "staged" | "empty";

/**
 * A stored feed head of any form: its position (0 when absent), its form,
 * how far staged commits were indexed ("" for an earlier head, whose moves
 * deleted what they moved) and whether it is this version's (`indexed`).
 *
 * @throws {LayoutError} for a value of no known layout.
 */
export function decodeFeedHead(
  value: unknown,
): { position: number; form: HeadForm; through: string; indexed: boolean } {
  const indexed = decodeIndexedHead(value);
  if (indexed) return { ...indexed, form: "staged", indexed: true };
  const earlier = (position: number | bigint, form: HeadForm) => ({
    position: Number(position),
    form,
    through: "",
    indexed: false,
  });
  if (value === null || value === undefined) return earlier(0, "empty");
  if (value instanceof Deno.KvU64) return earlier(value.value, "head");
  if (value instanceof Uint8Array && value.byteLength === 9 && value[0] === STAGED_HEAD_LAYOUT) {
    const position = new DataView(value.buffer, value.byteOffset, 9).getBigUint64(1);
    if (position <= BigInt(Number.MAX_SAFE_INTEGER)) return earlier(position, "staged");
  }
  // Written by an earlier version as a number.
  if (Number.isSafeInteger(value) && (value as number) >= 0) {
    return earlier(value as number, "head");
  }
  throw new LayoutError("the feed head has an unknown layout");
}
