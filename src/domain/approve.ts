/**
 * Approvals over time (docs/interface.md §10): reading what a pending intent
 * waits for, and the expiry of a pending intent. Adding a signer's approval or
 * rejection is `decide.ts`. Each change is decided on the intent as it stands
 * (see `Store.changeIntent`), so concurrent decisions are all counted and
 * exactly one of them ends the intent.
 * @module
 */

import { canonicalBytes } from "@intents/protocol/jcs";
import { challengeText, rejectionBytesOf } from "@intents/protocol/signed";
import { ServiceError } from "../errors.ts";
import { stateAt } from "./governance.ts";
import type { StoredIntent } from "./intent.ts";
import { renderApproval, signedObject } from "./record.ts";
import type { IntentChange, Store } from "./store.ts";

/** What the approval use cases need. */
export interface ReadApprovalsDeps {
  store: Pick<Store, "getIntent">;
  now: () => Date;
}

/** The refusal of an id that no intent under a governed document has. */
export const noSuchIntent = (): ServiceError =>
  new ServiceError("not_found", "no such intent awaiting approvals");

/**
 * The view of `GET /intents/{id}/approvals`: for a pending intent what its
 * approvers sign (and its rejecters, prefixed) and who has decided; else
 * only its state.
 */
export function approvalsView(intent: StoredIntent, now: Date): Record<string, unknown> {
  const state = stateAt(intent, now);
  if (state !== "pending") return { id: intent.id, state };
  const signed = signedObject(intent);
  const view: Record<string, unknown> = { id: intent.id, state, variant: intent.variant };
  view[intent.variant === "A" ? "template_id" : "policy_id"] = intent.refId;
  view.signed = signed;
  const bytes = canonicalBytes(signed);
  view.challenge = challengeText(bytes);
  view.reject_challenge = challengeText(rejectionBytesOf(bytes));
  view.approval = renderApproval(intent.approval!);
  return view;
}

/**
 * `GET /intents/{id}/approvals`.
 *
 * @throws {ServiceError} `not_found` unless an intent under a governed document has this id.
 */
export async function readApprovals(deps: ReadApprovalsDeps, id: string) {
  const intent = await deps.store.getIntent(id);
  if (!intent?.approval) throw noSuchIntent();
  return approvalsView(intent, deps.now());
}

/** The change that records an intent's expiry: `expireIntent`'s, and a late decision's. */
export function expiry(intent: StoredIntent): IntentChange {
  return { intent: { ...intent, state: "expired" }, type: "intent.expired" };
}

/**
 * Records a pending intent's expiry once its deadline has passed: its
 * `intent.expired` event, in the commit that also removes the expiry's due
 * work. Idempotent: an intent accepted, rejected or expired already is left alone,
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
    return expiry(intent);
  });
  if (changed) return "expired";
  return due > 0 ? "later" : "unchanged";
}
