/**
 * Strict Ed25519 verification on the runtime's own Ed25519: `node:crypto`,
 * which verifies on the calling thread, or Web Crypto, which hands each
 * verify to a thread pool (docs/decisions.md: "Ed25519 is verified
 * natively"). Both check S < L and the cofactorless equation with encodings
 * compared (`tests/unit/ed25519_test.ts` holds every backend to the same
 * vectors) but accept small-order keys and R, so those rules are checked
 * here first. The imported key is kept with the decoded key object, so a
 * kept key is imported once. A probe tells whether each can serve.
 * @module
 */

import { createPublicKey, type KeyObject, verify as nodeVerify } from "node:crypto";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToNumberLE, hexToBytes, numberToBytesLE } from "@noble/curves/utils.js";
import { hasCanonicalY, hasSmallOrderY, isCanonicalS } from "./_ed25519_encoding.ts";
import type { Ed25519PublicKey } from "./ed25519_public_key.ts";

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow. */
const SPKI_PREFIX = hexToBytes("302a300506032b6570032100");

/** The key as a `KeyObject`: a 32-byte Ed25519 public key wrapped in SPKI DER. */
export function ed25519KeyObject(publicKey: Uint8Array): KeyObject {
  const der = new Uint8Array(SPKI_PREFIX.length + 32);
  der.set(SPKI_PREFIX, 0);
  der.set(publicKey, SPKI_PREFIX.length);
  return createPublicKey({ key: der as unknown as Buffer, format: "der", type: "spki" });
}

/**
 * The rules the runtime does not check: S < L, and A and R canonical and not
 * of small order. An R off the curve, or with x = 0 and the sign bit set
 * (such R have small-order y anyway), never equals the canonical encoding
 * the runtime compares against.
 */
function passesStrictRules(publicKey: Ed25519PublicKey, signature: Uint8Array): boolean {
  return isCanonicalS(signature) && hasCanonicalY(signature, 0) &&
    !hasSmallOrderY(signature, 0) && publicKey.isPoint && !publicKey.isSmallOrder;
}

/** Imported keys of each runtime, kept as long as their decoded key object lives. */
const keyObjects = new WeakMap<Ed25519PublicKey, KeyObject>();
const cryptoKeys = new WeakMap<Ed25519PublicKey, Promise<CryptoKey>>();

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
  if (!passesStrictRules(publicKey, signature)) return false;
  let key = keyObjects.get(publicKey);
  if (key === undefined) {
    key = ed25519KeyObject(publicKey.bytes);
    keyObjects.set(publicKey, key);
  }
  return nodeVerify(null, message, key, signature);
}

/**
 * Verifies with libsodium's rules using Web Crypto for the equation.
 * Lengths are checked by the caller; `signature` must not change while this runs.
 */
export async function verifyWithWebCrypto(
  publicKey: Ed25519PublicKey,
  message: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  if (!passesStrictRules(publicKey, signature)) return false;
  let key = cryptoKeys.get(publicKey);
  if (key === undefined) {
    // Not extractable: the key is only ever used to verify.
    const imported = key = importKey(publicKey.bytes.slice());
    // A failed import must not stick: drop it so the next call retries.
    imported.catch(() => {
      if (cryptoKeys.get(publicKey) === imported) cryptoKeys.delete(publicKey);
    });
    cryptoKeys.set(publicKey, imported);
  }
  return await crypto.subtle.verify("Ed25519", await key, signature, message);
}

function importKey(bytes: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", bytes, { name: "Ed25519" }, false, ["verify"]);
}

/** RFC 8032 §7.1 TEST 1: public key, empty message, signature. */
const RFC8032_TEST1 = {
  publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
  signature:
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
};

/**
 * A signature that satisfies only the cofactored equation: A = [a]B and
 * R = [r]B + T with T of order 8, S = r + k·a mod L. Then [S]B − [k]A = R − T,
 * so the cofactorless check fails while [8]([S]B − [k]A − R) = O. A and R are
 * canonical and of large order, so only the equation can reject it.
 */
export function cofactoredOnlySignature(): {
  publicKey: Uint8Array<ArrayBuffer>;
  message: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
} {
  const { Point } = ed25519;
  const L = Point.CURVE().n;
  const fixedScalar = (label: string) =>
    bytesToNumberLE(sha512(new TextEncoder().encode(label))) % L;
  const a = fixedScalar("ed25519 probe: secret scalar");
  const r = fixedScalar("ed25519 probe: nonce");
  // zip215 false: strict decoding of noble's own torsion listing; index 3 has order 8.
  const t = Point.fromHex(ED25519_TORSION_SUBGROUP[3], false);
  const publicKey = Point.BASE.multiply(a).toBytes();
  const rBytes = Point.BASE.multiply(r).add(t).toBytes();
  const message = new TextEncoder().encode("passes only the cofactored equation");
  const h = sha512.create().update(rBytes).update(publicKey).update(message).digest();
  const k = bytesToNumberLE(h) % L;
  const s = (r + k * a) % L;
  const signature = new Uint8Array(64);
  signature.set(rBytes, 0);
  signature.set(numberToBytesLE(s, 32), 32);
  return { publicKey: new Uint8Array(publicKey), message, signature };
}

/** The runtime's bare equation check: key, message, signature. */
type RawVerify = (
  publicKey: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
) => boolean | Promise<boolean>;

/**
 * True when `verify` accepts the RFC 8032 test signature and rejects the
 * cofactored-only signature. Any error (Ed25519 unsupported) counts as false.
 */
async function isStrict(verify: RawVerify): Promise<boolean> {
  try {
    const bytes = (hex: string) => hexToBytes(hex) as Uint8Array<ArrayBuffer>;
    const rfc = RFC8032_TEST1;
    const cofactored = cofactoredOnlySignature();
    return await verify(bytes(rfc.publicKey), new Uint8Array(0), bytes(rfc.signature)) &&
      !await verify(cofactored.publicKey, cofactored.message, cofactored.signature);
  } catch {
    return false;
  }
}

/** True when `node:crypto` verifies Ed25519 with the cofactorless equation (see {@link isStrict}). */
export function nodeCryptoIsStrictEd25519(): Promise<boolean> {
  return isStrict((key, message, sig) => nodeVerify(null, message, ed25519KeyObject(key), sig));
}

/** True when Web Crypto verifies Ed25519 with the cofactorless equation (see {@link isStrict}). */
export function webCryptoIsStrictEd25519(): Promise<boolean> {
  return isStrict(async (key, message, sig) =>
    await crypto.subtle.verify("Ed25519", await importKey(key), sig, message)
  );
}
