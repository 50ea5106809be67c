/**
 * Intent ids on `POST /intents` (docs/interface.md §4): Variant A ids of 1–128 code
 * points without control characters, Variant B UUIDs, UUID ids of either
 * variant lower-cased (ids differing only in case are one intent), and the
 * length of template and policy ids.
 */

import assert from "node:assert/strict";
import { ed25519Signature, signVariantA, signVariantB } from "../../client/mod.ts";
import { expectCreated, expectError, newIntent, newPayload } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents: intent ids", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, policyId, key, other, invalidBody } = await submitKit(h);

    await t.step("accepts a payload id of 128 characters", async () => {
      const payload = newPayload(templateId, { id: "x".repeat(127) + "😀" });
      const body = signVariantA(payload, key);
      const record = await expectCreated(await h.submit(body));
      assert.equal(record.id, payload.id);
    });

    await t.step("stores a UUID id lower-cased and finds it in either case", async () => {
      const upper = crypto.randomUUID().toUpperCase();
      const intent = newIntent(policyId, { id: upper });
      const record = await expectCreated(await h.submit(signVariantB(intent, key)));
      assert.equal(record.id, upper.toLowerCase());
      for (const id of [upper, upper.toLowerCase()]) {
        const got = await h.fetch(`/intents/${id}`, { headers: { authorization: h.auth } });
        assert.equal(got.status, 200);
        assert.deepEqual(await got.json(), record);
      }
    });

    await t.step("rejects a second UUID id differing only in case with 409", async () => {
      const lower = crypto.randomUUID();
      await expectCreated(await h.submit(signVariantB(newIntent(policyId, { id: lower }), key)));
      const again = signVariantB(newIntent(policyId, { id: lower.toUpperCase() }), other);
      await expectError(await h.submit(again), 409, "intent_exists");
    });

    await t.step("treats a Variant A UUID id the same way", async () => {
      const lower = crypto.randomUUID();
      await expectCreated(await h.submit(signVariantA(newPayload(templateId, { id: lower }), key)));
      const again = signVariantA(newPayload(templateId, { id: lower.toUpperCase() }), key);
      await expectError(await h.submit(again), 409, "intent_exists");
    });

    await t.step("rejects a Variant B id that is not a UUID", async () => {
      for (const id of ["not-a-uuid", "", "123e4567-e89b-12d3-a456-42661417400", 7]) {
        const intent = { id, policy_id: policyId };
        await invalidBody(
          { authorship: { Signed: ed25519Signature(intent as never, key) }, intent },
          "intent.id",
          typeof id === "string" && id.length > 0 ? id : undefined,
        );
      }
    });

    await t.step(
      "rejects a Variant A id that is empty, too long or has control characters",
      async () => {
        for (
          const id of ["", "x".repeat(129), "a\u0007b", "line\nbreak", "c1\u0085", "del\u007f"]
        ) {
          const payload = newPayload(templateId, { id });
          await invalidBody(
            signVariantA(payload, key),
            "payload.id",
            id.length > 2 ? id : undefined,
          );
        }
      },
    );

    await t.step("rejects a template_id or policy_id that is empty or too long", async () => {
      for (const ref of ["", "T".repeat(129)]) {
        await invalidBody(signVariantA(newPayload(ref), key), "payload.template_id");
        await invalidBody(signVariantB(newIntent(ref), key), "intent.policy_id");
      }
    });
  });
});
