/** Unit tests of variant detection and body reading (`readSubmission`). */

import assert from "node:assert/strict";
import {
  generateEd25519Key,
  signVariantA,
  signVariantB,
  unsignedVariantB,
} from "../../client/mod.ts";
import { normalizeIntentId, readSubmission } from "../../src/domain/submission.ts";
import { ServiceError } from "../../src/errors.ts";
import { STATUS_OF } from "../../src/http/respond.ts";

const key = generateEd25519Key();
const uuid = "123E4567-E89B-12D3-A456-426614174000";

function rejects(body: unknown, code: string, path: string) {
  assert.throws(
    () => readSubmission(JSON.parse(JSON.stringify(body))),
    (e: unknown) =>
      e instanceof ServiceError && STATUS_OF[e.code] === 400 && e.code === code &&
      e.message.startsWith(path),
  );
}

Deno.test("readSubmission reads Variant A", () => {
  const body = signVariantA({ id: "a-1", template_id: "T", attrs: { fields: { x: 1 } } }, key);
  const s = readSubmission(body);
  assert.equal(s.variant, "A");
  assert.equal(s.id, "a-1");
  assert.equal(s.refKind, "template");
  assert.equal(s.refId, "T");
  assert.equal(s.signed, body.payload);
  assert.equal(s.signature?.kind, "Ed25519");
});

Deno.test("readSubmission reads Variant B and lower-cases its UUID", () => {
  const body = signVariantB({ id: uuid, policy_id: "P" }, key);
  const s = readSubmission(body);
  assert.equal(s.variant, "B");
  assert.equal(s.id, uuid.toLowerCase());
  assert.equal(s.refKind, "policy");
  assert.equal(s.refId, "P");
  assert.equal(s.signed, body.intent);
});

Deno.test("readSubmission reads Unsigned as no signature (the document decides whether it may be)", () => {
  const body = unsignedVariantB({ id: uuid, policy_id: "P" });
  assert.equal(readSubmission(body).signature, null);
  rejects({ ...body, authorship: "unsigned" }, "invalid_body", "authorship");
});

Deno.test("readSubmission refuses bodies that select no variant", () => {
  const a = signVariantA({ id: "a", template_id: "T" }, key);
  const b = signVariantB({ id: uuid, policy_id: "P" }, key);
  for (
    const body of [{}, [], "x", null, { payload: a.payload }, { ...a, extra: 1 }, { ...a, ...b }]
  ) {
    rejects(body, "invalid_body", "body");
  }
});

Deno.test("readSubmission names the field of a shape error", () => {
  const a = signVariantA({ id: "a", template_id: "T" }, key);
  rejects({ ...a, payload: { ...a.payload, extra: 1 } }, "invalid_body", "payload.extra");
  rejects({ ...a, payload: { ...a.payload, attrs: null } }, "invalid_body", "payload.attrs");
  rejects({ ...a, payload: { id: "a" } }, "invalid_body", "payload.template_id");
  rejects({ ...a, payload: { ...a.payload, id: "a\u0000" } }, "invalid_body", "payload.id");
  const b = signVariantB({ id: uuid, policy_id: "P" }, key);
  rejects({ ...b, intent: { ...b.intent, id: "nope" } }, "invalid_body", "intent.id");
  rejects({ ...b, authorship: { Signed: {} } }, "invalid_body", "authorship.Signed");
  rejects(
    { ...b, authorship: { ...(b.authorship as object), x: 1 } },
    "invalid_body",
    "authorship",
  );
});

Deno.test('readSubmission refuses the Variant A ids "." and ".." (no URL can name them)', () => {
  for (const id of [".", ".."]) {
    rejects(signVariantA({ id, template_id: "T" }, key), "invalid_body", "payload.id");
  }
  // Dots elsewhere are fine.
  const ok = readSubmission(signVariantA({ id: "...", template_id: "T" }, key));
  assert.equal(ok.id, "...");
});

Deno.test("normalizeIntentId lower-cases UUIDs only", () => {
  assert.equal(normalizeIntentId(uuid), uuid.toLowerCase());
  assert.equal(normalizeIntentId("Order-ABC"), "Order-ABC");
});
