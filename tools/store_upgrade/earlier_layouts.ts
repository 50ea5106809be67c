/**
 * Writers of layouts that earlier versions wrote and this version only reads
 * (`src/storage/codec.ts`, `src/storage/index_codec.ts`; `src/storage/keys.ts`
 * documents them): what the upgrade writes where an earlier version kept
 * JavaScript values, and what tests build earlier stores with.
 * @module
 */

import {
  BLOCK_LAYOUT,
  encodeStaged,
  STAGED_HEADER_BYTES,
  type StoredEvent,
} from "../../src/storage/codec.ts";

/** True for a value in a layout of this version: bytes or a KvU64. */
export function isCurrentLayout(value: unknown): boolean {
  return value instanceof Uint8Array || value instanceof Deno.KvU64;
}

/** A block of events: byte 0 = 1, then the events' frames as a staged block holds them. */
export function encodeBlock(events: readonly StoredEvent[]): Uint8Array {
  // A staged block's frames follow its header; the header's last byte becomes the layout's.
  const block = encodeStaged(events, 0).slice(STAGED_HEADER_BYTES - 1);
  block[0] = BLOCK_LAYOUT;
  return block;
}

/** The record of an intent under its id, as one staged layout kept it: its event's frame. */
export function encodeRecord(event: StoredEvent): Uint8Array {
  return encodeStaged([event], 0).subarray(STAGED_HEADER_BYTES);
}

/** A pointer to an intent's latest event in a block: UTF-8 JSON `[blockKey,index]`. */
export function encodePointer(pointer: [blockKey: number, index: number]): Uint8Array {
  return new TextEncoder().encode(`[${pointer[0]},${pointer[1]}]`);
}

/** The feed head that every commit checked and moved: a KvU64. */
export function encodeHead(position: number): Deno.KvU64 {
  return new Deno.KvU64(BigInt(position));
}

/** The feed head whose moves deleted what they moved: byte 0 = 2, the position (64-bit). */
export function encodeStagedHead(position: number): Uint8Array {
  const out = new Uint8Array(9);
  out[0] = 2;
  new DataView(out.buffer).setBigUint64(1, BigInt(position));
  return out;
}
