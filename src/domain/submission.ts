/**
 * Reads a parsed `POST /intents` body into a submission: which variant, which
 * id, which template or policy, what was signed and by what. Shape and
 * encoding problems are refused with `invalid_body`; nothing is verified here.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { AuthorshipSchema, IntentSchema, PayloadSchema } from "./schemas.ts";
import { type DecodedSignature, decodeSignature } from "./signature.ts";
import { validate } from "./validate.ts";
import { UUID_PATTERN } from "@intents/protocol/intent_id";
import type { DocumentKind } from "./intent.ts";
import type { PublicKeyCache } from "./public_keys.ts";

/** A well-formed submission, ready for verification. */
export interface Submission {
  variant: "A" | "B";
  /** The intent id as stored (UUIDs lower-cased). */
  id: string;
  refKind: DocumentKind;
  refId: string;
  /** The JSON value whose JCS bytes are signed: `payload` (A) or `intent` (B). */
  signed: Record<string, unknown>;
  /** The signature, or null for Variant B `Unsigned`. */
  signature: DecodedSignature | null;
}

/**
 * The id under which an intent is stored and looked up: UUIDs are
 * lower-cased so that ids differing only in case are the same intent.
 */
export function normalizeIntentId(id: string): string {
  return UUID_PATTERN.test(id) ? id.toLowerCase() : id;
}

function hasExactly(members: string[], a: string, b: string): boolean {
  return members.length === 2 && members.includes(a) && members.includes(b);
}

/**
 * Detects the variant by the top-level members and validates the body.
 * Whether an `Unsigned` intent is permitted depends on the document it
 * references, so that is decided later.
 *
 * @param body the parsed JSON body.
 * @param keys where decoded public keys are kept (the verify context's).
 * @throws {ServiceError} `invalid_body`.
 */
export function readSubmission(body: unknown, keys?: PublicKeyCache): Submission {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ServiceError("invalid_body", "body: expected a JSON object");
  }
  const obj = body as Record<string, unknown>;
  const members = Object.keys(obj);
  if (hasExactly(members, "payload", "signature")) {
    const payload = validate(PayloadSchema, obj.payload, "payload");
    return {
      variant: "A",
      id: normalizeIntentId(payload.id),
      refKind: "template",
      refId: payload.template_id,
      signed: obj.payload as Record<string, unknown>,
      signature: decodeSignature(obj.signature, "signature", { keys }),
    };
  }
  if (hasExactly(members, "authorship", "intent")) {
    const intent = validate(IntentSchema, obj.intent, "intent");
    const authorship = obj.authorship;
    let signature: DecodedSignature | null = null;
    if (
      typeof authorship === "object" && authorship !== null && !Array.isArray(authorship) &&
      Object.keys(authorship).length === 1 && "Signed" in authorship
    ) {
      signature = decodeSignature(
        (authorship as { Signed: unknown }).Signed,
        "authorship.Signed",
        { keys },
      );
    } else if (authorship !== "Unsigned") {
      validate(AuthorshipSchema, authorship, "authorship");
      throw new ServiceError("invalid_body", 'authorship: expected "Unsigned" or {"Signed": …}');
    }
    return {
      variant: "B",
      id: normalizeIntentId(intent.id),
      refKind: "policy",
      refId: intent.policy_id,
      signed: obj.intent as Record<string, unknown>,
      signature,
    };
  }
  throw new ServiceError(
    "invalid_body",
    "body: expected exactly the members payload and signature (Variant A) or authorship and intent (Variant B)",
  );
}
