/**
 * The OpenAPI document describes rules (docs/interface.md §15): a document's
 * `authorization.rules`, the record of an intent under them, the dry run's
 * answer and the four codes; what the service answers matches it.
 */

import assert from "node:assert/strict";
import { withApp } from "../support/in_process.ts";
import { ajvFor, DOC_ID } from "../support/openapi_ajv.ts";
import {
  authorizationOf,
  bodyOf,
  ed25519Signer,
  newSigned,
  postDocument,
} from "../support/governed.ts";

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

Deno.test("the OpenAPI document describes rules, and the answers match it", async () => {
  await withApp({}, async (h) => {
    const doc = await (await h.fetch("/openapi.json")).json();
    const ajv = ajvFor(doc);
    const schema = (...parts: string[]) => {
      const validate = ajv.getSchema(`${DOC_ID}#/${pointer(...parts)}`);
      assert.ok(validate, parts.join(" "));
      return validate;
    };
    const [e1, e2] = [ed25519Signer(), ed25519Signer()];
    const authorization = authorizationOf([e1, e2], 1, {
      rules: [
        { when: "intent.attrs.fields.amount > 10.0", threshold: 2 },
        { when: "true", kinds: ["Ed25519"] },
      ],
    });
    const authorizationSchema = schema("components", "schemas", "Authorization");
    assert.ok(authorizationSchema(authorization), JSON.stringify(authorizationSchema.errors));
    // Two effects in one rule, and a kind twice, are refused by the published schema too.
    const rule = schema("components", "schemas", "Rule");
    assert.ok(!rule({ when: "true", deny: "x", threshold: 1 }));
    assert.ok(!rule({ when: "true", kinds: ["Passkey", "Passkey"] }));
    assert.ok(!rule({ when: "true" }));

    const created = await postDocument(h, "policy", JSON.stringify({ authorization }));
    const policy = (await created.json()).id;
    const signed = newSigned("policy", policy, { attrs: { fields: { amount: 50 } } });
    const body = bodyOf(signed, await e1.sign(signed));
    const tried = await h.fetch("/intents/dry-run", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = await tried.json();
    assert.equal(tried.status, 200);
    const dryRun = schema(
      "paths",
      "/intents/dry-run",
      "post",
      "responses",
      "200",
      "content",
      "application/json",
      "schema",
    );
    assert.ok(dryRun(answer), JSON.stringify(dryRun.errors));
    const response = await h.submit(body);
    const record = await response.json();
    assert.equal(response.status, 202);
    assert.deepEqual(record.approval.kinds, ["Ed25519"]);
    const pending = schema(
      "paths",
      "/intents",
      "post",
      "responses",
      "202",
      "content",
      "application/json",
      "schema",
    );
    assert.ok(pending(record), JSON.stringify(pending.errors));

    const codes = doc.components.schemas.ErrorBody.properties.code.enum as string[];
    for (const code of ["invalid_rule", "rule_denied", "rule_error", "quorum_unreachable"]) {
      assert.ok(codes.includes(code), code);
    }
    const forbidden = JSON.stringify(doc.paths["/intents"].post.responses["403"]);
    for (const code of ["rule_denied", "rule_error", "quorum_unreachable"]) {
      assert.ok(forbidden.includes(code), code);
    }
    assert.equal(doc.paths["/intents/dry-run"].post.operationId, "intents_dry_run");
  });
});
