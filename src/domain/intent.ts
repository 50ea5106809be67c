/**
 * The intent as the service knows it: what a verified submission adds, what
 * the store keeps once it is accepted, and the events of the feed.
 * @module
 */

import type { EventType } from "@intents/protocol/events";
import type { CompiledRule, RuleKind } from "./rules/rule.ts";

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

/**
 * The life of an intent: accepted, or pending approvals until accepted,
 * rejected or expired (docs/interface.md §10).
 */
export type IntentState = "accepted" | "pending" | "expired" | "rejected";

/** Every state, in the order the interface lists them. */
export const INTENT_STATES: readonly IntentState[] = ["pending", "accepted", "expired", "rejected"];

/** One signer's approval or rejection of an intent under a governed document. */
export interface ApprovalEntry {
  /** The signer's key as the document writes it. */
  key: string;
  kind: "Ed25519" | "Passkey";
  /** RFC 3339 time the decision was stored. */
  at: string;
  /**
   * The digest of the signature that made it (`signatureDigest`): the same
   * signature sent again is recognised as a repeat. Kept in the store, never
   * shown; absent in records written before repeats were recognised.
   */
  sig?: string;
}

/**
 * The approval state of an intent under a governed document, as its record
 * stores it (the record's `approval` member): the document's quorum as the
 * document writes it, and who has approved so far.
 */
export interface ApprovalState {
  threshold: number;
  /** The document's signers: key as the document writes it → weight. */
  signers: Record<string, number>;
  /** Every key that has signed, those of the submission first, in order. */
  approvals: ApprovalEntry[];
  /** Every key that has rejected, in order; absent in records written before rejections existed. */
  rejections?: ApprovalEntry[];
  /** RFC 3339 time after which a pending intent is expired. */
  expiresAt: string;
  /** Under rules (docs/interface.md §15): the signature kinds that count. */
  kinds?: RuleKind[];
  /** Under rules: the indices of the rules that were true at submission. */
  rules?: number[];
}

/** Signers by key id (see `public_keys.ts`): the key as written, and its weight. */
export type Signers = Map<string, { keyText: string; weight: number }>;

/**
 * A governed document's quorum (docs/interface.md §10): who may sign the
 * intents that reference it, with what weight, and how long approvals may take.
 */
export interface Quorum {
  signers: Signers;
  threshold: number;
  /** Whether `Unsigned` intents are accepted under the document. */
  unsigned: boolean;
  /** Seconds a pending intent waits for approvals. */
  approvalWindowS: number;
  /** The document's rules, compiled (docs/interface.md §15); absent when it has none. */
  rules?: readonly CompiledRule[];
}

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
  /** `accepted`, or `pending` under a governed document whose threshold is not reached yet. */
  state: "accepted" | "pending";
  /** Under a governed document: its quorum. */
  quorum?: Quorum;
  /**
   * Under a governed document: the approvals the submission's signatures
   * make, stamped with the acceptance time when stored.
   */
  approvals?: Omit<ApprovalEntry, "at">[];
  /**
   * Under rules: the kinds that count and the rules that were true, for the
   * record's `approval` (`quorum` is then the effective quorum).
   */
  ruled?: { kinds: RuleKind[]; rules: number[] };
  /**
   * Under rules: the receipt time the rules saw as `now`, which the record
   * keeps as `received_at`; otherwise stamped as its commit starts.
   */
  receivedAt?: string;
  /** The request's JCS, written when it was verified: see {@link CanonicalRequest}. */
  canonical?: CanonicalRequest;
}

/**
 * What the commitment to a new intent's record (its log entry's `R`,
 * docs/interface.md §14) is made from when the event is stored, without
 * parsing and writing the body again: the request's JCS, written once with
 * its signed object's (which the signature covers), and the signed
 * object's `attrs`, which the record shows.
 */
export interface CanonicalRequest {
  /** UTF-8 of the request's JCS (the signed object's, as verified, within it). */
  bytes: Uint8Array;
  attrs: unknown;
}

/** An intent as stored. */
export interface StoredIntent
  extends Omit<NewIntent, "state" | "quorum" | "approvals" | "ruled" | "receivedAt" | "canonical"> {
  /** RFC 3339 time of acceptance, stamped as its commit started. */
  receivedAt: string;
  /**
   * The place in the feed of the event that stored it (1 for the first event
   * ever stored), for intents stored by earlier versions whose commits placed
   * their events in the feed; a record staged now does not know it when
   * committed (`src/storage/sequencer.ts` places it).
   */
  position?: number;
  /** As of its latest event; a pending intent past its `expiresAt` reads as expired. */
  state: IntentState;
  /** Present under a governed document. */
  approval?: ApprovalState;
  /**
   * True when it was stored pending with its submission's keys counted
   * toward `MAX_PENDING_PER_SIGNER` (docs/interface.md §12): the commit that
   * ends it counts them down. Absent for intents stored pending before the
   * counts existed, which count for nobody.
   */
  counted?: boolean;
}

/** The types of feed events (docs/interface.md §9, §10), as the wire protocol lists them. */
export type { EventType };

/** One event of the feed: what happened, and the record as it stood after it. */
export interface IntentEvent {
  /** The event's place in the feed; its public id is this number in decimal. */
  position: number;
  type: EventType;
  intent: StoredIntent;
  /** `R` of its log entry when computed as it was stored (see {@link CanonicalRequest}). */
  recordSha256?: string;
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
  /** The quorum the document fixes; null when it governs nothing. */
  readonly quorum: Quorum | null;
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
