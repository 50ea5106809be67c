/**
 * Genuinely valid request bodies for `POST /intents`, of every variant and
 * signature kind, signed with `client/mod.ts` and the software passkey: the
 * starting points of the hostile cases (`hostile_cases.ts`), and the error
 * codes a client may see.
 * @module
 */

import fc from "fast-check";
import {
  type Ed25519Key,
  ed25519Signature,
  generateEd25519Key,
  multisigSignature,
  signedBytes,
  signVariantA,
  signVariantB,
  unsignedVariantB,
} from "../../client/mod.ts";
import type { Intent, Payload, VariantABody, VariantBBody } from "../../client/mod.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";

/** The error codes a client may see: the contract's list plus `request_timeout`. */
export const ERROR_CODES = new Set([
  "invalid_json",
  "invalid_body",
  "invalid_signature",
  "unsigned_not_permitted",
  "template_not_found",
  "policy_not_found",
  "intent_exists",
  "unsupported_media_type",
  "payload_too_large",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "precondition_failed",
  "invalid_evidence_extractor_url",
  "internal",
  "request_timeout",
]);

/** The body kinds: every variant with every signature kind it allows. */
export const BODY_KINDS = [
  "A/Ed25519",
  "A/Passkey",
  "A/Multisig",
  "B/Ed25519",
  "B/Passkey",
  "B/Multisig",
  "B/Unsigned",
] as const;

/** One body kind. */
export type BodyKind = typeof BODY_KINDS[number];

/** The environment the hostile server runs with (passkeys signed for this origin). */
export const HOSTILE_SERVER_ENV: Record<string, string> = {
  ALLOW_UNSIGNED: "true",
  PASSKEY_ORIGINS: "http://localhost:8000",
  PASSKEY_RP_IDS: "localhost",
  MAX_BODY_BYTES: "61440",
};

/** Keys that sign valid bodies, made once per run. */
export interface Signers {
  ed25519: Ed25519Key;
  passkey: SoftwarePasskey;
}

/** Makes the signing keys. */
export async function makeSigners(): Promise<Signers> {
  return { ed25519: generateEd25519Key(), passkey: await SoftwarePasskey.create() };
}

/** What a valid body is built from, chosen by fast-check. */
export interface Seed {
  kind: BodyKind;
  fields: Record<string, unknown> | null;
}

/** Free-form `attrs.fields` contents (no values the strict reader refuses). */
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** Seeds of valid bodies. */
export const seedArb: fc.Arbitrary<Seed> = fc.record({
  kind: fc.constantFrom(...BODY_KINDS),
  fields: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fieldValue, { maxKeys: 4 }), {
    nil: null,
  }),
});

/**
 * Builds a genuinely valid body for `seed` with a fresh id.
 *
 * @param refs the stored template (Variant A) and policy (Variant B) ids.
 */
export async function buildValidBody(
  seed: Seed,
  signers: Signers,
  refs: { templateId: string; policyId: string },
): Promise<VariantABody | VariantBBody> {
  const [variant, kind] = seed.kind.split("/") as ["A" | "B", string];
  const attrs = seed.fields === null ? {} : { attrs: { fields: seed.fields } };
  const value: Payload | Intent = variant === "A"
    ? { id: `hostile-${crypto.randomUUID()}`, template_id: refs.templateId, ...attrs }
    : { id: crypto.randomUUID(), policy_id: refs.policyId, ...attrs };
  if (kind === "Unsigned") return unsignedVariantB(value as Intent);
  if (kind === "Ed25519") {
    return variant === "A"
      ? signVariantA(value as Payload, signers.ed25519)
      : signVariantB(value as Intent, signers.ed25519);
  }
  const passkey = { Passkey: await signers.passkey.assert(signedBytes(value)) };
  const signature = kind === "Passkey" ? passkey : multisigSignature({
    signers: {
      [passkey.Passkey.pub_key]: 1,
      [ed25519Signature(value, signers.ed25519).Ed25519.pub_key]: 1,
    },
    threshold: 2,
    signatures: [ed25519Signature(value, signers.ed25519), passkey],
  });
  return variant === "A"
    ? { payload: value as Payload, signature }
    : { authorship: { Signed: signature }, intent: value as Intent };
}
