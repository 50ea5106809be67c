/**
 * The wire formats of the service, as the client library reads and writes them.
 * @module
 */

/** Variant A payload. */
export interface Payload {
  id: string;
  template_id: string;
  attrs?: { fields: Record<string, unknown> };
}

/** Variant B intent. */
export interface Intent {
  id: string;
  policy_id: string;
  attrs?: { fields: Record<string, unknown> };
}

/** `{"Ed25519": {...}}`. */
export interface Ed25519Signature {
  Ed25519: { pub_key: string; signature: string };
}

/** `{"Passkey": {...}}`. */
export interface PasskeySignature {
  Passkey: { authenticator_data: string; client_data: string; pub_key: string; signature: string };
}

/** `{"Multisig": {...}}`. */
export interface MultisigSignature {
  Multisig: {
    pub_key: { signers: Record<string, number>; threshold: number };
    signatures: (Ed25519Signature | PasskeySignature)[];
  };
}

/** Any signature kind. */
export type Signature = Ed25519Signature | PasskeySignature | MultisigSignature;

/** Variant A request body. */
export interface VariantABody {
  payload: Payload;
  signature: Signature;
}

/** Variant B request body. */
export interface VariantBBody {
  authorship: "Unsigned" | { Signed: Signature };
  intent: Intent;
}

/**
 * The life of an intent: `accepted`, or (under a governed document) `pending`
 * approvals until it is `accepted`, `rejected` or `expired`.
 */
export type IntentState = "accepted" | "pending" | "expired" | "rejected";

/** One signer's approval or rejection of an intent under a governed document. */
export interface ApprovalEntry {
  /** The signer's key as the document writes it. */
  key: string;
  kind: "Ed25519" | "Passkey";
  /** RFC 3339 time the decision was stored. */
  at: string;
}

/** The record's `approval`: what the governing document fixes, and who has approved so far. */
export interface Approval {
  threshold: number;
  /** The weight of the signers who have approved. */
  weight: number;
  /** The document's signers: key → weight. */
  signers: Record<string, number>;
  /** Every key that has signed, those of the submission first, in order. */
  approvals: ApprovalEntry[];
  /** Every key that has rejected, in order. */
  rejections: ApprovalEntry[];
  /** RFC 3339 time after which a pending intent is expired. */
  expires_at: string;
}

/** A stored intent as the service returns it. */
export interface IntentRecord {
  id: string;
  variant: "A" | "B";
  template_id?: string;
  policy_id?: string;
  attrs?: { fields: Record<string, unknown> };
  authorship: { kind: "Ed25519" | "Passkey" | "Multisig" | "Unsigned"; signers: string[] };
  received_at: string;
  /** `accepted`, or `pending` / `expired` / `rejected` under a governed document. */
  state: IntentState;
  /** Present under a governed document (also once accepted). */
  approval?: Approval;
  request: VariantABody | VariantBBody;
}

/** `GET /intents/{id}/approvals` of a pending intent: what every approver signs. */
export interface PendingApprovals {
  id: string;
  state: "pending";
  variant: "A" | "B";
  template_id?: string;
  policy_id?: string;
  /** The payload (Variant A) or intent (Variant B) that every approver signs. */
  signed: Payload | Intent;
  /** base64url without padding of SHA-256 of the signed object's JCS bytes. */
  challenge: string;
  /** base64url without padding of SHA-256 of the rejection bytes (`intents:reject:` + signed bytes). */
  reject_challenge: string;
  approval: Approval;
}

/** `GET /intents/{id}/approvals` of an intent that waits for nothing any more. */
export interface SettledApprovals {
  id: string;
  state: "accepted" | "expired" | "rejected";
}

/** The view of `GET /intents/{id}/approvals`, and the answer of an approval or a rejection. */
export type ApprovalsView = PendingApprovals | SettledApprovals;

/** The event types the service sends today; more may come. */
export type IntentEventType =
  | "intent.accepted"
  | "intent.pending"
  | "intent.approval_added"
  | "intent.rejection_added"
  | "intent.rejected"
  | "intent.expired";

/** One event of the feed (`GET /events`). */
export interface IntentEvent {
  /** Opaque id: pass it as `after` to read what follows. */
  id: string;
  /**
   * One of {@link IntentEventType}: `intent.accepted` (exactly once per
   * accepted intent), `intent.pending`, `intent.approval_added`,
   * `intent.rejection_added`, `intent.rejected` (exactly once per rejected
   * intent), `intent.expired`. Ignore types you do not handle: more may come.
   */
  type: IntentEventType | (string & Record<never, never>);
  /** The record as it stood after the event. */
  record: IntentRecord;
}

/** The runtime configuration. */
export interface RuntimeConfig {
  evidence_extractor_url: string;
  effective_url: string;
  updated_at: string | null;
}
