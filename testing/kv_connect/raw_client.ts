/**
 * Plain KV Connect calls over `fetch`, for what Deno's own client never
 * sends: Deno refuses more than 1000 mutations or a value over 64 KiB before
 * any request leaves the process, so only a raw request shows that the
 * server refuses them too. Keys here are raw bytes, not Deno KV key
 * encodings: the backend treats them as opaque.
 * @module
 */

import { DATABASE_ID } from "./handler.ts";
import { MessageWriter, readFields } from "./protobuf.ts";

/** `MutationType` values of `datapath.proto`. */
export const MutationType = { set: 1, delete: 2, sum: 3 } as const;
/** `ValueEncoding` values of `datapath.proto`. */
export const ValueEncoding = { v8: 1, le64: 2, bytes: 3 } as const;

/** One mutation of an atomic write. */
export interface RawMutation {
  key: Uint8Array;
  value?: Uint8Array;
  type?: number;
  encoding?: number;
}

/** One check of an atomic write; an empty versionstamp means "absent". */
export interface RawCheck {
  key: Uint8Array;
  versionstamp?: Uint8Array;
}

/** Encodes an `AtomicWrite` message. */
export function encodeAtomicWrite(
  write: { checks?: RawCheck[]; mutations: RawMutation[] },
): Uint8Array {
  const out = new MessageWriter();
  for (const check of write.checks ?? []) {
    out.bytes(
      1,
      new MessageWriter().bytes(1, check.key).bytes(2, check.versionstamp ?? new Uint8Array())
        .finish(),
    );
  }
  for (const m of write.mutations) {
    const value = new MessageWriter().bytes(1, m.value ?? new Uint8Array())
      .varint(2, m.encoding ?? ValueEncoding.bytes).finish();
    out.bytes(
      2,
      new MessageWriter().bytes(1, m.key).bytes(2, value).varint(3, m.type ?? MutationType.set)
        .finish(),
    );
  }
  return out.finish();
}

/** Encodes a `Watch` message for the given keys. */
export function encodeWatch(keys: Uint8Array[]): Uint8Array {
  const out = new MessageWriter();
  for (const key of keys) out.bytes(1, new MessageWriter().bytes(1, key).finish());
  return out.finish();
}

/** Reads an `AtomicWriteOutput`: its status (1 = success) and versionstamp. */
export function decodeAtomicWriteOutput(
  bytes: Uint8Array,
): { status: number; versionstamp: Uint8Array } {
  let status = 0;
  let versionstamp: Uint8Array = new Uint8Array();
  for (const field of readFields(bytes)) {
    if (field.number === 1 && field.wireType === 0) status = Number(field.value);
    if (field.number === 2 && field.wireType === 2) versionstamp = field.value;
  }
  return { status, versionstamp };
}

/** Where and as whom to call. */
export interface RawTarget {
  url: string;
  token: string;
}

/** Headers of a data path call at protocol version 3. */
export function dataPathHeaders(token: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    "content-type": "application/x-protobuf",
    "x-denokv-version": "3",
    "x-denokv-database-id": DATABASE_ID,
  };
}

/**
 * POSTs a protobuf body to `/v2/<endpoint>` and reads the whole answer.
 *
 * @throws {TypeError} if the server cannot be reached.
 */
export async function callDataPath(
  target: RawTarget,
  endpoint: "snapshot_read" | "atomic_write",
  body: Uint8Array,
  headers: Record<string, string> = dataPathHeaders(target.token),
): Promise<{ status: number; body: Uint8Array; text: string }> {
  const response = await fetch(`${target.url}/v2/${endpoint}`, {
    method: "POST",
    headers,
    body: body as Uint8Array<ArrayBuffer>,
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { status: response.status, body: bytes, text: new TextDecoder().decode(bytes) };
}

/**
 * Reads a watch answer's frames (a little-endian u32 length, then that many
 * bytes) as they arrive; an empty frame is a keep-alive.
 */
export async function* watchFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending = new Uint8Array();
  for await (const chunk of body) {
    const joined = new Uint8Array(pending.length + chunk.length);
    joined.set(pending);
    joined.set(chunk, pending.length);
    pending = joined;
    while (pending.length >= 4) {
      const length = new DataView(pending.buffer, pending.byteOffset).getUint32(0, true);
      if (pending.length < 4 + length) break;
      yield pending.slice(4, 4 + length);
      pending = pending.slice(4 + length);
    }
  }
}
