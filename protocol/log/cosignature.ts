/**
 * Witness cosignatures as C2SP tlog-cosignature defines the Ed25519 kind
 * (`cosignature/v1`, signature type 0x04): a note signature on a checkpoint
 * whose bytes are the key id, then `timestamped_signature`: the timestamp (8
 * bytes, big-endian POSIX seconds, at most 2^63 − 1) and the Ed25519
 * signature (64 bytes) of
 *
 * ```text
 * cosignature/v1
 * time <timestamp in decimal>
 * <the checkpoint's whole note text>
 * ```
 *
 * A cosigner's verifier key is `<name>+<key id>+<base64(0x04 ‖ public key)>`,
 * the key id being the first four bytes of SHA-256(name ‖ "\n" ‖ 0x04 ‖
 * public key). Go's `golang.org/x/mod/sumdb/note` does not know this type;
 * to its `note.Open` a cosignature is a signature by an unknown key.
 *
 * The signer key of a cosigner, `PRIVATE+KEY+<name>+<key id>+<base64(0x04 ‖
 * seed)>`, follows the note package's form; no specification defines it.
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { concatBytes } from "./_bytes.ts";
import { computeKeyId, formatKey, isValidKeyName, splitKey } from "./_keys.ts";
import { type NoteSignature, type NoteVerifier, verifyEd25519 } from "./note.ts";

/** The signature type of Ed25519 cosignatures. */
export const COSIGNATURE_TYPE = 0x04;

/** The largest timestamp a cosignature may carry here (the specification allows up to 2^63 − 1). */
const MAX_TIMESTAMP = Number.MAX_SAFE_INTEGER;

/** A cosigner's verifier: a {@link NoteVerifier} of `cosignature/v1` signatures. */
export interface CosignatureVerifier extends NoteVerifier {
  /** The cosigner's Ed25519 public key. */
  readonly publicKey: Uint8Array;
}

/** Makes cosignatures with one cosigner key. */
export interface Cosigner {
  /** The cosigner's name. */
  readonly name: string;
  /** The cosigner's key id (a uint32). */
  readonly keyId: number;
  /** The cosigner's verifier key. */
  readonly verifierKey: string;
  /** The cosignature of a checkpoint's note text at `timestamp` (POSIX seconds). */
  cosign(text: string, timestamp: number): NoteSignature;
}

/**
 * The bytes a cosignature signs: `cosignature/v1\ntime <timestamp>\n` then
 * the checkpoint's note text.
 *
 * @throws {RangeError} when `timestamp` is not a whole number from 0 to 2^53 − 1.
 *
 * @example
 * ```ts
 * new TextDecoder().decode(cosignedMessage("example.com/log\n1\nAAAA\n", 1679315147));
 * // "cosignature/v1\ntime 1679315147\nexample.com/log\n1\nAAAA\n"
 * ```
 */
export function cosignedMessage(
  text: string | Uint8Array,
  timestamp: number,
): Uint8Array<ArrayBuffer> {
  assertTimestamp(timestamp);
  const body = typeof text === "string" ? new TextEncoder().encode(text) : text;
  return concatBytes(new TextEncoder().encode(`cosignature/v1\ntime ${timestamp}\n`), body);
}

/**
 * The timestamp of a cosignature's bytes (after the key id), or null when
 * they are not 72 bytes or the timestamp is above 2^53 − 1.
 */
export function cosignatureTimestamp(signature: Uint8Array): number | null {
  if (signature.length !== 72) return null;
  const value = new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0);
  return value <= BigInt(MAX_TIMESTAMP) ? Number(value) : null;
}

/**
 * A new cosigner key pair for `name`, from 32 random bytes.
 *
 * @throws {TypeError} when `name` is empty or holds a space or `+`.
 */
export function generateCosignerKey(name: string): { signerKey: string; verifierKey: string } {
  if (!isValidKeyName(name)) throw new TypeError("a key name is non-empty, without spaces or '+'");
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const publicKey = ed25519.getPublicKey(seed);
  const keyId = computeKeyId(name, COSIGNATURE_TYPE, publicKey);
  return {
    signerKey: formatKey({ name, keyId, type: COSIGNATURE_TYPE, key: seed }, true),
    verifierKey: formatKey({ name, keyId, type: COSIGNATURE_TYPE, key: publicKey }, false),
  };
}

/**
 * A cosigner's verifier from its verifier key (type 0x04, 32-byte key, key id checked).
 *
 * @throws {SyntaxError} when the key is malformed, of another type, or its key id is wrong.
 *
 * @example
 * ```ts
 * const { verifierKey } = generateCosignerKey("witness.example/w1");
 * parseCosignerKey(verifierKey).name; // "witness.example/w1"
 * ```
 */
export function parseCosignerKey(verifierKey: string): CosignatureVerifier {
  const parts = splitKey(verifierKey, false);
  if (parts.type !== COSIGNATURE_TYPE) {
    throw new SyntaxError(
      `Cannot parse a cosigner key: type ${parts.type} is not cosignature/v1 (4)`,
    );
  }
  if (parts.key.length !== 32) {
    throw new SyntaxError("Cannot parse a cosigner key: an Ed25519 public key is 32 bytes");
  }
  if (computeKeyId(parts.name, parts.type, parts.key) !== parts.keyId) {
    throw new SyntaxError("Cannot parse a cosigner key: the key id does not match the key");
  }
  const publicKey = parts.key;
  return {
    name: parts.name,
    keyId: parts.keyId,
    publicKey,
    verify(text, signature) {
      const timestamp = cosignatureTimestamp(signature);
      if (timestamp === null) return false;
      return verifyEd25519(signature.slice(8), cosignedMessage(text, timestamp), publicKey);
    },
  };
}

/**
 * A cosigner from its signer key; the seed stays inside the cosigner's closure.
 *
 * @throws {SyntaxError} when the key is malformed, of another type, or its key id is wrong.
 */
export function parseCosignerSignerKey(signerKey: string): Cosigner {
  const parts = splitKey(signerKey, true);
  if (parts.type !== COSIGNATURE_TYPE || parts.key.length !== 32) {
    throw new SyntaxError(
      "Cannot parse a cosigner's signer key: not a cosignature/v1 Ed25519 seed",
    );
  }
  const seed = parts.key;
  const publicKey = ed25519.getPublicKey(seed);
  if (computeKeyId(parts.name, COSIGNATURE_TYPE, publicKey) !== parts.keyId) {
    throw new SyntaxError(
      "Cannot parse a cosigner's signer key: the key id does not match the key",
    );
  }
  const { name, keyId } = parts;
  return {
    name,
    keyId,
    verifierKey: formatKey({ name, keyId, type: COSIGNATURE_TYPE, key: publicKey }, false),
    cosign(text, timestamp) {
      const message = cosignedMessage(text, timestamp);
      const stamp = new Uint8Array(8);
      new DataView(stamp.buffer).setBigUint64(0, BigInt(timestamp));
      const signature = ed25519.sign(message, seed);
      return { name, keyId, signature: concatBytes(stamp, signature) };
    },
  };
}

function assertTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0 || timestamp > MAX_TIMESTAMP) {
    throw new RangeError(`a cosignature's timestamp is whole seconds from 0 to 2^53 − 1`);
  }
}
