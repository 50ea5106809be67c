/**
 * Public keys as requests carry them (base58 text), decoded and checked once
 * per key in a {@link PublicKeyCache}, and the signers of a Multisig or of a
 * governed document's `authorization`. Signers submit again and again, and
 * decoding a key (base58, the point checks, the import a backend keeps with
 * the key object) costs far more than a lookup.
 * @module
 */

import { base58 } from "@scure/base";
import { type ErrorCode, ServiceError } from "../errors.ts";
import { Ed25519PublicKey } from "../crypto/ed25519.ts";
import { P256PublicKey } from "../crypto/p256.ts";
import { ClockCache } from "../clock_cache.ts";
import { base58Bytes } from "./base58.ts";
import type { Signers } from "./intent.ts";
import { fieldPath } from "./validate.ts";

/** A decoded public key of either curve. */
export type DecodedKey =
  | { curve: "ed25519"; key: Ed25519PublicKey; id: string; length: 32 }
  | { curve: "p256"; key: P256PublicKey; id: string; length: 33 | 65 };

/** Which keys a field takes. */
export type KeyCurve = "ed25519" | "p256" | "any";

/**
 * Decoded keys remembered by their base58 text: only keys that decoded are
 * kept, and a bound holds memory whatever keys come.
 */
export type PublicKeyCache = ClockCache<DecodedKey>;

/** Decoded keys a {@link publicKeyCache} remembers by default. */
const KEYS_CACHED = 4096;

/**
 * A new, empty cache of decoded keys: one per thread that verifies.
 *
 * @param capacity the most keys it keeps.
 */
export function publicKeyCache(capacity: number = KEYS_CACHED): PublicKeyCache {
  return new ClockCache<DecodedKey>(capacity);
}

/** Decodes base58 text or refuses it with `invalid_body` naming `path`. */
export function decodeBase58(text: string, path: string): Uint8Array {
  const bytes = base58Bytes(text);
  if (bytes === null) throw new ServiceError("invalid_body", `${path}: is not valid base58`);
  return bytes;
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
    throw new ServiceError("invalid_body", `${path}: ${lengthProblem(curve, bytes.length)}`);
  }
  if (of === "ed25519") {
    const key = new Ed25519PublicKey(bytes);
    if (!key.isPoint) {
      throw new ServiceError("invalid_body", `${path}: is not a valid Ed25519 public key`);
    }
    // Base58 is a bijection between strings and byte strings: the text is the bytes' encoding.
    return { curve: "ed25519", key, id: text, length: 32 };
  }
  let key: P256PublicKey;
  try {
    key = new P256PublicKey(bytes);
  } catch {
    throw new ServiceError("invalid_body", `${path}: is not a valid P-256 public key`);
  }
  // Keys are compared as points: the compressed form names the point.
  return { curve: "p256", key, id: base58.encode(key.compressed), length: bytes.length as 33 | 65 };
}

/**
 * Decodes a base58 public key of the curves `curve` allows.
 *
 * @param text the key as sent.
 * @param path the field's path, for the error message.
 * @param curve which keys the field takes.
 * @param cache where decoded keys are kept; without one the key is decoded afresh.
 * @returns the decoded key and its id (the base58 of the 32 Ed25519 bytes or
 *   of the compressed P-256 point: keys that are the same point share an id).
 * @throws {ServiceError} `invalid_body` naming `path`: bad base58, a wrong
 *   length, or not a point on the curve.
 *
 * @example
 * ```ts
 * const keys = publicKeyCache();
 * // The public key of RFC 8032's first test vector.
 * const text = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z";
 * const key = decodePublicKey(text, "pub_key", "any", keys);
 * key.curve; // "ed25519"
 * ```
 */
export function decodePublicKey<C extends KeyCurve>(
  text: string,
  path: string,
  curve: C,
  cache?: PublicKeyCache,
): C extends "any" ? DecodedKey : Extract<DecodedKey, { curve: C }> {
  let found = cache?.get(text);
  if (found === undefined) {
    found = decodeText(text, path, curve);
    cache?.set(text, found);
  }
  if (curve !== "any" && found.curve !== curve) {
    throw new ServiceError("invalid_body", `${path}: ${lengthProblem(curve, found.length)}`);
  }
  return found as C extends "any" ? DecodedKey : Extract<DecodedKey, { curve: C }>;
}

/** Options of {@link decodeSigners}. */
export interface DecodeSignersOptions {
  /** Where `signers` sits in the request. */
  path: string;
  /** The refusal's code: `invalid_body` unless given. */
  code?: ErrorCode;
  /** Where decoded keys are kept. */
  cache?: PublicKeyCache;
  /**
   * When given, the subgroup check of each Ed25519 key is left to the
   * caller (see {@link checkPrimeOrder}) and the decoded keys are put here,
   * by key id: a Multisig checks them once its signatures verified, so a
   * forged signature never pays for them (docs/interface.md §4).
   */
  keys?: Map<string, DecodedKey>;
}

/**
 * Refuses an Ed25519 key outside the prime-order subgroup ([L]A not the
 * identity): one secret key must not stand for two signers (A and A + T, T a
 * torsion point). A scalar multiplication, made once per decoded key.
 *
 * @param key a decoded key; P-256 keys pass.
 * @param keyPath the key's path in the request.
 * @param code the refusal's code.
 * @throws {ServiceError} `code` naming `keyPath`.
 */
export function checkPrimeOrder(key: DecodedKey, keyPath: string, code: ErrorCode): void {
  if (key.curve === "ed25519" && !key.key.isPrimeOrder) {
    throw new ServiceError(code, `${keyPath}: is not in the prime-order subgroup`);
  }
}

/**
 * Decodes the signers of a Multisig or of a governed document's
 * `authorization` (docs/interface.md §4, §10): each key of either curve, an
 * Ed25519 key in the prime-order subgroup (unless `options.keys` defers that
 * check), and no two keys the same point.
 *
 * @param signers base58 key → weight, as sent.
 * @param options see {@link DecodeSignersOptions}.
 * @returns the signers by key id (see {@link decodePublicKey}), in the order sent.
 * @throws {ServiceError} `options.code` naming the key's path.
 *
 * @example
 * ```ts
 * // The public keys of RFC 8032's first two test vectors.
 * const signers = decodeSigners({
 *   FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z: 1,
 *   "586Z7H2vpX9qNhN2T4e9Utugie3ogjbxzGaMtM3E6HR5": 2,
 * }, { path: "authorization.signers" });
 * signers.size; // 2
 * ```
 */
export function decodeSigners(
  signers: Readonly<Record<string, number>>,
  options: DecodeSignersOptions,
): Signers {
  const code = options.code ?? "invalid_body";
  const decoded: Signers = new Map();
  for (const [keyText, weight] of Object.entries(signers)) {
    const keyPath = fieldPath(options.path, keyText);
    let key: DecodedKey;
    try {
      key = decodePublicKey(keyText, keyPath, "any", options.cache);
    } catch (error) {
      if (error instanceof ServiceError) throw new ServiceError(code, error.message);
      throw error;
    }
    if (options.keys === undefined) checkPrimeOrder(key, keyPath, code);
    if (decoded.has(key.id)) {
      throw new ServiceError(code, `${keyPath}: names the same key as another signer`);
    }
    decoded.set(key.id, { keyText, weight });
    options.keys?.set(key.id, key);
  }
  return decoded;
}
