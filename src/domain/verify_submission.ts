/**
 * The part of a submission that needs no store: the strict parse, the shape
 * and encodings, the stored form's size, and the signature. It depends on the
 * request's bytes and the verification context alone, so it can run on any
 * thread (see `src/workers/verify_pool.ts`); the store's part is `submit.ts`.
 * @module
 */

import { tooLarge } from "../errors.ts";
import { canonicalBytesOfParsed } from "./jcs.ts";
import { type Verified, type VerifyContext, verifySignature } from "./authorship.ts";
import { readSubmission, type Submission } from "./submission.ts";
import { MAX_STORED_BODY_BYTES } from "./intent.ts";
import { parseJsonBody } from "./json_body.ts";

/** A submission read and verified, ready for the store. */
export interface VerifiedSubmission {
  /** Which intent, under which template or policy. */
  submission: Pick<Submission, "variant" | "id" | "refKind" | "refId">;
  /** Who signed; null for Variant B `Unsigned`. */
  verified: Verified | null;
  /** The body as stored: the request's value with every number as JCS writes it. */
  body: Uint8Array;
  /** The signed object's `attrs`, for the record's `attrs` (undefined when absent). */
  attrs: unknown;
}

const encoder = new TextEncoder();

/**
 * Reads and verifies a strict-parsed submission (docs/interface.md §4's order
 * up to the template or policy: shape and encodings, then the signature).
 *
 * @param ctx what verification needs besides the body.
 * @param value the strict-parsed body: verified, and stored with every
 *   number as JCS writes it (the value that was verified).
 * @param compactText the body's bytes when they already are that text.
 * @throws {ServiceError} `invalid_body` or `invalid_signature`;
 *   `payload_too_large` when the stored form is too large.
 */
export async function verifySubmission(
  ctx: VerifyContext,
  value: unknown,
  compactText?: Uint8Array,
): Promise<VerifiedSubmission> {
  // JSON.stringify writes numbers as JCS does, so the record holds no literal nobody signed.
  const body = compactText ?? encoder.encode(JSON.stringify(value));
  if (body.length > MAX_STORED_BODY_BYTES) {
    // Only long runs of numbers such as 1e20, which JCS writes in full, grow this much.
    throw tooLarge(MAX_STORED_BODY_BYTES, { asStored: true });
  }
  const { signed, signature, ...submission } = readSubmission(value, ctx.keys);
  const verified = signature
    ? await verifySignature(signature, canonicalBytesOfParsed(signed), ctx)
    : null;
  return { submission, verified, body, attrs: signed.attrs };
}

/**
 * A `POST /intents` body's bytes, parsed and verified.
 *
 * @throws {ServiceError} as {@link parseJsonBody} and {@link verifySubmission}.
 */
export async function verifySubmissionBody(
  ctx: VerifyContext,
  bytes: Uint8Array,
): Promise<VerifiedSubmission> {
  const { value, compact } = parseJsonBody(bytes);
  // A compact body already is the text the record keeps: no need to write it again.
  return await verifySubmission(ctx, value, compact ? bytes : undefined);
}
