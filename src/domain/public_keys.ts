/**
 * Public keys as requests carry them (base58 text), decoded and checked once
 * per key: the one cache of decoded keys. Signers submit again and again, and
 * decoding a key (base58, the point checks, the import a backend keeps with
 * the key object) costs far more than a lookup. Bounded, so fresh keys cannot
 * grow memory; only keys that decoded are kept.
 * @module
 */

import { base58 } from "@scure/base";
import { badRequest } from "../errors.ts";
import { Ed25519PublicKey } from "../crypto/ed25519.ts";
import { P256PublicKey } from "../crypto/p256.ts";
import { LruCache } from "../lru.ts";

/** A decoded public key of either curve. */
export type DecodedKey =
  | { curve: "ed25519"; key: Ed25519PublicKey; id: string; length: 32 }
  | { curve: "p256"; key: P256PublicKey; id: string; length: 33 | 65 };

/** Which keys a field takes. */
export type KeyCurve = "ed25519" | "p256" | "any";

/** Decoded keys remembered, by their base58 text. */
const KEYS_CACHED = 4096;
const decoded = new LruCache<DecodedKey>(KEYS_CACHED);

/** Decodes base58 text or throws a 400 naming `path`. */
export function decodeBase58(text: string, path: string): Uint8Array {
  try {
    return base58.decode(text);
  } catch {
    throw badRequest("invalid_body", `${path}: is not valid base58`);
  }
}

function lengthProblem(curve: KeyCurve, length: number): string {
  switch (curve) {
    case "ed25519":
      return `must decode to 32 bytes, got ${length}`;
    case "p256":
      return `must decode to 33 or 65 bytes (SEC1 P-256), got ${length}`;
    default:
      return `must decode to 32 bytes (Ed25519) or 33 or 65 bytes (P-256), got ${length}`;
  }
}

/** The curve of a key of `length` bytes, if `curve` allows it. */
function curveOf(length: number, curve: KeyCurve): "ed25519" | "p256" | null {
  const of = length === 32 ? "ed25519" : length === 33 || length === 65 ? "p256" : null;
  return of !== null && (curve === "any" || curve === of) ? of : null;
}

function decodeText(text: string, path: string, curve: KeyCurve): DecodedKey {
  const bytes = decodeBase58(text, path);
  const of = curveOf(bytes.length, curve);
  if (of === null) {
    throw badRequest("invalid_body", `${path}: ${lengthProblem(curve, bytes.length)}`);
  }
  if (of === "ed25519") {
    const key = new Ed25519PublicKey(bytes);
    if (!key.isPoint) {
      throw badRequest("invalid_body", `${path}: is not a valid Ed25519 public key`);
    }
    // Base58 is a bijection between strings and byte strings: the text is the bytes' encoding.
    return { curve: "ed25519", key, id: text, length: 32 };
  }
  let key: P256PublicKey;
  try {
    key = new P256PublicKey(bytes);
  } catch {
    throw badRequest("invalid_body", `${path}: is not a valid P-256 public key`);
  }
  // Keys are compared as points: the compressed form names the point.
  return { curve: "p256", key, id: base58.encode(key.compressed), length: bytes.length as 33 | 65 };
}

/**
 * Decodes a base58 public key of the curves `curve` allows.
 *
 * @param text the key as sent.
 * @param path the field's path, for the error message.
 * @returns the decoded key and its id (the base58 of the 32 Ed25519 bytes or
 *   of the compressed P-256 point: keys that are the same point share an id).
 * @throws {ServiceError} 400 `invalid_body` naming `path`: bad base58, a wrong
 *   length, or not a point on the curve.
 */
export function decodePublicKey(
  text: string,
  path: string,
  curve: "ed25519",
): Extract<DecodedKey, { curve: "ed25519" }>;
export function decodePublicKey(
  text: string,
  path: string,
  curve: "p256",
): Extract<DecodedKey, { curve: "p256" }>;
export function decodePublicKey(text: string, path: string, curve: "any"): DecodedKey;
export function decodePublicKey(text: string, path: string, curve: KeyCurve): DecodedKey {
  let found = decoded.get(text);
  if (found === undefined) {
    found = decodeText(text, path, curve);
    decoded.set(text, found);
  }
  if (curve !== "any" && found.curve !== curve) {
    throw badRequest("invalid_body", `${path}: ${lengthProblem(curve, found.length)}`);
  }
  return found;
}
