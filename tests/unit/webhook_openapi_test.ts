/**
 * The webhook parts of the OpenAPI document (docs/interface.md §11): every operation
 * admin-only with its operationId, the delivery as a `webhooks` entry with the
 * Standard Webhooks headers, and request schemas that refuse what the
 * server's valibot schemas refuse, the URL's scheme as `WEBHOOKS_ALLOW_HTTP` says.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import { routes } from "../../src/http/router.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import {
  WebhookCreateSchema,
  WebhookReplaySchema,
  WebhookUpdateSchema,
} from "../../src/webhooks/schemas.ts";
import { checkWebhookUrl } from "../../src/webhooks/url.ts";
import { DELIVERY_ERRORS } from "../../src/webhooks/endpoint.ts";
import { ajvFor, DOC_ID } from "../support/openapi_ajv.ts";

type Doc = Record<string, Record<string, never>>;
const doc = buildOpenApiDocument(routes(), { webhooksAllowHttp: false }) as Doc;
const ajv = ajvFor(doc);
const withHttp = ajvFor(buildOpenApiDocument(routes(), { webhooksAllowHttp: true }) as Doc);

const OPERATIONS: [string, string, string][] = [
  ["post", "/webhooks", "webhooks_add"],
  ["get", "/webhooks", "webhooks_list"],
  ["get", "/webhooks/{id}", "webhooks_get"],
  ["patch", "/webhooks/{id}", "webhooks_update"],
  ["delete", "/webhooks/{id}", "webhooks_delete"],
  ["post", "/webhooks/{id}/secret", "webhooks_secret_rotate"],
  ["post", "/webhooks/{id}/replay", "webhooks_replay"],
  ["get", "/webhooks/{id}/attempts", "webhooks_attempts_list"],
];

Deno.test("every webhook operation is admin-only, with §11's operationId", () => {
  for (const [method, path, id] of OPERATIONS) {
    const operation = doc.paths[path]?.[method] as Record<string, unknown> | undefined;
    assert.ok(operation, `${method} ${path}`);
    assert.equal(operation.operationId, id);
    assert.deepEqual(operation.security, [{ adminBearer: [] }]);
    assert.ok((operation.responses as Record<string, unknown>)["401"], id);
  }
});

Deno.test("the delivery is a webhooks entry: the event as its body, the three signed headers, secured by the signature", () => {
  const delivery = (doc.webhooks as Record<string, { post: Record<string, never> }>).intentEvent
    .post;
  const headers = (delivery.parameters as { name: string; in: string; required: boolean }[])
    .map((p) => [p.name, p.in, p.required]);
  assert.deepEqual(headers, [
    ["webhook-id", "header", true],
    ["webhook-timestamp", "header", true],
    ["webhook-signature", "header", true],
  ]);
  const body = (delivery.requestBody as Record<string, never>).content["application/json"];
  assert.deepEqual((body as { schema: unknown }).schema, { $ref: "#/components/schemas/Event" });
  assert.ok((delivery.responses as Record<string, unknown>)["2XX"]);
  assert.ok((delivery.responses as Record<string, unknown>)["410"]);
  // None of the service's schemes secures it: its signature does, as its description says.
  assert.deepEqual(delivery.security, []);
  assert.match(delivery.description as string, /webhook-signature/);
});

const CASES: [string, v.GenericSchema, unknown, boolean][] = [
  ["WebhookCreate", WebhookCreateSchema, { url: "https://h.example/" }, true],
  ["WebhookCreate", WebhookCreateSchema, { url: "https://h.example/", events: null }, true],
  ["WebhookCreate", WebhookCreateSchema, { url: "https://h.example/", events: [] }, false],
  [
    "WebhookCreate",
    WebhookCreateSchema,
    { url: "https://h.example/", events: ["intent.accepted", "intent.accepted"] },
    false,
  ],
  ["WebhookCreate", WebhookCreateSchema, { url: "https://h.example/", events: ["x"] }, false],
  [
    "WebhookCreate",
    WebhookCreateSchema,
    { url: "https://h.example/", description: "😀".repeat(200) },
    true,
  ],
  [
    "WebhookCreate",
    WebhookCreateSchema,
    { url: "https://h.example/", description: "😀".repeat(201) },
    false,
  ],
  ["WebhookCreate", WebhookCreateSchema, { url: "https://h.example/", other: 1 }, false],
  ["WebhookCreate", WebhookCreateSchema, {}, false],
  ["WebhookUpdate", WebhookUpdateSchema, {}, true],
  ["WebhookUpdate", WebhookUpdateSchema, { status: "paused" }, true],
  ["WebhookUpdate", WebhookUpdateSchema, { status: "disabled" }, false],
  ["WebhookReplay", WebhookReplaySchema, { after: null }, true],
  ["WebhookReplay", WebhookReplaySchema, { after: "17" }, true],
  ["WebhookReplay", WebhookReplaySchema, { after: "a b" }, false],
  ["WebhookReplay", WebhookReplaySchema, {}, false],
];

Deno.test("the published webhook request schemas accept and refuse what the server's do", () => {
  for (const [name, schema, value, valid] of CASES) {
    const published = ajv.getSchema(`${DOC_ID}#/components/schemas/${name}`);
    assert.ok(published, name);
    assert.equal(published(value), valid, `${name} ${JSON.stringify(value)} (published)`);
    assert.equal(v.is(schema, value), valid, `${name} ${JSON.stringify(value)} (server)`);
  }
  // The URL rule is the server's, after the shape; its length is published.
  const url = ajv.getSchema(`${DOC_ID}#/components/schemas/WebhookCreate`)!;
  assert.equal(url({ url: `https://h.example/${"a".repeat(2031)}` }), false);
});

const published = (name: "WebhookCreate" | "WebhookUpdate", allowHttp: boolean) =>
  (allowHttp ? withHttp : ajv).getSchema(`${DOC_ID}#/components/schemas/${name}`)!;

Deno.test("the published URL schema states the scheme the setting allows, an authority without user info, no fragment and the characters", () => {
  for (const name of ["WebhookCreate", "WebhookUpdate"] as const) {
    for (const allowHttp of [false, true]) {
      const valid = published(name, allowHttp);
      const what = (url: string) => `${name} ${JSON.stringify(url)} (allowHttp: ${allowHttp})`;
      for (
        const url of [
          "https://h.example/in?team=7",
          "https://h.example?q",
          "https://[2001:db8::1]/",
        ]
      ) {
        assert.equal(valid({ url }), true, what(url));
      }
      for (const url of ["http://h.example/", "http://h.example?a=b@c"]) {
        assert.equal(valid({ url }), allowHttp, what(url));
      }
      const controls = [...Array(0x20).keys(), 0x7f, 0x85, 0x9f].map((c) => String.fromCharCode(c));
      for (
        const url of [
          "",
          "h.example/in",
          "ftp://h.example/",
          "HTTPS://h.example/",
          "https://",
          "https:///in",
          "https://?q",
          "https://u@h.example/",
          "https://u:p@h.example/",
          "https://h.example/#",
          "https://h.example/#top",
          "https://h.example/in?a#b",
          "https://h.example#top",
          "https://h.example/ in",
          "https://h.example/\\in",
          "https://h\\example/",
          "https://h.example/é",
          ...controls.map((c) => `https://h.example/${c}`),
          ...controls.map((c) => `${c}https://h.example/`),
        ]
      ) {
        assert.equal(valid({ url }), false, what(url));
      }
    }
  }
});

Deno.test("every URL the server's rule accepts matches the published URL schema, with and without WEBHOOKS_ALLOW_HTTP", () => {
  const urls = fc.oneof(
    // Most in their normal form, as the rule wants them; others as given.
    { arbitrary: fc.webUrl({ withQueryParameters: true }).map((u) => new URL(u).href), weight: 3 },
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.webUrl().map((u) => u.toUpperCase()),
    fc.tuple(
      fc.constantFrom("https://h.example/", "http://h.example"),
      fc.string({ unit: "binary" }),
    )
      .map(([a, b]) => a + b),
    fc.string({ unit: "binary" }),
  );
  for (const allowHttp of [false, true]) {
    const valid = published("WebhookCreate", allowHttp);
    const options = { allowHttp, allowPrivate: true };
    let accepted = 0;
    fc.assert(
      fc.property(urls, (url) => {
        if (checkWebhookUrl(url, options) !== null) return true;
        accepted++;
        return valid({ url }) === true;
      }),
      { numRuns: 2_000 },
    );
    const least = allowHttp ? 400 : 200;
    assert.ok(accepted > least, `only ${accepted} generated URLs were accepted by the rule`);
  }
});

Deno.test("an attempt's published error is null or one of the delivery's errors, refused_url included", () => {
  const attempt = ajv.getSchema(`${DOC_ID}#/components/schemas/WebhookAttempt`)!;
  const base = { event_id: "42", attempt: 1, at: "2026-01-01T12:00:01.000Z", duration_ms: 3 };
  for (const error of [null, ...DELIVERY_ERRORS]) {
    assert.equal(attempt({ ...base, status: null, error }), true, String(error));
  }
  assert.ok(DELIVERY_ERRORS.includes("refused_url"));
  assert.equal(attempt({ ...base, status: null, error: "refused" }), false);
});
