/**
 * The digest that recognises a signature sent again (docs/interface.md §10:
 * the same approval or rejection again is answered, not refused). It covers
 * everything that was verified of one Ed25519 or Passkey signature: its kind,
 * its key as a point, and its bytes.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { base64urlnopad } from "@scure/base";
import type { DecodedEd25519, DecodedPasskey } from "./signature.ts";

const encoder = new TextEncoder();

/** The parts, each as a 32-bit big-endian length and its bytes. */
function framed(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += 4 + part.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const part of parts) {
    view.setUint32(at, part.length);
    out.set(part, at + 4);
    at += 4 + part.length;
  }
  return out;
}

/**
 * What identifies one verified signature, as bytes: its parts, each framed
 * by its length: its kind, its key id (the point, so a passkey key sent
 * compressed or uncompressed with the same assertion is the same signature)
 * and its signature bytes, and for a passkey its authenticator data and
 * client data. Cheap to make where the signature is verified (any thread);
 * hashed by {@link signatureDigest} only where a digest is kept.
 */
export function signatureMaterial(sig: DecodedEd25519 | DecodedPasskey): Uint8Array {
  const parts = [encoder.encode(sig.kind), encoder.encode(sig.keyId), sig.signature];
  if (sig.kind === "Passkey") parts.push(sig.authenticatorData, encoder.encode(sig.clientData));
  return framed(parts);
}

/**
 * The digest kept with a recorded approval or rejection: base64url (no
 * padding) of SHA-256 of the signature's {@link signatureMaterial}, 43
 * characters.
 *
 * @example
 * ```ts ignore
 * const digest = signatureDigest(signatureMaterial(decoded));
 * ```
 */
export function signatureDigest(material: Uint8Array): string {
  return base64urlnopad.encode(sha256(material));
}
