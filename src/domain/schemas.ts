/**
 * Request shapes, one valibot schema each. They validate requests and are the
 * source of the OpenAPI document, and so of the wire protocol's types
 * (`protocol/shapes.ts`), so none of the three can drift apart. They check
 * shape; base58 and key points are decoded in `signature.ts`. Every rule a
 * JSON Schema can state is an action the OpenAPI conversion turns into a
 * keyword, so the published schema refuses what these refuse.
 * @module
 */

import * as v from "valibot";
import {
  DEFAULT_APPROVAL_WINDOW_S,
  MAX_APPROVAL_WINDOW_S,
  MAX_MULTISIG_ENTRIES,
  MAX_RULE_REASON_CHARS,
  MAX_RULE_WHEN_CHARS,
  MAX_RULES,
} from "@intents/protocol/bounds";
import { UUID_PATTERN } from "@intents/protocol/intent_id";
import {
  checkExtractorUrl,
  EXTRACTOR_URL_PATTERN,
  MAX_EXTRACTOR_URL_LENGTH,
} from "./extractor_url.ts";

// The bounds are the wire protocol's, which the client checks too.
export {
  DEFAULT_APPROVAL_WINDOW_S,
  MAX_APPROVAL_WINDOW_S,
  MAX_MULTISIG_ENTRIES,
  MAX_RULE_REASON_CHARS,
  MAX_RULE_WHEN_CHARS,
  MAX_RULES,
};

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
// Control characters (Unicode's Cc: C0, DEL, C1) are refused in ids: they break logs and
// terminals. Written as ranges and without flags so that the OpenAPI document can publish the
// pattern as it is (JSON Schema reads patterns as ECMA-262 with the u flag: the same set).
// deno-lint-ignore no-control-regex
const NO_CONTROL = /^[^\x00-\x1f\x7f-\x9f]*$/;

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

/**
 * How many base58 characters can encode a byte string of each of `lengths`:
 * at least one per byte (each leading zero byte is one `1`), at most
 * ceil(n · log58 256). Fewer or more characters can never decode to such a
 * length, so the schema can state the bound; the exact length is checked on
 * the decoded bytes.
 */
export function base58Chars(...lengths: number[]): { min: number; max: number } {
  return {
    min: Math.min(...lengths),
    max: Math.ceil(Math.max(...lengths) * Math.log(256) / Math.log(58)),
  };
}

/** A base58 string of `min` to `max` characters. */
function base58String({ min, max }: { min: number; max: number }) {
  return v.pipe(
    v.string("expected a base58 string"),
    v.nonEmpty("must not be empty"),
    v.minLength(min, `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
    v.regex(BASE58, "must be base58 (Bitcoin alphabet)"),
  );
}

/**
 * A string of 1 to `max` characters, counted in code points (a character
 * outside the BMP counts once), as JSON Schema's `minLength`/`maxLength` count.
 */
function boundedText(max: number) {
  const message = `must be 1 to ${max} characters`;
  return v.pipe(
    v.string("expected a string"),
    v.minCodePoints(1, message),
    v.maxCodePoints(max, message),
  );
}

/** What {@link extractorUrl} checks, as far as JSON Schema can state it. */
export interface ExtractorUrlRequirement {
  /** Most characters. */
  maxLength: number;
  /** A regular expression (no flags) every accepted URL and `""` match. */
  pattern: string;
}

/** The issue of {@link extractorUrl}; its message is the rule's reason. */
export interface ExtractorUrlIssue extends v.BaseIssue<string> {
  readonly kind: "validation";
  readonly type: "extractor_url";
  readonly requirement: ExtractorUrlRequirement;
}

/** The action of {@link extractorUrl}. */
export interface ExtractorUrlAction extends v.BaseValidation<string, string, ExtractorUrlIssue> {
  readonly type: "extractor_url";
  readonly reference: typeof extractorUrl;
  readonly requirement: ExtractorUrlRequirement;
}

/**
 * The evidence extractor URL rule (docs/interface.md §6) as a valibot action: `""` (the
 * default) or a URL `checkExtractorUrl` accepts; the issue's message is its
 * reason. `requirement` is the part of the rule a JSON Schema can state, which
 * the OpenAPI document publishes as `maxLength` and `pattern`.
 */
export function extractorUrl(): ExtractorUrlAction {
  return {
    kind: "validation",
    type: "extractor_url",
    reference: extractorUrl,
    async: false,
    expects: null,
    requirement: { maxLength: MAX_EXTRACTOR_URL_LENGTH, pattern: EXTRACTOR_URL_PATTERN },
    "~run"(dataset, config) {
      if (dataset.typed && dataset.value !== "") {
        const reason = checkExtractorUrl(dataset.value);
        if (reason !== null) v._addIssue(this, "URL", dataset, config, { message: reason });
      }
      return dataset;
    },
  };
}

/** `attrs`: optional; when present an object with a required free-form object `fields`. */
export const AttrsSchema = v.strictObject({
  fields: v.pipe(jsonObject, v.description("Free-form members; signed like the rest.")),
}, "expected an object");

/** `{"Ed25519": {"pub_key", "signature"}}` member body. */
export const Ed25519Schema = v.strictObject({
  pub_key: v.pipe(base58String(base58Chars(32)), v.description("The public key, base58.")),
  signature: v.pipe(base58String(base58Chars(64)), v.description("The signature, base58.")),
}, "expected an object");

/** `{"Passkey": {...}}` member body. */
export const PasskeySchema = v.strictObject({
  // The authenticator data and the DER signature are read by the assertion's checks, whose
  // refusals are `invalid_signature`: only loose bounds here.
  authenticator_data: v.pipe(
    base58String({ min: 1, max: 4096 }),
    v.description("The assertion's authenticator data, base58."),
  ),
  client_data: v.pipe(
    v.string("expected a string"),
    v.nonEmpty("must not be empty"),
    v.maxCodePoints(8192, "must be at most 8192 characters"),
    v.description("The client data JSON text, exactly as the browser made it."),
  ),
  pub_key: v.pipe(
    base58String(base58Chars(33, 65)),
    v.description("The credential's public key: a SEC1 P-256 point, base58."),
  ),
  signature: v.pipe(
    base58String({ min: 1, max: 128 }),
    v.description("The DER ECDSA signature, base58."),
  ),
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

/** A signer key: Ed25519 (32 bytes) or P-256 (33 or 65 bytes). */
const signerKey = base58String(base58Chars(32, 33, 65));

/** Signers with their weights, as a Multisig descriptor and a governed document name them. */
const SignersSchema = v.pipe(
  v.record(signerKey, positiveSafeInteger, "expected an object"),
  v.check((value) => !Array.isArray(value), "expected an object"),
  v.minEntries(1, "must name at least one signer"),
  v.maxEntries(MAX_MULTISIG_ENTRIES, `must name at most ${MAX_MULTISIG_ENTRIES} signers`),
);

/** `{"Multisig": {...}}` member body. */
export const MultisigSchema = v.strictObject({
  pub_key: v.pipe(
    v.strictObject({
      signers: SignersSchema,
      threshold: positiveSafeInteger,
    }, "expected an object"),
    v.description("The signers with their weights, and the weight that suffices."),
  ),
  signatures: v.pipe(
    v.array(v.unknown(), "expected an array"),
    v.maxLength(MAX_MULTISIG_ENTRIES, `must hold at most ${MAX_MULTISIG_ENTRIES} signatures`),
  ),
}, "expected an object");

/** The signature kinds a rule may name. */
export const RULE_KINDS = ["Ed25519", "Passkey"] as const;

/** True when no two items of a list are equal. */
const distinct = <T>(items: T[]) => new Set(items).size === items.length;

const when = v.pipe(
  v.string("expected a CEL expression"),
  v.minCodePoints(1, `must be 1 to ${MAX_RULE_WHEN_CHARS} characters`),
  v.maxCodePoints(MAX_RULE_WHEN_CHARS, `must be 1 to ${MAX_RULE_WHEN_CHARS} characters`),
  v.description(
    "A CEL expression over `intent`, `variant`, `document`, `signers`, `kinds` " +
      "and `now`; the rule applies when it is true.",
  ),
);

/** The effects of a rule, of which it has exactly one. */
export const RULE_EFFECTS = ["deny", "threshold", "signers", "kinds"] as const;

/**
 * One rule of a governed document (docs/interface.md §15): a condition and
 * exactly one effect. One object with every effect optional, so that a refusal
 * names the member at fault; the count of effects is checked after.
 */
export const RuleSchema = v.pipe(
  v.strictObject({
    when,
    deny: v.optional(v.pipe(
      boundedText(MAX_RULE_REASON_CHARS),
      v.regex(NO_CONTROL, "must not contain control characters"),
      v.description("The intent is refused with this reason, sent verbatim in the message."),
    )),
    threshold: v.optional(v.pipe(
      positiveSafeInteger,
      v.description("The quorum for this intent: at most the sum of the weights."),
    )),
    signers: v.optional(v.pipe(
      v.array(signerKey, "expected an array of keys"),
      v.minLength(1, "must name at least one key"),
      v.maxLength(MAX_MULTISIG_ENTRIES, `must name at most ${MAX_MULTISIG_ENTRIES} keys`),
      v.check(distinct, "must not name a key twice"),
      v.description("Only these signers of the document count for this intent."),
    )),
    kinds: v.optional(v.pipe(
      v.array(v.picklist(RULE_KINDS, 'expected "Ed25519" or "Passkey"'), "expected an array"),
      v.minLength(1, "must name at least one kind"),
      v.check(distinct, "must not name a kind twice"),
      v.description("Only signatures of these kinds count for this intent."),
    )),
  }, "expected an object"),
  v.check(
    (rule) => RULE_EFFECTS.filter((effect) => rule[effect] !== undefined).length === 1,
    "must have exactly one effect: deny, threshold, signers or kinds",
  ),
);

/** A governed document's rules, in the order they are evaluated. */
export const RulesSchema = v.pipe(
  v.array(RuleSchema, "expected an array of rules"),
  v.minLength(1, "must hold at least one rule"),
  v.maxLength(MAX_RULES, `must hold at most ${MAX_RULES} rules`),
);

/** The `authorization` member of a governed template or policy (docs/interface.md §10). */
export const AuthorizationSchema = v.strictObject({
  signers: SignersSchema,
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
  rules: v.optional(RulesSchema),
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

/** Variant A `payload`. */
export const PayloadSchema = v.strictObject({
  attrs: v.optional(AttrsSchema),
  id: v.pipe(
    boundedText(128),
    v.regex(NO_CONTROL, "must not contain control characters"),
    // "." and ".." cannot stand as a path segment: /intents/.. would never reach the record.
    v.notValues([".", ".."], 'must not be "." or ".."'),
    v.description("The intent id. A UUID is stored lower-cased."),
  ),
  template_id: v.pipe(
    boundedText(128),
    v.description("The id of a stored template; one that is not stored is `template_not_found`."),
  ),
}, "expected an object");

/** Variant B `intent`. */
export const IntentSchema = v.strictObject({
  attrs: v.optional(AttrsSchema),
  id: v.pipe(
    v.string("expected a string"),
    // Not valibot's `uuid`: it has flags, which JSON Schema cannot carry.
    v.regex(UUID_PATTERN, "must be a UUID"),
    v.metadata({ format: "uuid" }),
    v.description("The intent id: a UUID of any version, stored lower-cased."),
  ),
  policy_id: v.pipe(
    boundedText(128),
    v.description("The id of a stored policy; one that is not stored is `policy_not_found`."),
  ),
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
  evidence_extractor_url: v.pipe(v.string("expected a string"), extractorUrl()),
}, "expected an object");

/** Variant A payload after validation. */
export type Payload = v.InferOutput<typeof PayloadSchema>;
/** Variant B intent after validation. */
export type Intent = v.InferOutput<typeof IntentSchema>;
