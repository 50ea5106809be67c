/**
 * The submit use case's store side (docs/architecture.md: A submission's
 * path): `findReference` finds the template or policy before the signature is
 * verified; `storeSubmission` then applies the document's quorum
 * (`signer_not_authorized`, then `quorum_mismatch`), under rules recognizes a
 * replay and evaluates them (`src/domain/rules/`), and stores once, the id
 * checked last (`intent_exists`, or the replay of this same signed
 * submission), then `too_many_pending`. `trySubmission` is the dry run: the
 * same checks, up to the id. A request whose authorship does not
 * verify, or whose signer the document does not name, never learns whether
 * an id exists.
 * @module
 */

import { ServiceError, tooLarge } from "../errors.ts";
import type { Verified } from "./authorship.ts";
import { approvalsOf, checkDescriptor, quorumReached } from "./governance.ts";
import type { Submission } from "./submission.ts";
import type { SubmissionSummary, VerifiedSubmission } from "./verify_submission.ts";
import {
  type ApprovalEntry,
  type DocumentRef,
  MAX_STORED_BODY_BYTES,
  type NewIntent,
  type Quorum,
  type StoredIntent,
} from "./intent.ts";
import type { PublicKeyCache } from "./public_keys.ts";
import { applyRules } from "./rules/apply.ts";
import type { IntentWriter, Store } from "./store.ts";
import { canonicalBytesOfParsed } from "@intents/protocol/jcs";

/**
 * The template or policy a read submission references, before its signature
 * is verified: documents are public (`GET /templates/{id}`), so saying one is
 * missing tells a caller nothing it could not learn, and a request under a
 * missing one costs no verification. An `Unsigned` submission without
 * `ALLOW_UNSIGNED` is refused as such first, as it is under an ungoverned
 * document (its absence decides nothing more).
 *
 * @throws {ServiceError} `unsigned_not_permitted`, `template_not_found` or `policy_not_found`.
 */
export async function findReference(
  deps: { store: Pick<Store, "findDocument">; allowUnsigned: boolean },
  summary: SubmissionSummary,
): Promise<DocumentRef> {
  const { submission } = summary;
  const ref = await deps.store.findDocument(submission.refKind, submission.refId);
  if (ref) return ref;
  if (!summary.signed && !deps.allowUnsigned) throw UNSIGNED_REFUSED();
  throw notFound(submission);
}

/** What deciding a verified submission needs, short of the store. */
export interface PlanDeps {
  allowUnsigned: boolean;
  /** The clock whose time a document's rules see as `now`. */
  now: () => Date;
  /** Where decoded public keys are kept. */
  keys?: PublicKeyCache;
}

/** What storing a verified submission needs. */
export interface StoreDeps extends PlanDeps {
  store: Pick<Store, "findDocument" | "getIntent">;
  writer: IntentWriter;
  /** `MAX_PENDING_PER_SIGNER`; unlimited when absent. */
  maxPendingPerSigner?: number;
}

/** What became of a submission. */
export interface Stored {
  /** The record: as stored now, or as it stands now when replayed. */
  record: StoredIntent;
  /**
   * True when the id was taken by this same signed submission, stored
   * before (a retry after a lost answer): nothing was stored now.
   */
  replayed: boolean;
}

/**
 * Room kept in a governed intent's record for its approvals: sixteen signers,
 * each written twice (weights, and approvals or rejections), with a kind, a
 * time and its signature's digest (about 315 bytes each at most).
 */
const APPROVAL_RESERVE_BYTES = 8192;

const UNSIGNED_REFUSED = () =>
  new ServiceError("unsigned_not_permitted", "authorship: Unsigned intents are not permitted");

function notFound(submission: Pick<Submission, "refKind">): ServiceError {
  return submission.refKind === "template"
    ? new ServiceError("template_not_found", "payload.template_id: no such template")
    : new ServiceError("policy_not_found", "intent.policy_id: no such policy");
}

/**
 * The rules of docs/interface.md §4, which hold wherever no document's quorum
 * decides: `Unsigned` only with `ALLOW_UNSIGNED`, and a Multisig's signers
 * reaching its own threshold.
 *
 * @throws {ServiceError} `unsigned_not_permitted` or `invalid_signature`.
 */
function checkUngoverned(verified: Verified | null, allowUnsigned: boolean): void {
  if (verified === null && !allowUnsigned) throw UNSIGNED_REFUSED();
  if (verified?.multisig && !verified.multisig.reached) {
    throw new ServiceError("invalid_signature", verified.multisig.shortfall);
  }
}

/** What the document makes of a submission before its rules: its quorum and approvals. */
interface Decided {
  /** Under a governed document: its quorum. */
  quorum?: Quorum;
  approvals?: Omit<ApprovalEntry, "at">[];
}

/**
 * Under a governed document, its quorum and the approvals the submission's
 * signatures make.
 *
 * @throws {ServiceError} `unsigned_not_permitted`, `invalid_signature`,
 *   `quorum_mismatch` or `signer_not_authorized`.
 */
function decide(ref: DocumentRef, verified: Verified | null, allowUnsigned: boolean): Decided {
  const { quorum } = ref;
  if (quorum === null) {
    checkUngoverned(verified, allowUnsigned);
    return {};
  }
  // Under a governed document the document decides, whatever ALLOW_UNSIGNED says.
  if (verified === null && !quorum.unsigned) throw UNSIGNED_REFUSED();
  const approvals = verified === null ? [] : approvalsOf(quorum, verified.signedBy);
  if (verified?.multisig) {
    checkDescriptor(quorum, verified.multisig);
    // Its signatures are its approvals: with none, nobody the document names signed.
    if (approvals.length === 0) {
      throw new ServiceError(
        "invalid_signature",
        `${verified.multisig.path}.signatures: under a governed document a Multisig needs at least one signature`,
      );
    }
  }
  return { quorum, approvals };
}

/**
 * The intent a verified submission makes: every check before the id's, the
 * document's rules last (docs/interface.md §15), evaluated at `deps.now()`.
 *
 * @throws {ServiceError} `payload_too_large` when a governed record would
 *   leave no room for its approvals, and the refusals of the rules.
 */
function planIntent(
  deps: PlanDeps,
  { submission, verified, body, attrs, canonicalRequest }: VerifiedSubmission,
  ref: DocumentRef,
  decided: Decided,
): NewIntent {
  let { quorum } = decided;
  const approvals = decided.approvals ?? [];
  // The record of a governed intent also holds its approvals, within the same KV value.
  if (quorum && body.length > MAX_STORED_BODY_BYTES - APPROVAL_RESERVE_BYTES) {
    throw tooLarge(MAX_STORED_BODY_BYTES - APPROVAL_RESERVE_BYTES, { asStored: true });
  }
  const intent: NewIntent = {
    id: submission.id,
    variant: submission.variant,
    refId: submission.refId,
    authorship: verified?.authorship ?? { kind: "Unsigned", signers: [] },
    body,
    state: "accepted",
    canonical: { bytes: canonicalRequest, attrs },
  };
  if (!quorum) return intent;
  if (quorum.rules) {
    const now = deps.now();
    const ruled = applyRules({
      quorum: { ...quorum, rules: quorum.rules },
      document: ref.id,
      variant: submission.variant,
      body,
      verified,
      now,
      keys: deps.keys,
    });
    quorum = ruled.quorum;
    intent.ruled = ruled.ruled;
    intent.receivedAt = now.toISOString();
  }
  intent.quorum = quorum;
  intent.approvals = approvals;
  if (verified !== null && !quorumReached(quorum, approvals)) intent.state = "pending";
  return intent;
}

/**
 * What a submission would become (`POST /intents/dry-run`, docs/interface.md
 * §15): every check of {@link storeSubmission} before the id's, nothing read
 * of ids or stored.
 *
 * @returns the intent as it would be stored.
 * @throws {ServiceError} as {@link storeSubmission} before the id check.
 */
export function trySubmission(
  deps: PlanDeps,
  verified: VerifiedSubmission,
  ref: DocumentRef,
): NewIntent {
  return planIntent(deps, verified, ref, decide(ref, verified.verified, deps.allowUnsigned));
}

const utf8 = new TextDecoder();

/** The JCS bytes of a stored body (the request's value, numbers as JCS writes them). */
function canonicalBody(body: Uint8Array): string {
  return utf8.decode(canonicalBytesOfParsed(JSON.parse(utf8.decode(body))));
}

/**
 * The stored intent when its id was taken by this same submission (its
 * request, as a JSON value, equal to `body`), signed: a retry. Null
 * otherwise: an `Unsigned` body needs no key, so confirming one would
 * confirm a guess at someone else's intent.
 */
async function replayOf(
  deps: StoreDeps,
  id: string,
  verified: Verified | null,
  body: Uint8Array,
): Promise<StoredIntent | null> {
  if (verified === null) return null;
  const stored = await deps.store.getIntent(id);
  if (!stored || stored.authorship.kind === "Unsigned") return null;
  return canonicalBody(stored.body) === canonicalBody(body) ? stored : null;
}

/**
 * Stores a verified submission under its template or policy (`ref`, found by
 * {@link findReference}): the quorum the document fixes, then, under rules,
 * a replay of this same signed submission recognized before they are
 * evaluated once (docs/interface.md §15), then the id.
 *
 * @returns the stored record: `accepted`, or `pending` under a governed
 *   document whose threshold its signatures do not reach; or, for the same
 *   signed submission sent again, the record as it stands, `replayed`.
 * @throws {ServiceError} the refusals of the quorum and of the rules, `intent_exists`,
 *   `too_many_pending`, `template_not_found` or `policy_not_found` (the
 *   document changed and is gone since, which a store conversion alone does), or
 *   `payload_too_large` when a governed record would leave no room for its
 *   approvals.
 */
export async function storeSubmission(
  deps: StoreDeps,
  verifiedSubmission: VerifiedSubmission,
  ref: DocumentRef,
): Promise<Stored> {
  const { submission, verified, body } = verifiedSubmission;
  const decided = decide(ref, verified, deps.allowUnsigned);
  if (decided.quorum?.rules) {
    // The same signed submission sent again learns its outcome; its rules are not met again.
    const replayed = await replayOf(deps, submission.id, verified, body);
    if (replayed) return { record: replayed, replayed: true };
  }
  const intent = planIntent(deps, verifiedSubmission, ref, decided);
  const state = intent.state;
  const maxPending = state === "pending" ? deps.maxPendingPerSigner : undefined;
  let result = await deps.writer.insert({ intent, ref, maxPending });
  if (result.outcome === "reference_changed") {
    // Rewritten under a new version (its id is its content, so the same bytes
    // and quorum: a store conversion does that): found again, tried once more.
    const again = await deps.store.findDocument(submission.refKind, submission.refId);
    if (again) result = await deps.writer.insert({ intent, ref: again, maxPending });
  }
  if (result.outcome === "exists") {
    const replayed = await replayOf(deps, submission.id, verified, body);
    if (replayed) return { record: replayed, replayed: true };
    throw new ServiceError("intent_exists", "an intent with this id already exists");
  }
  if (result.outcome === "reference_changed") throw notFound(submission);
  if (result.outcome === "too_many_pending") {
    throw new ServiceError(
      "too_many_pending",
      `a key that signed has ${deps.maxPendingPerSigner} intents pending under this ` +
        `${submission.refKind}; one must be accepted, rejected or expire first`,
    );
  }
  return { record: result.intent, replayed: false };
}
