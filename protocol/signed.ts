/**
 * What a signer signs (docs/interface.md §3, §10): the signed bytes of a
 * payload or intent, the rejection bytes made from them, and the WebAuthn
 * challenge of either. Free of any signature algorithm, so the browser bundle
 * carries it.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { base64urlnopad } from "@scure/base";
import { canonicalBytes } from "./jcs.ts";
import type { Intent, Payload } from "./types.ts";

/** What a rejection signs before the signed bytes, so that it never stands for an approval. */
export const REJECTION_PREFIX = "intents:reject:";

/**
 * The bytes a client signs for a payload (Variant A) or intent (Variant B):
 * UTF-8 of its JCS text.
 *
 * @throws {TypeError} when `value` is not plain JSON (see `canonicalJson`).
 *
 * @example
 * ```ts
 * new TextDecoder().decode(signedBytes({ template_id: "t", id: "a" })); // '{"id":"a","template_id":"t"}'
 * ```
 */
export function signedBytes(value: Payload | Intent): Uint8Array<ArrayBuffer> {
  return canonicalBytes(value);
}

/**
 * The rejection bytes of signed bytes: UTF-8 `intents:reject:` followed by
 * them. JCS text starts with `{`, so no signed bytes are ever rejection bytes.
 *
 * @param signed the signed bytes (see {@link signedBytes}).
 *
 * @example
 * ```ts
 * new TextDecoder().decode(rejectionBytesOf(new TextEncoder().encode("{}"))); // "intents:reject:{}"
 * ```
 */
export function rejectionBytesOf(signed: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = new TextEncoder().encode(REJECTION_PREFIX);
  const out = new Uint8Array(prefix.length + signed.length);
  out.set(prefix);
  out.set(signed, prefix.length);
  return out;
}

/**
 * The bytes a signer signs to reject a pending intent: UTF-8
 * `intents:reject:` followed by its signed bytes.
 *
 * @throws {TypeError} as {@link signedBytes}.
 */
export function rejectionBytes(value: Payload | Intent): Uint8Array<ArrayBuffer> {
  return rejectionBytesOf(signedBytes(value));
}

/**
 * The raw WebAuthn challenge of signed or rejection bytes: their SHA-256
 * (what `navigator.credentials.get` takes as `publicKey.challenge`).
 */
export function challengeDigest(bytes: Uint8Array): Uint8Array {
  return sha256(bytes);
}

/**
 * The challenge as the service writes it: base64url without padding of
 * SHA-256 of signed or rejection bytes (the approvals view's `challenge` and
 * `reject_challenge`, a passkey's `clientDataJSON.challenge`).
 *
 * @example
 * ```ts
 * challengeText(new TextEncoder().encode('{"id":"a"}')).length; // 43
 * ```
 */
export function challengeText(bytes: Uint8Array): string {
  return base64urlnopad.encode(sha256(bytes));
}

/**
 * The WebAuthn challenge for a payload or intent: base64url without padding of
 * SHA-256 of the signed bytes. Pass its bytes as `challenge` to
 * `navigator.credentials.get`.
 *
 * @throws {TypeError} as {@link signedBytes} (as a rejected promise).
 */
export function passkeyChallenge(value: Payload | Intent): Promise<string> {
  return new Promise((resolve) => resolve(challengeText(signedBytes(value))));
}

/**
 * The raw challenge bytes (what `navigator.credentials.get` takes).
 *
 * @throws {TypeError} as {@link signedBytes} (as a rejected promise).
 */
export function passkeyChallengeBytes(value: Payload | Intent): Promise<Uint8Array> {
  return new Promise((resolve) => resolve(challengeDigest(signedBytes(value))));
}
