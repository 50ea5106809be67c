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

/**
 * What identifies one verified signature: its kind, its key id and its
 * bytes, and for a passkey its authenticator data and client data (a
 * decoded signature has them; so has what verification reports of one).
 */
export type SignatureParts =
  | Pick<DecodedEd25519, "kind" | "keyId" | "signature">
  | Pick<DecodedPasskey, "kind" | "keyId" | "signature" | "authenticatorData" | "clientData">;

const encoder = new TextEncoder();

/**
 * The parts, each as a 32-bit big-endian length and its bytes (text as
 * UTF-8), in one array: a typed array of its own per part costs more than
 * the framing. Text takes at most three bytes a UTF-16 unit; the result is
 * the part of the array written.
 */
function framed(parts: readonly (string | Uint8Array)[]): Uint8Array {
  let room = 0;
  for (const part of parts) room += 4 + (typeof part === "string" ? 3 : 1) * part.length;
  const out = new Uint8Array(room);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const part of parts) {
    const length = typeof part === "string"
      ? encoder.encodeInto(part, out.subarray(at + 4)).written
      : (out.set(part, at + 4), part.length);
    view.setUint32(at, length);
    at += 4 + length;
  }
  return out.subarray(0, at);
}

/**
 * What identifies one verified signature, as bytes: its parts, each framed
 * by its length: its kind, its key id (the point, so a passkey key sent
 * compressed or uncompressed with the same assertion is the same signature)
 * and its signature bytes, and for a passkey its authenticator data and
 * client data. Made and hashed by {@link signatureDigest} only where a
 * digest is kept (a governed document's approvals and rejections).
 */
export function signatureMaterial(sig: SignatureParts): Uint8Array {
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
 * const digest = signatureDigest(decoded);
 * ```
 */
export function signatureDigest(sig: SignatureParts): string {
  return base64urlnopad.encode(sha256(signatureMaterial(sig)));
}
