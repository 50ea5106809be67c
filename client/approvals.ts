/**
 * Deciding on an intent that waits under a governed document: what a signer
 * is asked to sign to approve it or to reject it, and the check that the
 * service's view of it holds together.
 * @module
 */

import { base64urlnopad } from "@scure/base";
import { challengeDigest, rejectionBytes, signedBytes } from "@intents/protocol/signed";
import type {
  ApprovalsView,
  Ed25519Signature,
  Intent,
  PasskeySignature,
  Payload,
  PendingApprovals,
} from "@intents/protocol/types";
import { IntentsError } from "./errors.ts";

/** What one signer signs: handed to an {@link ApprovalSigner}. */
export interface ApprovalRequest {
  /** What the signature says: `approval` or `rejection` (show it before signing). */
  decision: "approval" | "rejection";
  /** The pending intent's view, as the service gave it (quorum, decisions so far). */
  view: PendingApprovals;
  /** The payload (Variant A) or intent (Variant B) being decided on: show it before signing. */
  signed: Payload | Intent;
  /**
   * The bytes to sign. An approval: UTF-8 of the JCS text of `signed`; a
   * rejection: UTF-8 `intents:reject:` followed by those. An Ed25519 key signs these.
   */
  bytes: Uint8Array;
  /**
   * SHA-256 of `bytes`, checked to equal the view's `challenge` (an approval)
   * or `reject_challenge` (a rejection): what a passkey signs, as
   * `publicKey.challenge` of `navigator.credentials.get`.
   */
  challenge: Uint8Array;
}

/**
 * Makes one signature over a request's bytes: an Ed25519 member over
 * `bytes`, or a Passkey member whose assertion's challenge is `challenge`.
 * A browser page passes a function that calls `navigator.credentials.get`
 * (see `webAuthnSigner`); anything that can sign (a hardware key, another
 * process) fits the same shape.
 */
export type ApprovalSigner = (
  request: ApprovalRequest,
) => Ed25519Signature | PasskeySignature | Promise<Ed25519Signature | PasskeySignature>;

/** The refusal of a view that does not hold together: its message starts with what is wrong. */
function inconsistent(detail: string): IntentsError {
  return new IntentsError(
    200,
    "bad_response",
    `${detail}: the approvals view does not hold together, and nothing was signed`,
  );
}

/** A pending view whose signed object and document hold together, or a refusal. */
function pendingView(view: ApprovalsView): PendingApprovals {
  const state = (view as { state?: unknown } | null)?.state;
  if (state === "accepted" || state === "expired" || state === "rejected") {
    throw new IntentsError(409, "not_pending", `the intent is ${state}`);
  }
  if (state !== "pending") throw inconsistent("it has no known state");
  const pending = view as PendingApprovals;
  const signed = pending.signed as unknown;
  if (typeof signed !== "object" || signed === null || Array.isArray(signed)) {
    throw inconsistent("it has no signed object");
  }
  const ref = pending.variant === "B" ? "policy_id" : "template_id";
  if ((signed as Record<string, unknown>)[ref] !== pending[ref]) {
    throw inconsistent(`its ${ref} is not the one in the signed object`);
  }
  return pending;
}

/** The request for `bytes`, once the view's challenge for them is checked. */
function requestOf(
  decision: ApprovalRequest["decision"],
  pending: PendingApprovals,
  bytes: Uint8Array,
): ApprovalRequest {
  const member = decision === "approval" ? "challenge" : "reject_challenge";
  if (typeof pending[member] !== "string") throw inconsistent(`it has no ${member}`);
  const challenge = challengeDigest(bytes);
  if (base64urlnopad.encode(challenge) !== pending[member]) {
    throw inconsistent(
      decision === "approval"
        ? "its challenge is not SHA-256 of its signed object's bytes"
        : "its reject_challenge is not SHA-256 of its signed object's rejection bytes",
    );
  }
  return { decision, view: pending, signed: pending.signed, bytes, challenge };
}

/**
 * The request an approver signs, from the view of `GET /intents/{id}/approvals`.
 * The signed bytes are made here from the view's `signed` object; the view's
 * `template_id` or `policy_id` must be the signed object's, and its
 * `challenge` base64url(SHA-256) of the signed bytes: a view that does not
 * hold together is refused before anyone signs.
 *
 * @throws {IntentsError} 409 `not_pending` when the intent is accepted,
 *   expired or rejected (as the service would answer an approval);
 *   `bad_response` when the view is not a pending view, names another
 *   document than its signed object, or its challenge does not match its
 *   signed object.
 */
export function approvalRequest(view: ApprovalsView): Promise<ApprovalRequest> {
  // A promise whatever happens: a refusal is a rejection, never a throw.
  return new Promise((resolve) => {
    const pending = pendingView(view);
    resolve(requestOf("approval", pending, signedBytes(pending.signed)));
  });
}

/**
 * The request a rejecter signs, from the same view: the rejection bytes
 * (`intents:reject:` and the signed bytes, so that a rejection never stands
 * for an approval), checked against the view's `reject_challenge`.
 *
 * @throws {IntentsError} as {@link approvalRequest}, for `reject_challenge`.
 */
export function rejectionRequest(view: ApprovalsView): Promise<ApprovalRequest> {
  return new Promise((resolve) => {
    const pending = pendingView(view);
    resolve(requestOf("rejection", pending, rejectionBytes(pending.signed)));
  });
}
