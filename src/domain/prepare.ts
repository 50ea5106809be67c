/**
 * The part of a submission that needs no store: the strict parse, the shape
 * and encodings, the stored form's size, and the signature. It depends on the
 * request's bytes and the passkey policy alone, so it can run on any thread
 * (see `src/http/prepare_pool.ts`); the store's part is `submit.ts`.
 * @module
 */

import { badRequest, ServiceError } from "../errors.ts";
import { canonicalBytesOfParsed } from "./jcs.ts";
import { type Verified, type VerifyContext, verifySignature } from "./authorship.ts";
import { readSubmission, type Submission } from "./submission.ts";
import { MAX_STORED_BODY_BYTES } from "./intent.ts";
import { readStrictJson, StrictJsonError } from "./strict_json.ts";

/** A submission read and verified, ready for the store. */
export interface Prepared {
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

/** The 413 for a body whose stored form is over `limit` bytes. */
export function tooLarge(limit: number): ServiceError {
  return new ServiceError(
    "payload_too_large",
    `body: as stored, with its numbers written in full, it is over ${limit} bytes`,
  );
}

/**
 * Parses a request body as strict JSON (CONTRACT §3).
 *
 * @returns the parsed value, and whether the bytes are compact (see `StrictJson.compact`).
 * @throws {ServiceError} 400 `invalid_json`, with the reader's hint when it has one.
 */
export function parseJsonBody(bytes: Uint8Array): { value: unknown; compact: boolean } {
  try {
    return readStrictJson(bytes);
  } catch (error) {
    if (error instanceof StrictJsonError) {
      const message = error.hint ? `${error.message}; ${error.hint}` : error.message;
      throw badRequest("invalid_json", message);
    }
    throw error;
  }
}

/**
 * Reads and verifies a strict-parsed submission (CONTRACT §4's order up to
 * the template or policy: shape and encodings, then the signature).
 *
 * @param value the strict-parsed body: verified, and stored with every
 *   number as JCS writes it (the value that was verified).
 * @param compactText the body's bytes when they already are that text.
 * @throws {ServiceError} 400 `invalid_body` or `invalid_signature`, 413 when
 *   the stored form is too large.
 */
export async function prepareSubmission(
  ctx: VerifyContext,
  value: unknown,
  compactText?: Uint8Array,
): Promise<Prepared> {
  // JSON.stringify writes numbers as JCS does, so the record holds no literal nobody signed.
  const body = compactText ?? encoder.encode(JSON.stringify(value));
  if (body.length > MAX_STORED_BODY_BYTES) {
    // Only long runs of numbers such as 1e20, which JCS writes in full, grow this much.
    throw tooLarge(MAX_STORED_BODY_BYTES);
  }
  const { signed, signature, ...submission } = readSubmission(value);
  const verified = signature
    ? await verifySignature(signature, canonicalBytesOfParsed(signed), ctx)
    : null;
  return { submission, verified, body, attrs: signed.attrs };
}

/**
 * A `POST /intents` body's bytes, parsed and verified.
 *
 * @throws {ServiceError} as {@link parseJsonBody} and {@link prepareSubmission}.
 */
export async function prepareBody(ctx: VerifyContext, bytes: Uint8Array): Promise<Prepared> {
  const { value, compact } = parseJsonBody(bytes);
  // A compact body already is the text the record keeps: no need to write it again.
  return await prepareSubmission(ctx, value, compact ? bytes : undefined);
}
