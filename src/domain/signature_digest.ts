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

/**
 * The parts, each as a 32-bit big-endian length and its bytes (text as
 * UTF-8), in one array: a typed array of its own per part costs more than
 * the framing.
 */
function framed(parts: readonly (string | Uint8Array)[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += 4 + (typeof part === "string" ? utf8Length(part) : part.length);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const part of parts) {
    const length = typeof part === "string"
      ? encoder.encodeInto(part, out.subarray(at + 4)).written
      : (out.set(part, at + 4), part.length);
    view.setUint32(at, length);
    at += 4 + length;
  }
  return out;
}

/** The length of `text` in UTF-8 (a lone surrogate as U+FFFD's three bytes, as TextEncoder writes it). */
function utf8Length(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) length += 1;
    else if (c < 0x800) length += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length += 4;
        i++;
      } else length += 3;
    } else length += 3;
  }
  return length;
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
  const parts: (string | Uint8Array)[] = [sig.kind, sig.keyId, sig.signature];
  if (sig.kind === "Passkey") parts.push(sig.authenticatorData, sig.clientData);
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
