/**
 * The whole app against its own published document: requests generated
 * from the JSON Schemas of `GET /openapi.json`, valid ones and ones with one
 * rule broken, for every operation that takes input a schema describes.
 *
 * - A valid request is never refused for its shape: it gets the success
 *   status, or only what no schema can express and the descriptions state
 *   (a signature that does not verify, a template or policy that is not
 *   stored, `Unsigned` without ALLOW_UNSIGNED, an id that exists).
 * - A request with one rule broken is a 400 whose message names the broken
 *   member or one of its parents, with the code for shapes.
 * - Every answer matches the schema the document gives its status.
 * - Every rule of every input schema is broken at least once, on each of
 *   the document's examples and a few more known-good inputs.
 * @module
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { base58 } from "@scure/base";
import { generateEd25519Key } from "../../client/mod.ts";
import { fieldPath } from "../../src/domain/validate.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import { ajvFor, DOC_ID } from "../support/openapi_ajv.ts";
import {
  breaks,
  type Broken,
  collectSamples,
  replaced,
  resolve,
  ruleSites,
  schemaAt,
  type SchemaContext,
  valid,
} from "../support/schema_arbitrary.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const SCHEMAS = "/components/schemas";
const escape = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

/** One operation under test: where its input's schema is, how to send it, what may come back. */
interface Operation {
  name: string;
  path: string;
  method: string;
  /** Location of the input's schema (the body, or an object of the query parameters). */
  at: string;
  /** Query parameters: values travel as text. */
  query?: boolean;
  send(value: unknown): Promise<Response>;
  /** Besides the success status, the 4xx codes a valid input may get. */
  allowed: { success: number[]; codes: string[] };
  /** The code of a refusal for a broken rule. */
  refusal(broken: Broken): string;
  /** Known-good inputs whose every rule is broken in turn. */
  bases: unknown[];
}

/** The document as served, with an object schema for each operation's query parameters. */
function withQuerySchemas(doc: Json): Json {
  const copy = structuredClone(doc);
  for (const [path, operationId] of [["/intents", "intents_list"], ["/events", "events_list"]]) {
    const properties: Json = {};
    for (const p of copy.paths[path].get.parameters) {
      if (p.in === "query") properties[p.name] = p.schema;
    }
    // Unknown query parameters are refused, as unknown members are.
    copy.components.schemas[`Query_${operationId}`] = {
      type: "object",
      properties,
      additionalProperties: false,
    };
  }
  return copy;
}

/** A query object as text, and back as the typed values its schema speaks of. */
function queryText(value: Record<string, unknown>): string {
  return new URLSearchParams(Object.entries(value).map(([k, v]) => [k, String(v)])).toString();
}

function queryValue(ctx: SchemaContext, at: string, text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = schemaAt(ctx.doc, at).properties;
  for (const [name, raw] of new URLSearchParams(text)) {
    const type = properties[name] &&
      schemaAt(ctx.doc, resolve(ctx.doc, `${at}/properties/${name}`)).type;
    out[name] = type === "integer" && /^-?[0-9]+$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

Deno.test("the server accepts what its OpenAPI document accepts and refuses what it refuses", async (t) => {
  const env = { PASSKEY_ORIGINS: "http://localhost:8000", PASSKEY_RP_IDS: "localhost" };
  await withApp({ env }, (h) => conformance(t, h));
});

async function conformance(t: Deno.TestContext, h: Harness) {
  const served: Json = await (await h.fetch("/openapi.json")).json();
  const doc = withQuerySchemas(served);
  const ajv = ajvFor(doc);
  const validAt = (at: string, value: unknown) => {
    const validate = ajv.getSchema(`${DOC_ID}#${at}`);
    assert.ok(validate, `no schema at ${at}`);
    return validate(value) as boolean;
  };
  const ctx: SchemaContext = { doc, samples: new Map(), samplesOnly: new Set(), valid: validAt };
  const admin = { authorization: h.auth };
  const call = (path: string, init: RequestInit = {}) => h.fetch(path, init);

  // The documents the examples reference, and the examples themselves: the feed then has events.
  for (const kind of ["templates", "policies"]) {
    const text = served.paths[`/${kind}`].post.requestBody.content["*/*"].examples.example.value;
    const stored = await call(`/${kind}`, { method: "POST", headers: admin, body: text });
    assert.equal(stored.status, 201, kind);
    await stored.body?.cancel();
  }
  const post = served.paths["/intents"].post.requestBody.content["application/json"];
  const examples = Object.values(post.examples).map((e) => (e as Json).value);
  for (const body of examples) {
    const response = await call("/intents", {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    assert.equal(response.status, 201, await response.text());
  }

  // Known-good strings: those of the examples, and a few more of the same kinds.
  for (const body of examples) {
    collectSamples(ctx, `${SCHEMAS}/${"payload" in body ? "VariantA" : "VariantB"}`, body);
  }
  const urlAt = `${SCHEMAS}/ConfigBody/properties/evidence_extractor_url`;
  const signersAt = `${SCHEMAS}/Multisig/properties/pub_key/properties/signers/propertyNames`;
  const more: [string, string[]][] = [
    [urlAt, [
      served.paths["/config"].put.requestBody.content["application/json"].example
        .evidence_extractor_url,
      "",
      "http://localhost:8081",
      "https://x.example/",
      "http://127.0.0.1:9000/a/b",
      "https://[::1]:8443/v1",
    ]],
    [signersAt, Array.from({ length: 16 }, () => base58.encode(generateEd25519Key().publicKey))],
  ];
  for (const [at, list] of more) {
    ctx.samples.set(at, [...new Set([...(ctx.samples.get(at) ?? []), ...list])]);
  }
  // Event ids and cursors are positions the service handed out; the newest is left out, so that
  // `wait` never holds a request: something always follows `after`.
  const feed = await (await call("/events?limit=1000", { headers: admin })).json();
  const positions = feed.events.slice(0, -1).map((e: Json) => e.id);
  const cursorAt = `${SCHEMAS}/Query_intents_list/properties/cursor`;
  ctx.samples.set(`${SCHEMAS}/OpaqueId`, positions);
  ctx.samples.set(cursorAt, ["", ...positions]);
  // Their rules go beyond their schemas (decoded lengths, curve points, assertions, the normal
  // form, ids handed out), as the descriptions say: only known-good values stand for them.
  for (const field of ["pub_key", "signature"]) {
    ctx.samplesOnly.add(`${SCHEMAS}/Ed25519/properties/${field}`);
  }
  for (const field of ["authenticator_data", "client_data", "pub_key", "signature"]) {
    ctx.samplesOnly.add(`${SCHEMAS}/Passkey/properties/${field}`);
  }
  for (const at of [signersAt, urlAt, `${SCHEMAS}/OpaqueId`, cursorAt]) ctx.samplesOnly.add(at);

  const json = { "content-type": "application/json" };
  const operations: Operation[] = [
    {
      name: "POST /intents",
      path: "/intents",
      method: "post",
      at: "/paths/~1intents/post/requestBody/content/application~1json/schema",
      send: (value) =>
        call("/intents", { method: "POST", headers: json, body: JSON.stringify(value) }),
      allowed: {
        // 200: the same signed body sent again (a replay); 409: another body for a taken id.
        success: [200, 201, 409],
        codes: [
          "invalid_signature",
          "unsigned_not_permitted",
          "template_not_found",
          "policy_not_found",
        ],
      },
      refusal: () => "invalid_body",
      bases: [...examples, { ...examples.find((b) => "intent" in b), authorship: "Unsigned" }],
    },
    {
      name: "PUT /config",
      path: "/config",
      method: "put",
      at: "/paths/~1config/put/requestBody/content/application~1json/schema",
      send: (value) =>
        call("/config", {
          method: "PUT",
          headers: { ...admin, ...json },
          body: JSON.stringify(value),
        }),
      allowed: { success: [200], codes: [] },
      refusal: (broken) =>
        broken.rule.startsWith(urlAt) && !broken.rule.endsWith(": type")
          ? "invalid_evidence_extractor_url"
          : "invalid_body",
      bases: [{ evidence_extractor_url: "https://x.example/v1" }, { evidence_extractor_url: "" }],
    },
    ...[["/intents", "intents_list", "cursor"], ["/events", "events_list", "after"]].map((
      [path, id, position],
    ): Operation => ({
      name: `GET ${path}`,
      path,
      method: "get",
      at: `${SCHEMAS}/Query_${id}`,
      query: true,
      send: (value) =>
        call(`${path}?${queryText(value as Record<string, unknown>)}`, { headers: admin }),
      allowed: { success: [200], codes: [] },
      refusal: () => "invalid_body",
      bases: [{}, {
        limit: 1,
        [position]: feed.events[0].id,
        ...(path === "/events" ? { wait: 0 } : { state: "accepted" }),
      }],
    })),
  ];

  for (const op of operations) {
    const opCtx = { ...ctx, text: op.query };
    // What the server sees: for a query, the text form read back by the parameters' schemas.
    const wire = (value: unknown) =>
      op.query ? queryValue(ctx, op.at, queryText(value as Record<string, unknown>)) : value;
    const conforms = (value: unknown) => validAt(op.at, wire(value));

    const answer = async (value: unknown) => {
      const response = await op.send(value);
      const text = await response.text();
      const schema = served.paths[op.path][op.method].responses[String(response.status)];
      assert.ok(schema, `${op.name}: the document describes no ${response.status}: ${text}`);
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
      const body = JSON.parse(text);
      const pointer = `/paths/${
        escape(op.path)
      }/${op.method}/responses/${response.status}/content/application~1json/schema`;
      assert.ok(validAt(pointer, body), `${op.name} ${response.status}: ${text.slice(0, 300)}`);
      return { status: response.status, body };
    };

    const checkValid = async (value: unknown) => {
      assert.ok(
        conforms(value),
        `${op.name}: generated an invalid input ${JSON.stringify(value).slice(0, 300)}`,
      );
      const { status, body } = await answer(value);
      const fine = op.allowed.success.includes(status) ||
        (status === 400 && op.allowed.codes.includes(body.code));
      assert.ok(
        fine,
        `${op.name}: a valid input got ${status} ${JSON.stringify(body)}: ${
          JSON.stringify(value).slice(0, 400)
        }`,
      );
    };

    /** Sends `value` with `broken`'s first replacement that breaks it; false when none does. */
    const checkBroken = async (value: unknown, broken: Broken) => {
      const bad = broken.candidates.map((c) => replaced(value, broken.path, c)).find((v) =>
        !conforms(v)
      );
      if (bad === undefined) return false;
      const { status, body } = await answer(bad);
      const what = `${op.name}, ${broken.rule} at ${JSON.stringify(broken.path)}`;
      assert.equal(status, 400, `${what}: got ${status} ${JSON.stringify(body)}`);
      assert.equal(body.code, op.refusal(broken), `${what}: ${body.message}`);
      // The message names the member the rule is about, or one that holds it.
      const named = body.message.slice(0, body.message.indexOf(": ")).replace(/^body$/, "");
      const member = fieldPath("", ...broken.path);
      assert.ok(member.startsWith(named) || named.startsWith(member), `${what}: ${body.message}`);
      return true;
    };

    await t.step(`${op.name}: every rule broken on its own, on known-good inputs`, async () => {
      const covered = new Set<string>();
      let sent = 0;
      for (const base of op.bases) {
        await checkValid(base);
        for (const broken of breaks(opCtx, op.at, base)) {
          if (await checkBroken(base, broken)) {
            covered.add(broken.rule);
            sent++;
          }
        }
      }
      const missing = [...ruleSites(opCtx, op.at)].filter((site) => !covered.has(site));
      assert.deepEqual(missing, [], `${op.name}: rules never broken`);
      console.log(`${op.name}: ${covered.size} rules, ${sent} broken inputs`);
    });

    await t.step(`${op.name}: generated valid inputs, and each with one rule broken`, async () => {
      const runs = op.path === "/intents" && op.method === "post" ? 120 : 40;
      const inputs = valid(opCtx, op.at);
      await fc.assert(fc.asyncProperty(inputs, async (value) => await checkValid(value)), {
        numRuns: runs,
      });
      await fc.assert(
        fc.asyncProperty(inputs, fc.nat(), async (value, pick) => {
          const all = breaks(opCtx, op.at, value);
          if (all.length > 0) await checkBroken(value, all[pick % all.length]);
        }),
        { numRuns: runs },
      );
    });
  }
}
