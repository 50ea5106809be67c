/**
 * `PUT /config`'s body schema carries the extractor URL rule: its refusals are
 * `invalid_evidence_extractor_url` with the rule's reason, and a body of the
 * wrong shape is `invalid_body` first.
 */

import assert from "node:assert/strict";
import { ServiceError } from "../../src/errors.ts";
import { ConfigBodySchema } from "../../src/domain/schemas.ts";
import { validate } from "../../src/domain/validate.ts";
import { STATUS_OF } from "../../src/http/respond.ts";

const CODES = { extractor_url: "invalid_evidence_extractor_url" } as const;

function refusal(body: unknown): [string, string] {
  try {
    validate(ConfigBodySchema, body, "", { codes: CODES });
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    assert.equal(STATUS_OF[error.code], 400);
    return [error.code, error.message];
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

Deno.test("the config body accepts the default and a URL in normal form", () => {
  for (const url of ["", "http://localhost:8081", "https://x.example/v1"]) {
    const body = { evidence_extractor_url: url };
    assert.equal(validate(ConfigBodySchema, body, "", { codes: CODES }), body);
  }
});

Deno.test("a refused URL is invalid_evidence_extractor_url with the rule's reason", () => {
  assert.deepEqual(refusal({ evidence_extractor_url: "ftp://x.example" }), [
    "invalid_evidence_extractor_url",
    "evidence_extractor_url: must be an absolute URL starting with http:// or https://",
  ]);
  assert.deepEqual(refusal({ evidence_extractor_url: "http://0x7f.1/" }), [
    "invalid_evidence_extractor_url",
    "evidence_extractor_url: is not in its normal form; write it as http://127.0.0.1/",
  ]);
});

Deno.test("a body of the wrong shape is invalid_body, even with a refused URL in it", () => {
  assert.deepEqual(refusal({ evidence_extractor_url: "ftp://x.example", extra: 1 }), [
    "invalid_body",
    "extra: unknown member",
  ]);
  assert.deepEqual(refusal({ evidence_extractor_url: 5 }), [
    "invalid_body",
    "evidence_extractor_url: expected a string",
  ]);
  assert.deepEqual(refusal(7), ["invalid_body", "body: expected an object"]);
});

Deno.test("without codes, every refusal is invalid_body", () => {
  assert.throws(
    () => validate(ConfigBodySchema, { evidence_extractor_url: "ftp://x.example" }, ""),
    (error) => error instanceof ServiceError && error.code === "invalid_body",
  );
});
