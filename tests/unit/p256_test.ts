import assert from "node:assert/strict";
import { hex } from "@scure/base";
import { p256 } from "@noble/curves/nist.js";
import { encodeDerEcdsaSignature, parseDerEcdsaSignature } from "../../src/crypto/der.ts";
import { decodeP256PublicKey, type P256Backend, verifyP256 } from "../../src/crypto/p256.ts";

const N_HEX = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";

/** A 32-byte big-endian scalar from a short hex value. */
function scalar(value: string): string {
  return value.padStart(64, "0");
}

// ---------------------------------------------------------------- DER parser

const R = "2ba3a8be6b94d5ec80a6d9d1190a436effe50d85a1eee859b8cc6af9bd5c2e18";
const S_HIGH = "cd60b855d442f5b3c7b11eb6c4e0ae7525fe710fab9aa7c77a67f79e6fadd76a";

const strictCases: { name: string; der: string; rs: string }[] = [
  {
    name: "r without and s with the sign-padding zero",
    der: `30450220${R}022100${S_HIGH}`,
    rs: R + S_HIGH,
  },
  { name: "the smallest values", der: "3006020101020101", rs: scalar("01") + scalar("01") },
  {
    name: "a one-byte value that needs the padding zero",
    der: "300802020080020200ff",
    rs: scalar("80") + scalar("ff"),
  },
  {
    name: "the largest values, n - 1",
    der: `3046022100${N_HEX.slice(0, -2)}50022100${N_HEX.slice(0, -2)}50`,
    rs: N_HEX.slice(0, -2) + "50" + N_HEX.slice(0, -2) + "50",
  },
  {
    name: "short integers (leading zero bytes of r dropped)",
    der: "300a0203010203020300ffff",
    rs: scalar("010203") + scalar("ffff"),
  },
];

for (const { name, der, rs } of strictCases) {
  Deno.test(`parseDerEcdsaSignature accepts strict DER: ${name}`, () => {
    assert.equal(hex.encode(parseDerEcdsaSignature(hex.decode(der))), rs);
  });
  Deno.test(`encodeDerEcdsaSignature writes minimal DER: ${name}`, () => {
    assert.equal(hex.encode(encodeDerEcdsaSignature(hex.decode(rs))), der);
  });
}

const malformedCases: { name: string; der: string }[] = [
  { name: "empty input", der: "" },
  { name: "a SET instead of a SEQUENCE", der: "3106020101020101" },
  { name: "a constructed-bit-less SEQUENCE tag", der: "1006020101020101" },
  { name: "a missing SEQUENCE length", der: "30" },
  { name: "an indefinite SEQUENCE length", der: "3080020101020101" + "0000" },
  { name: "a long-form SEQUENCE length where short form is required", der: "308106020101020101" },
  { name: "a long-form length with a leading zero octet", der: "30820006020101020101" },
  { name: "a long-form INTEGER length where short form is required", der: "300702810101020101" },
  { name: "a length of length beyond two octets", der: "3083000006020101020101" },
  { name: "a SEQUENCE length longer than the input", der: "3007020101020101" },
  { name: "a SEQUENCE length shorter than its content", der: "3005020101020101" },
  { name: "trailing bytes after the SEQUENCE", der: "300602010102010100" },
  { name: "an extra element inside the SEQUENCE", der: "3009020101020101020101" },
  { name: "a missing s", der: "3003020101" },
  { name: "an empty SEQUENCE", der: "3000" },
  { name: "r with a non-INTEGER tag", der: "3006030101020101" },
  { name: "s with a non-INTEGER tag", der: "3006020101040101" },
  { name: "an empty INTEGER", der: "30050200020101" },
  { name: "an INTEGER length running past the SEQUENCE", der: "3006020901020101" },
  { name: "a negative r", der: "3006020181020101" },
  { name: "a negative s", der: "30060201010201ff" },
  { name: "r with a superfluous leading zero", der: "300702020001020101" },
  { name: "s with a superfluous leading zero", der: "300702010102020001" },
  { name: "r with two leading zeros", der: "30080203000080020101" },
  { name: "r missing the zero for a high bit", der: `30250220${S_HIGH}020101` },
  { name: "s missing the zero for a high bit", der: `30250201010220${S_HIGH}` },
];

for (const { name, der } of malformedCases) {
  Deno.test(`parseDerEcdsaSignature rejects ${name} with a SyntaxError`, () => {
    assert.throws(() => parseDerEcdsaSignature(hex.decode(der)), SyntaxError);
  });
}

const outOfRangeCases: { name: string; der: string }[] = [
  { name: "r = 0", der: "3006020100020101" },
  { name: "s = 0", der: "3006020101020100" },
  { name: "r = n", der: `3026022100${N_HEX}020101` },
  { name: "s = n", der: `3026020101022100${N_HEX}` },
  { name: "s = n + 1", der: `3026020101022100${N_HEX.slice(0, -2)}52` },
  { name: "r = 2^256 - 1", der: `3026022100${"ff".repeat(32)}020101` },
  { name: "r wider than 32 bytes", der: `3027022201${"00".repeat(33)}020101` },
];

for (const { name, der } of outOfRangeCases) {
  Deno.test(`parseDerEcdsaSignature rejects ${name} with a RangeError`, () => {
    assert.throws(() => parseDerEcdsaSignature(hex.decode(der)), RangeError);
  });
}

Deno.test("parseDerEcdsaSignature round-trips random signatures through encodeDerEcdsaSignature", () => {
  for (let i = 0; i < 200; i++) {
    const rs = crypto.getRandomValues(new Uint8Array(64));
    rs[0] &= 0x7f; // r below n, no sign padding
    // s sometimes with its high bit set (needs the padding zero), still below n.
    rs[32] = i % 2 === 0 ? 0x80 | (rs[32] & 0x3f) : rs[32] & 0x7f;
    if (i % 4 === 0) rs.fill(0, 0, 1 + (i % 31)); // short r
    rs[31] |= 1; // never zero
    rs[63] |= 1;
    assert.deepEqual(parseDerEcdsaSignature(encodeDerEcdsaSignature(rs)), rs);
  }
});

Deno.test("encodeDerEcdsaSignature rejects input that is not 64 bytes", () => {
  assert.throws(() => encodeDerEcdsaSignature(new Uint8Array(63)), RangeError);
  assert.throws(() => encodeDerEcdsaSignature(new Uint8Array(65)), RangeError);
});

// ---------------------------------------------------------------- public keys

Deno.test("decodeP256PublicKey round-trips compressed and uncompressed keys", () => {
  for (let i = 0; i < 8; i++) {
    const point = p256.Point.BASE.multiply(BigInt(i + 1) * 0x1234567n);
    const compressed = point.toBytes(true);
    const uncompressed = point.toBytes(false);
    assert.deepEqual(decodeP256PublicKey(compressed), { compressed, uncompressed });
    assert.deepEqual(decodeP256PublicKey(uncompressed), { compressed, uncompressed });
  }
});

Deno.test("decodeP256PublicKey rejects a point off the curve", () => {
  const uncompressed = p256.Point.BASE.toBytes(false);
  uncompressed[64] ^= 1;
  assert.throws(() => decodeP256PublicKey(uncompressed), RangeError);
});

Deno.test("decodeP256PublicKey rejects a compressed x with no point on the curve", () => {
  // x = 0... is not on P-256 for some small x; search for one deterministically.
  let rejected = 0;
  for (let x = 1; x < 16; x++) {
    const bytes = hex.decode("02" + scalar(x.toString(16)));
    try {
      decodeP256PublicKey(bytes);
    } catch (error) {
      assert.ok(error instanceof RangeError);
      rejected++;
    }
  }
  assert.ok(rejected > 0);
});

Deno.test("decodeP256PublicKey rejects coordinates not below p", () => {
  const bytes = hex.decode("02" + "ff".repeat(32));
  assert.throws(() => decodeP256PublicKey(bytes), RangeError);
});

Deno.test("decodeP256PublicKey rejects wrong lengths and prefixes", () => {
  const uncompressed = p256.Point.BASE.toBytes(false);
  const compressed = p256.Point.BASE.toBytes(true);
  const cases = [
    new Uint8Array(0),
    Uint8Array.of(0), // the point at infinity
    compressed.subarray(0, 32),
    uncompressed.subarray(0, 64),
    Uint8Array.of(...uncompressed, 0),
    Uint8Array.of(0x04, ...compressed.subarray(1)), // uncompressed prefix on a compressed body
    Uint8Array.of(0x02, ...uncompressed.subarray(1)), // compressed prefix on an uncompressed body
    Uint8Array.of(0x06, ...uncompressed.subarray(1)), // hybrid form (X9.62), not SEC1 strict
    Uint8Array.of(0x05, ...compressed.subarray(1)),
    new Uint8Array(65), // all zero
  ];
  for (const bytes of cases) {
    assert.throws(() => decodeP256PublicKey(bytes), RangeError, `length ${bytes.length}`);
  }
});

for (const backend of ["webcrypto", "noble"] as P256Backend[]) {
  Deno.test(`[${backend}] verifyP256 throws a RangeError for an invalid public key`, async () => {
    const bad = p256.Point.BASE.toBytes(false);
    bad[64] ^= 1;
    await assert.rejects(
      verifyP256(bad, new Uint8Array(1), hex.decode("3006020101020101"), { backend }),
      RangeError,
    );
  });

  Deno.test(`[${backend}] verifyP256 accepts high-S and low-S forms of one signature`, async () => {
    const { secretKey, publicKey } = p256.keygen();
    const message = new TextEncoder().encode("high and low");
    // noble signs with SHA-256 prehash; lowS: true gives the low form, which we then flip.
    const low = p256.sign(message, secretKey, { prehash: true, lowS: true, format: "compact" });
    const n = p256.Point.CURVE().n;
    const s = BigInt("0x" + hex.encode(low.subarray(32)));
    const high = Uint8Array.of(...low.subarray(0, 32), ...hex.decode(scalar((n - s).toString(16))));
    const verify = (m: Uint8Array, rs: Uint8Array) =>
      verifyP256(publicKey, m, encodeDerEcdsaSignature(rs), { backend });
    assert.equal(await verify(message, low), true);
    assert.equal(await verify(message, high), true);
    assert.equal(await verify(Uint8Array.of(1), high), false);
  });

  Deno.test(`[${backend}] verifyP256 returns false for a signature that is BER, not DER`, async () => {
    const { secretKey, publicKey } = p256.keygen();
    const message = new TextEncoder().encode("ber");
    const der = encodeDerEcdsaSignature(
      p256.sign(message, secretKey, { prehash: true, lowS: true, format: "compact" }),
    );
    assert.equal(await verifyP256(publicKey, message, der, { backend }), true);
    const ber = Uint8Array.of(0x30, 0x81, ...der.subarray(1));
    assert.equal(await verifyP256(publicKey, message, ber, { backend }), false);
    assert.equal(
      await verifyP256(publicKey, message, Uint8Array.of(...der, 0), { backend }),
      false,
    );
  });
}
