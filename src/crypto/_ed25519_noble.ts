/**
 * Strict Ed25519 verification with noble point arithmetic. noble's own
 * `ed25519.verify` checks the cofactored equation, which accepts signatures
 * that libsodium and Web Crypto reject, so the equation is evaluated here.
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToNumberLE } from "@noble/curves/utils.js";
import type { Ed25519PublicKey } from "./ed25519_public_key.ts";

type Point = ReturnType<typeof ed25519.Point.fromBytes>;

const Point = ed25519.Point;
const L = Point.CURVE().n;

/**
 * Points decoded by noble itself (or `null` for keys that can never verify),
 * kept as long as their decoded key object lives. noble decodes here rather
 * than trusting the key object's checks, so this path checks them independently.
 */
const decoded = new WeakMap<Ed25519PublicKey, Point | null>();

/** The point for `publicKey`, or `null` when it is not canonical, not on the curve, or of small order. */
function decodePublicKey(publicKey: Ed25519PublicKey): Point | null {
  let point = decoded.get(publicKey);
  if (point === undefined) {
    point = decodeStrict(publicKey.bytes);
    if (point?.isSmallOrder()) point = null;
    decoded.set(publicKey, point);
  }
  return point;
}

function decodeStrict(bytes: Uint8Array): Point | null {
  try {
    // zip215 false: RFC 8032 §5.1.3 decoding (y < p, no x = 0 with the sign bit set).
    return Point.fromBytes(bytes, false);
  } catch {
    return null;
  }
}

/**
 * Verifies with libsodium's rules: S < L; A and R canonical and not of small
 * order; R = [S]B − [k]A compared as encodings, k = SHA-512(R‖A‖M) mod L.
 * Lengths are checked by the caller.
 */
export function verifyWithNoble(
  publicKey: Ed25519PublicKey,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  const rBytes = signature.subarray(0, 32);
  const s = bytesToNumberLE(signature.subarray(32, 64));
  if (s >= L) return false;
  const a = decodePublicKey(publicKey);
  if (a === null) return false;
  const r = decodeStrict(rBytes);
  if (r === null || r.isSmallOrder()) return false;

  const h = sha512.create().update(rBytes).update(publicKey.bytes).update(message).digest();
  const k = bytesToNumberLE(h) % L;
  // Unsafe (variable-time) multiplication is fine: every input here is public.
  const rCheck = Point.BASE.multiplyUnsafe(s).subtract(a.multiplyUnsafe(k)).toBytes();
  for (let i = 0; i < 32; i++) {
    if (rCheck[i] !== rBytes[i]) return false;
  }
  return true;
}
