/**
 * What identifies a verified signature (`signatureMaterial`): each part
 * framed by its 32-bit big-endian length, text as UTF-8. The digests kept
 * with recorded approvals are made of it, so its bytes never change: checked
 * against the framing written out plainly, for text of every UTF-8 width.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import type { DecodedEd25519, DecodedPasskey } from "../../src/domain/signature.ts";
import { signatureMaterial } from "../../src/domain/signature_digest.ts";

const utf8 = new TextEncoder();

/** The framing written out plainly: each part's length (4 bytes, big-endian), then the part. */
function plainly(parts: Uint8Array[]): Uint8Array {
  const out: number[] = [];
  for (const part of parts) {
    out.push(
      part.length >>> 24,
      (part.length >>> 16) & 0xff,
      (part.length >>> 8) & 0xff,
      part.length & 0xff,
    );
    out.push(...part);
  }
  return new Uint8Array(out);
}

/** Asserts the material of a passkey signature of these parts. */
function assertPasskey(
  keyId: string,
  signature: Uint8Array,
  authenticatorData: Uint8Array,
  clientData: string,
): void {
  const passkey = {
    kind: "Passkey",
    keyId,
    signature,
    authenticatorData,
    clientData,
  } as DecodedPasskey;
  assert.deepEqual(
    signatureMaterial(passkey),
    plainly([
      utf8.encode("Passkey"),
      utf8.encode(keyId),
      signature,
      authenticatorData,
      utf8.encode(clientData),
    ]),
  );
}

Deno.test("signatureMaterial frames kind, key id, signature (and a passkey's data) as written out plainly", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme" }),
      fc.string({ unit: "binary" }),
      fc.uint8Array({ maxLength: 80 }),
      fc.uint8Array({ maxLength: 80 }),
      (keyId, clientData, signature, authenticatorData) => {
        const ed = { kind: "Ed25519", keyId, signature } as DecodedEd25519;
        assert.deepEqual(
          signatureMaterial(ed),
          plainly([utf8.encode("Ed25519"), utf8.encode(keyId), signature]),
        );
        assertPasskey(keyId, signature, authenticatorData, clientData);
      },
    ),
  );
  // Each width of UTF-8, a pair, and lone surrogates (written as U+FFFD).
  const clientData = 'a\u00e9\u20ac\u{1f600}\ud800x\udc00{"type":"webauthn.get"}';
  assertPasskey("k", new Uint8Array([1]), new Uint8Array([2]), clientData);
});
