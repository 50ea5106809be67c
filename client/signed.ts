/**
 * What a signer signs: the signed bytes of a payload or intent, and the
 * WebAuthn challenge made from them. Free of any signature algorithm, so the
 * browser bundle carries it.
 * @module
 */

import { base64urlnopad } from "@scure/base";
import { canonicalBytes } from "../src/domain/jcs.ts";
import type { Intent, Payload } from "./types.ts";

/** The bytes a client signs for a payload or intent: UTF-8 of its JCS text. */
export function signedBytes(value: Payload | Intent): Uint8Array {
  return canonicalBytes(value);
}

/** What a rejection signs before the signed bytes, so that it never stands for an approval. */
export const REJECTION_PREFIX = "intents:reject:";

/**
 * The bytes a signer signs to reject a pending intent: UTF-8
 * `intents:reject:` followed by its signed bytes.
 */
export function rejectionBytes(value: Payload | Intent): Uint8Array {
  const prefix = new TextEncoder().encode(REJECTION_PREFIX);
  const signed = signedBytes(value);
  const out = new Uint8Array(prefix.length + signed.length);
  out.set(prefix);
  out.set(signed, prefix.length);
  return out;
}

/** SHA-256 of signed bytes: the raw WebAuthn challenge. */
export async function challengeOfBytes(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/**
 * The WebAuthn challenge for a payload or intent: base64url without padding of
 * SHA-256 of the signed bytes. Pass its bytes as `challenge` to
 * `navigator.credentials.get`.
 */
export async function passkeyChallenge(value: Payload | Intent): Promise<string> {
  return base64urlnopad.encode(await challengeOfBytes(signedBytes(value)));
}

/** The raw challenge bytes (what `navigator.credentials.get` takes). */
export async function passkeyChallengeBytes(value: Payload | Intent): Promise<Uint8Array> {
  return await challengeOfBytes(signedBytes(value));
}
