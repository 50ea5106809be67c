/**
 * The `components.schemas` of the OpenAPI document. Request schemas are the
 * valibot schemas that validate requests (`src/domain/schemas.ts`); response
 * shapes are declared here in valibot as well, and all are converted the
 * same way, so the document and the server cannot drift apart.
 * @module
 */

import * as v from "valibot";
import { type JsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
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
  variant: v.picklist(["A", "B"]),
  template_id: v.optional(v.pipe(v.string(), v.description("Variant A only."))),
  policy_id: v.optional(v.pipe(v.string(), v.description("Variant B only."))),
  attrs: v.optional(schemas.AttrsSchema),
  authorship: v.object({
    kind: v.picklist(["Ed25519", "Passkey", "Multisig", "Unsigned"]),
    signers: v.pipe(
      v.array(v.string()),
      v.description("Base58 public keys whose signatures verified."),
    ),
  }),
  received_at: v.pipe(v.string(), v.isoTimestamp(), v.description("RFC 3339 time.")),
  state: v.pipe(v.picklist(["accepted"]), v.description("The intent's state.")),
  request: v.pipe(
    v.union([schemas.VariantASchema, schemas.VariantBSchema]),
    v.description(
      "The request body as a JSON value, every number written as JCS writes it (the value " +
        "that was verified); strings exact.",
    ),
  ),
});

/** `GET /intents`: one page, newest first. */
export const IntentPageSchema = v.object({
  items: v.array(IntentRecordSchema),
  cursor: v.pipe(
    v.nullable(v.string()),
    v.description("Pass back as `cursor` for the next page; null on the last page."),
  ),
});

/** One event of the feed. */
export const EventSchema = v.object({
  id: v.pipe(
    v.string(),
    v.description("Opaque event id (at most 128 printable ASCII characters): pass as `after`."),
  ),
  type: v.pipe(
    v.string(),
    v.description(
      "`intent.accepted`; consumers ignore types they do not handle (more may be added).",
    ),
  ),
  record: IntentRecordSchema,
});

/** `GET /events` in the pull form. */
export const EventPageSchema = v.object({
  events: v.array(EventSchema),
  next: v.pipe(
    v.nullable(v.string()),
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
export const HealthSchema = v.object({ status: v.literal("ok") });

/** `GET /readyz` answer. */
export const ReadySchema = v.object({ status: v.literal("ready") });

/** The components converted into `components.schemas`, by name. */
const DEFINITIONS = {
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

/**
 * Converts the definitions to JSON Schema 2020-12 (OpenAPI 3.1's dialect).
 * `v.check` rules cannot be expressed in JSON Schema: they are left out of the
 * constraints and their messages that state a rule ("must …") are put in the
 * field's `description`, so readers still see them.
 */
export function componentSchemas(): Record<string, JsonSchema> {
  const converted = toJsonSchemaDefs(DEFINITIONS, {
    target: "draft-2020-12",
    // A pipe that checks raw input before its schema (`attrs.fields`) is described by that schema.
    typeMode: "output",
    errorMode: "throw", // anything else that cannot be converted must fail loudly
    overrideRef: ({ referenceId }) => `${REF_PREFIX}${referenceId}`,
    overrideAction: ({ valibotAction, jsonSchema }) => {
      if (valibotAction.type !== "check") return undefined;
      const message = (valibotAction as { message?: unknown }).message;
      // "expected …" messages repeat the type, which the schema already states.
      if (typeof message !== "string" || !message.startsWith("must ")) return { ...jsonSchema };
      const before = jsonSchema.description;
      const description = before?.startsWith(CHECKED)
        ? `${before.slice(0, -1)}; ${message}.`
        : `${before ? `${before} ` : ""}${CHECKED}${message}.`;
      return { ...jsonSchema, description };
    },
  }) as Record<ComponentName, JsonSchema>;

  // The valibot schema takes the multisig entries as unknown and decodes each
  // one itself (to report nesting precisely); the document states their shape.
  const multisig = converted.Multisig as { properties: Record<string, JsonSchema> };
  multisig.properties.signatures = {
    ...multisig.properties.signatures,
    items: ref("SingleSignature"),
  };

  const out: Record<string, JsonSchema> = {};
  for (const name of Object.keys(DEFINITIONS) as ComponentName[]) {
    out[name] = { description: COMPONENT_DESCRIPTIONS[name], ...converted[name] };
  }
  return out;
}
