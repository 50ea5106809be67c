import assert from "node:assert/strict";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { routes } from "../../src/http/router.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import { ajvFor, DOC_ID } from "../support/openapi_ajv.ts";
import {
  generateEd25519Key,
  rejectionBytes,
  signVariantA,
  signVariantB,
} from "../../client/mod.ts";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The validator of each answer the document describes, from the document as served. */
function validatorsFor(doc: Json) {
  const ajv = ajvFor(doc);
  return (path: string, method: string, status: number, media = "application/json") => {
    const escape = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");
    const pointer =
      `/paths/${escape(path)}/${method}/responses/${status}/content/${escape(media)}` +
      "/schema";
    const validate = ajv.getSchema(`${DOC_ID}#${pointer}`);
    assert.ok(validate, `the document describes no ${status} for ${method} ${path}`);
    return validate as ValidateFunction;
  };
}

function assertMatches(validate: ValidateFunction, value: unknown, what: string) {
  assert.ok(validate(value), `${what}: ${JSON.stringify(validate.errors)}`);
}

async function withService(fn: (h: Harness, doc: Json) => Promise<void> | void) {
  // The examples' passkey assertions were made for `deno task start`'s origin and RP id.
  const env = { PASSKEY_ORIGINS: "http://localhost:8000", PASSKEY_RP_IDS: "localhost" };
  await withApp({ env }, async (h) => {
    const response = await h.fetch("/openapi.json");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    await fn(h, await response.json());
  });
}

Deno.test("the server publishes the document built from its own routes", async () => {
  await withService((_h, doc) => {
    assert.deepEqual(doc, buildOpenApiDocument(routes(), { webhooksAllowHttp: false }));
  });
});

Deno.test("every example request in the document is accepted with 201", async () => {
  await withService(async (h, doc) => {
    const responseSchema = validatorsFor(doc);
    const admin = { authorization: h.auth };
    for (const kind of ["templates", "policies"]) {
      const op = doc.paths[`/${kind}`].post;
      const text = op.requestBody.content["*/*"].examples.example.value;
      const stored = await h.fetch(`/${kind}`, {
        method: "POST",
        headers: { ...admin, "content-type": "application/json" },
        body: text,
      });
      assert.equal(stored.status, 201, kind);
      const body = await stored.json();
      assertMatches(responseSchema(`/${kind}`, "post", 201), body, kind);
      assert.deepEqual(body, op.responses["201"].content["application/json"].example);
    }

    const post = doc.paths["/intents"].post;
    const examples = post.requestBody.content["application/json"].examples;
    const records = post.responses["201"].content["application/json"].examples;
    const validate201 = responseSchema("/intents", "post", 201);
    assert.equal(Object.keys(examples).length, 4);
    for (const [name, example] of Object.entries(examples as Record<string, Json>)) {
      const response = await h.fetch(`/intents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(example.value),
      });
      const record = await response.json();
      assert.equal(response.status, 201, `${name}: ${JSON.stringify(record)}`);
      assertMatches(validate201, record, name);
      const { received_at: _at, ...rest } = record;
      const { received_at: _exampleAt, ...expected } = records[name].value;
      assert.deepEqual(rest, expected, name);
    }

    // The same request again: a replay (200), as the document describes it.
    const first = (Object.values(examples)[0] as Json).value;
    const again = await h.fetch(`/intents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(first),
    });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assertMatches(responseSchema("/intents", "post", 200), await again.json(), "200");
    // The id signed by another key: 409, with an error body the document describes for 409.
    const key = generateEd25519Key();
    const other = first.payload
      ? signVariantA(first.payload, key)
      : signVariantB(first.intent, key);
    const taken = await h.fetch(`/intents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(other),
    });
    const error = await taken.json();
    assert.equal(taken.status, 409, JSON.stringify(error));
    assertMatches(responseSchema("/intents", "post", 409), error, "409");
    assert.equal(error.code, "intent_exists");
  });
});

Deno.test("real responses match the schemas the document publishes for them", async () => {
  await withService(async (h, doc) => {
    const schemaFor = validatorsFor(doc);
    const auth = { authorization: h.auth };
    const cases: [string, string, RequestInit, number][] = [
      ["/healthz", "get", {}, 200],
      ["/config", "get", { headers: auth }, 200],
      ["/config", "get", {}, 401],
      ["/intents", "get", { headers: auth }, 200],
      ["/intents/{id}", "get", { headers: auth }, 404],
      ["/templates/{id}", "get", {}, 404],
    ];
    for (const [path, method, init, status] of cases) {
      const response = await h.fetch(path.replace("{id}", "nothing-here"), {
        ...init,
        method: method.toUpperCase(),
      });
      assert.equal(response.status, status, `${method} ${path}`);
      assertMatches(schemaFor(path, method, status), await response.json(), `${method} ${path}`);
    }
    const refusals: [RequestInit, number][] = [
      [{ headers: { "content-type": "text/plain" }, body: "{}" }, 415],
      [{ headers: { "content-type": "application/json" }, body: "{" }, 400],
      [{ headers: { "content-type": "application/json" }, body: '{"payload":1}' }, 400],
    ];
    for (const [init, status] of refusals) {
      const response = await h.fetch(`/intents`, { ...init, method: "POST" });
      assert.equal(response.status, status);
      assertMatches(schemaFor("/intents", "post", status), await response.json(), `${status}`);
    }
    const put = await h.fetch(`/config`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ evidence_extractor_url: "ftp://nope" }),
    });
    assert.equal(put.status, 400);
    const body = await put.json();
    assert.equal(body.code, "invalid_evidence_extractor_url");
    assertMatches(schemaFor("/config", "put", 400), body, "PUT /config 400");
  });
});

Deno.test("a response that breaks the published schema is caught", async () => {
  await withService((_h, doc) => {
    const schemaFor = validatorsFor(doc);
    assert.equal(schemaFor("/healthz", "get", 200)({ status: "fine" }), false);
    assert.equal(schemaFor("/intents", "post", 409)({ message: "x", code: "internal" }), false);
  });
});

Deno.test("rejections, pending views and 429s match the document, with the headers it names", async () => {
  const env = { RATE_LIMIT_PER_ADDRESS: "1", MAX_PENDING_PER_SIGNER: "1" };
  await withApp({ env }, async (h) => {
    const doc = await (await h.fetch("/openapi.json")).json();
    const schemaFor = validatorsFor(doc);
    const [a, b] = [generateEd25519Key(), generateEd25519Key()];
    const signers = { [base58.encode(a.publicKey)]: 1, [base58.encode(b.publicKey)]: 1 };
    const admin = { authorization: h.auth, "content-type": "application/json" };
    const policy = await (await h.fetch("/policies", {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ authorization: { signers, threshold: 2 } }),
    })).json();
    const json = { "content-type": "application/json" };
    const post = (address: string, path: string, body: unknown) =>
      h.fetchFrom(address, path, { method: "POST", headers: json, body: JSON.stringify(body) });
    const intent = { id: crypto.randomUUID(), policy_id: policy.id };
    const submitted = await post("192.0.2.1", "/intents", signVariantB(intent, a));
    assert.equal(submitted.status, 202);
    assertMatches(schemaFor("/intents", "post", 202), await submitted.json(), "202");
    const view = await (await h.fetch(`/intents/${intent.id}/approvals`)).json();
    assertMatches(schemaFor("/intents/{id}/approvals", "get", 200), view, "pending view");
    // The key's second pending intent: too_many_pending, with Retry-After.
    const another = signVariantB({ ...intent, id: crypto.randomUUID() }, a);
    const second = await post("192.0.2.2", "/intents", another);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get("retry-after"), "60");
    assertMatches(schemaFor("/intents", "post", 429), await second.json(), "too_many_pending");
    // b rejects: a 2-of-2 quorum without b cannot be reached, so it is rejected.
    const signature = {
      Ed25519: {
        pub_key: base58.encode(b.publicKey),
        signature: base58.encode(ed25519.sign(rejectionBytes(intent), b.secretKey)),
      },
    };
    const rejected = await post("192.0.2.3", `/intents/${intent.id}/rejections`, { signature });
    assert.equal(rejected.status, 200);
    const ended = await rejected.json();
    assert.deepEqual(ended, { id: intent.id, state: "rejected" });
    assertMatches(schemaFor("/intents/{id}/rejections", "post", 200), ended, "rejected");
    const record = await (await h.fetch(`/intents/${intent.id}`, { headers: admin })).json();
    assertMatches(schemaFor("/intents/{id}", "get", 200), record, "rejected record");
    // Every answer of a limited operation has the RateLimit headers the document names.
    for (const path of ["/intents", "/intents/{id}/approvals", "/intents/{id}/rejections"]) {
      const responses = doc.paths[path].post.responses as Record<string, Json>;
      for (const response of Object.values(responses)) {
        assert.ok(response.headers.RateLimit && response.headers["RateLimit-Policy"], path);
      }
      assert.ok(responses["429"].headers["Retry-After"], path);
    }
    // Two requests from one address are let in (a 400 here), the third is refused.
    const from = "192.0.2.4";
    await (await post(from, `/intents/${intent.id}/rejections`, {})).body?.cancel();
    assert.equal((await post(from, `/intents/${intent.id}/rejections`, {})).status, 400);
    const over = await post(from, `/intents/${intent.id}/rejections`, {});
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get("retry-after")) >= 1);
    const limited = await over.json();
    assertMatches(schemaFor("/intents/{id}/rejections", "post", 429), limited, "rate_limited");
  });
});
