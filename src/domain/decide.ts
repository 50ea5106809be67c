/**
 * A signer's decision on a pending intent (docs/interface.md §10): an
 * approval over the intent's signed bytes, or a rejection over the rejection
 * bytes (`intents:reject:` and the signed bytes), so that neither signature
 * can stand for the other. Each key decides once; the same signature sent
 * again is answered with the view as it stands, whatever the state, so a
 * retry after a lost answer (the client's, or the store's own retry of a
 * commit it applied) learns that its decision counted.
 *
 * Order of checks, for both: `invalid_body` (shape, encodings), `not_found`,
 * then the repeat, then `not_pending`, `invalid_signature`, the key's rate
 * limit, `signer_not_authorized`, `already_approved` or `already_rejected`.
 * @module
 */

import { canonicalBytesOfParsed } from "@intents/protocol/jcs";
import { rejectionBytesOf } from "@intents/protocol/signed";
import { ServiceError } from "../errors.ts";
import { type VerifyContext, verifySignature } from "./authorship.ts";
import { reachesThreshold, rejectionDecides, signerNotAuthorized, stateAt } from "./governance.ts";
import type { ApprovalEntry, ApprovalState, StoredIntent } from "./intent.ts";
import { decodePublicKey, type PublicKeyCache } from "./public_keys.ts";
import { signedObject } from "./record.ts";
import { ApprovalBodySchema } from "./schemas.ts";
import { type DecodedEd25519, type DecodedPasskey, decodeSignature } from "./signature.ts";
import { signatureDigest } from "./signature_digest.ts";
import type { IntentChange, Store } from "./store.ts";
import { validate } from "./validate.ts";
import { approvalsView, expiry, noSuchIntent } from "./approve.ts";
import { inSpan } from "../telemetry/tracing.ts";

/** Which decision: an approval or a rejection. */
export type Decision = "approval" | "rejection";

/** What a decision needs. */
export interface DecideDeps extends VerifyContext {
  store: Pick<Store, "getIntent" | "changeIntent">;
  now: () => Date;
  /**
   * Told the key of a decision whose signature verified, before anything is
   * stored: it may refuse (the key's rate limit) by throwing.
   */
  admitSigner?: (keyId: string) => void;
}

/** What became of a decision. */
export interface DecisionOutcome {
  /** The view of `GET /intents/{id}/approvals` as it stands after the decision. */
  view: Record<string, unknown>;
  /** `recorded`: this request stored it; `repeated`: it was stored already. */
  outcome: "recorded" | "repeated";
  /** The key id that decided. */
  keyId: string;
  /** The state the intent reached, when the decision ended it. */
  ended?: "accepted" | "rejected";
}

type Single = DecodedEd25519 | DecodedPasskey;

/** The one signature of a decision's body, or an `invalid_body` naming what is wrong. */
function readDecision(value: unknown, decision: Decision, keys: PublicKeyCache): Single {
  const body = validate(ApprovalBodySchema, value, "");
  const signature = body.signature as Record<string, unknown> | null;
  if (typeof signature === "object" && signature !== null && "Multisig" in signature) {
    throw new ServiceError(
      "invalid_body",
      `signature.Multisig: ${
        decision === "approval" ? "an approval" : "a rejection"
      } is one Ed25519 or Passkey`,
    );
  }
  return decodeSignature(signature, "signature", { nested: true, keys }) as Single;
}

/** The document's key text for a key id, or undefined when the key is not a signer. */
function signerText(
  approval: ApprovalState,
  keyId: string,
  keys: PublicKeyCache,
): string | undefined {
  for (const keyText of Object.keys(approval.signers)) {
    // Keys were checked when the document was stored; decoding is served from the key cache.
    if (decodePublicKey(keyText, "signer", "any", keys).id === keyId) return keyText;
  }
  return undefined;
}

/** The recorded decisions of this kind. */
function entriesOf(approval: ApprovalState, decision: Decision): readonly ApprovalEntry[] {
  return (decision === "approval" ? approval.approvals : approval.rejections) ?? [];
}

/** True when this very signature is recorded as a decision of this kind. */
function isRepeat(intent: StoredIntent, decision: Decision, digest: string): boolean {
  return entriesOf(intent.approval!, decision).some((entry) => entry.sig === digest);
}

function notPending(intent: StoredIntent, now: Date): ServiceError {
  return new ServiceError("not_pending", `the intent is ${stateAt(intent, now)}`);
}

/**
 * The intent after `key` decided at `now`: the decision recorded, and the
 * intent accepted when approvals reach the threshold, or rejected when the
 * keys that have not rejected can no longer reach it.
 */
function applyDecision(
  intent: StoredIntent,
  decision: Decision,
  entry: ApprovalEntry,
): IntentChange {
  const approval = intent.approval!;
  if (decision === "approval") {
    const next = { ...approval, approvals: [...approval.approvals, entry] };
    const accepted = reachesThreshold(next);
    return {
      intent: { ...intent, state: accepted ? "accepted" : "pending", approval: next },
      type: accepted ? "intent.accepted" : "intent.approval_added",
    };
  }
  const next = { ...approval, rejections: [...(approval.rejections ?? []), entry] };
  const rejected = rejectionDecides(next);
  return {
    intent: { ...intent, state: rejected ? "rejected" : "pending", approval: next },
    type: rejected ? "intent.rejected" : "intent.rejection_added",
  };
}

/**
 * For a decision that comes after the deadline of an intent still stored as
 * pending: records the expiry, in a change checked as any is, unless this
 * very decision was stored meanwhile (a retry whose first answer was lost,
 * committing at the same time), which it returns. So a late decision reads
 * the intent as it stood once its expiry or that decision was stored.
 */
async function expireUnlessRepeated(
  deps: DecideDeps,
  id: string,
  decision: Decision,
  digest: string,
): Promise<StoredIntent | null> {
  let repeat: StoredIntent | null = null;
  await deps.store.changeIntent(id, (intent) => {
    if (isRepeat(intent, decision, digest)) repeat = intent;
    else if (intent.state === "pending" && stateAt(intent, deps.now()) === "expired") {
      repeat = null;
      return expiry(intent);
    }
    return null;
  });
  return repeat;
}

/**
 * `POST /intents/{id}/approvals` or `POST /intents/{id}/rejections`: records
 * one signer's decision.
 *
 * @param id the stored id, or null for a path id no intent can have
 *   (`not_found` without a store read, yet after the body's refusals).
 * @returns the view after the decision, and whether this request recorded it.
 * @throws {ServiceError} in the order of the module's notes.
 */
async function decideIntent(
  deps: DecideDeps,
  id: string | null,
  value: unknown,
  decision: Decision,
): Promise<DecisionOutcome> {
  const signature = readDecision(value, decision, deps.keys);
  if (id === null) throw noSuchIntent();
  const found = await deps.store.getIntent(id);
  if (!found?.approval) throw noSuchIntent();
  const digest = signatureDigest(signature);
  const { keyId } = signature;
  if (isRepeat(found, decision, digest)) {
    return { view: approvalsView(found, deps.now()), outcome: "repeated", keyId };
  }
  if (stateAt(found, deps.now()) !== "pending") {
    const repeat = found.state === "pending"
      ? await expireUnlessRepeated(deps, id, decision, digest)
      : null;
    if (repeat) return { view: approvalsView(repeat, deps.now()), outcome: "repeated", keyId };
    throw notPending(found, deps.now());
  }
  // Verified once: the signed object of an intent never changes.
  const signed = canonicalBytesOfParsed(signedObject(found));
  await verifySignature(
    signature,
    decision === "approval" ? signed : rejectionBytesOf(signed),
    deps,
  );
  deps.admitSigner?.(keyId);
  let now = deps.now();
  let seen: StoredIntent = found;
  let repeated = false;
  let tooLate = false;
  // Decided on the intent as it stands when its change is stored, and again
  // should another change come first (or the store's own retry of this one).
  const changed = await deps.store.changeIntent(id, (intent) => {
    now = deps.now();
    seen = intent;
    const approval = intent.approval!;
    if (isRepeat(intent, decision, digest)) {
      repeated = true;
      return null;
    }
    if (intent.state === "pending" && stateAt(intent, now) === "expired") {
      // Past its deadline: the expiry is recorded here, checked as any change is, so that a
      // decision stored first (this one's own retry, say) makes this run again and count.
      tooLate = true;
      return expiry(intent);
    }
    tooLate = false;
    if (stateAt(intent, now) !== "pending") throw notPending(intent, now);
    const key = signerText(approval, keyId, deps.keys);
    // Under rules the record's quorum is the effective one: its signers and kinds count only.
    if (key === undefined || (approval.kinds && !approval.kinds.includes(signature.kind))) {
      throw signerNotAuthorized(signature.path, approval.rules !== undefined);
    }
    if (approval.approvals.some((a) => a.key === key)) {
      throw new ServiceError("already_approved", "this key has approved the intent");
    }
    if ((approval.rejections ?? []).some((r) => r.key === key)) {
      throw new ServiceError("already_rejected", "this key has rejected the intent");
    }
    const entry = { key, kind: signature.kind, at: now.toISOString(), sig: digest };
    return applyDecision(intent, decision, entry);
  });
  if (changed && tooLate) throw notPending(changed, now);
  if (changed) {
    const ended = changed.state === "accepted" || changed.state === "rejected"
      ? changed.state
      : undefined;
    return { view: approvalsView(changed, now), outcome: "recorded", keyId, ended };
  }
  if (repeated) return { view: approvalsView(seen, now), outcome: "repeated", keyId };
  throw noSuchIntent();
}

/**
 * `decideIntent` in the span `intents.decide` (docs/interface.md §13):
 * `intents.decision` (approval or rejection), `intents.outcome` (`recorded`,
 * or `repeated` for a decision stored before), `intents.ended` when it ended
 * the intent, `error.type` for a refusal's code. Without tracing, the call alone.
 *
 * @throws {ServiceError} as `decideIntent`.
 */
export function decideInSpan(
  deps: DecideDeps,
  id: string | null,
  value: unknown,
  decision: Decision,
): Promise<DecisionOutcome> {
  return inSpan(
    "intents.decide",
    { attributes: { "intents.decision": decision } },
    async (span) => {
      const result = await decideIntent(deps, id, value, decision);
      span?.setAttribute("intents.outcome", result.outcome);
      if (result.ended) span?.setAttribute("intents.ended", result.ended);
      return result;
    },
  );
}
