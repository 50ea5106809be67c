/**
 * The rules of the request schemas as the OpenAPI document publishes them:
 * JSON Schema keywords generated from the valibot schemas, which accept
 * exactly what the server's schemas accept.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import { base58 } from "@scure/base";
import * as v from "valibot";
import { routes } from "../../src/http/router.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import * as schemas from "../../src/domain/schemas.ts";
import { EVENTS_QUERY } from "../../src/http/routes/events.ts";
import { LIST_QUERY } from "../../src/http/routes/intents.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const doc: Json = buildOpenApiDocument(routes(), { webhooksAllowHttp: false });
const components = doc.components.schemas;

const ajv = new Ajv2020({ strict: true });
ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

/** Field schemas as served and as validated, side by side. */
const FIELDS: [string, Json, v.GenericSchema][] = [
  ["Payload.id", components.Payload.properties.id, schemas.PayloadSchema.entries.id],
  [
    "Payload.template_id",
    components.Payload.properties.template_id,
    schemas.PayloadSchema.entries.template_id,
  ],
  ["Intent.id", components.Intent.properties.id, schemas.IntentSchema.entries.id],
  [
    "Intent.policy_id",
    components.Intent.properties.policy_id,
    schemas.IntentSchema.entries.policy_id,
  ],
  ["Ed25519.pub_key", components.Ed25519.properties.pub_key, schemas.Ed25519Schema.entries.pub_key],
  [
    "Ed25519.signature",
    components.Ed25519.properties.signature,
    schemas.Ed25519Schema.entries.signature,
  ],
  ["Passkey.pub_key", components.Passkey.properties.pub_key, schemas.PasskeySchema.entries.pub_key],
  [
    "Passkey.client_data",
    components.Passkey.properties.client_data,
    schemas.PasskeySchema.entries.client_data,
  ],
];

/** Strings near each field's rules: any code points, astral and control ones included. */
const strings = fc.oneof(
  fc.string({ unit: "binary", maxLength: 140 }),
  fc.string({ unit: "binary", minLength: 120, maxLength: 140 }),
  fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{20,100}$/),
  fc.uuid(),
  fc.constantFrom(".", "..", "...", "a\u0085b", "x\u009f", "\u00a0", "\u{1F600}".repeat(128)),
  fc.string({ unit: "binary", minLength: 8190, maxLength: 8194 }),
);

for (const [name, published, server] of FIELDS) {
  Deno.test(`the published schema of ${name} accepts exactly what the server's schema accepts`, () => {
    const check = ajv.compile(published);
    fc.assert(
      fc.property(strings, (s) => {
        assert.equal(check(s), v.is(server, s), JSON.stringify(s).slice(0, 80));
      }),
      { numRuns: 400 },
    );
  });
}

Deno.test("lengths counted in code points are minLength and maxLength", () => {
  for (const field of [components.Payload.properties.id, components.Intent.properties.policy_id]) {
    assert.equal(field.minLength, 1);
    assert.equal(field.maxLength, 128);
  }
  assert.equal(components.Passkey.properties.client_data.maxLength, 8192);
  const astral = "\u{1F600}".repeat(128); // 256 UTF-16 units, 128 code points
  assert.ok(v.is(schemas.PayloadSchema.entries.id, astral));
  assert.ok(ajv.compile(components.Payload.properties.id)(astral));
});

Deno.test("ids refuse every control character and the dot segments by pattern and not", () => {
  const id = components.Payload.properties.id;
  assert.deepEqual(id.not, { enum: [".", ".."] });
  const pattern = new RegExp(id.pattern, "u");
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const s = String.fromCodePoint(c);
    assert.equal(pattern.test(`a${s}b`), !/\p{Cc}/u.test(s), `U+${c.toString(16)}`);
  }
});

Deno.test("base58 bounds are the lengths base58 gives the byte lengths", () => {
  const shortest = (n: number) => base58.encode(new Uint8Array(n)).length;
  const longest = (n: number) => base58.encode(new Uint8Array(n).fill(0xff)).length;
  const cases: [Json, number[]][] = [
    [components.Ed25519.properties.pub_key, [32]],
    [components.Ed25519.properties.signature, [64]],
    [components.Passkey.properties.pub_key, [33, 65]],
    [components.Multisig.properties.pub_key.properties.signers.propertyNames, [32, 33, 65]],
  ];
  for (const [field, bytes] of cases) {
    assert.equal(field.minLength, Math.min(...bytes.map(shortest)));
    assert.equal(field.maxLength, Math.max(...bytes.map(longest)));
    assert.equal(field.pattern, "^[1-9A-HJ-NP-Za-km-z]+$");
  }
});

Deno.test("multisig counts and integers are keywords", () => {
  const { pub_key, signatures } = components.Multisig.properties;
  const signers = pub_key.properties.signers;
  assert.equal(signers.minProperties, 1);
  assert.equal(signers.maxProperties, schemas.MAX_MULTISIG_ENTRIES);
  assert.equal(signatures.maxItems, schemas.MAX_MULTISIG_ENTRIES);
  assert.deepEqual(signatures.items, { $ref: "#/components/schemas/SingleSignature" });
  for (const n of [signers.additionalProperties, pub_key.properties.threshold]) {
    assert.deepEqual(n, { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
  }
});

Deno.test("the extractor URL publishes its length and the pattern its rule implies", () => {
  const url = components.ConfigBody.properties.evidence_extractor_url;
  assert.equal(url.maxLength, 2048);
  const pattern = new RegExp(url.pattern, "u");
  for (const good of ["", "http://localhost:8081", "https://[::1]:8443/v1", "https://x.example/"]) {
    assert.ok(pattern.test(good), good);
  }
  for (
    const bad of ["https://x.example/a b", "http://x\\y", "https://x.example/\u0007", "ftp://x"]
  ) {
    assert.ok(!pattern.test(bad), bad);
  }
  // The normal form is no pattern's: it stays in the description.
  assert.match(url.description, /normal form/);
});

Deno.test("only the extractor URL's normal form and host are left to a description", () => {
  const described: string[] = [];
  const walk = (node: Json, where: string) => {
    if (typeof node !== "object" || node === null) return;
    if (typeof node.description === "string" && node.description.startsWith("Also checked")) {
      described.push(where);
    }
    for (const [key, child] of Object.entries(node)) walk(child, `${where}/${key}`);
  };
  walk(components, "");
  assert.deepEqual(described, ["/ConfigBody/properties/evidence_extractor_url"]);
});

Deno.test("operation ids are resource_verb (resource_part_verb for §11's), exactly these", () => {
  const ids: string[] = [];
  for (const item of Object.values(doc.paths as Record<string, Json>)) {
    for (const op of Object.values(item as Record<string, Json>)) ids.push(op.operationId);
  }
  for (const id of ids) assert.match(id, /^[a-z]+(_[a-z]+){1,2}$/);
  assert.deepEqual(ids.sort(), [
    "approvals_add",
    "approvals_get",
    "config_get",
    "config_set",
    "events_list",
    "health_get",
    "intents_dry_run",
    "intents_get",
    "intents_list",
    "intents_submit",
    "log_checkpoint_get",
    "log_key_get",
    "log_proof_get",
    "log_tile_get",
    "metrics_get",
    "openapi_get",
    "page_get",
    "policies_add",
    "policies_get",
    "ready_get",
    "rejections_add",
    "static_get",
    "templates_add",
    "templates_get",
    "webhooks_add",
    "webhooks_attempts_list",
    "webhooks_delete",
    "webhooks_get",
    "webhooks_list",
    "webhooks_replay",
    "webhooks_secret_rotate",
    "webhooks_update",
  ]);
});

Deno.test("the server is the origin the document is fetched from", () => {
  assert.deepEqual(doc.servers.map((s: Json) => s.url), ["/"]);
});

Deno.test("the documented query parameters are the ones the routes take", () => {
  const query = (path: string) =>
    doc.paths[path].get.parameters.filter((p: Json) => p.in === "query").map((p: Json) => p.name);
  assert.deepEqual(query("/intents"), [...LIST_QUERY]);
  assert.deepEqual(query("/events"), [...EVENTS_QUERY]);
  for (const path of ["/intents", "/events"]) {
    assert.match(doc.paths[path].get.description, /Query parameters other than .* are 400/);
  }
});
