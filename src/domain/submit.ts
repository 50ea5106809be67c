/**
 * The submit use case: read, verify, check the template or policy, store once.
 * Check order (CONTRACT §4): shape and encodings, signature, template/policy,
 * then the id. A request whose authorship does not verify never learns
 * whether an id exists.
 * @module
 */

import { badRequest, ServiceError } from "../errors.ts";
import { canonicalBytes } from "./jcs.ts";
import { verifyAuthorship, type VerifyContext } from "./authorship.ts";
import { readSubmission } from "./submission.ts";
import { type Authorship, MAX_STORED_BODY_BYTES, type StoredIntent } from "./intent.ts";
import type { IntentWriter, Store } from "./store.ts";

/** What the use case needs. */
export interface SubmitDeps extends VerifyContext {
  store: Pick<Store, "findDocument">;
  writer: IntentWriter;
  allowUnsigned: boolean;
}

const encoder = new TextEncoder();

/**
 * Submits an intent.
 *
 * @param value the strict-parsed request body: verified, and stored with
 *   every number as JCS writes it (the value that was verified).
 * @returns the stored record.
 * @throws {ServiceError} 400 with the reason's code, 409 `intent_exists`, or
 *   413 when the stored form of the body would be too large.
 */
export async function submitIntent(deps: SubmitDeps, value: unknown): Promise<StoredIntent> {
  const submission = readSubmission(value, { allowUnsigned: deps.allowUnsigned });
  let authorship: Authorship = { kind: "Unsigned", signers: [] };
  if (submission.signature) {
    authorship = await verifyAuthorship(
      submission.signature,
      canonicalBytes(submission.signed),
      deps,
    );
  }
  const notFound = () =>
    submission.refKind === "template"
      ? badRequest("template_not_found", "payload.template_id: no such template")
      : badRequest("policy_not_found", "intent.policy_id: no such policy");
  const ref = await deps.store.findDocument(submission.refKind, submission.refId);
  if (!ref) throw notFound();

  // JSON.stringify writes numbers as JCS does, so the record holds no literal nobody signed.
  const body = encoder.encode(JSON.stringify(value));
  if (body.length > MAX_STORED_BODY_BYTES) {
    // Only long runs of numbers such as 1e20, which JCS writes in full, grow this much.
    throw new ServiceError(
      413,
      "payload_too_large",
      `body: with its numbers written in full it is over ${MAX_STORED_BODY_BYTES} bytes`,
    );
  }
  const result = await deps.writer.insert({
    intent: {
      id: submission.id,
      variant: submission.variant,
      refId: submission.refId,
      authorship,
      body,
    },
    ref,
  });
  if (result.outcome === "exists") {
    throw new ServiceError(409, "intent_exists", "an intent with this id already exists");
  }
  if (result.outcome === "reference_changed") throw notFound();
  return result.intent;
}
