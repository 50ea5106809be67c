/**
 * Request shapes, one valibot schema each. These schemas validate requests and
 * are also the source of the OpenAPI document, so the two cannot drift apart.
 *
 * The schemas check shape only (types, members, lengths, alphabets). Decoding
 * base58 into bytes and checking key points happens in `decode_signature.ts`,
 * which reports the same kind of field path.
 * @module
 */

import * as v from "valibot";

/** Largest number of signers in a multisig descriptor and of entries in its signature list. */
export const MAX_MULTISIG_ENTRIES = 16;

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
// Control characters (C0, DEL, C1) are refused in ids: they break logs and terminals.
const CONTROL = /\p{Cc}/u;

/**
 * A JSON object that is not an array. The array check runs before `v.record`,
 * which accepts an array and outputs `{}`, so a check after it never sees one.
 */
const jsonObject = v.pipe(
  v.unknown(),
  v.check(
    (value) => typeof value === "object" && value !== null && !Array.isArray(value),
    "expected an object",
  ),
  v.record(v.string(), v.unknown(), "expected an object"),
);

/** A base58 string of at most `max` characters. */
function base58String(max: number) {
  return v.pipe(
    v.string("expected a base58 string"),
    v.nonEmpty("must not be empty"),
    v.maxLength(max, `must be at most ${max} characters`),
    v.regex(BASE58, "must be base58 (Bitcoin alphabet)"),
  );
}

/** Counts code points, so that a character outside the BMP counts once. */
function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

function boundedText(max: number, extra?: (s: string) => boolean, extraMessage?: string) {
  return v.pipe(
    v.string("expected a string"),
    v.check(
      (s) => codePointLength(s) >= 1 && codePointLength(s) <= max,
      `must be 1 to ${max} characters`,
    ),
    v.check((s) => (extra ? extra(s) : true), extraMessage ?? "is invalid"),
  );
}

/** `attrs`: optional; when present an object with a required free-form object `fields`. */
export const AttrsSchema = v.strictObject({ fields: jsonObject }, "expected an object");

/** `{"Ed25519": {"pub_key", "signature"}}` member body. */
export const Ed25519Schema = v.strictObject({
  pub_key: base58String(64),
  signature: base58String(128),
}, "expected an object");

/** `{"Passkey": {...}}` member body. */
export const PasskeySchema = v.strictObject({
  authenticator_data: base58String(4096),
  client_data: v.pipe(
    v.string("expected a string"),
    v.nonEmpty("must not be empty"),
    v.maxLength(8192, "must be at most 8192 characters"),
  ),
  pub_key: base58String(128),
  signature: base58String(128),
}, "expected an object");

/** A signature kind allowed inside a multisig list (no nesting). */
export const SingleSignatureSchema = v.union([
  v.strictObject({ Ed25519: Ed25519Schema }),
  v.strictObject({ Passkey: PasskeySchema }),
], "expected exactly one of Ed25519 or Passkey");

const positiveSafeInteger = v.pipe(
  v.number("expected a positive integer"),
  v.safeInteger("expected a positive safe integer"),
  v.minValue(1, "must be at least 1"),
);

/** `{"Multisig": {...}}` member body. */
export const MultisigSchema = v.strictObject({
  pub_key: v.strictObject({
    signers: v.pipe(
      v.record(base58String(128), positiveSafeInteger, "expected an object"),
      v.check((value) => !Array.isArray(value), "expected an object"),
      v.check((value) => Object.keys(value).length >= 1, "must name at least one signer"),
      v.check(
        (value) => Object.keys(value).length <= MAX_MULTISIG_ENTRIES,
        `must name at most ${MAX_MULTISIG_ENTRIES} signers`,
      ),
    ),
    threshold: positiveSafeInteger,
  }, "expected an object"),
  signatures: v.pipe(
    v.array(v.unknown(), "expected an array"),
    v.maxLength(MAX_MULTISIG_ENTRIES, `must hold at most ${MAX_MULTISIG_ENTRIES} signatures`),
  ),
}, "expected an object");

/** The longest approval window of a governed document: 30 days. */
export const MAX_APPROVAL_WINDOW_S = 2_592_000;
/** The approval window when a governed document names none: 7 days. */
export const DEFAULT_APPROVAL_WINDOW_S = 604_800;

/** The `authorization` member of a governed template or policy (CONTRACT §10). */
export const AuthorizationSchema = v.strictObject({
  signers: v.pipe(
    v.record(base58String(128), positiveSafeInteger, "expected an object"),
    v.check((value) => !Array.isArray(value), "expected an object"),
    v.check((value) => Object.keys(value).length >= 1, "must name at least one signer"),
    v.check(
      (value) => Object.keys(value).length <= MAX_MULTISIG_ENTRIES,
      `must name at most ${MAX_MULTISIG_ENTRIES} signers`,
    ),
  ),
  threshold: positiveSafeInteger,
  unsigned: v.optional(v.boolean("expected true or false")),
  approval_window_s: v.optional(
    v.pipe(
      v.number("expected a whole number of seconds"),
      v.safeInteger("expected a whole number of seconds"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(MAX_APPROVAL_WINDOW_S, `must be at most ${MAX_APPROVAL_WINDOW_S}`),
    ),
  ),
}, "expected an object");

/** `POST /intents/{id}/approvals` body: one Ed25519 or Passkey signature. */
export const ApprovalBodySchema = v.strictObject({
  signature: v.unknown(),
}, "expected an object");

/** Any signature kind: exactly one member naming it. */
export const SignatureSchema = v.union([
  v.strictObject({ Ed25519: Ed25519Schema }),
  v.strictObject({ Passkey: PasskeySchema }),
  v.strictObject({ Multisig: MultisigSchema }),
], "expected exactly one of Ed25519, Passkey or Multisig");

/** The kinds a signature object may name, with the schema of each body. */
export const SIGNATURE_KINDS = {
  Ed25519: Ed25519Schema,
  Passkey: PasskeySchema,
  Multisig: MultisigSchema,
} as const;

/** Variant A `payload`. */
export const PayloadSchema = v.strictObject({
  attrs: v.optional(AttrsSchema),
  id: v.pipe(
    boundedText(128, (s) => !CONTROL.test(s), "must not contain control characters"),
    // "." and ".." cannot stand as a path segment: /intents/.. would never reach the record.
    v.check((s) => s !== "." && s !== "..", 'must not be "." or ".."'),
  ),
  template_id: boundedText(128),
}, "expected an object");

/** Variant B `intent`. */
export const IntentSchema = v.strictObject({
  attrs: v.optional(AttrsSchema),
  id: v.pipe(v.string("expected a string"), v.uuid("must be a UUID")),
  policy_id: boundedText(128),
}, "expected an object");

/** Variant B `authorship`. */
export const AuthorshipSchema = v.union([
  v.literal("Unsigned"),
  v.strictObject({ Signed: SignatureSchema }),
], 'expected "Unsigned" or an object with member Signed');

/** Variant A request body. */
export const VariantASchema = v.strictObject({
  payload: PayloadSchema,
  signature: SignatureSchema,
});

/** Variant B request body. */
export const VariantBSchema = v.strictObject({
  authorship: AuthorshipSchema,
  intent: IntentSchema,
});

/** `PUT /config` body. */
export const ConfigBodySchema = v.strictObject({
  evidence_extractor_url: v.string("expected a string"),
}, "expected an object");

/** Variant A payload after validation. */
export type Payload = v.InferOutput<typeof PayloadSchema>;
/** Variant B intent after validation. */
export type Intent = v.InferOutput<typeof IntentSchema>;
/** Ed25519 member body. */
export type Ed25519Body = v.InferOutput<typeof Ed25519Schema>;
/** Passkey member body. */
export type PasskeyBody = v.InferOutput<typeof PasskeySchema>;
/** Multisig member body (entries of `signatures` still unchecked). */
export type MultisigBody = v.InferOutput<typeof MultisigSchema>;
