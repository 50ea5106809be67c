import assert from "node:assert/strict";
import fc from "fast-check";
import { hex } from "@scure/base";
import { p256 } from "@noble/curves/nist.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToNumberBE, numberToBytesBE } from "@noble/curves/utils.js";
import { encodeDerEcdsaSignature, parseDerEcdsaSignature } from "../../src/crypto/der.ts";
import {
  decodeP256PublicKey,
  type P256Backend,
  p256DefaultBackend,
  P256PublicKey,
  verifyP256,
} from "../../src/crypto/p256.ts";
import {
  type P256ProbeVerify,
  RFC6979_P256,
  verifiesLikeWebAuthn,
} from "../../src/crypto/_p256_webcrypto.ts";
import { needsVectors, readVectorJson } from "../support/vectors.ts";

const BACKENDS: readonly P256Backend[] = ["webcrypto", "noble"];
const N = p256.Point.CURVE().n;
const HALF_N = N >> 1n;
const utf8 = (s: string) => new TextEncoder().encode(s);

interface WycheproofFile {
  numberOfTests: number;
  testGroups: {
    publicKey: { uncompressed: string };
    tests: { tcId: number; comment: string; msg: string; sig: string; result: string }[];
  }[];
}

/** A verdict, or the class of the error a malformed input raised. */
type Outcome = boolean | "RangeError" | "TypeError";

async function outcome(
  publicKey: Uint8Array | P256PublicKey,
  message: Uint8Array,
  signature: Uint8Array,
  backend: P256Backend,
): Promise<Outcome> {
  try {
    return await verifyP256(publicKey, message, signature, { backend });
  } catch (error) {
    if (error instanceof RangeError) return "RangeError";
    if (error instanceof TypeError) return "TypeError";
    throw error;
  }
}

/** s of a strict DER signature is above n/2. */
function hasHighS(der: Uint8Array): boolean {
  return bytesToNumberBE(parseDerEcdsaSignature(der).subarray(32)) > HALF_N;
}

/** The same signature with s replaced by n − s: the other half, equally valid for ECDSA. */
function otherS(der: Uint8Array): Uint8Array {
  const rs = parseDerEcdsaSignature(der);
  rs.set(numberToBytesBE(N - bytesToNumberBE(rs.subarray(32)), 32), 32);
  return encodeDerEcdsaSignature(rs);
}

// ---------------------------------------------------------------- backend choice

Deno.test("the default P-256 backend is Web Crypto on this Deno", async () => {
  assert.equal(await p256DefaultBackend(), "webcrypto");
  // Cached: later calls give the same promise.
  assert.equal(p256DefaultBackend(), p256DefaultBackend());
});

Deno.test("the probe's signatures are RFC 6979's: noble's deterministic signing reproduces them", () => {
  const secret = hex.decode("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721");
  assert.equal(hex.encode(p256.getPublicKey(secret, false)), RFC6979_P256.publicKey);
  for (const message of ["sample", "test"] as const) {
    // prehash: SHA-256 as in §A.2.5; lowS false: RFC 6979 does not normalise s.
    const rs = p256.sign(utf8(message), secret, { prehash: true, lowS: false, format: "compact" });
    assert.equal(hex.encode(rs), RFC6979_P256[message]);
  }
  // One of each half, so a verifier that refuses high S fails the probe.
  assert.equal(bytesToNumberBE(hex.decode(RFC6979_P256.sample).subarray(32)) > HALF_N, true);
  assert.equal(bytesToNumberBE(hex.decode(RFC6979_P256.test).subarray(32)) > HALF_N, false);
});

Deno.test("the probe accepts a WebAuthn-grade verifier and refuses others", async () => {
  const nobleWith = (lowS: boolean): P256ProbeVerify => (key, message, rs) =>
    // format compact: the probe passes r ‖ s; prehash: the probe passes the message.
    Promise.resolve(p256.verify(rs, message, key, { format: "compact", lowS, prehash: true }));
  assert.equal(await verifiesLikeWebAuthn(nobleWith(false)), true);
  assert.equal(await verifiesLikeWebAuthn(nobleWith(true)), false, "refuses high S");
  assert.equal(await verifiesLikeWebAuthn(() => Promise.resolve(true)), false, "accepts anything");
  assert.equal(
    await verifiesLikeWebAuthn(() => Promise.reject(new DOMException("unsupported"))),
    false,
    "throws",
  );
});

Deno.test("verifyP256 throws a TypeError for an unknown backend or a message that is not bytes", async () => {
  const key = p256.Point.BASE.toBytes(true);
  const der = hex.decode("3006020101020101");
  await assert.rejects(
    verifyP256(key, new Uint8Array(1), der, { backend: "openssl" as P256Backend }),
    TypeError,
  );
  for (const backend of BACKENDS) {
    await assert.rejects(
      verifyP256(key, "m" as unknown as Uint8Array, der, { backend }),
      TypeError,
      backend,
    );
  }
});

// ---------------------------------------------------------------- Wycheproof, per backend

for (const backend of BACKENDS) {
  // Wycheproof's secp256r1/SHA-256 files mark high-S signatures valid (only its
  // secp256k1 "bitcoin" files require low S) and hold no "acceptable" cases, so
  // the service's policy, high S accepted, is exactly Wycheproof's verdict.
  for (const form of ["uncompressed", "compressed"] as const) {
    Deno.test({
      name: `[${backend}] gives every Wycheproof DER vector its verdict, ${form} keys`,
      ...needsVectors(),
      async fn() {
        const file = readVectorJson<WycheproofFile>("wycheproof/ecdsa_secp256r1_sha256_test.json");
        let count = 0;
        let valid = 0;
        let validHighS = 0;
        const wrong: string[] = [];
        for (const group of file.testGroups) {
          const key = decodeP256PublicKey(hex.decode(group.publicKey.uncompressed))[form];
          for (const test of group.tests) {
            count++;
            assert.notEqual(test.result, "acceptable", `tcId ${test.tcId}`);
            const sig = hex.decode(test.sig);
            const got = await outcome(key, hex.decode(test.msg), sig, backend);
            if (got === true) {
              valid++;
              if (hasHighS(sig)) validHighS++;
            }
            if (got !== (test.result === "valid")) {
              wrong.push(
                `tcId ${test.tcId} (${test.comment}): expected ${test.result}, got ${got}`,
              );
            }
          }
        }
        assert.deepEqual(wrong, []);
        assert.equal(count, file.numberOfTests);
        assert.equal(count, 484);
        assert.equal(valid, 174);
        assert.ok(validHighS > 10, `high-S signatures among the valid ones (${validHighS})`);
      },
    });
  }

  Deno.test({
    name: `[${backend}] gives every Wycheproof P1363 vector its verdict once DER-encoded`,
    ...needsVectors(),
    async fn() {
      const file = readVectorJson<WycheproofFile>(
        "wycheproof/ecdsa_secp256r1_sha256_p1363_test.json",
      );
      let count = 0;
      let valid = 0;
      let wrongSize = 0;
      for (const group of file.testGroups) {
        const key = new P256PublicKey(hex.decode(group.publicKey.uncompressed));
        for (const test of group.tests) {
          count++;
          const rs = hex.decode(test.sig);
          if (rs.length !== 64) {
            // Invalid only as a P1363 encoding: such a value has no DER form (see p256_test.ts).
            assert.equal(test.result, "invalid", `tcId ${test.tcId}`);
            wrongSize++;
            continue;
          }
          const der = encodeDerEcdsaSignature(rs);
          const got = await outcome(key, hex.decode(test.msg), der, backend);
          assert.equal(got, test.result === "valid", `tcId ${test.tcId} (${test.comment})`);
          if (got) valid++;
        }
      }
      assert.equal(count, file.numberOfTests);
      assert.equal(count, 262);
      assert.equal(valid, 173);
      assert.ok(wrongSize > 0);
    },
  });

  Deno.test(`[${backend}] verifies signatures made by Web Crypto, and no bit-flipped one`, async () => {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ]) as CryptoKeyPair;
    const uncompressed = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const compressed = decodeP256PublicKey(uncompressed).compressed;
    const message = utf8("authenticator data and client data hash");
    const rs = new Uint8Array(
      await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, message),
    );
    const der = encodeDerEcdsaSignature(rs);
    for (const key of [uncompressed, compressed]) {
      assert.equal(await verifyP256(key, message, der, { backend }), true);
      assert.equal(await verifyP256(key, message, otherS(der), { backend }), true, "other S");
    }
    const flips: [string, Uint8Array, (b: Uint8Array) => Promise<Outcome>][] = [
      ["message", message, (m) => outcome(compressed, m, der, backend)],
      ["signature", der, (s) => outcome(compressed, message, s, backend)],
      ["key", compressed, (k) => outcome(k, message, der, backend)],
    ];
    for (const [name, bytes, verify] of flips) {
      for (let bit = 0; bit < bytes.length * 8; bit++) {
        const flipped = bytes.slice();
        flipped[bit >> 3] ^= 1 << (bit & 7);
        const got = await verify(flipped);
        // A flipped key is either another point (false) or none (RangeError).
        assert.ok(got === false || (name === "key" && got === "RangeError"), `${name} bit ${bit}`);
      }
    }
  });
}

// ---------------------------------------------------------------- both backends agree

type Case = { key: Uint8Array; message: Uint8Array; der: Uint8Array };

/** One DER rewrite: each keeps the signature's meaning or breaks only its encoding or range. */
const derMutations: ((der: Uint8Array) => Uint8Array)[] = [
  (der) => Uint8Array.of(0x30, 0x81, ...der.subarray(1)), // long-form SEQUENCE length
  (der) => Uint8Array.of(...der, 0), // a trailing byte
  (der) => der.subarray(0, der.length - 1), // truncated
  (der) => {
    // r with a superfluous leading zero
    const rLength = der[3];
    return Uint8Array.of(0x30, der[1] + 1, 0x02, rLength + 1, 0, ...der.subarray(4));
  },
  (der) => {
    const rs = parseDerEcdsaSignature(der); // r and s swapped
    return encodeDerEcdsaSignature(Uint8Array.of(...rs.subarray(32), ...rs.subarray(0, 32)));
  },
  (der) => {
    const rs = parseDerEcdsaSignature(der); // s = 0
    rs.fill(0, 32);
    return encodeDerEcdsaSignature(rs);
  },
  (der) => {
    const rs = parseDerEcdsaSignature(der); // r + n, when it fits 32 bytes, else r = n
    const r = bytesToNumberBE(rs.subarray(0, 32)) + N;
    rs.set(numberToBytesBE(r < 1n << 256n ? r : N, 32), 0);
    return encodeDerEcdsaSignature(rs);
  },
  otherS, // the other half of s: still valid
];

Deno.test("both P-256 backends give the same verdict on random and mutated signatures", async () => {
  // Messages as the passkey verifier builds them (authenticator data ‖ SHA-256(client data)), or any.
  const assertionMessage = fc.tuple(fc.uint8Array({ minLength: 37, maxLength: 37 }), fc.string())
    .map(([authData, clientData]) => Uint8Array.of(...authData, ...sha256(utf8(clientData))));
  const message = fc.oneof(assertionMessage, fc.uint8Array({ maxLength: 64 }));
  const signed = fc.record({
    secret: fc.bigInt({ min: 1n, max: N - 1n }),
    message,
    compressed: fc.boolean(),
    highS: fc.boolean(),
  }).map(({ secret, message, compressed, highS }): Case => {
    const secretKey = numberToBytesBE(secret, 32);
    // lowS true gives the low half; the high half is its twin.
    const low = p256.sign(message, secretKey, { prehash: true, lowS: true, format: "compact" });
    const der = encodeDerEcdsaSignature(low);
    const key = p256.getPublicKey(secretKey, compressed);
    return { key, message, der: highS ? otherS(der) : der };
  });
  const bit = fc.nat();
  const mutation = fc.oneof(
    { arbitrary: fc.constant((x: Case) => x), weight: 6 },
    bit.map((b) => (x: Case) => {
      const message = x.message.length === 0 ? Uint8Array.of(0) : x.message.slice();
      message[(b >> 3) % message.length] ^= 1 << (b & 7);
      return { ...x, message };
    }),
    bit.map((b) => (x: Case) => {
      const der = x.der.slice();
      der[(b >> 3) % der.length] ^= 1 << (b & 7);
      return { ...x, der };
    }),
    bit.map((b) => (x: Case) => {
      const key = x.key.slice();
      key[(b >> 3) % key.length] ^= 1 << (b & 7);
      return { ...x, key };
    }),
    fc.nat(derMutations.length - 1).map((i) => (x: Case) => ({
      ...x,
      der: derMutations[i](x.der),
    })),
    fc.constant((x: Case) => {
      // The same point in the other SEC1 form: still valid.
      const point = p256.Point.fromBytes(x.key);
      return { ...x, key: point.toBytes(x.key.length === 65) };
    }),
  );
  const random = fc.record({
    key: fc.oneof(
      fc.uint8Array({ minLength: 33, maxLength: 33 }).map((k) => (k[0] = 2 | (k[0] & 1), k)),
      fc.uint8Array({ minLength: 65, maxLength: 65 }).map((k) => (k[0] = 4, k)),
      fc.bigInt({ min: 1n, max: N - 1n }).map((d) => p256.Point.BASE.multiply(d).toBytes(true)),
    ),
    message,
    der: fc.oneof(
      fc.uint8Array({ minLength: 64, maxLength: 64 }).map(encodeDerEcdsaSignature),
      fc.uint8Array({ maxLength: 80 }),
    ),
  });
  const input = fc.oneof(
    { arbitrary: fc.tuple(signed, mutation).map(([x, f]) => f(x)), weight: 6 },
    { arbitrary: random, weight: 1 },
  );
  const verdicts: Record<string, number> = {};
  await fc.assert(
    fc.asyncProperty(input, async ({ key, message, der }) => {
      const web = await outcome(key, message, der, "webcrypto");
      const noble = await outcome(key, message, der, "noble");
      verdicts[`${web}`] = (verdicts[`${web}`] ?? 0) + 1;
      assert.equal(
        web,
        noble,
        `key=${hex.encode(key)} m=${hex.encode(message)} sig=${hex.encode(der)}`,
      );
    }),
    { numRuns: 2000 },
  );
  const { true: accepted = 0, false: rejected = 0, RangeError: badKeys = 0 } = verdicts;
  assert.ok(accepted > 500 && rejected > 300 && badKeys > 50, JSON.stringify(verdicts));
});
