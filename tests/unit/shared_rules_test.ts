/**
 * The rules written once and used in several places: the whole-number query
 * parameter, the JSON media type, strict JSON as a body (`invalid_json`), the
 * body that is too large, the single-commit writer and the UUID pattern.
 */

import assert from "node:assert/strict";
import { wholeNumber } from "../../src/http/routes/query.ts";
import { isJsonMediaType } from "../../src/media_type.ts";
import { parseJsonBody } from "../../src/domain/strict_json.ts";
import { ServiceError, tooLarge } from "../../src/errors.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { UUID_PATTERN } from "@intents/protocol/intent_id";
import type { PendingIntent } from "../../src/domain/store.ts";

const LIMIT = { min: 1, max: 100, fallback: 20 };
const WAIT = { min: 0, max: 30, fallback: 0 };

function refusal(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    return error;
  }
  assert.fail("accepted");
}

Deno.test("wholeNumber reads digits within each parameter's bounds, and the fallback when absent", () => {
  const read = (query: string, bounds = LIMIT) =>
    wholeNumber(new URLSearchParams(query), "limit", bounds);
  assert.equal(read(""), 20);
  assert.equal(read("limit=1"), 1);
  assert.equal(read("limit=100"), 100);
  assert.equal(read("limit=050"), 50);
  assert.equal(read("limit=0", WAIT), 0);
  assert.equal(read("limit=30", WAIT), 30);
});

Deno.test("wholeNumber refuses what is not a whole number within bounds, naming the parameter", () => {
  for (const value of ["0", "101", "-1", "1.5", "1e2", "abc", "", " 5", "0100", "+5"]) {
    const error = refusal(() => wholeNumber(new URLSearchParams({ limit: value }), "limit", LIMIT));
    assert.equal(error.code, "invalid_body", value);
    assert.equal(error.message, "limit: must be a whole number from 1 to 100", value);
  }
  for (const value of ["31", "030", "-1"]) {
    const error = refusal(() => wholeNumber(new URLSearchParams({ wait: value }), "wait", WAIT));
    assert.equal(error.message, "wait: must be a whole number from 0 to 30", value);
  }
});

Deno.test("isJsonMediaType takes application/json with parameters, in any case, and nothing else", () => {
  for (
    const type of ["application/json", "Application/JSON", " application/json ; charset=utf-8"]
  ) {
    assert.equal(isJsonMediaType(type), true, type);
  }
  for (const type of ["", "text/json", "application/json-seq", "application/jsonx", "text/plain"]) {
    assert.equal(isJsonMediaType(type), false, type);
  }
});

Deno.test("parseJsonBody returns the strict reader's verdicts, and refuses with invalid_json and its hint", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  assert.deepEqual(parseJsonBody(encode('{"a":[1,"x"]}')), {
    value: { a: [1, "x"] },
    compact: true,
  });
  assert.deepEqual(parseJsonBody(encode('{ "a": 1 }')), { value: { a: 1 }, compact: false });
  const duplicate = refusal(() => parseJsonBody(encode('{"a":1,"a":2}')));
  assert.equal(duplicate.code, "invalid_json");
  assert.equal(duplicate.message, "Cannot parse JSON at byte 7: duplicate member name");
  const unsafe = refusal(() => parseJsonBody(encode("[9007199254740993]")));
  assert.equal(unsafe.code, "invalid_json");
  assert.match(unsafe.message, /; send such numbers as strings$/);
});

Deno.test("tooLarge refuses with payload_too_large, as received or as stored", () => {
  assert.equal(tooLarge(10).code, "payload_too_large");
  assert.equal(tooLarge(10).message, "request body is larger than 10 bytes");
  assert.equal(
    tooLarge(61_440, { asStored: true }).message,
    "body: as stored, with its numbers written in full, it is over 61440 bytes",
  );
});

Deno.test("createWriter at batchMax 1 stores each intent in a commit of its own, all at once", async () => {
  const batches: number[] = [];
  let committing = 0;
  let most = 0;
  const writer = createWriter({
    insertIntents: async (batch) => {
      batches.push(batch.length);
      most = Math.max(most, ++committing);
      await Promise.resolve();
      committing--;
      return batch.map(() => ({ outcome: "exists" as const }));
    },
  }, { batchMax: 1 });
  const pending = (id: string) => ({ intent: { id } }) as PendingIntent;
  const results = await Promise.all([writer.insert(pending("a")), writer.insert(pending("b"))]);
  assert.deepEqual(results, [{ outcome: "exists" }, { outcome: "exists" }]);
  assert.deepEqual(batches, [1, 1]);
  assert.equal(most, 2);
});

Deno.test("UUID_PATTERN takes a UUID of any version in either case, and nothing around it", () => {
  for (
    const id of ["123e4567-e89b-12d3-a456-426614174000", "0192F0A4-7B1C-7D2E-8F3A-4B5C6D7E8F90"]
  ) {
    assert.ok(UUID_PATTERN.test(id), id);
  }
  for (
    const id of ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}", ""]
  ) {
    assert.ok(!UUID_PATTERN.test(id), id);
  }
  assert.equal(UUID_PATTERN.flags, "", "published as it is in the OpenAPI document");
});
