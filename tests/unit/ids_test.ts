/** Intent ids made by the client: UUIDv7, in order of time, as the service stores UUIDs. */

import assert from "node:assert/strict";
import { newIntentId } from "../../client/ids.ts";
import { normalizeIntentId } from "../../src/domain/submission.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

Deno.test("newIntentId makes lower-case UUIDv7s the service keeps as they are", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const id = newIntentId();
    assert.match(id, UUID_V7);
    assert.equal(normalizeIntentId(id), id);
    seen.add(id);
  }
  assert.equal(seen.size, 1000);
});

Deno.test("newIntentId carries the time in its first 48 bits, so later ids sort after", () => {
  const at = Date.UTC(2026, 10, 23, 20, 0, 0, 123);
  const id = newIntentId(at);
  assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at);
  assert.ok(newIntentId(at) < newIntentId(at + 1));
  assert.ok(newIntentId(0) < newIntentId(2 ** 48 - 1));
  assert.ok(newIntentId(0).startsWith("00000000-0000-7"));
  assert.ok(newIntentId(2 ** 48 - 1).startsWith("ffffffff-ffff-7"));
  for (const bad of [-1, 2 ** 48, 1.5, NaN]) assert.throws(() => newIntentId(bad), RangeError);
});
