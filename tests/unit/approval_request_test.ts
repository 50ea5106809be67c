/**
 * `approvalRequest`, the one check of an approvals view before anyone signs
 * (the client library's, which the passkey page uses): the view's template
 * or policy must be its signed object's, and its challenge the digest of
 * the signed bytes.
 */

import assert from "node:assert/strict";
import {
  approvalRequest,
  IntentsError,
  passkeyChallenge,
  type PendingApprovals,
} from "../../client/mod.ts";

async function pendingView(): Promise<PendingApprovals> {
  const signed = { id: "pay-1", template_id: "tmpl", attrs: { fields: { amount: 5 } } };
  return {
    id: "pay-1",
    state: "pending",
    variant: "A",
    template_id: "tmpl",
    signed,
    challenge: await passkeyChallenge(signed),
    approval: { threshold: 2, weight: 1, signers: {}, approvals: [], expires_at: "" },
  } as PendingApprovals;
}

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
    approval: { threshold: 2, weight: 1, signers: {}, approvals: [], expires_at: "" },
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
