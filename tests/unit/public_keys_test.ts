/**
 * The cache of decoded public keys (`src/domain/public_keys.ts`, one per
 * verify context): a key text is decoded, and its prime-order check made,
 * once; a Multisig's decoding leaves the check to verification (it comes
 * after the signatures), and a signer outside the prime-order subgroup is
 * refused by it every time, cached or not; a governed document's signers are
 * checked as they are decoded.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import {
  checkPrimeOrder,
  decodePublicKey,
  decodeSigners,
  publicKeyCache,
} from "../../src/domain/public_keys.ts";
import { type DecodedMultisig, decodeSignature } from "../../src/domain/signature.ts";
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

/** Runs the subgroup check of every signer of a decoded Multisig, as verification does. */
function checkSigners(body: unknown, keys: ReturnType<typeof publicKeyCache>) {
  const decoded = decodeSignature(body, "signature", { keys }) as DecodedMultisig;
  for (const [id, key] of decoded.keys) {
    checkPrimeOrder(key, `signers.${decoded.signers.get(id)!.keyText}`, "invalid_body");
  }
  return decoded;
}

Deno.test("the prime-order check of a Multisig signer runs once per key", () => {
  const keys = publicKeyCache();
  const secret = ed25519.utils.randomSecretKey();
  const text = base58.encode(ed25519.getPublicKey(secret));
  const body = multisig([text]);
  assert.equal(checkSigners(body, keys).kind, "Multisig");
  // Give the cached key the bytes of A + T, which fail the check: a second check
  // that ran the multiplication again would refuse the signer. It must not.
  const cached = decodePublicKey(text, "k", "ed25519", keys);
  cached.key.bytes.set(torsionTwin(secret).publicKey);
  try {
    assert.equal(checkSigners(body, keys).kind, "Multisig");
    assert.ok(Object.is(decodePublicKey(text, "k", "ed25519", keys), cached));
  } finally {
    cached.key.bytes.set(base58.decode(text));
  }
});

Deno.test("a Multisig's decoding leaves the subgroup check to verification, which refuses a twin every time", () => {
  const keys = publicKeyCache();
  const secret = ed25519.utils.randomSecretKey();
  const a = base58.encode(ed25519.getPublicKey(secret));
  const twin = base58.encode(torsionTwin(secret).publicKey);
  const pair = multisig([a, twin]);
  const decoded = decodeSignature(pair, "signature", { keys }) as DecodedMultisig;
  assert.equal(decoded.keys.size, 2);
  assert.throws(() => checkSigners(pair, keys), outsideSubgroup);
  const cached = decodePublicKey(twin, "k", "ed25519", keys);
  assert.throws(() => checkSigners(pair, keys), outsideSubgroup);
  assert.throws(() => checkSigners(multisig([twin]), keys), outsideSubgroup);
  assert.ok(Object.is(decodePublicKey(twin, "k", "ed25519", keys), cached));
  // As the key of a lone Ed25519 signature it decodes: the rule is the multisig's.
  assert.equal(cached.key.isPoint, true);
  assert.equal(cached.key.isSmallOrder, false);
  assert.equal(cached.key.isPrimeOrder, false);
  // A governed document's signers have no signature to wait for: checked as decoded.
  assert.throws(
    () => decodeSigners({ [a]: 1, [twin]: 1 }, { path: "authorization.signers", cache: keys }),
    outsideSubgroup,
  );
});
