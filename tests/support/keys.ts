/**
 * Public keys the `POST /intents` suites need beyond valid ones: encodings
 * that are not points, the compressed form of a passkey's key, and an Ed25519
 * key outside the prime-order subgroup whose signatures its holder can still
 * make.
 * @module
 */

import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { p256 } from "@noble/curves/nist.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { base58 } from "@scure/base";
import type { SoftwarePasskey } from "../../testing/software_passkey.ts";

/** A 32-byte string that is not the encoding of any Ed25519 point. */
export function invalidEd25519Point(): Uint8Array {
  for (let y = 2;; y++) {
    const bytes = new Uint8Array(32);
    bytes[0] = y;
    try {
      ed25519.Point.fromBytes(bytes);
    } catch {
      return bytes;
    }
  }
}

/** A compressed SEC1 encoding whose x has no point on P-256. */
export function invalidCompressedP256(): Uint8Array {
  for (let x = 1;; x++) {
    const bytes = new Uint8Array(33);
    bytes[0] = 0x02;
    bytes[32] = x;
    try {
      p256.Point.fromBytes(bytes);
    } catch {
      return bytes;
    }
  }
}

/** An uncompressed SEC1 encoding of a point that is not on P-256. */
export function uncompressedOffCurve(): Uint8Array {
  const bytes = new Uint8Array(65);
  bytes[0] = 0x04;
  bytes[32] = 1;
  bytes[64] = 1;
  return bytes;
}

/** The base58 compressed SEC1 form of a passkey's public key. */
export function compressed(passkey: SoftwarePasskey): string {
  return base58.encode(p256.Point.fromBytes(passkey.publicKey).toBytes(true));
}

const { Point } = ed25519;
const L = Point.CURVE().n;

/** A key A + T (T of order 8) and a signer for it, both from the secret of A. */
export interface TorsionTwin {
  /** A + T, 32 bytes: a point of order 8ℓ, so not small-order, but outside the subgroup. */
  publicKey: Uint8Array;
  /** A signature over `message` that strict, cofactorless RFC 8032 verification accepts under A + T. */
  sign(message: Uint8Array): Uint8Array;
}

/**
 * The second key the holder of one Ed25519 secret controls: A + T with T a
 * point of order 8. With k = H(R || A + T || M) mod ℓ, [S]B = R + [k](A + T)
 * holds for S = r + k·a exactly when [k]T is the identity, that is when 8
 * divides k; the signer draws nonces until it does (8 tries on average).
 */
export function torsionTwin(secretKey: Uint8Array): TorsionTwin {
  const { scalar } = ed25519.utils.getExtendedPublicKey(secretKey);
  // zip215 false: the torsion listing consists of strict encodings.
  const eighth = ED25519_TORSION_SUBGROUP
    .map((hex) => Point.fromHex(hex, false))
    .find((t) => !t.multiplyUnsafe(4n).is0());
  if (eighth === undefined) throw new Error("no point of order 8 in the torsion listing");
  const publicKey = Point.BASE.multiply(scalar).add(eighth).toBytes();
  return {
    publicKey,
    sign(message) {
      for (;;) {
        const r = bytesToNumberLE(crypto.getRandomValues(new Uint8Array(64))) % L;
        if (r === 0n) continue;
        const rBytes = Point.BASE.multiply(r).toBytes();
        const k = bytesToNumberLE(sha512(new Uint8Array([...rBytes, ...publicKey, ...message]))) %
          L;
        if (k % 8n !== 0n) continue;
        const signature = new Uint8Array(64);
        signature.set(rBytes);
        signature.set(numberToBytesLE((r + k * scalar) % L, 32), 32);
        return signature;
      }
    },
  };
}

/**
 * Another valid Ed25519 signature of `message` by the holder of `secretKey`:
 * RFC 8032 derives the nonce from the key and the message, so a key signs
 * one message one way; a random nonce r makes another (R = [r]B,
 * S = r + H(R || A || M)·a), which strict verification accepts all the same.
 */
export function randomizedEd25519Signature(
  secretKey: Uint8Array,
  message: Uint8Array,
): Uint8Array {
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(secretKey);
  for (;;) {
    const r = bytesToNumberLE(crypto.getRandomValues(new Uint8Array(64))) % L;
    if (r === 0n) continue;
    const rBytes = Point.BASE.multiply(r).toBytes();
    const k = bytesToNumberLE(sha512(new Uint8Array([...rBytes, ...pointBytes, ...message]))) % L;
    const signature = new Uint8Array(64);
    signature.set(rBytes);
    signature.set(numberToBytesLE((r + k * scalar) % L, 32), 32);
    return signature;
  }
}
