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
import type {
  Authorship,
  InsertOutcome,
  PendingInsert,
  Store,
  StoredIntent,
} from "../storage/store.ts";

// Orders the intents this process accepts within one millisecond (the index is
// newest first); safe integers last far longer than any process.
let lastSeq = 0;
function nextSeq(): number {
  return ++lastSeq;
}

/** Commits inserts: one commit per insert, or grouped. */
export interface IntentWriter {
  insert(pending: PendingInsert): Promise<InsertOutcome>;
}

/** What the use case needs. */
export interface SubmitDeps extends VerifyContext {
  store: Store;
  writer: IntentWriter;
  allowUnsigned: boolean;
  now: () => Date;
}

/**
 * Submits an intent.
 *
 * @param body the exact request bytes (stored as received).
 * @param value the strict-parsed value of `body` (verified and stored as one).
 * @returns the stored record.
 * @throws {ServiceError} 400 with the reason's code, or 409 `intent_exists`.
 */
export async function submitIntent(
  deps: SubmitDeps,
  body: Uint8Array,
  value: unknown,
): Promise<StoredIntent> {
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
  const ref = await deps.store.getDocumentRef(submission.refKind, submission.refId);
  if (!ref) throw notFound();

  const now = deps.now();
  const record: StoredIntent = {
    id: submission.id,
    variant: submission.variant,
    refId: submission.refId,
    authorship,
    receivedAt: now.toISOString(),
    receivedAtMs: now.getTime(),
    seq: nextSeq(),
    body,
  };
  const outcome = await deps.writer.insert({ record, ref });
  if (outcome === "exists") {
    throw new ServiceError(409, "intent_exists", "an intent with this id already exists");
  }
  if (outcome === "reference_changed") throw notFound();
  return record;
}
