/** `readQuery`: an operation takes only the query parameters it names, each once. */

import assert from "node:assert/strict";
import { ServiceError } from "../../src/errors.ts";
import { readQuery } from "../../src/http/routes/query.ts";
import { STATUS_OF } from "../../src/http/respond.ts";

const KNOWN = ["limit", "cursor"];
const read = (query: string) => readQuery(new Request(`http://x.test/intents${query}`), KNOWN);

function refusal(query: string): string {
  try {
    read(query);
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    assert.equal(STATUS_OF[error.code], 400);
    assert.equal(error.code, "invalid_body");
    return error.message;
  }
  assert.fail(`accepted ${query}`);
}

Deno.test("readQuery returns the parameters an operation names", () => {
  assert.equal(read("").size, 0);
  const params = read("?limit=5&cursor=12");
  assert.equal(params.get("limit"), "5");
  assert.equal(params.get("cursor"), "12");
});

Deno.test("readQuery refuses an unknown parameter, naming it", () => {
  assert.equal(refusal("?limit=5&limt=6"), "limt: unknown query parameter");
  assert.equal(refusal("?=1"), '[""]: unknown query parameter');
  assert.equal(refusal("?LIMIT=1"), "LIMIT: unknown query parameter");
});

Deno.test("readQuery refuses a parameter given twice", () => {
  assert.equal(refusal("?limit=5&limit=100"), "limit: must be given at most once");
  assert.equal(refusal("?cursor=&cursor=1"), "cursor: must be given at most once");
});

Deno.test("readQuery never echoes a name beyond its bound or raw control characters", () => {
  const message = refusal(`?${encodeURIComponent(`\u0007${"x".repeat(100)}`)}=1`);
  assert.ok(!message.includes("\u0007"));
  assert.ok(!message.includes("x".repeat(33)));
});
