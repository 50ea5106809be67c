/**
 * The `components.schemas` of the OpenAPI document, converted from the
 * valibot schemas that validate requests (`src/domain/schemas.ts`) and of the
 * answers, so that the document and the server cannot drift apart.
 * @module
 */

import * as v from "valibot";
import { type JsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import { EVENT_TYPES } from "@intents/protocol/events";
import { ERROR_CODES } from "../../errors.ts";
import * as schemas from "../../domain/schemas.ts";

/** `{message, code}`: the body of every error response. */
export const ErrorBodySchema = v.object({
  message: v.pipe(v.string(), v.description("Human-readable; never echoes the input.")),
  code: v.pipe(v.picklist(ERROR_CODES), v.description("Stable machine-readable code.")),
});

/** A stored intent as returned by the service. */
export const IntentRecordSchema = v.object({
  id: v.pipe(v.string(), v.description("The intent id; UUIDs are stored lower-cased.")),
  variant: v.pipe(
    v.picklist(["A", "B"]),
    v.description(
      "A: a template's, with a signed `payload`; B: a policy's, with a signed `intent`.",
    ),
  ),
  template_id: v.optional(v.pipe(v.string(), v.description("Variant A only."))),
  policy_id: v.optional(v.pipe(v.string(), v.description("Variant B only."))),
  attrs: v.optional(schemas.AttrsSchema),
  authorship: v.pipe(
    v.object({
      kind: v.picklist(["Ed25519", "Passkey", "Multisig", "Unsigned"]),
      signers: v.pipe(
        v.array(v.string()),
        v.description("Base58 public keys whose signatures verified."),
      ),
    }),
    v.description("Who authorized it: the signature kind and the keys that signed."),
  ),
  received_at: v.pipe(v.string(), v.isoTimestamp(), v.description("RFC 3339 time.")),
  state: v.pipe(
    v.picklist(["accepted", "pending", "expired", "rejected"]),
    v.description(
      "`accepted`; under a governed document `pending` until the approvals reach the " +
        "threshold, `rejected` once the keys that have not rejected cannot reach it, " +
        "`expired` when neither happened by `approval.expires_at`.",
    ),
  ),
  approval: v.optional(v.pipe(
    v.lazy(() => ApprovalSchema),
    v.description("Present under a governed document (also once accepted)."),
  )),
  request: v.pipe(
    v.union([schemas.VariantASchema, schemas.VariantBSchema]),
    v.description(
      "The request body as a JSON value, every number written as JCS writes it (the value " +
        "that was verified); strings exact.",
    ),
  ),
});

/** The keys' approvals or rejections, in order. */
function decisions(what: "approval" | "rejection") {
  return v.array(v.object({
    key: v.pipe(v.string(), v.description("The signer's key, as the document writes it.")),
    kind: v.picklist(["Ed25519", "Passkey"]),
    at: v.pipe(v.string(), v.isoTimestamp(), v.description(`RFC 3339 time of the ${what}.`)),
  }));
}

/** The quorum of a governed document and who has approved. */
export const ApprovalSchema = v.object({
  threshold: v.pipe(
    v.number(),
    v.integer(),
    v.description("The document's threshold, or under rules the effective one."),
  ),
  weight: v.pipe(
    v.number(),
    v.integer(),
    v.description("The weight of the keys that have approved, by the document's weights."),
  ),
  signers: v.pipe(
    v.record(v.string(), v.number()),
    v.description(
      "The signers that count: key (base58, as the document writes it) to weight; the " +
        "document's, or under rules those the true rules keep.",
    ),
  ),
  approvals: v.pipe(
    decisions("approval"),
    v.description("Every key that has signed, those of the submission first, in order."),
  ),
  rejections: v.pipe(
    decisions("rejection"),
    v.description("Every key that has rejected, in order; empty until one does."),
  ),
  expires_at: v.pipe(
    v.string(),
    v.isoTimestamp(),
    v.description("A pending intent expires then: acceptance plus the approval window."),
  ),
  kinds: v.optional(v.pipe(
    v.array(v.picklist(schemas.RULE_KINDS)),
    v.description("Under rules: the signature kinds that count for this intent."),
  )),
  rules: v.optional(v.pipe(
    v.array(v.number()),
    v.description("Under rules: the indices of the document's rules that were true."),
  )),
});

/** `POST /intents/dry-run`: what the submission would become. */
export const DryRunSchema = v.object({
  outcome: v.pipe(
    v.picklist(["accepted", "pending"]),
    v.description("The state the intent would be stored in."),
  ),
  approval: v.pipe(
    v.nullable(ApprovalSchema),
    v.description("The effective quorum, as the record would hold it; null when ungoverned."),
  ),
  rules: v.pipe(v.array(v.number()), v.description("The indices of the rules that were true.")),
});

/** `GET /intents/{id}/approvals` and the answer of `POST`: pending, or only the state. */
export const ApprovalViewSchema = v.object({
  id: v.pipe(v.string(), v.description("The intent id.")),
  state: v.pipe(
    v.picklist(["pending", "accepted", "expired", "rejected"]),
    v.description("The intent's state; the other members are present while it is pending."),
  ),
  variant: v.optional(v.pipe(v.picklist(["A", "B"]), v.description("While pending."))),
  template_id: v.optional(v.pipe(v.string(), v.description("Variant A, while pending."))),
  policy_id: v.optional(v.pipe(v.string(), v.description("Variant B, while pending."))),
  signed: v.optional(v.pipe(
    v.record(v.string(), v.unknown()),
    v.description(
      "While pending: the payload (A) or intent (B) every approver signs; the signed bytes " +
        "are UTF-8 of its RFC 8785 (JCS) text.",
    ),
  )),
  challenge: v.optional(v.pipe(
    v.string(),
    v.description("While pending: base64url (no padding) of SHA-256 of the signed bytes."),
  )),
  reject_challenge: v.optional(v.pipe(
    v.string(),
    v.description(
      "While pending: base64url (no padding) of SHA-256 of the rejection bytes, UTF-8 " +
        "`intents:reject:` followed by the signed bytes: what a passkey signs to reject.",
    ),
  )),
  approval: v.optional(ApprovalSchema),
});

/**
 * An id the service hands out and takes back: event ids and listing cursors
 * (docs/interface.md §9: printable ASCII without white space, at most 128 characters).
 * Written without flags, so the pattern is published as it is.
 */
export const OpaqueIdSchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(128),
  v.regex(/^[\x21-\x7e]+$/),
);

/** `GET /intents`: one page, newest first. */
export const IntentPageSchema = v.object({
  items: v.array(IntentRecordSchema),
  cursor: v.pipe(
    v.nullable(OpaqueIdSchema),
    v.description("Pass back as `cursor` for the next page; null on the last page."),
  ),
});

/** One event of the feed. */
export const EventSchema = v.object({
  id: v.pipe(OpaqueIdSchema, v.description("The event id: pass as `after`.")),
  type: v.pipe(
    v.string(),
    v.description(
      `${EVENT_TYPES.slice(0, -1).map((type) => `\`${type}\``).join(", ")} or ` +
        `\`${EVENT_TYPES.at(-1)}\`; consumers ignore types they do not handle (more may be added).`,
    ),
  ),
  record: IntentRecordSchema,
});

/** `GET /events` in the pull form. */
export const EventPageSchema = v.object({
  events: v.array(EventSchema),
  next: v.pipe(
    v.nullable(OpaqueIdSchema),
    v.description(
      "Pass as `after` for the next page: the last event's id, or the `after` given when " +
        "the page is empty; null when the feed is empty and no `after` was given.",
    ),
  ),
});

/** `{id}` of a stored template or policy. */
export const DocumentIdSchema = v.object({
  id: v.pipe(v.string(), v.description("Base58 SHA-256 of the exact document bytes.")),
});

/** `GET /config` and `PUT /config` answer. */
export const ConfigSchema = v.object({
  evidence_extractor_url: v.pipe(v.string(), v.description('As set; "" selects the default.')),
  effective_url: v.pipe(v.string(), v.description('The URL in use ("" replaced by the default).')),
  updated_at: v.pipe(v.nullable(v.string()), v.description("RFC 3339 time; null if never set.")),
});

/** `GET /healthz` answer. */
export const HealthSchema = v.object({
  status: v.pipe(v.literal("ok"), v.description("Always `ok`: anything else is an error.")),
});

/** `GET /readyz` answer. */
export const ReadySchema = v.object({ status: v.literal("ready") });

/** The components converted into `components.schemas`, by name. */
const DEFINITIONS = {
  OpaqueId: OpaqueIdSchema,
  Attrs: schemas.AttrsSchema,
  Ed25519: schemas.Ed25519Schema,
  Passkey: schemas.PasskeySchema,
  Multisig: schemas.MultisigSchema,
  SingleSignature: schemas.SingleSignatureSchema,
  Signature: schemas.SignatureSchema,
  Payload: schemas.PayloadSchema,
  Intent: schemas.IntentSchema,
  Authorship: schemas.AuthorshipSchema,
  VariantA: schemas.VariantASchema,
  VariantB: schemas.VariantBSchema,
  ConfigBody: schemas.ConfigBodySchema,
  ApprovalBody: schemas.ApprovalBodySchema,
  Authorization: schemas.AuthorizationSchema,
  Rule: schemas.RuleSchema,
  Approval: ApprovalSchema,
  DryRun: DryRunSchema,
  ApprovalView: ApprovalViewSchema,
  ErrorBody: ErrorBodySchema,
  IntentRecord: IntentRecordSchema,
  IntentPage: IntentPageSchema,
  Event: EventSchema,
  EventPage: EventPageSchema,
  DocumentId: DocumentIdSchema,
  Config: ConfigSchema,
  Health: HealthSchema,
  Ready: ReadySchema,
};

/** A component's name. */
export type ComponentName = keyof typeof DEFINITIONS;

/** What each component means; the shapes come from the schemas. */
const COMPONENT_DESCRIPTIONS: Record<ComponentName, string> = {
  OpaqueId: "An opaque id the service hands out (an event id or a listing cursor). Only ids " +
    "this service handed out are taken back; any other is 400 `invalid_body`.",
  Attrs: "Optional attributes; `fields` is free-form.",
  Ed25519: "Ed25519 (strict RFC 8032): `pub_key` is 32 bytes, `signature` 64 bytes, both base58. " +
    "Non-canonical S, non-canonical point encodings and small-order keys or R are rejected.",
  Passkey: "A WebAuthn assertion. `client_data` is the client data JSON text byte for byte, " +
    "read as strictly as a request body (no member twice): " +
    '`type` "webauthn.get", `challenge` base64url (no padding) of SHA-256 of the signed bytes, ' +
    "`origin` one of PASSKEY_ORIGINS, `crossOrigin` absent or false, no `topOrigin`. " +
    "`authenticator_data` (base58) is exactly 37 bytes, or, with the extension data flag " +
    "(0x80), 37 bytes and one CBOR map of extensions; never the attested credential data flag " +
    "(0x40). It starts with SHA-256 of one of PASSKEY_RP_IDS and has the user-present flag. " +
    "`pub_key` is a SEC1 P-256 point (33 or 65 bytes, base58); `signature` " +
    "the ASN.1 DER ECDSA signature over authenticator_data || SHA-256(client_data).",
  Multisig: "Valid when every entry of `signatures` verifies, each entry's key is a signer, no " +
    "signer signs twice and the signers' weights reach `threshold`. Keys of `signers` are " +
    "base58 public keys (32 bytes: Ed25519, in the prime-order subgroup; 33 or 65 bytes: " +
    `P-256 passkey). At most ${schemas.MAX_MULTISIG_ENTRIES} signers and ` +
    `${schemas.MAX_MULTISIG_ENTRIES} signatures.`,
  SingleSignature: "A signature kind allowed inside a multisig (no nesting).",
  Signature: "Exactly one signature kind.",
  Payload: "Variant A payload. The signed bytes are UTF-8 of its RFC 8785 (JCS) text.",
  Intent: "Variant B intent. The signed bytes are UTF-8 of its RFC 8785 (JCS) text.",
  Authorship: '"Unsigned" (only when the operator sets ALLOW_UNSIGNED=true) or a signature.',
  VariantA: "Variant A request: exactly `payload` and `signature`.",
  VariantB: "Variant B request: exactly `authorship` and `intent`.",
  ConfigBody: 'The runtime configuration. `evidence_extractor_url` is "" (the default) or an ' +
    "absolute http or https URL with a host, no user info, query, fragment or white space, " +
    "at most 2048 characters, written in its normal form: the URL standard's serialization " +
    "equals it, or equals it plus the `/` of an empty path.",
  ApprovalBody: "One decision: an Ed25519 or Passkey signature over the intent's signed bytes " +
    "(an approval) or over its rejection bytes (a rejection).",
  Authorization: "The `authorization` member of a governed template or policy (sent as " +
    "application/json): who signs the intents that reference it, with what weight, and the " +
    "threshold (1 to the sum of the weights). Keys as in a Multisig descriptor; `unsigned` " +
    "(default false) accepts Unsigned intents; `approval_window_s` (1–2592000, default 604800) " +
    "is how long a pending intent waits for approvals. `rules` (1–16, see Rule) are " +
    "conditions in CEL on the intent and its signers, evaluated at submission.",
  Rule: "A rule of a governed document (docs/rules.md): `when`, a CEL expression of at most " +
    "1000 characters over `intent`, `variant`, `document`, `signers`, `kinds` and `now`, and " +
    "exactly one effect: `deny` (the reason), `threshold`, `signers` (keys of the document's " +
    "signers) or `kinds`.",
  Approval: "The quorum of the governing document and who has approved or rejected.",
  DryRun: "What a submission would become: `accepted` or `pending`, its effective quorum and " +
    "the rules that were true. Nothing is stored.",
  ApprovalView: "What a pending intent waits for; for an accepted, expired or rejected one, its " +
    "state only.",
  ErrorBody: "The body of every error response.",
  IntentRecord: "A stored intent.",
  IntentPage: "A page of stored intents, newest first.",
  Event: "One event of the feed.",
  EventPage: "A page of the feed, in feed order.",
  DocumentId: "The content address of a template or policy.",
  Config: "The runtime configuration.",
  Health: "The service and its storage answer.",
  Ready: "The storage answers and its latest commit of the last 30 seconds, if any, succeeded.",
};

const REF_PREFIX = "#/components/schemas/";
// Leads the description of rules that JSON Schema cannot state.
const CHECKED = "Also checked by the server: ";

/** A reference to a component. */
export function ref(name: ComponentName): JsonSchema {
  return { $ref: `${REF_PREFIX}${name}` };
}

/** What the conversion reads of a valibot action. */
export interface Action {
  type: string;
  requirement?: unknown;
  message?: unknown;
}

/** A `v.check` action: its message, when it states a rule, goes into the field's description. */
function describeCheck(action: Action, jsonSchema: JsonSchema): JsonSchema {
  const message = action.message;
  // "expected …" messages repeat the type, which the schema already states.
  if (typeof message !== "string" || !message.startsWith("must ")) return { ...jsonSchema };
  const before = jsonSchema.description;
  const description = before?.startsWith(CHECKED)
    ? `${before.slice(0, -1)}; ${message}.`
    : `${before ? `${before} ` : ""}${CHECKED}${message}.`;
  return { ...jsonSchema, description };
}

/** `jsonSchema` with the bound tightened: the larger `minLength` or the smaller `maxLength`. */
function bound(jsonSchema: JsonSchema, keyword: "minLength" | "maxLength", value: number) {
  const before = jsonSchema[keyword];
  const tighter = before === undefined
    ? value
    : keyword === "minLength"
    ? Math.max(before, value)
    : Math.min(before, value);
  return { ...jsonSchema, [keyword]: tighter };
}

/**
 * Converts valibot definitions to JSON Schema 2020-12 (OpenAPI 3.1's dialect),
 * each led by its description; `overrideAction` states the actions the
 * converter does not know. Anything else that cannot be converted throws.
 */
export function convertComponents<N extends string>(
  definitions: Record<N, v.GenericSchema>,
  descriptions: Record<N, string>,
  overrideAction: (action: Action, jsonSchema: JsonSchema) => JsonSchema | undefined,
): Record<N, JsonSchema> {
  const converted = toJsonSchemaDefs(definitions, {
    target: "draft-2020-12",
    // A pipe that checks raw input before its schema (`attrs.fields`) is described by that schema.
    typeMode: "output",
    errorMode: "throw",
    overrideRef: ({ referenceId }) => `${REF_PREFIX}${referenceId}`,
    // Every action has a type; those handled have a requirement or a message.
    overrideAction: ({ valibotAction, jsonSchema }) =>
      overrideAction(valibotAction as unknown as Action, jsonSchema),
  }) as Record<N, JsonSchema>;
  const out = {} as Record<N, JsonSchema>;
  for (const name of Object.keys(definitions) as N[]) {
    out[name] = { description: descriptions[name], ...converted[name] };
  }
  return out;
}

/**
 * The components as JSON Schema: lengths in code points are JSON Schema's own
 * `minLength`/`maxLength` (which count code points), and the extractor URL
 * rule gives what a pattern can say of it. `v.check` rules cannot be
 * expressed in JSON Schema: their messages that state a rule ("must …") go
 * into the field's `description`, so readers still see them.
 */
export function componentSchemas(): Record<string, JsonSchema> {
  const out = convertComponents(DEFINITIONS, COMPONENT_DESCRIPTIONS, (action, jsonSchema) => {
    switch (action.type) {
      case "min_code_points":
        return bound(jsonSchema, "minLength", action.requirement as number);
      case "max_code_points":
        return bound(jsonSchema, "maxLength", action.requirement as number);
      case "extractor_url": {
        const requirement = action.requirement as schemas.ExtractorUrlRequirement;
        return {
          ...bound(jsonSchema, "maxLength", requirement.maxLength),
          pattern: requirement.pattern,
          description: `${CHECKED}a host, and the normal form (see ConfigBody).`,
        };
      }
      case "check":
        return describeCheck(action, jsonSchema);
      default:
        return undefined;
    }
  });

  // The valibot schema takes the multisig entries as unknown and decodes each
  // one itself (to report nesting precisely); the document states their shape.
  const multisig = out.Multisig.properties as Record<string, JsonSchema>;
  multisig.signatures = { ...multisig.signatures, items: ref("SingleSignature") };
  (out.ApprovalBody.properties as Record<string, JsonSchema>).signature = ref("SingleSignature");
  // What JSON Schema can state of a rule's checks: exactly one effect, no key or kind twice.
  out.Rule = {
    ...out.Rule,
    description: COMPONENT_DESCRIPTIONS.Rule,
    oneOf: schemas.RULE_EFFECTS.map((effect) => ({
      properties: { [effect]: {} },
      required: [effect],
    })),
  };
  const effects = out.Rule.properties as Record<string, JsonSchema>;
  for (const list of ["signers", "kinds"]) effects[list] = { ...effects[list], uniqueItems: true };
  return out;
}
