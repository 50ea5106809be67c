/**
 * The OpenAPI 3.1 document of the service, served at `GET /openapi.json`.
 *
 * Request schemas are converted from the valibot schemas that validate
 * requests (`src/domain/schemas.ts`), so the document and the server cannot
 * drift apart. Response shapes are declared here in valibot as well and
 * converted the same way. Examples are real signed requests (see
 * `openapi_examples.ts`).
 * @module
 */

import * as v from "valibot";
import { type JsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import type { ErrorCode } from "../errors.ts";
import * as schemas from "../domain/schemas.ts";
import type { AppContext } from "./context.ts";
import { json } from "./respond.ts";
import { openApiExamples } from "./openapi_examples.ts";

/** Every error code of the public interface, as the `code` enum of `ErrorBody`. */
export const ERROR_CODES = [
  "invalid_json",
  "invalid_body",
  "invalid_signature",
  "unsigned_not_permitted",
  "template_not_found",
  "policy_not_found",
  "intent_exists",
  "unsupported_media_type",
  "payload_too_large",
  "request_timeout",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "precondition_failed",
  "invalid_evidence_extractor_url",
  "unavailable",
  "internal",
] as const satisfies readonly ErrorCode[];

// Fails type checking when src/errors.ts gains a code that the list above lacks.
type MissingCode = Exclude<ErrorCode, (typeof ERROR_CODES)[number]>;
const _allCodesListed: [MissingCode] extends [never] ? true : MissingCode = true;
void _allCodesListed;

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
  request: v.pipe(
    v.union([schemas.VariantASchema, schemas.VariantBSchema]),
    v.description("The request body exactly as received."),
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
  DocumentId: DocumentIdSchema,
  Config: ConfigSchema,
  Health: HealthSchema,
};

/** What each component means; the shapes come from the schemas. */
const COMPONENT_DESCRIPTIONS: Record<keyof typeof DEFINITIONS, string> = {
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
    "base58 public keys (32 bytes: Ed25519; 33 or 65 bytes: P-256 passkey). At most " +
    `${schemas.MAX_MULTISIG_ENTRIES} signers and ${schemas.MAX_MULTISIG_ENTRIES} signatures.`,
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
  DocumentId: "The content address of a template or policy.",
  Config: "The runtime configuration.",
  Health: "The service and its storage answer.",
};

const REF_PREFIX = "#/components/schemas/";
// Leads the description of rules that JSON Schema cannot state.
const CHECKED = "Also checked by the server: ";

function ref(name: keyof typeof DEFINITIONS): JsonSchema {
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
  }) as Record<keyof typeof DEFINITIONS, JsonSchema>;

  // The valibot schema takes the multisig entries as unknown and decodes each
  // one itself (to report nesting precisely); the document states their shape.
  const multisig = converted.Multisig as { properties: Record<string, JsonSchema> };
  multisig.properties.signatures = {
    ...multisig.properties.signatures,
    items: ref("SingleSignature"),
  };

  const out: Record<string, JsonSchema> = {};
  for (const name of Object.keys(DEFINITIONS) as (keyof typeof DEFINITIONS)[]) {
    out[name] = { description: COMPONENT_DESCRIPTIONS[name], ...converted[name] };
  }
  return out;
}

type Obj = Record<string, unknown>;

const REQUEST_ID_HEADER = {
  description: "The request id: echoed when the client sent a valid one, else generated.",
  schema: { type: "string" },
};

function errorResponse(description: string, codes: readonly ErrorCode[]): Obj {
  return {
    description: `${description} Codes: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
    headers: { "X-Request-Id": REQUEST_ID_HEADER },
    content: {
      "application/json": {
        schema: {
          allOf: [ref("ErrorBody"), { type: "object", properties: { code: { enum: codes } } }],
        },
      },
    },
  };
}

const ERR = {
  invalidJsonBody: (extra: ErrorCode[] = []) =>
    errorResponse("The body is not strict JSON or does not have the required shape.", [
      "invalid_json",
      "invalid_body",
      ...extra,
    ]),
  unauthorized: {
    ...errorResponse("A valid bearer token is required.", ["unauthorized"]),
    headers: {
      "X-Request-Id": REQUEST_ID_HEADER,
      "WWW-Authenticate": { description: "`Bearer`", schema: { type: "string" } },
    },
  },
  notFound: (what: string) => errorResponse(`No such ${what}.`, ["not_found"]),
  timeout: errorResponse("The body did not arrive in time.", ["request_timeout"]),
  tooLarge: errorResponse("The body is larger than MAX_BODY_BYTES.", ["payload_too_large"]),
  mediaType: errorResponse("Content-Type is not application/json.", ["unsupported_media_type"]),
  methodNotAllowed: {
    ...errorResponse("The method is not allowed on this path.", ["method_not_allowed"]),
    headers: {
      "X-Request-Id": REQUEST_ID_HEADER,
      Allow: { description: "The allowed methods.", schema: { type: "string" } },
    },
  },
  internal: errorResponse("An internal error; the body says nothing about the cause.", [
    "internal",
  ]),
};

function jsonResponse(description: string, schema: JsonSchema, extra: Obj = {}): Obj {
  const { headers, ...media } = extra as { headers?: Obj };
  return {
    description,
    headers: { "X-Request-Id": REQUEST_ID_HEADER, ...headers },
    content: { "application/json": { schema, ...media } },
  };
}

const ADMIN = [{ adminBearer: [] }];
const PUBLIC: unknown[] = [];

function idParameter(description: string): Obj {
  return { name: "id", in: "path", required: true, description, schema: { type: "string" } };
}

function examplesOf(
  entries: Record<string, { summary: string }>,
  pick: (key: string) => unknown,
): Obj {
  const out: Obj = {};
  for (const [key, entry] of Object.entries(entries)) {
    out[key] = { summary: entry.summary, value: pick(key) };
  }
  return out;
}

function documentOperations(kind: "template" | "policy", example: { text: string; id: string }) {
  const plural = kind === "template" ? "templates" : "policies";
  const Title = kind === "template" ? "Template" : "Policy";
  return {
    collection: {
      post: {
        operationId: `add${Title}`,
        summary: `Store a ${kind} (admin)`,
        description: `The raw body is the ${kind}, any content type, non-empty, at most ` +
          `MAX_BODY_BYTES. Its id is the base58 SHA-256 of the exact body bytes; ${plural} are ` +
          "immutable.",
        tags: [plural],
        security: ADMIN,
        requestBody: {
          required: true,
          content: {
            "*/*": {
              schema: {},
              examples: { example: { summary: `A ${kind}`, value: example.text } },
            },
          },
        },
        responses: {
          "200": jsonResponse(`Already stored.`, ref("DocumentId"), {
            example: { id: example.id },
          }),
          "201": jsonResponse(`Stored.`, ref("DocumentId"), {
            example: { id: example.id },
            headers: {
              Location: { description: `/${plural}/{id}`, schema: { type: "string" } },
            },
          }),
          "400": errorResponse("The body is empty or the Content-Type is unusable.", [
            "invalid_body",
          ]),
          "401": ERR.unauthorized,
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "413": ERR.tooLarge,
          "500": ERR.internal,
        },
      },
    },
    item: {
      get: {
        operationId: `get${Title}`,
        summary: `Read a ${kind} (public)`,
        tags: [plural],
        security: PUBLIC,
        parameters: [idParameter(`The ${kind}'s content address.`)],
        responses: {
          "200": {
            description: `The exact bytes stored, with the stored content type.`,
            headers: {
              "X-Request-Id": REQUEST_ID_HEADER,
              ETag: { description: "The id, quoted.", schema: { type: "string" } },
            },
            content: { "*/*": { schema: {}, example: example.text } },
          },
          "404": ERR.notFound(kind),
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
  };
}

/** Route names and methods, as `buildRoutes()` lists them. */
export interface RouteShape {
  name: string;
  methods: Record<string, unknown>;
}

/**
 * Builds the OpenAPI 3.1 document.
 *
 * @param routes the served routes; the passkey page's paths (`/`,
 *   `/static/{name}`) are described only when served.
 * @returns the document as a plain JSON value.
 */
export function buildOpenApiDocument(routes: readonly RouteShape[] = []): Record<string, unknown> {
  const examples = openApiExamples();
  const intents = examples.intents;
  const templates = documentOperations("template", examples.template);
  const policies = documentOperations("policy", examples.policy);
  const configExample = {
    evidence_extractor_url: "https://extractor.example/v1",
    effective_url: "https://extractor.example/v1",
    updated_at: "2026-01-01T12:00:00.000Z",
  };
  const etag = { description: "Version of the configuration.", schema: { type: "string" } };

  const paths: Obj = {
    "/intents": {
      post: {
        operationId: "submitIntent",
        summary: "Submit a signed intent (public)",
        description: "The top-level members select the variant: exactly `payload` and " +
          "`signature` is Variant A, exactly `authorship` and `intent` is Variant B. The body is " +
          "parsed strictly (no duplicate members, nesting at most 32, integer literals within " +
          "±(2^53−1) or written as JCS writes them). Checks run in this order: 415, 413, 400 (JSON, shape, encodings, " +
          "signature, missing template or policy), 409, then 201. A request whose authorship " +
          "does not verify never learns whether an id exists.",
        tags: ["intents"],
        security: PUBLIC,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { oneOf: [ref("VariantA"), ref("VariantB")] },
              examples: examplesOf(intents, (key) => intents[key].body),
            },
          },
        },
        responses: {
          "201": jsonResponse("Stored.", ref("IntentRecord"), {
            examples: examplesOf(intents, (key) => intents[key].record),
            headers: { Location: { description: "/intents/{id}", schema: { type: "string" } } },
          }),
          "400": ERR.invalidJsonBody([
            "invalid_signature",
            "unsigned_not_permitted",
            "template_not_found",
            "policy_not_found",
          ]),
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "409": errorResponse("An intent with this id exists.", ["intent_exists"]),
          "413": ERR.tooLarge,
          "415": ERR.mediaType,
          "500": ERR.internal,
        },
      },
      get: {
        operationId: "listIntents",
        summary: "List stored intents, newest first (admin)",
        tags: ["intents"],
        security: ADMIN,
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            description: "The `cursor` of the previous page.",
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": jsonResponse("A page.", ref("IntentPage"), {
            example: { items: [intents.variant_a_ed25519.record], cursor: null },
          }),
          "400": errorResponse("A bad limit or cursor.", ["invalid_body"]),
          "401": ERR.unauthorized,
          "500": ERR.internal,
        },
      },
    },
    "/intents/{id}": {
      get: {
        operationId: "getIntent",
        summary: "Read a stored intent (admin)",
        tags: ["intents"],
        security: ADMIN,
        parameters: [idParameter("The intent id (URL-encoded; UUIDs match in any case).")],
        responses: {
          "200": jsonResponse("The stored intent.", ref("IntentRecord"), {
            example: intents.variant_a_ed25519.record,
          }),
          "401": ERR.unauthorized,
          "404": ERR.notFound("intent"),
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
    "/templates": templates.collection,
    "/templates/{id}": templates.item,
    "/policies": policies.collection,
    "/policies/{id}": policies.item,
    "/config": {
      get: {
        operationId: "getConfig",
        summary: "Read the runtime configuration (admin)",
        tags: ["config"],
        security: ADMIN,
        responses: {
          "200": jsonResponse("The configuration.", ref("Config"), {
            example: configExample,
            headers: { ETag: etag },
          }),
          "401": ERR.unauthorized,
          "500": ERR.internal,
        },
      },
      put: {
        operationId: "setConfig",
        summary: "Set the runtime configuration (admin)",
        tags: ["config"],
        security: ADMIN,
        parameters: [{
          name: "If-Match",
          in: "header",
          required: false,
          description: "Apply only if the configuration still has this ETag (412 otherwise).",
          schema: { type: "string" },
        }],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: ref("ConfigBody"),
              example: { evidence_extractor_url: configExample.evidence_extractor_url },
            },
          },
        },
        responses: {
          "200": jsonResponse("The new configuration.", ref("Config"), {
            example: configExample,
            headers: { ETag: etag },
          }),
          "400": ERR.invalidJsonBody(["invalid_evidence_extractor_url"]),
          "401": ERR.unauthorized,
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "412": errorResponse("If-Match does not match.", ["precondition_failed"]),
          "413": ERR.tooLarge,
          "415": ERR.mediaType,
          "500": ERR.internal,
        },
      },
    },
    "/healthz": {
      get: {
        operationId: "health",
        summary: "Liveness and storage check (public)",
        tags: ["operations"],
        security: PUBLIC,
        responses: {
          "200": jsonResponse("KV answers.", ref("Health"), { example: { status: "ok" } }),
          "503": errorResponse("KV does not answer.", ["unavailable"]),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openapi",
        summary: "This document (public)",
        tags: ["operations"],
        security: PUBLIC,
        responses: {
          "200": jsonResponse("The OpenAPI 3.1 document.", { type: "object" }),
        },
      },
    },
    "/metrics": {
      get: {
        operationId: "metrics",
        summary: "Prometheus metrics of this process (admin or metrics token)",
        tags: ["operations"],
        security: [{ adminBearer: [] }, { metricsBearer: [] }],
        responses: {
          "200": {
            description: "Prometheus text exposition format 0.0.4.",
            headers: { "X-Request-Id": REQUEST_ID_HEADER },
            content: { "text/plain": { schema: { type: "string" } } },
          },
          "401": ERR.unauthorized,
        },
      },
    },
  };
  if (routes.some((route) => route.name === "/")) {
    paths["/"] = {
      get: {
        operationId: "passkeyPage",
        summary: "The passkey page (public)",
        tags: ["operations"],
        security: PUBLIC,
        responses: {
          "200": {
            description: "An HTML page that signs and submits intents with a passkey.",
            content: { "text/html": { schema: { type: "string" } } },
          },
        },
      },
    };
  }

  if (routes.some((route) => route.name === "/static/{name}")) {
    paths["/static/{name}"] = {
      get: {
        operationId: "passkeyPageFile",
        summary: "A file of the passkey page (public)",
        tags: ["operations"],
        security: PUBLIC,
        parameters: [{
          name: "name",
          in: "path",
          required: true,
          description: "One of the page's files (an allow-list; anything else is 404).",
          schema: { type: "string" },
        }],
        responses: {
          "200": {
            description: "The file, with its media type.",
            content: { "*/*": { schema: {} } },
          },
          "404": ERR.notFound("file"),
        },
      },
    };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Intent submission service",
      version: "1.0.0",
      description: "Accepts signed intents (Variant A: payload + signature; Variant B: " +
        "authorship + intent), verifies Ed25519, passkey (WebAuthn) and multisig signatures " +
        "over the RFC 8785 (JCS) bytes, and stores each id once. Every binary field is base58 " +
        "(Bitcoin alphabet). Every error is `{message, code}`. Every GET also answers HEAD.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags: [
      { name: "intents" },
      { name: "templates" },
      { name: "policies" },
      { name: "config" },
      { name: "operations" },
    ],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        adminBearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <ADMIN_TOKEN>`.",
        },
        metricsBearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <METRICS_TOKEN>` (GET /metrics only).",
        },
      },
    },
  };
}

/**
 * The `GET /openapi.json` handler for the given route table. The document is
 * built on the first request and kept: it depends on nothing that changes.
 */
export function openApiHandler(routes: readonly RouteShape[]) {
  let text: string | undefined;
  return (_request: Request, _ctx: AppContext): Response => {
    text ??= JSON.stringify(buildOpenApiDocument(routes));
    return json(200, text, { "cache-control": "public, max-age=300" });
  };
}
