/**
 * The cache of decoded public keys (`src/domain/public_keys.ts`, one per
 * verify context): a key text is decoded, and its prime-order check made,
 * once; a multisig signer outside the prime-order subgroup is refused on
 * every decode, cached or not.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { decodePublicKey, publicKeyCache } from "../../src/domain/public_keys.ts";
import { decodeSignature } from "../../src/domain/signature.ts";
import { ServiceError } from "../../src/errors.ts";
import { torsionTwin } from "../support/keys.ts";
import { STATUS_OF } from "../../src/http/respond.ts";

/** A 1-of-N Multisig descriptor over `keys`; its signatures are never verified here. */
function multisig(keys: string[]) {
  const signature = base58.encode(new Uint8Array(64).fill(1));
  return {
    Multisig: {
      pub_key: { signers: Object.fromEntries(keys.map((k) => [k, 1])), threshold: 1 },
      signatures: keys.map((k) => ({ Ed25519: { pub_key: k, signature } })),
    },
  };
}

const outsideSubgroup = (e: unknown) =>
  e instanceof ServiceError && STATUS_OF[e.code] === 400 && e.code === "invalid_body" &&
  e.message.endsWith(": is not in the prime-order subgroup");

Deno.test("decodePublicKey returns the same decoded object for the same key text", () => {
  const keys = publicKeyCache();
  const text = base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
  const first = decodePublicKey(text, "k", "ed25519", keys);
  const second = decodePublicKey(text, "k", "any", keys);
  assert.ok(Object.is(first, second));
  assert.ok(Object.is(first.key, second.key));
  assert.equal(first.id, text);
});

Deno.test("the prime-order check of a Multisig signer runs once per key", () => {
  const keys = publicKeyCache();
  const secret = ed25519.utils.randomSecretKey();
  const text = base58.encode(ed25519.getPublicKey(secret));
  const body = multisig([text]);
  assert.equal(decodeSignature(body, "signature", { keys }).kind, "Multisig");
  // Give the cached key the bytes of A + T, which fail the check: a second decode
  // that ran the check again would refuse the signer. It must not.
  const cached = decodePublicKey(text, "k", "ed25519", keys);
  cached.key.bytes.set(torsionTwin(secret).publicKey);
  try {
    assert.equal(decodeSignature(body, "signature", { keys }).kind, "Multisig");
    assert.ok(Object.is(decodePublicKey(text, "k", "ed25519", keys), cached));
  } finally {
    cached.key.bytes.set(base58.decode(text));
  }
});

Deno.test("a cached key outside the prime-order subgroup is refused on every decode", () => {
  const keys = publicKeyCache();
  const secret = ed25519.utils.randomSecretKey();
  const a = base58.encode(ed25519.getPublicKey(secret));
  const twin = base58.encode(torsionTwin(secret).publicKey);
  const pair = multisig([a, twin]);
  assert.throws(() => decodeSignature(pair, "signature", { keys }), outsideSubgroup);
  const cached = decodePublicKey(twin, "k", "ed25519", keys);
  assert.throws(() => decodeSignature(pair, "signature", { keys }), outsideSubgroup);
  assert.throws(() => decodeSignature(multisig([twin]), "signature", { keys }), outsideSubgroup);
  assert.ok(Object.is(decodePublicKey(twin, "k", "ed25519", keys), cached));
  // As the key of a lone Ed25519 signature it decodes: the rule is the multisig's.
  assert.equal(cached.key.isPoint, true);
  assert.equal(cached.key.isSmallOrder, false);
  assert.equal(cached.key.isPrimeOrder, false);
});
