/**
 * Client library for the intent submission service: keys, signing (Variant A
 * and B, Ed25519, passkey, multisig) and typed calls. It runs in Deno, Node
 * and browsers: it uses Web Crypto, `fetch` and small pure npm packages only.
 *
 * It signs exactly the bytes the server verifies: UTF-8 of the RFC 8785 (JCS)
 * text of `payload` (Variant A) or `intent` (Variant B), canonicalized by the
 * same module the server uses.
 *
 * @example
 * ```ts
 * import { generateEd25519Key, signVariantB, IntentsClient } from "./client/mod.ts";
 * const key = generateEd25519Key();
 * const body = signVariantB({ id: crypto.randomUUID(), policy_id: policyId }, key);
 * const record = await new IntentsClient({ url: "http://localhost:8000" }).submit(body);
 * ```
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { base58, base64urlnopad, hex } from "@scure/base";
import { canonicalBytes } from "../src/domain/jcs.ts";

export { canonicalBytes };
export { type ClientOptions, IntentsClient, IntentsError } from "./client.ts";
export type * from "./types.ts";
import type {
  Ed25519Signature,
  Intent,
  MultisigSignature,
  PasskeySignature,
  Payload,
  Signature,
  VariantABody,
  VariantBBody,
} from "./types.ts";

/** An Ed25519 key pair; `secretKey` is the 32-byte seed. */
export interface Ed25519Key {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

/** A key file as the CLI writes it: base58 seed and public key. */
export interface Ed25519KeyFile {
  kind: "Ed25519";
  secret_key: string;
  public_key: string;
}

/** Makes a new Ed25519 key pair. */
export function generateEd25519Key(): Ed25519Key {
  const secretKey = ed25519.utils.randomSecretKey();
  return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
}

/** Rebuilds a key pair from its 32-byte seed. */
export function ed25519KeyFromSecret(secretKey: Uint8Array): Ed25519Key {
  if (secretKey.length !== 32) throw new RangeError("an Ed25519 secret key is 32 bytes");
  return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
}

/** The key file form of a key pair. */
export function toKeyFile(key: Ed25519Key): Ed25519KeyFile {
  return {
    kind: "Ed25519",
    secret_key: base58.encode(key.secretKey),
    public_key: base58.encode(key.publicKey),
  };
}

/**
 * Reads a key file.
 *
 * @throws {TypeError} when it is not an Ed25519 key file or its keys do not match.
 */
export function fromKeyFile(file: unknown): Ed25519Key {
  const f = file as Partial<Ed25519KeyFile>;
  if (typeof f !== "object" || f === null || typeof f.secret_key !== "string") {
    throw new TypeError("not a key file: expected {kind, secret_key, public_key}");
  }
  if (f.kind !== undefined && f.kind !== "Ed25519") {
    throw new TypeError("key file: kind must be Ed25519");
  }
  let secret: Uint8Array;
  try {
    secret = base58.decode(f.secret_key);
  } catch {
    throw new TypeError("key file: secret_key is not base58");
  }
  const key = ed25519KeyFromSecret(secret);
  if (f.public_key !== undefined && f.public_key !== base58.encode(key.publicKey)) {
    throw new TypeError("key file: public_key does not belong to secret_key");
  }
  return key;
}

/** The bytes a client signs for a payload or intent: UTF-8 of its JCS text. */
export function signedBytes(value: Payload | Intent): Uint8Array {
  return canonicalBytes(value);
}

/** An Ed25519 signature member over `value`. */
export function ed25519Signature(value: Payload | Intent, key: Ed25519Key): Ed25519Signature {
  const signature = ed25519.sign(signedBytes(value), key.secretKey);
  return {
    Ed25519: { pub_key: base58.encode(key.publicKey), signature: base58.encode(signature) },
  };
}

/** A Variant A body signed with an Ed25519 key. */
export function signVariantA(payload: Payload, key: Ed25519Key): VariantABody {
  return { payload, signature: ed25519Signature(payload, key) };
}

/** A Variant B body signed with an Ed25519 key. */
export function signVariantB(intent: Intent, key: Ed25519Key): VariantBBody {
  return { authorship: { Signed: ed25519Signature(intent, key) }, intent };
}

/** A Variant A body from a payload and any signature (e.g. a passkey or multisig). */
export function variantABody(payload: Payload, signature: Signature): VariantABody {
  return { payload, signature };
}

/** A Variant B body from an intent and any signature (e.g. a passkey or multisig). */
export function variantBBody(intent: Intent, signature: Signature): VariantBBody {
  return { authorship: { Signed: signature }, intent };
}

/** A Variant B body with `Unsigned` authorship (accepted only where the operator allows it). */
export function unsignedVariantB(intent: Intent): VariantBBody {
  return { authorship: "Unsigned", intent };
}

/**
 * The WebAuthn challenge for a payload or intent: base64url without padding of
 * SHA-256 of the signed bytes. Pass its bytes as `challenge` to
 * `navigator.credentials.get`.
 */
export async function passkeyChallenge(value: Payload | Intent): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    signedBytes(value) as Uint8Array<ArrayBuffer>,
  );
  return base64urlnopad.encode(new Uint8Array(digest));
}

/** The raw challenge bytes (what `navigator.credentials.get` takes). */
export async function passkeyChallengeBytes(value: Payload | Intent): Promise<Uint8Array> {
  return base64urlnopad.decode(await passkeyChallenge(value));
}

// DER prefix of a P-256 SubjectPublicKeyInfo (RFC 5480): what
// AuthenticatorAttestationResponse.getPublicKey() returns, followed by the 65-byte point.
const P256_SPKI_PREFIX = "3059301306072a8648ce3d020106082a8648ce3d030107034200";

/** The SEC1 uncompressed point of a P-256 SPKI public key (from `getPublicKey()`). */
export function p256PointFromSpki(spki: Uint8Array): Uint8Array {
  // The point after the prefix must be uncompressed (0x04), as SPKI from WebAuthn always is.
  if (
    spki.length !== 91 || hex.encode(spki.subarray(0, 26)) !== P256_SPKI_PREFIX || spki[26] !== 4
  ) {
    throw new TypeError("expected a P-256 SubjectPublicKeyInfo (91 bytes)");
  }
  return spki.slice(26);
}

/** What a WebAuthn assertion gives: `AuthenticatorAssertionResponse` fields, as bytes. */
export interface WebAuthnAssertion {
  authenticatorData: Uint8Array;
  clientDataJSON: Uint8Array;
  /** The DER signature, as the authenticator emitted it. */
  signature: Uint8Array;
  /** The credential's public key: SPKI (from registration's `getPublicKey()`) or a SEC1 point. */
  publicKey: Uint8Array;
}

/** Assembles a Passkey signature member from a WebAuthn assertion. */
export function passkeySignature(assertion: WebAuthnAssertion): PasskeySignature {
  const key = assertion.publicKey.length === 91
    ? p256PointFromSpki(assertion.publicKey)
    : assertion.publicKey;
  return {
    Passkey: {
      authenticator_data: base58.encode(assertion.authenticatorData),
      client_data: new TextDecoder("utf-8", { fatal: true }).decode(assertion.clientDataJSON),
      pub_key: base58.encode(key),
      signature: base58.encode(assertion.signature),
    },
  };
}

/**
 * Assembles a Multisig signature.
 *
 * @param options.signers base58 public keys with their weights.
 * @param options.threshold the weight the signers who signed must reach.
 * @param options.signatures Ed25519 or Passkey signatures over the same bytes.
 */
export function multisigSignature(options: {
  signers: Record<string, number>;
  threshold: number;
  signatures: (Ed25519Signature | PasskeySignature)[];
}): MultisigSignature {
  return {
    Multisig: {
      pub_key: { signers: options.signers, threshold: options.threshold },
      signatures: options.signatures,
    },
  };
}
