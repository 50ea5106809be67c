/**
 * The service's base58 decoding against `@scure/base`'s (the oracle): the
 * same bytes for every text the library encodes, leading zero bytes
 * included, and a refusal wherever the library throws.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import fc from "fast-check";
import { base58Bytes } from "../../src/domain/base58.ts";

Deno.test("base58Bytes decodes what @scure/base encodes, leading zeros and every length", () => {
  fc.assert(
    fc.property(
      fc.nat({ max: 8 }),
      fc.uint8Array({ maxLength: 200 }),
      (zeros, rest) => {
        const bytes = new Uint8Array([...new Uint8Array(zeros), ...rest]);
        const text = base58.encode(bytes);
        assert.deepEqual(base58Bytes(text), bytes);
      },
    ),
    { numRuns: 3_000 },
  );
  // Texts longer than the reused limbs hold, and the widest values of a few lengths.
  for (const length of [0, 1, 31, 32, 33, 64, 65, 190, 191, 192, 193, 400]) {
    for (const fill of [0x00, 0x01, 0xff]) {
      const bytes = new Uint8Array(length).fill(fill);
      assert.deepEqual(base58Bytes(base58.encode(bytes)), bytes, `${length} × ${fill}`);
    }
  }
});

Deno.test("base58Bytes reads any text as @scure/base does, refusing what it refuses", () => {
  const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  const units = [...alphabet, ..."0OIl +/=\u00e9\u0131\ud83d"];
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...units), { maxLength: 120 }), (chars) => {
      const text = chars.join("");
      let expected: Uint8Array | null;
      try {
        expected = base58.decode(text);
      } catch {
        expected = null;
      }
      assert.deepEqual(base58Bytes(text), expected, text);
    }),
    { numRuns: 3_000 },
  );
  assert.equal(base58Bytes("1".repeat(300) + "0"), null);
  assert.deepEqual(base58Bytes(""), new Uint8Array(0));
});
