/**
 * Approvals over time (docs/interface.md §10): reading what a pending intent waits
 * for, adding one signer's approval, and the expiry of a pending intent.
 *
 * Each change is one atomic commit checked against the version of the intent
 * it was decided on; when another change got there first, the intent is read
 * again and the decision made again, so concurrent approvals on any number of
 * processes are all counted and exactly one of them accepts the intent.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { type VerifyContext, verifySignature } from "./authorship.ts";
import { reachesThreshold, signerNotAuthorized, stateAt } from "./governance.ts";
import type { ApprovalState, StoredIntent } from "./intent.ts";
import { canonicalBytes, canonicalBytesOfParsed } from "./jcs.ts";
import { passkeyChallenge } from "./passkey.ts";
import { decodePublicKey, type PublicKeyCache } from "./public_keys.ts";
import { renderApproval, signedObject } from "./record.ts";
import { ApprovalBodySchema } from "./schemas.ts";
import { type DecodedSignature, decodeSignature } from "./signature.ts";
import type { Store } from "./store.ts";
import { validate } from "./validate.ts";

/** What the approval use cases need. */
export interface ApproveDeps extends VerifyContext {
  store: Pick<Store, "getIntent" | "changeIntent">;
  now: () => Date;
}

const NO_SUCH = () => new ServiceError("not_found", "no such intent awaiting approvals");

/**
 * The view of `GET /intents/{id}/approvals`: for a pending intent what its
 * approvers sign and who has approved; else only its state.
 */
export function approvalsView(intent: StoredIntent, now: Date): Record<string, unknown> {
  const state = stateAt(intent, now);
  if (state !== "pending") return { id: intent.id, state };
  const signed = signedObject(intent);
  const view: Record<string, unknown> = { id: intent.id, state, variant: intent.variant };
  view[intent.variant === "A" ? "template_id" : "policy_id"] = intent.refId;
  view.signed = signed;
  view.challenge = passkeyChallenge(canonicalBytes(signed));
  view.approval = renderApproval(intent.approval!);
  return view;
}

/**
 * `GET /intents/{id}/approvals`.
 *
 * @throws {ServiceError} `not_found` unless an intent under a governed document has this id.
 */
export async function readApprovals(deps: ApproveDeps, id: string) {
  const intent = await deps.store.getIntent(id);
  if (!intent?.approval) throw NO_SUCH();
  return approvalsView(intent, deps.now());
}

/** The document's key text for a key id, or undefined when the key is not a signer. */
function signerText(
  approval: ApprovalState,
  keyId: string,
  keys: PublicKeyCache,
): string | undefined {
  for (const keyText of Object.keys(approval.signers)) {
    // Keys were checked when the document was stored; decoding is served from the key cache.
    if (decodePublicKey(keyText, "signer", "any", keys).id === keyId) return keyText;
  }
  return undefined;
}

/** The one signature of an approval body, or an `invalid_body` naming what is wrong. */
function readApproval(
  value: unknown,
  keys: PublicKeyCache,
): DecodedSignature & { kind: "Ed25519" | "Passkey" } {
  const body = validate(ApprovalBodySchema, value, "");
  const signature = body.signature as Record<string, unknown> | null;
  if (typeof signature === "object" && signature !== null && "Multisig" in signature) {
    throw new ServiceError(
      "invalid_body",
      "signature.Multisig: an approval is one Ed25519 or Passkey",
    );
  }
  return decodeSignature(signature, "signature", { nested: true, keys }) as
    & DecodedSignature
    & { kind: "Ed25519" | "Passkey" };
}

/**
 * `POST /intents/{id}/approvals`: adds one signer's approval. Order of checks:
 * `invalid_body` (shape, encodings), `not_found`, `not_pending`,
 * `invalid_signature`, `signer_not_authorized`, `already_approved`.
 *
 * @param id the stored id, or null for a path id no intent can have
 *   (`not_found` without a store read, yet after the body's refusals).
 * @returns the view after the approval: still pending, or accepted when it
 *   reached the threshold.
 */
export async function approveIntent(deps: ApproveDeps, id: string | null, value: unknown) {
  const signature = readApproval(value, deps.keys);
  if (id === null) throw NO_SUCH();
  const found = await deps.store.getIntent(id);
  if (!found?.approval) throw NO_SUCH();
  const notPending = (intent: StoredIntent, now: Date) =>
    new ServiceError("not_pending", `the intent is ${stateAt(intent, now)}`);
  if (stateAt(found, deps.now()) !== "pending") throw notPending(found, deps.now());
  // Verified once: the signed object of an intent never changes.
  await verifySignature(signature, canonicalBytesOfParsed(signedObject(found)), deps);
  let now = deps.now();
  // Decided on the intent as it stands when its change is stored, and again
  // should another process's change come first.
  const changed = await deps.store.changeIntent(id, (intent) => {
    now = deps.now();
    const approval = intent.approval!;
    if (stateAt(intent, now) !== "pending") throw notPending(intent, now);
    const key = signerText(approval, signature.keyId, deps.keys);
    if (key === undefined) throw signerNotAuthorized(signature.path);
    if (approval.approvals.some((a) => a.key === key)) {
      throw new ServiceError("already_approved", "this key has approved the intent");
    }
    const approvals = [...approval.approvals, { key, kind: signature.kind, at: now.toISOString() }];
    const next = { ...approval, approvals };
    const accepted = reachesThreshold(next);
    return {
      intent: { ...intent, state: accepted ? "accepted" : "pending", approval: next },
      type: accepted ? "intent.accepted" : "intent.approval_added",
    };
  });
  if (!changed) throw NO_SUCH();
  return approvalsView(changed, now);
}

/**
 * Records a pending intent's expiry once its deadline has passed: its
 * `intent.expired` event, in the commit that also removes the expiry's due
 * work. Idempotent: an intent accepted or expired already is left alone,
 * and so is one whose deadline has not come.
 *
 * @returns what happened: "expired"; "unchanged" when there is nothing to
 *   expire (no such intent, or it is no longer pending); "later" when its
 *   deadline has not come.
 */
export async function expireIntent(
  deps: { store: Pick<Store, "changeIntent">; now: () => Date },
  id: string,
): Promise<"expired" | "unchanged" | "later"> {
  let due = 0;
  const changed = await deps.store.changeIntent(id, (intent) => {
    if (intent.state !== "pending" || !intent.approval) return null;
    due = Date.parse(intent.approval.expiresAt) - deps.now().getTime();
    if (due > 0) return null;
    return { intent: { ...intent, state: "expired" }, type: "intent.expired" };
  });
  if (changed) return "expired";
  return due > 0 ? "later" : "unchanged";
}
