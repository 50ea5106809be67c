/**
 * Rules in documents on the whole app (docs/interface.md §15): a document
 * with rules is checked when stored (400 `invalid_rule`), its rules are
 * evaluated once at submission and the effective quorum they make is stored
 * in the record's `approval`, against which later approvals and rejections
 * are judged.
 */

import assert from "node:assert/strict";
import { expectError } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import {
  approve,
  authorizationOf,
  bodyOf,
  type DocKind,
  ed25519Signer,
  expectIdFree,
  getRecord,
  newSigned,
  passkeySigner,
  postApproval,
  postDocument,
  reject,
  type Signer,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import type { Intent, Payload } from "../../client/mod.ts";

/** Stores a document whose authorization is `authorization` and returns its id. */
async function addDocument(h: Harness, kind: DocKind, authorization: Json): Promise<string> {
  const text = JSON.stringify({ name: crypto.randomUUID(), authorization });
  const response = await postDocument(h, kind, text);
  const body = await response.json();
  assert.equal(response.status, 201, JSON.stringify(body));
  return body.id;
}

/** Submits `signed` with `signer`'s signature; returns the status and the body. */
async function submit(h: Harness, signed: Payload | Intent, signer: Signer | "Unsigned") {
  const signature = signer === "Unsigned" ? "Unsigned" : await signer.sign(signed);
  const response = await h.submit(bodyOf(signed, signature));
  return { status: response.status, body: await response.json() };
}

const amount = (n: number) => ({ attrs: { fields: { amount: n } } });

Deno.test("rules on the app", async (t) => {
  await withApp({}, async (h) => {
    const [e1, e2, e3] = [ed25519Signer(), ed25519Signer(), ed25519Signer()];

    await t.step("a document with a bad rule is 400 invalid_rule, naming it", async () => {
      const authorization = authorizationOf([e1], 1, {
        rules: [{ when: "true", deny: "x" }, { when: "intent.amount >", deny: "x" }],
      });
      const response = await postDocument(h, "policy", JSON.stringify({ authorization }));
      await expectError(response, 400, "invalid_rule", {
        mentions: ["authorization.rules[1].when", "at 1:"],
      });
    });

    await t.step("a tier: pending above 1000, then accepted at its threshold", async () => {
      const authorization = authorizationOf([e1, e2, e3], 1, {
        rules: [{ when: "intent.attrs.fields.amount > 1000.0", threshold: 2 }],
      });
      for (const kind of ["template", "policy"] as const) {
        const doc = await addDocument(h, kind, authorization);
        const small = newSigned(kind, doc, amount(10));
        const accepted = await submit(h, small, e1);
        assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
        assert.equal(accepted.body.approval.threshold, 1);
        assert.deepEqual(accepted.body.approval.rules, []);
        assert.deepEqual(accepted.body.approval.kinds, ["Ed25519", "Passkey"]);
        const large = newSigned(kind, doc, amount(5000));
        const pending = await submit(h, large, e1);
        assert.equal(pending.status, 202, JSON.stringify(pending.body));
        assert.equal(pending.body.state, "pending");
        assert.equal(pending.body.approval.threshold, 2);
        assert.deepEqual(pending.body.approval.rules, [0]);
        const view = await approve(h, large.id as string, large, e2);
        assert.equal(view.state, "accepted");
        assert.equal((await getRecord(h, large.id as string)).state, "accepted");
      }
    });

    await t.step("a signer the rules exclude: refused at submission and on approval", async () => {
      const authorization = authorizationOf([e1, e2, e3], 2, {
        rules: [{ when: "intent.attrs.fields.amount > 100.0", signers: [e1.key, e2.key] }],
      });
      const doc = await addDocument(h, "policy", authorization);
      const signed = newSigned("policy", doc, amount(500));
      const outsider = await submit(h, signed, e3);
      assert.equal(outsider.status, 403);
      assert.equal(outsider.body.code, "signer_not_authorized");
      await expectIdFree(h, signed.id as string);
      const pending = await submit(h, signed, e1);
      assert.equal(pending.status, 202);
      assert.deepEqual(pending.body.approval.signers, { [e1.key]: 1, [e2.key]: 1 });
      const response = await postApproval(h, signed.id as string, {
        signature: await e3.sign(signed),
      });
      await expectError(response, 403, "signer_not_authorized", { mentions: "rules" });
      // Below the tier the document's signers all count.
      const low = newSigned("policy", doc, amount(5));
      assert.equal((await submit(h, low, e3)).status, 202);
    });

    await t.step("a rejection ends an intent under a narrowed quorum", async () => {
      const authorization = authorizationOf([e1, e2, e3], 2, {
        rules: [{ when: "true", signers: [e1.key, e2.key] }],
      });
      const doc = await addDocument(h, "template", authorization);
      const signed = newSigned("template", doc);
      assert.equal((await submit(h, signed, e1)).status, 202);
      // Under the document's quorum e1 and e3 could still reach 2; under the rules' they cannot.
      const view = await reject(h, signed.id as string, signed, e2);
      assert.equal(view.state, "rejected");
    });

    await t.step("quorum_unreachable, rule_denied and rule_error take no id", async () => {
      const authorization = authorizationOf([e1, e2, e3], 1, {
        rules: [
          {
            when: "has(intent.attrs.fields.to) && intent.attrs.fields.to == 'blocked'",
            deny: "never to this account",
          },
          { when: "intent.attrs.fields.amount > 1000.0", signers: [e1.key] },
          { when: "intent.attrs.fields.amount > 1000.0", threshold: 2 },
        ],
      });
      const doc = await addDocument(h, "policy", authorization);
      const cases: [Json, number, string, string][] = [
        [amount(5000), 403, "quorum_unreachable", "below the threshold 2"],
        [
          { attrs: { fields: { to: "blocked", amount: 1 } } },
          403,
          "rule_denied",
          "rules[0]: never",
        ],
      ];
      for (const [extra, status, code, mentions] of cases) {
        const signed = newSigned("policy", doc, extra);
        await expectError(await h.submit(bodyOf(signed, await e1.sign(signed))), status, code, {
          mentions,
        });
        await expectIdFree(h, signed.id as string);
      }
      const failing = authorizationOf([e1], 1, {
        rules: [{ when: "intent.attrs.fields.missing == 1.0", deny: "x" }],
      });
      const failingDoc = await addDocument(h, "policy", failing);
      const signed = newSigned("policy", failingDoc);
      await expectError(await h.submit(bodyOf(signed, await e1.sign(signed))), 403, "rule_error", {
        mentions: "rules[0]",
      });
      await expectIdFree(h, signed.id as string);
    });

    await t.step(
      "Unsigned under a rule that sets a quorum: 400 unsigned_not_permitted",
      async () => {
        const authorization = authorizationOf([e1], 1, {
          unsigned: true,
          rules: [{ when: "intent.attrs.fields.amount > 10.0", threshold: 1 }],
        });
        const doc = await addDocument(h, "policy", authorization);
        const large = newSigned("policy", doc, amount(50));
        const refused = await submit(h, large, "Unsigned");
        assert.equal(refused.status, 400);
        assert.equal(refused.body.code, "unsigned_not_permitted");
        await expectIdFree(h, large.id as string);
        const small = newSigned("policy", doc, amount(5));
        assert.equal((await submit(h, small, "Unsigned")).status, 201);
      },
    );

    await t.step("passkeys only: an Ed25519 signer does not count", async () => {
      const passkey = await passkeySigner();
      const authorization = authorizationOf([e1, passkey], 1, {
        rules: [{ when: "true", kinds: ["Passkey"] }],
      });
      const doc = await addDocument(h, "template", authorization);
      const signed = newSigned("template", doc);
      const refused = await submit(h, signed, e1);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, "signer_not_authorized");
      const accepted = await submit(h, signed, passkey);
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.deepEqual(accepted.body.approval.kinds, ["Passkey"]);
      assert.deepEqual(accepted.body.approval.signers, { [passkey.key]: 1 });
    });

    await t.step(
      "the same signed submission again is replayed, its rules not met again",
      async () => {
        const authorization = authorizationOf([e1, e2], 1, {
          rules: [{ when: "true", threshold: 2 }],
        });
        const doc = await addDocument(h, "policy", authorization);
        const signed = newSigned("policy", doc);
        const body = bodyOf(signed, await e1.sign(signed));
        assert.equal((await h.submit(body)).status, 202);
        const again = await h.submit(body);
        assert.equal(again.status, 200);
        assert.equal(again.headers.get("idempotent-replayed"), "true");
        assert.deepEqual((await again.json()).approval.rules, [0]);
      },
    );
  });
});

Deno.test("now is the record's received_at", async () => {
  // A clock a second further at each reading: the rules' time and the record's must be one.
  let tick = Date.parse("2026-11-27T10:00:00.000Z");
  const now = () => new Date(tick += 1000);
  await withApp({ now }, async (h) => {
    const e1 = ed25519Signer();
    // Each rule holds for one bit of now's seconds: the true rules spell them out.
    const rules = Array.from({ length: 6 }, (_, bit) => ({
      when: `now.getSeconds() / ${2 ** bit} % 2 == 1`,
      kinds: ["Ed25519", "Passkey"],
    }));
    const doc = await addDocument(h, "policy", authorizationOf([e1], 1, { rules }));
    for (let i = 0; i < 3; i++) {
      const signed = newSigned("policy", doc);
      const { status, body } = await submit(h, signed, e1);
      assert.equal(status, 201, JSON.stringify(body));
      const seconds = (body.approval.rules as number[]).reduce((sum, bit) => sum + 2 ** bit, 0);
      assert.equal(new Date(body.received_at).getUTCSeconds(), seconds);
      assert.equal(body.approval.approvals[0].at, body.received_at);
    }
  });
});
