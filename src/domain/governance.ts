/**
 * Governed documents (CONTRACT §10): a template or policy sent as JSON with
 * an `authorization` member fixes who signs the intents that reference it,
 * with what weight, what threshold, and how long approvals may take. The
 * quorum is part of the document's content address, so what governed an
 * intent can never change under it.
 * @module
 */

import { badRequest, ServiceError } from "../errors.ts";
import type { ApprovalEntry, IntentState, Quorum, StoredDocument, StoredIntent } from "./intent.ts";
import { decodePublicKey } from "./public_keys.ts";
import { AuthorizationSchema, DEFAULT_APPROVAL_WINDOW_S } from "./schemas.ts";
import { parseStrictJson, StrictJsonError } from "./strict_json.ts";
import { fieldPath, validate } from "./validate.ts";

/** True for `application/json`, parameters allowed. */
export function isJsonMediaType(contentType: string): boolean {
  return contentType.split(";", 1)[0].trim().toLowerCase() === "application/json";
}

/** Reads a validated `authorization` member into a quorum, or throws 400 `invalid_authorization`. */
function readAuthorization(value: unknown): Quorum {
  const path = "authorization";
  const body = validate(AuthorizationSchema, value, path, { code: "invalid_authorization" });
  const signers = new Map<string, { keyText: string; weight: number }>();
  let total = 0n;
  for (const [keyText, weight] of Object.entries(body.signers)) {
    const keyPath = fieldPath(path, "signers", keyText);
    let key;
    try {
      key = decodePublicKey(keyText, keyPath, "any");
    } catch (error) {
      if (error instanceof ServiceError) throw badRequest("invalid_authorization", error.message);
      throw error;
    }
    // One secret key must not stand for two signers (A and A + T, T a torsion point).
    if (key.curve === "ed25519" && !key.key.isPrimeOrder) {
      throw badRequest("invalid_authorization", `${keyPath}: is not in the prime-order subgroup`);
    }
    if (signers.has(key.id)) {
      throw badRequest("invalid_authorization", `${keyPath}: names the same key as another signer`);
    }
    signers.set(key.id, { keyText, weight });
    total += BigInt(weight);
  }
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    // The record shows the weight reached as a JSON number: it must stay exact.
    throw badRequest(
      "invalid_authorization",
      `${path}.signers: the weights must add up to at most 2^53−1`,
    );
  }
  if (BigInt(body.threshold) > total) {
    throw badRequest(
      "invalid_authorization",
      `${path}.threshold: must be at most the sum of the weights, ${total}`,
    );
  }
  return {
    signers,
    threshold: body.threshold,
    unsigned: body.unsigned ?? false,
    approvalWindowS: body.approval_window_s ?? DEFAULT_APPROVAL_WINDOW_S,
  };
}

/**
 * Checks a document being stored: sent as JSON, it must be strict JSON; with
 * an `authorization` member, that member must be a valid quorum.
 *
 * @returns the quorum it fixes, or null when it governs nothing.
 * @throws {ServiceError} 400 `invalid_json` or `invalid_authorization`.
 */
export function checkDocument(doc: StoredDocument): Quorum | null {
  if (!isJsonMediaType(doc.contentType)) return null;
  let value: unknown;
  try {
    value = parseStrictJson(doc.bytes);
  } catch (error) {
    if (error instanceof StrictJsonError) {
      const message = error.hint ? `${error.message}; ${error.hint}` : error.message;
      throw badRequest("invalid_json", message);
    }
    throw error;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  if (!Object.hasOwn(value, "authorization")) return null;
  return readAuthorization((value as Record<string, unknown>).authorization);
}

/**
 * The quorum a stored document fixes, or null. Documents are checked when
 * they are stored; one stored before governed documents existed, whose
 * `authorization` member meant nothing then and does not check now, governs
 * nothing.
 */
export function documentQuorum(doc: StoredDocument): Quorum | null {
  try {
    return checkDocument(doc);
  } catch (error) {
    if (error instanceof ServiceError) return null;
    throw error;
  }
}

/** A signature of a submission or an approval: the signer's key id and kind. */
export interface SignedBy {
  keyId: string;
  kind: "Ed25519" | "Passkey";
  /** Where the signature sits in the request, for messages. */
  path: string;
}

/**
 * The approvals that `signed` make under `quorum`.
 *
 * @throws {ServiceError} 403 `signer_not_authorized` naming the first key the
 *   document does not name.
 */
export function approvalsOf(
  quorum: Quorum,
  signed: readonly SignedBy[],
): Omit<ApprovalEntry, "at">[] {
  return signed.map(({ keyId, kind, path }) => {
    const signer = quorum.signers.get(keyId);
    if (!signer) {
      throw new ServiceError(
        "signer_not_authorized",
        `${path}: the key is not a signer of the document`,
      );
    }
    return { key: signer.keyText, kind };
  });
}

/**
 * Checks that a Multisig descriptor is the document's quorum: the same keys
 * (compared as points), weights and threshold.
 *
 * @throws {ServiceError} 400 `quorum_mismatch`.
 */
export function checkDescriptor(
  quorum: Quorum,
  descriptor: { signers: Map<string, { weight: number }>; threshold: number; path: string },
): void {
  const same = descriptor.threshold === quorum.threshold &&
    descriptor.signers.size === quorum.signers.size &&
    [...descriptor.signers].every(([keyId, { weight }]) =>
      quorum.signers.get(keyId)?.weight === weight
    );
  if (!same) {
    throw badRequest(
      "quorum_mismatch",
      `${descriptor.path}.pub_key: the signers, weights and threshold must be the document's`,
    );
  }
}

/** The part of an approval that decides its weight. */
type Weighed = { signers: Record<string, number>; approvals: readonly { key: string }[] };

/** The weight of the keys that have approved, by the document's weights. */
export function approvalWeight(approval: Weighed): bigint {
  let weight = 0n;
  for (const { key } of approval.approvals) weight += BigInt(approval.signers[key] ?? 0);
  return weight;
}

/** True when the approvals reach the threshold. */
export function reachesThreshold(approval: Weighed & { threshold: number }): boolean {
  return approvalWeight(approval) >= BigInt(approval.threshold);
}

/** The state an intent reads as at `now`: a pending intent past its deadline is expired. */
export function stateAt(intent: StoredIntent, now: Date): IntentState {
  if (intent.state !== "pending" || !intent.approval) return intent.state;
  return now.getTime() >= Date.parse(intent.approval.expiresAt) ? "expired" : "pending";
}
