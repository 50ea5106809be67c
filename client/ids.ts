/**
 * Intent ids that sort by the time they were made: UUIDv7 (RFC 9562 §5.7).
 * The service keeps one key per intent id in an ordered store; ids made one
 * after another land next to each other there, so a commit of many intents
 * writes a few pages rather than one per intent (see the README's
 * performance notes). Any unique string up to 128 characters is a valid id.
 * @module
 */

import { hex as hexCodec } from "@scure/base";

/**
 * A new UUIDv7: 48 bits of Unix time in milliseconds, then 74 random bits
 * (with the version and variant bits), in lower case as the service stores
 * UUIDs.
 *
 * @param now the time to stamp, in milliseconds since the epoch (default: now).
 * @returns e.g. `"019ab1f2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"`.
 *
 * @example
 * ```ts
 * const intent = { id: newIntentId(), policy_id: "6HfDFDHLuS37kEwwzDq39utSWPkKriY1GkFC184uYXB" };
 * // then: `signVariantB(intent, key)`, and `client.submit(...)`
 * ```
 */
export function newIntentId(now: number = Date.now()): string {
  if (!Number.isSafeInteger(now) || now < 0 || now >= 2 ** 48) {
    throw new RangeError("now must be a whole number of milliseconds within 48 bits");
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  // Big-endian milliseconds in the first six bytes.
  let time = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | (bytes[6] & 0x0f); // version 7
  bytes[8] = 0x80 | (bytes[8] & 0x3f); // variant 10
  const hex = hexCodec.encode(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}
