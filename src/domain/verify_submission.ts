/**
 * The part of a submission that needs no store, in two steps so that the
 * cheap refusals come first (docs/interface.md §4): reading, then, once the
 * caller has charged the work and found the document, verifying. Both depend
 * on the bytes and the verification context alone, so they run on any thread
 * (`src/workers/verify_pool.ts`); the store's part is `submit.ts`.
 * @module
 */

import { tooLarge } from "../errors.ts";
import { canonicalBytesOfParsed, canonicalBytesWithin } from "@intents/protocol/jcs";
import { type Verified, type VerifyContext, verifySignature } from "./authorship.ts";
import { readSubmission, type Submission } from "./submission.ts";
import { MAX_STORED_BODY_BYTES } from "./intent.ts";
import { parseJsonBody } from "./strict_json.ts";
import { type DecodedSignature, workOf } from "./signature.ts";

/** Which intent, under which template or policy. */
export type SubmissionRef = Pick<Submission, "variant" | "id" | "refKind" | "refId">;

/** What the serving thread decides on before any signature is verified. */
export interface SubmissionSummary {
  submission: SubmissionRef;
  /** The address tokens it costs: max(1, signatures carried, public keys named). */
  work: number;
  /** False for Variant B `Unsigned`: no signature to verify. */
  signed: boolean;
}

/** A submission read (parsed, shaped, decoded), its signature not yet verified. */
export interface ReadSubmission {
  summary: SubmissionSummary;
  /** The signed object: `payload` (A) or `intent` (B). */
  signed: Record<string, unknown>;
  signature: DecodedSignature | null;
  /** The body as stored: the request's value with every number as JCS writes it. */
  body: Uint8Array;
  /** The body's value (the signed object is a member of it). */
  value: unknown;
}

/** A submission read and verified, ready for the store. */
export interface VerifiedSubmission {
  /** Which intent, under which template or policy. */
  submission: SubmissionRef;
  /** Who signed; null for Variant B `Unsigned`. */
  verified: Verified | null;
  /** The body as stored: the request's value with every number as JCS writes it. */
  body: Uint8Array;
  /** The signed object's `attrs`, for the record's `attrs` (undefined when absent). */
  attrs: unknown;
  /** UTF-8 of the request's JCS (its signed object's within it). */
  canonicalRequest: Uint8Array;
}

const encoder = new TextEncoder();

/**
 * Reads a strict-parsed submission: the stored form's size, the shape and
 * encodings, and the work it asks for. Nothing is verified.
 *
 * @param ctx what decoding needs (the key cache).
 * @param value the strict-parsed body: stored with every number as JCS
 *   writes it (the value that is verified).
 * @param compactText the body's bytes when they already are that text.
 * @throws {ServiceError} `invalid_body`; `payload_too_large` when the stored form is too large.
 */
export function readSubmissionValue(
  ctx: VerifyContext,
  value: unknown,
  compactText?: Uint8Array,
): ReadSubmission {
  // JSON.stringify writes numbers as JCS does, so the record holds no literal nobody signed.
  const body = compactText ?? encoder.encode(JSON.stringify(value));
  if (body.length > MAX_STORED_BODY_BYTES) {
    // Only long runs of numbers such as 1e20, which JCS writes in full, grow this much.
    throw tooLarge(MAX_STORED_BODY_BYTES, { asStored: true });
  }
  const { signed, signature, ...submission } = readSubmission(value, ctx.keys);
  return {
    summary: { submission, work: workOf(signature), signed: signature !== null },
    signed,
    signature,
    body,
    value,
  };
}

/**
 * A `POST /intents` body's bytes, parsed and read.
 *
 * @throws {ServiceError} as {@link parseJsonBody} and {@link readSubmissionValue}.
 */
export function readSubmissionBody(ctx: VerifyContext, bytes: Uint8Array): ReadSubmission {
  const { value, compact } = parseJsonBody(bytes);
  // A compact body already is the text the record keeps: no need to write it again.
  return readSubmissionValue(ctx, value, compact ? bytes : undefined);
}

/**
 * Verifies the signature of a read submission.
 *
 * @throws {ServiceError} `invalid_signature`; `invalid_body` for a Multisig
 *   signer key outside the prime-order subgroup.
 */
export async function verifyRead(
  ctx: VerifyContext,
  read: ReadSubmission,
): Promise<VerifiedSubmission> {
  const { summary, signed, signature, body, value } = read;
  // The request's JCS, what the record's `R` is made of, holds the signed object's: written once.
  const within = canonicalBytesWithin(value, signed);
  const signedBytes = within.inner ?? canonicalBytesOfParsed(signed);
  const verified = signature ? await verifySignature(signature, signedBytes, ctx) : null;
  const canonicalRequest = within.bytes;
  return { submission: summary.submission, verified, body, attrs: signed.attrs, canonicalRequest };
}
