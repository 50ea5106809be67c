/**
 * `approvalRequest` and `rejectionRequest`, the one check of an approvals
 * view before anyone signs (the client library's, which the passkey page
 * uses): the view's template or policy must be its signed object's, its
 * challenge the digest of the signed bytes, and its reject challenge the
 * digest of the rejection bytes.
 */

import assert from "node:assert/strict";
import { base64urlnopad } from "@scure/base";
import {
  approvalRequest,
  IntentsError,
  passkeyChallenge,
  type Payload,
  type PendingApprovals,
  REJECTION_PREFIX,
  rejectionBytes,
  rejectionRequest,
  signedBytes,
} from "../../client/mod.ts";
import { REJECTION_PREFIX as SERVICE_PREFIX } from "@intents/protocol/signed";

async function sha256Text(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return base64urlnopad.encode(new Uint8Array(digest));
}

async function pendingView(): Promise<PendingApprovals> {
  const signed = { id: "pay-1", template_id: "tmpl", attrs: { fields: { amount: 5 } } };
  return {
    id: "pay-1",
    state: "pending",
    variant: "A",
    template_id: "tmpl",
    signed,
    challenge: await passkeyChallenge(signed),
    reject_challenge: await sha256Text(rejectionBytes(signed)),
    approval: {
      threshold: 2,
      weight: 1,
      signers: {},
      approvals: [],
      rejections: [],
      expires_at: "",
    },
  } as PendingApprovals;
}

Deno.test("the rejection bytes are intents:reject: and the signed bytes, as the service reads them", () => {
  const signed: Payload = { id: "pay-1", template_id: "tmpl" };
  assert.equal(REJECTION_PREFIX, "intents:reject:");
  assert.equal(REJECTION_PREFIX, SERVICE_PREFIX);
  assert.equal(
    new TextDecoder().decode(rejectionBytes(signed)),
    `intents:reject:${new TextDecoder().decode(signedBytes(signed))}`,
  );
});

Deno.test("rejectionRequest signs the rejection bytes, checked against reject_challenge", async () => {
  const view = await pendingView();
  const request = await rejectionRequest(view);
  assert.equal(request.decision, "rejection");
  assert.deepEqual(request.bytes, rejectionBytes(view.signed));
  assert.equal(base64urlnopad.encode(request.challenge), view.reject_challenge);
  assert.equal((await approvalRequest(view)).decision, "approval");
  // A view whose rejection challenge is the approval's is refused before signing.
  await assert.rejects(
    rejectionRequest({ ...view, reject_challenge: view.challenge }),
    (error: unknown) => {
      assert.ok(error instanceof IntentsError);
      assert.equal(error.code, "bad_response");
      assert.match(
        error.message,
        /^its reject_challenge is not SHA-256 of its signed object's rejection bytes: /,
      );
      return true;
    },
  );
  const { reject_challenge: _, ...without } = view;
  await assert.rejects(rejectionRequest(without as PendingApprovals), /it has no reject_challenge/);
  for (const state of ["accepted", "expired", "rejected"] as const) {
    await assert.rejects(rejectionRequest({ id: view.id, state }), {
      status: 409,
      code: "not_pending",
      message: `the intent is ${state}`,
    });
  }
});

Deno.test("approvalRequest refuses a view whose template is not its signed object's", async () => {
  const view = { ...await pendingView(), template_id: "other" };
  await assert.rejects(approvalRequest(view), (error: unknown) => {
    assert.ok(error instanceof IntentsError);
    assert.equal(error.code, "bad_response");
    assert.match(error.message, /^its template_id is not the one in the signed object: /);
    return true;
  });
});

Deno.test("approvalRequest refuses a Variant B view whose policy is not its signed object's", async () => {
  const signed = { id: "0192f0a4-7b1c-7d2e-8f3a-4b5c6d7e8f90", policy_id: "pol" };
  const view = {
    id: signed.id,
    state: "pending",
    variant: "B",
    policy_id: "another",
    signed,
    challenge: await passkeyChallenge(signed),
    reject_challenge: await sha256Text(rejectionBytes(signed)),
    approval: {
      threshold: 2,
      weight: 1,
      signers: {},
      approvals: [],
      rejections: [],
      expires_at: "",
    },
  } as PendingApprovals;
  await assert.rejects(approvalRequest(view), /^IntentsError: its policy_id is not the one/);
  const request = await approvalRequest({ ...view, policy_id: "pol" });
  assert.equal(request.signed, signed);
});

Deno.test("approvalRequest's refusal of a challenge starts with what is wrong", async () => {
  const view = await pendingView();
  const forged = { ...view, signed: { ...view.signed, id: "pay-2" } };
  await assert.rejects(approvalRequest(forged), (error: unknown) => {
    assert.ok(error instanceof IntentsError);
    assert.match(error.message, /^its challenge is not SHA-256 of its signed object's bytes: /);
    return true;
  });
});
