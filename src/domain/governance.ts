/**
 * Governed documents (docs/interface.md §10): a template or policy sent as
 * JSON with an `authorization` member fixes its {@link Quorum}: who signs the
 * intents that reference it, with what weight, what threshold, and how long
 * approvals may take. The quorum is part of the document's content address,
 * so what governed an intent can never change under it. An intent under such
 * a document keeps its {@link ApprovalState} in its record.
 * @module
 */

import { ServiceError } from "../errors.ts";
import type {
  ApprovalEntry,
  ApprovalState,
  IntentState,
  NewIntent,
  Quorum,
  Signers,
  StoredIntent,
} from "./intent.ts";
import { parseJsonBody } from "./strict_json.ts";
import { decodeSigners, type PublicKeyCache } from "./public_keys.ts";
import { signatureDigest, type SignatureParts } from "./signature_digest.ts";
import { AuthorizationSchema, DEFAULT_APPROVAL_WINDOW_S, RulesSchema } from "./schemas.ts";
import { compileRules } from "./rules/compile.ts";
import { validate } from "./validate.ts";

/** A template or policy to read a quorum from. */
export interface DocumentContent {
  bytes: Uint8Array;
  /** Whether it is sent (or was stored) as JSON: only then can it govern. */
  json: boolean;
}

/** Reads an `authorization` member into a quorum, or refuses with `invalid_authorization`. */
function readAuthorization(value: unknown, keys?: PublicKeyCache): Quorum {
  const path = "authorization";
  // The rules are refused with a code of their own: checked apart, once the rest is.
  const rules = isObject(value) ? value.rules : undefined;
  const shape = isObject(value) ? { ...value, rules: undefined } : value;
  const body = validate(AuthorizationSchema, shape, path, { code: "invalid_authorization" });
  const signers = decodeSigners(body.signers, {
    path: `${path}.signers`,
    code: "invalid_authorization",
    cache: keys,
  });
  let total = 0n;
  for (const { weight } of signers.values()) total += BigInt(weight);
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    // The record shows the weight reached as a JSON number: it must stay exact.
    throw new ServiceError(
      "invalid_authorization",
      `${path}.signers: the weights must add up to at most 2^53−1`,
    );
  }
  if (BigInt(body.threshold) > total) {
    throw new ServiceError(
      "invalid_authorization",
      `${path}.threshold: must be at most the sum of the weights, ${total}`,
    );
  }
  const quorum: Quorum = {
    signers,
    threshold: body.threshold,
    unsigned: body.unsigned ?? false,
    approvalWindowS: body.approval_window_s ?? DEFAULT_APPROVAL_WINDOW_S,
  };
  if (rules !== undefined) {
    const shaped = validate(RulesSchema, rules, `${path}.rules`, { code: "invalid_rule" });
    quorum.rules = compileRules(shaped, {
      path: `${path}.rules`,
      signers,
      totalWeight: total,
      keys,
    });
  }
  return quorum;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks a document being stored: sent as JSON, it must be strict JSON; with
 * an `authorization` member, that member must be a valid quorum. Sent as
 * anything else, it must not be a JSON object with an `authorization` member.
 *
 * @param doc the document's bytes, and whether it is sent as JSON.
 * @param keys where decoded public keys are kept.
 * @returns the quorum it fixes, or null when it governs nothing.
 * @throws {ServiceError} `invalid_json` or `invalid_authorization`.
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode('{"name": "transfer"}');
 * checkDocument({ bytes, json: true }); // null: it governs nothing
 * ```
 */
export function checkDocument(doc: DocumentContent, keys?: PublicKeyCache): Quorum | null {
  if (!doc.json) {
    if (looksGoverned(doc.bytes)) {
      throw new ServiceError(
        "invalid_authorization",
        "body: a document with an authorization member governs only when sent as " +
          "application/json; send it as application/json",
      );
    }
    return null;
  }
  const { value } = parseJsonBody(doc.bytes);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  if (!Object.hasOwn(value, "authorization")) return null;
  return readAuthorization((value as Record<string, unknown>).authorization, keys);
}

/**
 * True when bytes sent with another content type than JSON parse strictly to
 * a JSON object with an `authorization` member: stored, they would look
 * governed and govern nothing, so they are refused (docs/interface.md §10).
 */
function looksGoverned(bytes: Uint8Array): boolean {
  // Only text that opens an object, white space aside, can be one: most documents stop here.
  let i = 0;
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)
  ) i++;
  if (bytes[i] !== 0x7b) return false;
  let value: unknown;
  try {
    value = parseJsonBody(bytes).value;
  } catch (error) {
    if (error instanceof ServiceError) return false;
    throw error;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.hasOwn(value, "authorization");
}

/**
 * The quorum a stored document fixes, or null. Documents are checked when
 * they are stored; one stored before governed documents existed, whose
 * `authorization` member meant nothing then and does not check now, governs
 * nothing.
 */
export function documentQuorum(doc: DocumentContent): Quorum | null {
  try {
    return checkDocument(doc);
  } catch (error) {
    if (error instanceof ServiceError) return null;
    throw error;
  }
}

/**
 * The quorum of a document stored apart as having rules, or null when it
 * does not check now: unlike {@link documentQuorum}'s, such a document is
 * never taken for one that governs nothing.
 */
export function ruledQuorum(doc: DocumentContent): Quorum | null {
  let quorum: Quorum | null;
  try {
    quorum = checkDocument(doc);
  } catch (error) {
    if (error instanceof ServiceError) return null;
    throw error;
  }
  return quorum?.rules ? quorum : null;
}

/**
 * A signature of a submission or a decision: the signer's key id and kind,
 * and what identifies the signature (`signature_digest.ts`: its digest, made
 * where a document keeps it, recognises it sent again).
 */
export type SignedBy = SignatureParts & {
  /** Where the signature sits in the request, for messages. */
  path: string;
};

/** The refusal of a signature whose key the governing document does not name. */
export function signerNotAuthorized(path: string, ruled = false): ServiceError {
  return new ServiceError(
    "signer_not_authorized",
    ruled
      ? `${path}: under the document's rules, this key or kind does not count for this intent`
      : `${path}: the key is not a signer of the document`,
  );
}

/**
 * The approvals that `signed` make under `quorum`.
 *
 * @throws {ServiceError} `signer_not_authorized` naming the first key the
 *   document does not name.
 */
export function approvalsOf(
  quorum: Quorum,
  signed: readonly SignedBy[],
): Omit<ApprovalEntry, "at">[] {
  return signed.map((by) => {
    const signer = quorum.signers.get(by.keyId);
    if (!signer) throw signerNotAuthorized(by.path);
    return { key: signer.keyText, kind: by.kind, sig: signatureDigest(by) };
  });
}

/**
 * Checks that a Multisig descriptor is the document's quorum: the same keys
 * (compared as points), weights and threshold.
 *
 * @throws {ServiceError} `quorum_mismatch`.
 */
export function checkDescriptor(
  quorum: Quorum,
  descriptor: { signers: Signers; threshold: number; path: string },
): void {
  const same = descriptor.threshold === quorum.threshold &&
    descriptor.signers.size === quorum.signers.size &&
    [...descriptor.signers].every(([keyId, { weight }]) =>
      quorum.signers.get(keyId)?.weight === weight
    );
  if (!same) {
    throw new ServiceError(
      "quorum_mismatch",
      `${descriptor.path}.pub_key: the signers, weights and threshold must be the document's`,
    );
  }
}

/** The document's signers as its text writes them: key → weight. */
function signerWeights(quorum: Quorum): Record<string, number> {
  return Object.fromEntries([...quorum.signers.values()].map((s) => [s.keyText, s.weight]));
}

/**
 * The approval state an intent's record starts with, stored at `receivedAt`:
 * the submission's approvals stamped with that time, and the deadline the
 * document's approval window sets.
 */
export function startApproval(
  quorum: Quorum,
  approvals: readonly Omit<ApprovalEntry, "at">[],
  receivedAt: string,
  ruled?: NewIntent["ruled"],
): ApprovalState {
  const state: ApprovalState = {
    threshold: quorum.threshold,
    signers: signerWeights(quorum),
    approvals: approvals.map((a) => ({ ...a, at: receivedAt })),
    rejections: [],
    expiresAt: new Date(Date.parse(receivedAt) + quorum.approvalWindowS * 1000).toISOString(),
  };
  if (ruled) {
    state.kinds = ruled.kinds;
    state.rules = ruled.rules;
  }
  return state;
}

/** The part of an approval state that decides its weight. */
type Weighed = Pick<ApprovalState, "signers"> & { approvals: readonly { key: string }[] };

/** The weight of the keys that have approved, by the document's weights. */
export function approvalWeight(state: Weighed): bigint {
  let weight = 0n;
  for (const { key } of state.approvals) weight += BigInt(state.signers[key] ?? 0);
  return weight;
}

/** True when the approvals reach the threshold. */
export function reachesThreshold(state: Weighed & { threshold: number }): boolean {
  return approvalWeight(state) >= BigInt(state.threshold);
}

/**
 * True when the keys that have not rejected can no longer reach the
 * threshold: the intent is then rejected (docs/interface.md §10).
 */
export function rejectionDecides(
  state: Pick<ApprovalState, "signers" | "threshold" | "rejections">,
): boolean {
  let left = 0n;
  for (const weight of Object.values(state.signers)) left += BigInt(weight);
  for (const { key } of state.rejections ?? []) left -= BigInt(state.signers[key] ?? 0);
  return left < BigInt(state.threshold);
}

/** True when `approvals` reach the quorum's threshold. */
export function quorumReached(
  quorum: Quorum,
  approvals: readonly Omit<ApprovalEntry, "at">[],
): boolean {
  return reachesThreshold({
    threshold: quorum.threshold,
    signers: signerWeights(quorum),
    approvals,
  });
}

/** The state an intent reads as at `now`: a pending intent past its deadline is expired. */
export function stateAt(intent: StoredIntent, now: Date): IntentState {
  if (intent.state !== "pending" || !intent.approval) return intent.state;
  return now.getTime() >= Date.parse(intent.approval.expiresAt) ? "expired" : "pending";
}
