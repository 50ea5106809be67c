import assert from "node:assert/strict";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import * as v from "valibot";
import { routes } from "../../src/http/router.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import { ERROR_CODES } from "../../src/errors.ts";
import { openApiExamples } from "../../src/http/openapi/examples.ts";
import { VariantASchema, VariantBSchema } from "../../src/domain/schemas.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const served = routes();
const doc: Json = buildOpenApiDocument(served, { webhooksAllowHttp: false });
const DOC_ID = "https://intents.test/openapi.json";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Ajv (JSON Schema 2020-12) holding the published document, strict about unknown keywords. */
function ajvFor(document: Json): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat("uuid", UUID);
  ajv.addFormat("date-time", (s: string) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)));
  // The document is not itself a schema; only the subschemas under it are compiled.
  for (
    const keyword of [
      "openapi",
      "info",
      "jsonSchemaDialect",
      "servers",
      "tags",
      "paths",
      "webhooks",
      "components",
    ]
  ) {
    ajv.addKeyword({ keyword });
  }
  ajv.addSchema({ ...structuredClone(document), $id: DOC_ID });
  return ajv;
}

const ajv = ajvFor(doc);

function schemaAt(pointer: string): ValidateFunction {
  const validate = ajv.getSchema(`${DOC_ID}#${pointer}`);
  assert.ok(validate, `no schema at ${pointer}`);
  return validate;
}

/** The request body schema of `POST /intents`, as published. */
const intentRequest = schemaAt(
  "/paths/~1intents/post/requestBody/content/application~1json/schema",
);

function mutated(body: unknown, change: (copy: Json) => void): Json {
  const copy = structuredClone(body);
  change(copy);
  return copy;
}

Deno.test("the document passes an OpenAPI 3.1 validator", async () => {
  const result = await new Validator().validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors));
  assert.equal(doc.openapi, "3.1.0");
});

Deno.test("the validator does reject a broken document", async () => {
  const broken = structuredClone(doc);
  delete broken.info;
  broken.paths["/intents"].post.responses = { "201": { content: {} } };
  const result = await new Validator().validate(broken);
  assert.equal(result.valid, false);
});

Deno.test("every route of routes() is described", () => {
  assert.ok(served.length >= 10);
  const missing = served.filter(({ method, path }) => !doc.paths[path]?.[method.toLowerCase()]);
  assert.deepEqual(missing, []);
});

Deno.test("the document describes no route that is not served", () => {
  const declared = new Set(served.map((e) => `${e.method.toLowerCase()} ${e.path}`));
  const extra: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of Object.keys(item)) {
      if (!declared.has(`${method} ${path}`)) extra.push(`${method} ${path}`);
    }
  }
  assert.deepEqual(extra, []);
});

Deno.test("ErrorBody lists every error code and each error response names its codes", () => {
  assert.deepEqual(doc.components.schemas.ErrorBody.properties.code.enum, [...ERROR_CODES]);
  const errorBody = schemaAt("/components/schemas/ErrorBody");
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (Number(status) < 400) continue;
        const schema = response.content["application/json"].schema;
        const codes: string[] = schema.allOf[1].properties.code.enum;
        assert.ok(codes.length > 0, `${method} ${path} ${status}`);
        for (const code of codes) {
          assert.ok((ERROR_CODES as readonly string[]).includes(code), code);
          assert.ok(errorBody({ message: "m", code }), code);
        }
      }
    }
  }
  assert.equal(errorBody({ message: "m", code: "no_such_code" }), false);
});

Deno.test("admin routes require the admin bearer scheme", () => {
  assert.deepEqual(doc.components.securitySchemes.adminBearer, {
    type: "http",
    scheme: "bearer",
    description: doc.components.securitySchemes.adminBearer.description,
  });
  const admin = [
    ["post", "/templates"],
    ["post", "/policies"],
    ["get", "/intents"],
    ["get", "/intents/{id}"],
    ["get", "/config"],
    ["put", "/config"],
  ];
  for (const [method, path] of admin) {
    assert.deepEqual(doc.paths[path][method].security, [{ adminBearer: [] }], `${method} ${path}`);
    assert.ok(doc.paths[path][method].responses["401"], `${method} ${path}`);
  }
  assert.deepEqual(doc.paths["/intents"].post.security, []);
});

Deno.test("every request example passes the published request schema and the server's schema", () => {
  const examples = doc.paths["/intents"].post.requestBody.content["application/json"].examples;
  assert.deepEqual(Object.keys(examples).sort(), [
    "variant_a_ed25519",
    "variant_a_passkey",
    "variant_b_ed25519",
    "variant_b_multisig",
  ]);
  for (const [name, example] of Object.entries(examples as Record<string, Json>)) {
    assert.ok(intentRequest(example.value), `${name}: ${JSON.stringify(intentRequest.errors)}`);
    const schema = "payload" in example.value ? VariantASchema : VariantBSchema;
    assert.ok(v.is(schema, example.value), name);
  }
});

Deno.test("every response example passes its published schema", () => {
  let checked = 0;
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const media = response.content?.["application/json"];
        if (!media) continue;
        const values = media.example !== undefined
          ? [media.example]
          : Object.values(media.examples ?? {}).map((e) => (e as Json).value);
        const pointer = `/paths/${path.replaceAll("~", "~0").replaceAll("/", "~1")}/${method}` +
          `/responses/${status}/content/application~1json/schema`;
        const validate = schemaAt(pointer);
        for (const value of values) {
          assert.ok(
            validate(value),
            `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`,
          );
          checked++;
        }
      }
    }
  }
  assert.ok(checked >= 10, `only ${checked} response examples`);
});

const { intents } = openApiExamples();
const a = intents.variant_a_ed25519.body;
const b = intents.variant_b_ed25519.body;
const ms = intents.variant_b_multisig.body;

const INVALID: [string, Json][] = [
  ["a third top-level member", mutated(a, (x) => (x.extra = 1))],
  ["both variants' members", { ...a, ...b }],
  ["a missing signature", mutated(a, (x) => delete x.signature)],
  ["an unknown payload member", mutated(a, (x) => (x.payload.extra = true))],
  ["a numeric payload id", mutated(a, (x) => (x.payload.id = 7))],
  ["a missing template_id", mutated(a, (x) => delete x.payload.template_id)],
  ["attrs null", mutated(a, (x) => (x.payload.attrs = null))],
  ["attrs without fields", mutated(a, (x) => (x.payload.attrs = {}))],
  ["attrs.fields an array", mutated(a, (x) => (x.payload.attrs = { fields: [] }))],
  ["a non-base58 pub_key", mutated(a, (x) => (x.signature.Ed25519.pub_key = "0OIl"))],
  ["an empty signature", mutated(a, (x) => (x.signature.Ed25519.signature = ""))],
  ["two signature kinds", mutated(a, (x) => (x.signature.Passkey = x.signature.Ed25519))],
  ["an unknown signature kind", { payload: a.payload, signature: { Rsa: {} } }],
  ["a non-UUID Variant B id", mutated(b, (x) => (x.intent.id = "not-a-uuid"))],
  ["authorship Signed plus another member", mutated(b, (x) => (x.authorship.Unsigned = true))],
  ['authorship "unsigned" in lower case', mutated(b, (x) => (x.authorship = "unsigned"))],
  [
    "a nested multisig",
    mutated(
      ms,
      (x) => x.authorship.Signed.Multisig.signatures.push(structuredClone(x.authorship.Signed)),
    ),
  ],
  ["a zero threshold", mutated(ms, (x) => (x.authorship.Signed.Multisig.pub_key.threshold = 0))],
  [
    "a fractional weight",
    mutated(ms, (x) => {
      const signers = x.authorship.Signed.Multisig.pub_key.signers;
      signers[Object.keys(signers)[0]] = 1.5;
    }),
  ],
  [
    "seventeen signatures",
    mutated(ms, (x) => {
      const list = x.authorship.Signed.Multisig.signatures;
      while (list.length < 17) list.push(list[0]);
    }),
  ],
];

for (const [name, body] of INVALID) {
  Deno.test(`the published schema rejects ${name}, as the server's schema does`, () => {
    assert.equal(intentRequest(body), false);
    const server = "payload" in body && "signature" in body && Object.keys(body).length === 2
      ? v.is(VariantASchema, body)
      : v.is(VariantBSchema, body);
    // The server's valibot schemas take multisig entries as unknown and decode them later.
    if (name !== "a nested multisig") assert.equal(server, false);
  });
}

Deno.test("checks JSON Schema cannot state are described on the components", () => {
  const { Ed25519, Passkey, Multisig, ConfigBody, OpaqueId } = doc.components.schemas;
  assert.match(Ed25519.description, /32 bytes/);
  assert.match(Passkey.description, /33 or 65 bytes/);
  assert.match(Multisig.description, /prime-order subgroup/);
  assert.match(ConfigBody.description, /normal form/);
  assert.match(OpaqueId.description, /handed out/);
});
