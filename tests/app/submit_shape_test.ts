/**
 * `POST /intents` bodies of the wrong shape are 400 `invalid_body` naming the
 * field (docs/interface.md §4): no variant selected, unknown members inside the
 * described objects (but not inside `attrs.fields`), `attrs` that is null or
 * lacks an object `fields`, signature objects naming no or two kinds, and
 * missing required members.
 */

import assert from "node:assert/strict";
import { ed25519Signature, multisigSignature, signVariantA } from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
} from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import type { Json } from "../support/record.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents refuses bodies of the wrong shape with invalid_body", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, policyId, key, passkey, goodA, goodB, invalidBody } = await submitKit(h);

    await t.step("rejects a body that selects no variant", async () => {
      const a = goodA();
      const b = goodB();
      for (
        const body of [
          {},
          { payload: a.payload },
          { signature: a.signature },
          { ...a, extra: 1 },
          { payload: a.payload, intent: b.intent },
          { ...a, ...b },
          { authorship: b.authorship },
          [],
          "payload",
          42,
          null,
        ]
      ) {
        const message = await expectError(
          await h.submit(JSON.stringify(body)),
          400,
          "invalid_body",
        );
        assert.match(message, /^body: /);
      }
    });

    await t.step("rejects an unknown member inside payload", async () => {
      const body = goodA();
      (body.payload as Json).extra = 1;
      await invalidBody(body, "payload.extra");
    });

    await t.step("rejects an unknown member inside intent", async () => {
      const body = goodB();
      (body.intent as Json).comment = "x";
      await invalidBody(body, "intent.comment");
    });

    await t.step("rejects an unknown member inside attrs but not inside attrs.fields", async () => {
      const body = goodA();
      (body.payload as Json).attrs = { fields: {}, extra: true };
      await invalidBody(body, "payload.attrs.extra");
      const free = signVariantA(
        newPayload(templateId, { attrs: { fields: { anything: { at: ["all", { x: 1 }] } } } }),
        key,
      );
      await expectCreated(await h.submit(free));
    });

    await t.step("rejects an unknown member inside each signature kind", async () => {
      const a = goodA();
      const sig = a.signature as { Ed25519: Json };
      sig.Ed25519.extra = "x";
      await invalidBody(a, "signature.Ed25519.extra");

      const payload = newPayload(templateId);
      const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
      pk.Passkey.user_handle = "x";
      await invalidBody({ payload, signature: pk }, "signature.Passkey.user_handle");

      const ms = multisigSignature({
        signers: { [keyText(key)]: 1 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      }) as unknown as { Multisig: Json & { pub_key: Json } };
      ms.Multisig.extra = 1;
      await invalidBody({ payload, signature: ms }, "signature.Multisig.extra");
      delete ms.Multisig.extra;
      ms.Multisig.pub_key.extra = 1;
      await invalidBody({ payload, signature: ms }, "signature.Multisig.pub_key.extra");
    });

    await t.step("rejects a signature object naming two kinds or an unknown kind", async () => {
      const payload = newPayload(templateId);
      const both = { ...ed25519Signature(payload, key), ...(await passkeySig(passkey, payload)) };
      await invalidBody({ payload, signature: both }, "signature");
      await invalidBody({ payload, signature: { Rsa: { pub_key: "x" } } }, "signature.Rsa");
      await invalidBody({ payload, signature: {} }, "signature");
      await invalidBody({ payload, signature: "Ed25519" }, "signature");
    });

    await t.step("rejects an unknown member beside Signed in authorship", async () => {
      const body = goodB() as { authorship: Json };
      body.authorship.extra = 1;
      await invalidBody(body, "authorship");
      await invalidBody({ ...goodB(), authorship: "unsigned" }, "authorship");
      await invalidBody({ ...goodB(), authorship: null }, "authorship");
    });

    await t.step("rejects attrs: null", async () => {
      const payload = { ...newPayload(templateId), attrs: null };
      await invalidBody(
        { payload, signature: ed25519Signature(payload as never, key) },
        "payload.attrs",
      );
      const intent = { ...newIntent(policyId), attrs: null };
      await invalidBody(
        { authorship: { Signed: ed25519Signature(intent as never, key) }, intent },
        "intent.attrs",
      );
    });

    await t.step("rejects attrs without fields or with a non-object fields", async () => {
      for (const attrs of [{}, { fields: [] }, { fields: null }, { fields: "x" }, []]) {
        const payload = { ...newPayload(templateId), attrs };
        await invalidBody(
          { payload, signature: ed25519Signature(payload as never, key) },
          "payload.attrs",
        );
      }
    });

    await t.step("rejects missing required fields, naming each", async () => {
      const a = goodA();
      delete (a.payload as Json).id;
      await invalidBody(a, "payload.id");
      const a2 = goodA();
      delete (a2.payload as Json).template_id;
      await invalidBody(a2, "payload.template_id");
      const b = goodB();
      delete (b.intent as Json).policy_id;
      await invalidBody(b, "intent.policy_id");
      const b2 = goodB();
      delete (b2.intent as Json).id;
      await invalidBody(b2, "intent.id");
      const a3 = goodA();
      delete (a3.signature as { Ed25519: Json }).Ed25519.signature;
      await invalidBody(a3, "signature.Ed25519.signature");
      const payload = newPayload(templateId);
      const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
      delete pk.Passkey.client_data;
      await invalidBody({ payload, signature: pk }, "signature.Passkey.client_data");
    });
  });
});
