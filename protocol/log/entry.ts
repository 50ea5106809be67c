/**
 * The log's entries (docs/interface.md §14): the event with id `n` is the
 * entry at index `n − 1`, and its bytes are UTF-8 of the JCS (RFC 8785) text
 * of `{"record_sha256": R, "type": T}`, where `T` is the event's type and `R`
 * is base64url without padding of SHA-256 of UTF-8 JCS of the event's
 * record. An entry commits to the record without carrying it.
 * @module
 */

import { canonicalBytes } from "../jcs.ts";
import { leafHash } from "./hash.ts";
import { sha256Base64url } from "./_sha256.ts";

const utf8 = new TextEncoder();

/**
 * `R`: base64url without padding of SHA-256 of UTF-8 JCS of the record.
 *
 * @throws {TypeError} when the record is not plain JSON (see `canonicalJson`).
 *
 * @example
 * ```ts
 * recordSha256({}); // "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
 * ```
 */
export function recordSha256(record: unknown): string {
  return recordSha256OfCanonical(canonicalBytes(record));
}

/**
 * The entry of an event: UTF-8 of JCS of `{"record_sha256": R, "type": T}`.
 *
 * @param type the event's type (for example `intent.accepted`).
 * @param record the event's record, as stored with the event.
 * @throws {TypeError} when `type` is not a non-empty string or the record is not plain JSON.
 *
 * @example
 * ```ts
 * new TextDecoder().decode(entryBytes("intent.accepted", {}));
 * // '{"record_sha256":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","type":"intent.accepted"}'
 * ```
 */
export function entryBytes(type: string, record: unknown): Uint8Array<ArrayBuffer> {
  return entryOfCanonicalRecord(type, canonicalBytes(record));
}

/**
 * `R` of a record from its UTF-8 JCS bytes, for a caller that wrote them
 * already (the server, from a value it knows to be plain JSON).
 *
 * @example
 * ```ts
 * recordSha256OfCanonical(new TextEncoder().encode("{}"));
 * // "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
 * ```
 */
export function recordSha256OfCanonical(canonicalRecord: Uint8Array): string {
  return sha256Base64url(canonicalRecord);
}

/** `R` as the entry writes it: 43 characters of base64url (256 bits), no padding. */
const RECORD_SHA256 = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/**
 * {@link entryBytes} from the record's `R`, for a caller that computed it
 * already (the server, when it stored the event).
 *
 * @param type the event's type.
 * @param recordSha256 `R`: base64url without padding of the record's SHA-256.
 * @throws {TypeError} when `type` is not a non-empty, well-formed string or
 *   `recordSha256` is not the base64url of 32 bytes.
 *
 * @example
 * ```ts
 * entryOfRecordSha256("intent.accepted", "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o");
 * ```
 */
export function entryOfRecordSha256(type: string, recordSha256: string): Uint8Array<ArrayBuffer> {
  checkEntryParts(type, recordSha256);
  return utf8.encode(entryText(type, recordSha256));
}

/**
 * {@link entryOfRecordSha256}'s bytes written into `bytes` at `at`, for a
 * caller that keeps entries in a buffer of its own (the server's integrator).
 *
 * @returns their length, or 0 when they take more than `room` bytes.
 * @throws {TypeError} as {@link entryOfRecordSha256}.
 */
export function writeEntryOfRecordSha256(
  bytes: Uint8Array,
  at: number,
  room: number,
  type: string,
  recordSha256: string,
): number {
  checkEntryParts(type, recordSha256);
  const tail = entryTail(type);
  if (tail === undefined) {
    const text = entryText(type, recordSha256);
    const { read, written } = utf8.encodeInto(text, bytes.subarray(at, at + room));
    return read === text.length ? written : 0;
  }
  // The text is ASCII (R is base64url, the type needs no escape): its fixed parts copied as
  // bytes, R written byte for byte, without a string or a view made per entry.
  const length = ENTRY_HEAD.length + recordSha256.length + tail.length;
  if (length > room || at + length > bytes.length) return 0;
  bytes.set(ENTRY_HEAD, at);
  let to = at + ENTRY_HEAD.length;
  for (let i = 0; i < recordSha256.length; i++) bytes[to++] = recordSha256.charCodeAt(i);
  bytes.set(tail, to);
  return length;
}

/** The entry's bytes before `R`. */
const ENTRY_HEAD = utf8.encode('{"record_sha256":"');
/** A type that JSON writes as itself between quotes, in ASCII. */
const PLAIN_TYPE = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;
/** The entry's bytes after `R` by plain type (the event types: a handful), made once each. */
const entryTails = new Map<string, Uint8Array>();
/** At most this many types' tails are kept (any more are made per call). */
const ENTRY_TAILS_KEPT = 32;

/** The entry's bytes after `R` for a plain type, or undefined for a type JSON escapes. */
function entryTail(type: string): Uint8Array | undefined {
  const kept = entryTails.get(type);
  if (kept !== undefined) return kept;
  if (!PLAIN_TYPE.test(type)) return undefined;
  const tail = utf8.encode(`","type":"${type}"}`);
  if (entryTails.size < ENTRY_TAILS_KEPT) entryTails.set(type, tail);
  return tail;
}

/** The entry's JCS text (see {@link entryOfRecordSha256}), of parts already checked. */
function entryText(type: string, recordSha256: string): string {
  // JCS of the two members, written directly: sorted names, R in base64url (nothing to escape),
  // and the type as JSON.stringify writes a string, which is what RFC 8785 §3.2.2.2 prescribes.
  return `{"record_sha256":"${recordSha256}","type":${JSON.stringify(type)}}`;
}

/** @throws {TypeError} as {@link entryOfRecordSha256}. */
function checkEntryParts(type: string, recordSha256: string): void {
  if (typeof type !== "string" || type === "" || !type.isWellFormed()) {
    throw new TypeError("an event type is a non-empty, well-formed string");
  }
  if (!isRecordSha256(recordSha256)) {
    throw new TypeError("a record's SHA-256 is 43 characters of base64url");
  }
}

/** Whether `value` is an `R` as entries write it (the canonical base64url of 32 bytes). */
export function isRecordSha256(value: unknown): value is string {
  return typeof value === "string" && RECORD_SHA256.test(value);
}

/**
 * {@link entryBytes} from the record's UTF-8 JCS bytes, for a caller that
 * wrote them already (the server, from a value it knows to be plain JSON).
 *
 * @param type the event's type.
 * @param canonicalRecord UTF-8 of JCS of the record.
 * @throws {TypeError} when `type` is not a non-empty, well-formed string.
 *
 * @example
 * ```ts
 * import { canonicalBytes } from "../jcs.ts";
 *
 * entryOfCanonicalRecord("intent.accepted", canonicalBytes({ id: "a" }));
 * ```
 */
export function entryOfCanonicalRecord(
  type: string,
  canonicalRecord: Uint8Array,
): Uint8Array<ArrayBuffer> {
  return entryOfRecordSha256(type, recordSha256OfCanonical(canonicalRecord));
}

/**
 * The leaf hash of an event's entry: what the log's tree holds for it.
 *
 * @throws {TypeError} as {@link entryBytes}.
 */
export function entryLeafHash(type: string, record: unknown): Uint8Array<ArrayBuffer> {
  return leafHash(entryBytes(type, record));
}
