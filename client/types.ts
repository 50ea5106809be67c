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

/** A stored intent as the service returns it. */
export interface IntentRecord {
  id: string;
  variant: "A" | "B";
  template_id?: string;
  policy_id?: string;
  attrs?: { fields: Record<string, unknown> };
  authorship: { kind: "Ed25519" | "Passkey" | "Multisig" | "Unsigned"; signers: string[] };
  received_at: string;
  /** `accepted` for every intent the service stores today. */
  state: string;
  request: VariantABody | VariantBBody;
}

/** One event of the feed (`GET /events`). */
export interface IntentEvent {
  /** Opaque id: pass it as `after` to read what follows. */
  id: string;
  /** `intent.accepted`; ignore types you do not handle. */
  type: string;
  /** The record as it stood after the event. */
  record: IntentRecord;
}

/** The runtime configuration. */
export interface RuntimeConfig {
  evidence_extractor_url: string;
  effective_url: string;
  updated_at: string | null;
}
