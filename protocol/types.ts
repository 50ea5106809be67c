/**
 * The wire formats under the names the client library uses, derived from
 * the shapes the OpenAPI document states (`shapes.ts`, generated from the
 * service's valibot schemas). Nothing here restates a member: each name is
 * a shape, a part of one, or a shape narrowed where the document is looser
 * than what the service sends (a pending approvals view has every member).
 * @module
 */

import type { EventType } from "./events.ts";
import type {
  Approval,
  ApprovalView,
  Config,
  Event,
  Intent,
  IntentRecord,
  Payload,
  Signature,
  SingleSignature,
  VariantA,
  VariantB,
  Webhook,
  WebhookCreated,
} from "./shapes.ts";

export type * from "./shapes.ts";

/** `{"Ed25519": {...}}`. */
export type Ed25519Signature = Extract<SingleSignature, { Ed25519: unknown }>;

/** `{"Passkey": {...}}`. */
export type PasskeySignature = Extract<SingleSignature, { Passkey: unknown }>;

/** `{"Multisig": {...}}`. */
export type MultisigSignature = Extract<Signature, { Multisig: unknown }>;

/** Variant A request body. */
export type VariantABody = VariantA;

/** Variant B request body. */
export type VariantBBody = VariantB;

/**
 * The life of an intent: `accepted`, or (under a governed document) `pending`
 * approvals until it is `accepted`, `rejected` or `expired`.
 */
export type IntentState = IntentRecord["state"];

/** One signer's approval or rejection of an intent under a governed document. */
export type ApprovalEntry = Approval["approvals"][number];

/** `GET /intents/{id}/approvals` of a pending intent: what every approver signs. */
export interface PendingApprovals extends
  Required<
    Pick<ApprovalView, "id" | "variant" | "challenge" | "reject_challenge" | "approval">
  >,
  Pick<ApprovalView, "template_id" | "policy_id"> {
  /** Pending: every member but one of `template_id` and `policy_id` is present. */
  state: "pending";
  /** The payload (Variant A) or intent (Variant B) that every approver signs. */
  signed: Payload | Intent;
}

/** `GET /intents/{id}/approvals` of an intent that waits for nothing any more. */
export interface SettledApprovals extends Pick<ApprovalView, "id"> {
  /** Settled: the view holds only the id and the state. */
  state: Exclude<ApprovalView["state"], "pending">;
}

/** The view of `GET /intents/{id}/approvals`, and the answer of an approval or a rejection. */
export type ApprovalsView = PendingApprovals | SettledApprovals;

/** The event types the service sends today; more may come. */
export type IntentEventType = EventType;

/** One event of the feed (`GET /events`), and the body of a webhook delivery. */
export interface IntentEvent extends Omit<Event, "type"> {
  /**
   * One of {@link IntentEventType}: `intent.accepted` (exactly once per
   * accepted intent), `intent.pending`, `intent.approval_added`,
   * `intent.rejection_added`, `intent.rejected` (exactly once per rejected
   * intent), `intent.expired`. Ignore types you do not handle: more may come.
   */
  type: IntentEventType | (string & Record<never, never>);
}

/** The runtime configuration. */
export type RuntimeConfig = Config;

/** A webhook endpoint as the service shows it. */
export type WebhookEndpoint = Webhook;

/** A new endpoint, with its secret (shown at creation and rotation only). */
export type NewWebhookEndpoint = WebhookCreated;
