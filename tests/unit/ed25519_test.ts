import assert from "node:assert/strict";
import fc from "fast-check";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToNumberLE, hexToBytes, numberToBytesLE } from "@noble/curves/utils.js";
import {
  type Ed25519Backend,
  ed25519DefaultBackend,
  verifyEd25519,
} from "../../src/crypto/ed25519.ts";
import { cofactoredOnlySignature, ed25519KeyObject } from "../../src/crypto/_ed25519_native.ts";
import { verify as nodeVerify } from "node:crypto";
import { needsVectors, readVectorJson } from "../support/vectors.ts";

const BACKENDS: readonly Ed25519Backend[] = ["node", "webcrypto", "noble"];
const { Point } = ed25519;
const L = Point.CURVE().n;
const utf8 = (s: string) => new TextEncoder().encode(s);
const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** Outcome of a verification: a verdict or a TypeError for malformed input. */
async function outcome(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  backend: Ed25519Backend,
): Promise<boolean | "TypeError"> {
  try {
    return await verifyEd25519(publicKey, message, signature, { backend });
  } catch (error) {
    if (error instanceof TypeError) return "TypeError";
    throw error;
  }
}

/** A signature over `message` with the secret scalar `a` and nonce `r`, with torsion added to A and R. */
function signWithTorsion(
  a: bigint,
  r: bigint,
  message: Uint8Array,
  tA: number,
  tR: number,
): { publicKey: Uint8Array; signature: Uint8Array; k: bigint } {
  // zip215 false: the torsion listing consists of strict encodings.
  const torsion = (i: number) => Point.fromHex(ED25519_TORSION_SUBGROUP[i], false);
  const publicKey = Point.BASE.multiply(a).add(torsion(tA)).toBytes();
  const rBytes = Point.BASE.multiply(r).add(torsion(tR)).toBytes();
  const k = bytesToNumberLE(sha512(new Uint8Array([...rBytes, ...publicKey, ...message]))) % L;
  const signature = new Uint8Array(64);
  signature.set(rBytes);
  signature.set(numberToBytesLE((r + k * a) % L, 32), 32);
  return { publicKey, signature, k };
}

interface WycheproofFile {
  numberOfTests: number;
  testGroups: {
    publicKey: { pk: string };
    tests: { tcId: number; comment: string; msg: string; sig: string; result: string }[];
  }[];
}

interface SpeccheckCase {
  message: string;
  pub_key: string;
  signature: string;
}

const identityKey = new Uint8Array(32);
identityKey[0] = 1;
const identityForgery = new Uint8Array(64);
identityForgery[0] = 1; // R = identity, S = 0

Deno.test("the default backend is node:crypto on this Deno", async () => {
  assert.equal(await ed25519DefaultBackend(), "node");
  // Cached: later calls give the same promise.
  assert.equal(ed25519DefaultBackend(), ed25519DefaultBackend());
});

Deno.test("the cofactored-only probe signature passes noble's cofactored check only", async () => {
  const { publicKey, message, signature } = cofactoredOnlySignature();
  // zip215 false: strict encodings; noble's verify is cofactored, which is what this shows.
  assert.equal(ed25519.verify(signature, message, publicKey, { zip215: false }), true);
  const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, [
    "verify",
  ]);
  assert.equal(await crypto.subtle.verify("Ed25519", key, signature, message), false);
  assert.equal(nodeVerify(null, message, ed25519KeyObject(publicKey), signature), false);
});

Deno.test("node:crypto alone accepts the identity-key forgery (the strict checks are needed)", () => {
  assert.equal(nodeVerify(null, utf8("m"), ed25519KeyObject(identityKey), identityForgery), true);
});

for (const backend of BACKENDS) {
  Deno.test(
    `[${backend}] gives Wycheproof's verdict on every Ed25519 vector`,
    needsVectors(),
    async () => {
      const file = readVectorJson<WycheproofFile>("wycheproof/ed25519_test.json");
      let count = 0;
      for (const group of file.testGroups) {
        const publicKey = hexToBytes(group.publicKey.pk);
        for (const t of group.tests) {
          count++;
          const got = await outcome(publicKey, hexToBytes(t.msg), hexToBytes(t.sig), backend);
          const label = `tcId ${t.tcId} (${t.comment}): ${t.result}, got ${got}`;
          if (t.result === "valid") assert.equal(got, true, label);
          else {
            assert.equal(t.result, "invalid", label);
            assert.ok(got === false || got === "TypeError", label);
          }
        }
      }
      assert.equal(count, file.numberOfTests);
      assert.equal(count, 151);
    },
  );

  Deno.test(
    `[${backend}] verifies only speccheck case 3 (libsodium's verdicts)`,
    needsVectors(),
    async () => {
      const cases = readVectorJson<SpeccheckCase[]>("speccheck/cases.json");
      assert.equal(cases.length, 12);
      const verdicts = [];
      for (const c of cases) {
        verdicts.push(
          await verifyEd25519(
            hexToBytes(c.pub_key),
            hexToBytes(c.message),
            hexToBytes(c.signature),
            { backend },
          ),
        );
      }
      assert.deepEqual(verdicts, verdicts.map((_, i) => i === 3));
    },
  );

  Deno.test(`[${backend}] rejects the identity-key forgery for any message`, async () => {
    for (const message of ["", "hello", '{"id":"x"}', "\u0000".repeat(100)]) {
      assert.equal(
        await verifyEd25519(identityKey, utf8(message), identityForgery, { backend }),
        false,
      );
    }
  });

  Deno.test(`[${backend}] rejects S = 0 with any small-order key and R`, async () => {
    for (const a of ED25519_TORSION_SUBGROUP) {
      for (const r of ED25519_TORSION_SUBGROUP) {
        const signature = new Uint8Array(64);
        signature.set(hexToBytes(r));
        assert.equal(
          await verifyEd25519(hexToBytes(a), utf8("m"), signature, { backend }),
          false,
          `A=${a} R=${r}`,
        );
      }
    }
  });

  Deno.test(`[${backend}] rejects a small-order R even when the equation holds`, async () => {
    // A = [a]B, R = identity, S = k·a mod L: [S]B − [k]A = O = R.
    const a = 987654321n;
    const publicKey = Point.BASE.multiply(a).toBytes();
    for (const text of ["one", "two", "three"]) {
      const message = utf8(text);
      const rBytes = identityKey;
      const k = bytesToNumberLE(sha512(new Uint8Array([...rBytes, ...publicKey, ...message]))) % L;
      const signature = new Uint8Array(64);
      signature.set(rBytes);
      signature.set(numberToBytesLE((k * a) % L, 32), 32);
      // Unsafe multiplication accepts a zero scalar; nothing here is secret.
      const rCheck = Point.BASE.multiplyUnsafe(bytesToNumberLE(signature.subarray(32)))
        .subtract(Point.fromBytes(publicKey, false).multiplyUnsafe(k));
      assert.ok(rCheck.is0(), "the cofactorless equation holds");
      assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), false);
    }
  });

  Deno.test(`[${backend}] rejects a small-order key even when the equation holds`, async () => {
    // A = identity, R = [r]B, S = r: [S]B − [k]A = R for every message.
    for (const r of [5n, 77n, 123456789n]) {
      const signature = new Uint8Array(64);
      signature.set(Point.BASE.multiply(r).toBytes());
      signature.set(numberToBytesLE(r, 32), 32);
      assert.equal(await verifyEd25519(identityKey, utf8("m"), signature, { backend }), false);
    }
  });

  Deno.test(`[${backend}] rejects a signature valid only under the cofactored equation`, async () => {
    const { publicKey, message, signature } = cofactoredOnlySignature();
    assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), false);
  });

  Deno.test(`[${backend}] accepts mixed-order keys exactly when the cofactorless equation holds`, async () => {
    // A = [a]B + T with T of order 2: [k]T vanishes for even k only.
    const message = utf8("mixed order");
    const a = 123456789n;
    const results = new Set<boolean>();
    for (let r = 1n; r <= 12n; r++) {
      const { publicKey, signature, k } = signWithTorsion(a, r * 1000003n, message, 4, 0);
      const expected = k % 2n === 0n;
      results.add(expected);
      assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), expected);
    }
    assert.equal(results.size, 2, "both verdicts exercised");
  });

  Deno.test(`[${backend}] rejects a non-canonical S (S + L)`, async () => {
    const { secretKey, publicKey } = ed25519.keygen();
    const message = utf8("malleable?");
    const signature = ed25519.sign(message, secretKey);
    assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), true);
    const s = bytesToNumberLE(signature.subarray(32)) + L;
    const mauled = signature.slice();
    mauled.set(numberToBytesLE(s, 32), 32);
    assert.equal(await verifyEd25519(publicKey, message, mauled, { backend }), false);
  });

  Deno.test(`[${backend}] throws TypeError for wrong lengths`, async () => {
    const key = new Uint8Array(32);
    const sig = new Uint8Array(64);
    const m = new Uint8Array(1);
    for (
      const [k, s] of [[key.subarray(1), sig], [new Uint8Array(33), sig], [key, sig.subarray(1)], [
        key,
        new Uint8Array(65),
      ]]
    ) {
      await assert.rejects(verifyEd25519(k, m, s, { backend }), TypeError);
    }
    await assert.rejects(
      verifyEd25519(key, "m" as unknown as Uint8Array, sig, { backend }),
      TypeError,
    );
  });

  Deno.test(`[${backend}] a fresh key pair verifies and any single flipped bit fails`, async () => {
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ]) as CryptoKeyPair;
    const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const message = utf8("intent 42");
    const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", pair.privateKey, message));
    assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), true);
    const flips: [string, Uint8Array, (b: Uint8Array) => Promise<boolean>][] = [
      ["message", message, (m) => verifyEd25519(publicKey, m, signature, { backend })],
      ["signature", signature, (s) => verifyEd25519(publicKey, message, s, { backend })],
      ["key", publicKey, (k) => verifyEd25519(k, message, signature, { backend })],
    ];
    for (const [name, bytes, verify] of flips) {
      for (let bit = 0; bit < bytes.length * 8; bit++) {
        const flipped = bytes.slice();
        flipped[bit >> 3] ^= 1 << (bit & 7);
        assert.equal(await verify(flipped), false, `${name} bit ${bit}`);
      }
    }
    // The original still verifies after hundreds of other keys went through the caches.
    assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), true);
  });

  Deno.test(`[${backend}] a repeated signer still verifies after its key was evicted`, async () => {
    const { secretKey, publicKey } = ed25519.keygen();
    const message = utf8("again");
    const signature = ed25519.sign(message, secretKey);
    assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), true);
    for (let i = 0; i < 1100; i++) {
      const other = Point.BASE.multiply(BigInt(i + 2)).toBytes();
      assert.equal(await verifyEd25519(other, message, signature, { backend }), false);
    }
    assert.equal(await verifyEd25519(publicKey, message, signature, { backend }), true);
  });
}

type Input = { publicKey: Uint8Array; message: Uint8Array; signature: Uint8Array };

Deno.test("all backends agree on random and mutated inputs", async () => {
  const message = fc.uint8Array({ maxLength: 48 });
  const scalar = fc.bigInt({ min: 1n, max: L - 1n });
  // Index 0 of noble's torsion listing is the identity: mostly no torsion, sometimes any.
  const torsion = fc.oneof(
    { arbitrary: fc.constant(0), weight: 3 },
    { arbitrary: fc.integer({ min: 0, max: 7 }), weight: 1 },
  );
  // Signatures with optional torsion on A and R: some verify, some do not.
  const signed = fc.tuple(scalar, scalar, message, torsion, torsion).map(([a, r, m, tA, tR]) => {
    const { publicKey, signature } = signWithTorsion(a, r, m, tA, tR);
    return { publicKey, message: m, signature };
  });
  const mutation = fc.oneof(
    { arbitrary: fc.constant((x: Input) => x), weight: 6 },
    fc.tuple(fc.nat(63), fc.integer({ min: 1, max: 255 })).map(([i, v]) => (x: Input) => {
      const signature = x.signature.slice();
      signature[i] ^= v;
      return { ...x, signature };
    }),
    fc.tuple(fc.nat(31), fc.integer({ min: 1, max: 255 })).map(([i, v]) => (x: Input) => {
      const publicKey = x.publicKey.slice();
      publicKey[i] ^= v;
      return { ...x, publicKey };
    }),
    fc.constant((x: Input) => ({ ...x, message: new Uint8Array([...x.message, 0]) })),
    fc.nat(7).map((i) => (x: Input) => {
      const signature = x.signature.slice();
      signature.set(hexToBytes(ED25519_TORSION_SUBGROUP[i]));
      return { ...x, signature };
    }),
    fc.nat(7).map((i) => (x: Input) => ({
      ...x,
      publicKey: hexToBytes(ED25519_TORSION_SUBGROUP[i]),
    })),
    fc.nat(3).map((n) => (x: Input) => {
      const signature = x.signature.slice();
      const s = bytesToNumberLE(signature.subarray(32)) + BigInt(n + 1) * L;
      signature.set(numberToBytesLE(s % (1n << 256n), 32), 32);
      return { ...x, signature };
    }),
  );
  const random = fc.record({
    publicKey: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    message,
    signature: fc.uint8Array({ minLength: 64, maxLength: 64 }),
  });
  const input = fc.oneof(
    { arbitrary: fc.tuple(signed, mutation).map(([x, f]) => f(x)), weight: 6 },
    { arbitrary: random, weight: 1 },
  );
  assert.ok(Point.fromHex(ED25519_TORSION_SUBGROUP[0], false).is0(), "index 0 is the identity");
  const verdicts = { true: 0, false: 0 };
  await fc.assert(
    fc.asyncProperty(input, async ({ publicKey, message, signature }) => {
      const web = await verifyEd25519(publicKey, message, signature, { backend: "webcrypto" });
      const noble = await verifyEd25519(publicKey, message, signature, { backend: "noble" });
      const native = await verifyEd25519(publicKey, message, signature, { backend: "node" });
      verdicts[`${web}`]++;
      const where = `A=${hex(publicKey)} M=${hex(message)} sig=${hex(signature)}`;
      assert.equal(web, noble, where);
      assert.equal(native, noble, where);
    }),
    { numRuns: 3000 },
  );
  assert.ok(verdicts.true > 100 && verdicts.false > 100, JSON.stringify(verdicts));
});
