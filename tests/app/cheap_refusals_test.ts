/**
 * The cheap refusals come first (docs/interface.md §4): shape and encodings,
 * then the address's further tokens, then the template or policy, then the
 * signatures, a Multisig's in order and stopping at the first that does not
 * verify, every passkey's cheap checks before any ECDSA, and each Ed25519
 * signer's subgroup check after its signature verified. Each kind is run with
 * verification on the serving thread and on a worker (`VERIFY_WORKERS=1`),
 * whose hop back to the serving thread keeps the same order; approvals and
 * rejections follow it too.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  ed25519Signature,
  generateEd25519Key,
  type Intent,
  multisigSignature,
  type Payload,
  type Signature,
  signedBytes,
  signVariantA,
  variantABody,
  variantBBody,
} from "../../client/mod.ts";
import { expectError, keyText, newIntent, newPayload, passkeySig } from "../support/fixtures.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";
import { torsionTwin } from "../support/keys.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  ed25519Signer,
  newSigned,
  passkeySigner,
  postApproval,
  postRejection,
} from "../support/governed.ts";

const FORGED = base58.encode(new Uint8Array(64).fill(7));

/** An Ed25519 signature over `value` by `key` with its signature replaced by garbage. */
function forged(value: Payload | Intent, key = generateEd25519Key()): Signature {
  const good = ed25519Signature(value, key);
  return { Ed25519: { pub_key: good.Ed25519.pub_key, signature: FORGED } };
}

/** A Multisig of `keys` (each weight 1) with the given entries. */
function multisig(keys: string[], entries: Signature[], threshold = entries.length || 1) {
  return multisigSignature({
    signers: Object.fromEntries(keys.map((k) => [k, 1])),
    threshold,
    signatures: entries as never,
  });
}

/** A torsion twin's key text and its valid signature over `value`. */
function twinSignature(value: Payload | Intent): { key: string; signature: Signature } {
  const twin = torsionTwin(generateEd25519Key().secretKey);
  const key = base58.encode(twin.publicKey);
  const signature = base58.encode(twin.sign(signedBytes(value)));
  return { key, signature: { Ed25519: { pub_key: key, signature } } };
}

for (const workers of ["0", "1"]) {
  const env = { VERIFY_WORKERS: workers };
  const mode = `(VERIFY_WORKERS=${workers})`;

  Deno.test(`a bad signature under a missing template or policy is template_not_found ${mode}`, async () => {
    await withApp({ env }, async (h) => {
      const payload = newPayload("NoSuchTemplate");
      await expectError(
        await h.submit(variantABody(payload, forged(payload))),
        400,
        "template_not_found",
      );
      const intent = newIntent("NoSuchPolicy");
      const keys = Array.from({ length: 16 }, generateEd25519Key);
      const body = variantBBody(
        intent,
        multisig(keys.map(keyText), keys.map((k) => forged(intent, k))),
      );
      await expectError(await h.submit(body), 400, "policy_not_found");
      // A Multisig below its own threshold is a signature refusal too: after the document.
      const short = variantBBody(
        intent,
        multisig(keys.map(keyText), [ed25519Signature(intent, keys[0])], 2),
      );
      await expectError(await h.submit(short), 400, "policy_not_found");
      // The document found, the same bodies are refused for their signatures.
      const template = await h.newTemplate();
      const there = newPayload(template);
      await expectError(
        await h.submit(variantABody(there, forged(there))),
        400,
        "invalid_signature",
      );
    });
  });

  Deno.test(`a Multisig stops at its first bad signature; each signer's subgroup check follows its signature ${mode}`, async () => {
    await withApp({ env }, async (h) => {
      const policy = await h.newPolicy();
      const intent = newIntent(policy);
      const [a, b] = [generateEd25519Key(), generateEd25519Key()];
      const twin = twinSignature(intent);
      // A forged first entry: refused for it, and the twin after it is never looked at.
      const first = multisig([keyText(a), twin.key], [forged(intent, a), twin.signature]);
      await expectError(await h.submit(variantBBody(intent, first)), 400, "invalid_signature", {
        mentions: "signatures[0].Ed25519: signature does not verify",
      });
      // The twin's signature verifies, so its subgroup check comes next, before the forged
      // entry after it is verified.
      const second = multisig([twin.key, keyText(a)], [twin.signature, forged(intent, a)]);
      await expectError(await h.submit(variantBBody(intent, second)), 400, "invalid_body", {
        mentions: ["pub_key.signers", "is not in the prime-order subgroup"],
      });
      // Once both verify, the signer that did not sign is checked: the twin is refused.
      const unsigned = multisig(
        [keyText(a), keyText(b), twin.key],
        [ed25519Signature(intent, a), ed25519Signature(intent, b)],
        1,
      );
      await expectError(await h.submit(variantBBody(intent, unsigned)), 400, "invalid_body", {
        mentions: "is not in the prime-order subgroup",
      });
      // Bad encodings come before everything: a bad key text is invalid_body at once.
      const badKey = multisig([keyText(a), "0OIl"], [forged(intent, a)]);
      await expectError(await h.submit(variantBBody(intent, badKey)), 400, "invalid_body");
    });
  });

  Deno.test(`every passkey's cheap checks come before any ECDSA ${mode}`, async () => {
    await withApp({ env }, async (h) => {
      const template = await h.newTemplate();
      const payload = newPayload(template);
      const [p, q, r] = await Promise.all([1, 2, 3].map(() => SoftwarePasskey.create()));
      const good = await passkeySig(p, payload);
      // Its ECDSA does not verify (signed by another key), its cheap checks pass.
      const wrongKey = structuredClone(good);
      wrongKey.Passkey.pub_key = (await passkeySig(q, payload)).Passkey.pub_key;
      const badOrigin = await passkeySig(r, payload, { origin: "https://elsewhere.example" });
      const body = variantABody(
        payload,
        multisig([wrongKey.Passkey.pub_key, badOrigin.Passkey.pub_key], [wrongKey, badOrigin]),
      );
      // The second entry's origin is refused: the first entry's ECDSA was never reached.
      await expectError(await h.submit(body), 400, "invalid_signature", {
        mentions: "signatures[1].Passkey: client data origin is not accepted",
      });
      // A lone passkey: the cheap refusal wins over its bad ECDSA as well.
      const lone = structuredClone(badOrigin);
      lone.Passkey.pub_key = good.Passkey.pub_key;
      await expectError(await h.submit(variantABody(payload, lone)), 400, "invalid_signature", {
        mentions: "client data origin is not accepted",
      });
      // With its cheap checks passed, the ECDSA answers.
      await expectError(
        await h.submit(variantABody(payload, multisig([wrongKey.Passkey.pub_key], [wrongKey]))),
        400,
        "invalid_signature",
        { mentions: "signatures[0].Passkey: signature does not verify" },
      );
      assert.equal((await h.submit(variantABody(payload, good))).status, 201);
    });
  });

  Deno.test(`the further tokens come after the encodings and before the document ${mode}`, async () => {
    // 5 tokens a second, a bucket of 10.
    await withApp({ env: { ...env, RATE_LIMIT_PER_ADDRESS: "5" } }, async (h: AppHarness) => {
      const intent = newIntent("NoSuchPolicy");
      const keys = Array.from({ length: 8 }, generateEd25519Key);
      const named = keys.map(keyText);
      // Eight keys cost eight tokens: charged, then the missing policy is found.
      const heavy = variantBBody(intent, multisig(named, [forged(intent, keys[0])]));
      const missing = await h.submit(heavy);
      assert.match(missing.headers.get("ratelimit") ?? "", /^"address";r=[23];t=2$/);
      await expectError(missing, 400, "policy_not_found");
      // Bad encodings: 400, though the bucket lacks the seven further tokens.
      const badKey = multisig([...named.slice(0, 7), "0OIl"], [forged(intent, keys[0])]);
      await expectError(await h.submit(variantBBody(intent, badKey)), 400, "invalid_body");
      // Good encodings: 429 before the policy is looked for; the one token of admission spent.
      const refused = await h.submit(heavy);
      assert.match(refused.headers.get("ratelimit") ?? "", /^"address";r=[01];t=2$/);
      await expectError(refused, 429, "rate_limited");
    });
  });
}

Deno.test("approvals and rejections: shape, then the intent, then its state, then the signature, cheap checks first", async () => {
  await withApp({}, async (h) => {
    const author = ed25519Signer();
    const approver = await passkeySigner();
    const passkey = approver.passkey;
    const policy = await addGoverned(h, "policy", authorizationOf([author, approver], 2));
    const signed = newSigned("policy", policy);
    const submitted = await h.submit(variantBBody(signed as Intent, await author.sign(signed)));
    assert.equal(submitted.status, 202);
    const id = (signed as Intent).id;
    const bad = { signature: forged(signed) };
    // No such intent: 404 before the signature is looked at.
    await expectError(await postApproval(h, "no-such-intent", bad), 404, "not_found");
    await expectError(await postRejection(h, "no-such-intent", bad), 404, "not_found");
    // A passkey approval from another origin whose ECDSA is bad too: the origin is refused.
    const other = await passkeySig(passkey, signed, { origin: "https://elsewhere.example" });
    other.Passkey.signature = (await passkeySig(passkey, newPayload("y"))).Passkey.signature;
    await expectError(
      await postApproval(h, id, { signature: other }),
      400,
      "invalid_signature",
      { mentions: "client data origin is not accepted" },
    );
  });
});

Deno.test("a valid Multisig of sixteen is accepted, on a worker as inline", async () => {
  for (const workers of ["0", "1"]) {
    await withApp({ env: { VERIFY_WORKERS: workers } }, async (h) => {
      const template = await h.newTemplate();
      for (let round = 0; round < 3; round++) {
        // The first round hops back to the serving thread; later ones find the template known.
        const payload = newPayload(template);
        const keys = Array.from({ length: 16 }, generateEd25519Key);
        const body = variantABody(
          payload,
          multisig(keys.map(keyText), keys.map((k) => ed25519Signature(payload, k))),
        );
        assert.equal((await h.submit(body)).status, 201, `round ${round}`);
        const one = signVariantA(newPayload(template), generateEd25519Key());
        assert.equal((await h.submit(one)).status, 201, `round ${round}`);
      }
    });
  }
});
