/**
 * Strict Ed25519 verification on the runtime's native `node:crypto`, which
 * verifies synchronously on the calling thread. Web Crypto hands every verify
 * to a thread pool: the hand-off (waking a pool thread, resolving a promise)
 * costs the calling thread about as much as the verify itself, so the
 * synchronous path costs it less. Like Web Crypto it
 * checks S < L and the cofactorless equation but accepts small-order keys and
 * R, so those rules are checked here first. The imported key is kept with the
 * decoded key object, so a kept key is imported once.
 * @module
 */

import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { hexToBytes } from "@noble/curves/utils.js";
import { hasCanonicalY, hasSmallOrderY, isCanonicalS } from "./_ed25519_encoding.ts";
import type { Ed25519PublicKey } from "./ed25519_public_key.ts";

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow. */
const SPKI_PREFIX = hexToBytes("302a300506032b6570032100");

/** Imported keys, kept as long as their decoded key object lives. */
const imported = new WeakMap<Ed25519PublicKey, KeyObject>();

/** The key as a `KeyObject`: a 32-byte Ed25519 public key wrapped in SPKI DER. */
export function ed25519KeyObject(publicKey: Uint8Array): KeyObject {
  const der = new Uint8Array(SPKI_PREFIX.length + 32);
  der.set(SPKI_PREFIX, 0);
  der.set(publicKey, SPKI_PREFIX.length);
  return createPublicKey({ key: der as unknown as Buffer, format: "der", type: "spki" });
}

/** The imported key, or `null` when the key is not a point or has small order. */
function importPublicKey(publicKey: Ed25519PublicKey): KeyObject | null {
  if (!publicKey.isPoint || publicKey.isSmallOrder) return null;
  let key = imported.get(publicKey);
  if (key === undefined) {
    key = ed25519KeyObject(publicKey.bytes);
    imported.set(publicKey, key);
  }
  return key;
}

/**
 * Verifies with libsodium's rules using `node:crypto` for the equation.
 * Lengths are checked by the caller. Synchronous: the bytes cannot change
 * while it runs.
 */
export function verifyWithNode(
  publicKey: Ed25519PublicKey,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (!isCanonicalS(signature)) return false;
  // R: canonical y and not of small order (see the Web Crypto path).
  if (!hasCanonicalY(signature, 0) || hasSmallOrderY(signature, 0)) return false;
  const key = importPublicKey(publicKey);
  if (key === null) return false;
  return verify(null, message, key, signature);
}
