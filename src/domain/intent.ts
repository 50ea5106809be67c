/**
 * The intent as the service knows it: what a verified submission adds, what
 * the store keeps once it is accepted, and the events of the feed.
 * @module
 */

/** Kinds of content-addressed documents an intent refers to. */
export type DocumentKind = "template" | "policy";

/** The variant of a submission: A (template, signed `payload`) or B (policy, signed `intent`). */
export type Variant = "A" | "B";

/** Who authorized an intent: the signature kind and the base58 keys that signed. */
export interface Authorship {
  kind: "Ed25519" | "Passkey" | "Multisig" | "Unsigned";
  signers: string[];
}

/**
 * The largest stored request body: a Deno KV value holds at most 64 KiB, and
 * a record keeps some room for its other fields.
 */
export const MAX_STORED_BODY_BYTES = 61_440;

/** A verified intent, ready to be stored: everything but when and where it was accepted. */
export interface NewIntent {
  /** The id as stored (UUIDs lower-cased). */
  id: string;
  variant: Variant;
  /** The template id (Variant A) or policy id (Variant B). */
  refId: string;
  authorship: Authorship;
  /**
   * UTF-8 JSON text of the request body, every number written as JCS writes
   * it (the value that was verified), strings exact.
   */
  body: Uint8Array;
}

/** An accepted intent as stored. */
export interface StoredIntent extends NewIntent {
  /** RFC 3339 time of acceptance, stamped as its commit started. */
  receivedAt: string;
  /** Its place in the feed: 1 for the first event ever stored, then one more each. */
  position: number;
}

/** The types of feed events (CONTRACT §9). */
export type EventType = "intent.accepted";

/** One event of the feed: what happened, and the record as it stood after it. */
export interface IntentEvent {
  /** The event's place in the feed; its public id is this number in decimal. */
  position: number;
  type: EventType;
  intent: StoredIntent;
}

/**
 * A template or policy as found by a submission, with the version the
 * commit that stores the intent checks: the reference check and the write
 * are one atomic commit.
 */
export interface DocumentRef {
  readonly kind: DocumentKind;
  readonly id: string;
  /** Opaque to the domain: the store's version of the document. */
  readonly version: string;
}

/** A stored template or policy: the exact bytes and the content type they came with. */
export interface StoredDocument {
  contentType: string;
  bytes: Uint8Array;
}

/** The runtime configuration as stored. */
export interface StoredConfig {
  evidence_extractor_url: string;
  updated_at: string;
}
