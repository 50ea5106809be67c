/**
 * The shape of a stored intent's record (docs/interface.md §4) as the end-to-end tests
 * check it: the 201 answer's members, then the same record from
 * `GET /intents/{id}`.
 * @module
 */

import assert from "node:assert/strict";
import { expectCreated } from "./fixtures.ts";
import type { Harness } from "./harness.ts";

/** A JSON object as the tests build and read them. */
export type Json = Record<string, unknown>;

/** What {@link expectRecord} expects of the record beyond the body sent. */
export interface ExpectedRecord {
  variant: "A" | "B";
  /** The template id (Variant A) or policy id (Variant B). */
  ref: string;
  kind: string;
  signers: string[];
}

/**
 * Checks the 201 record's exact shape, then that GET /intents/{id} returns the
 * same record.
 *
 * @returns the record.
 */
export async function expectRecord(
  h: Harness,
  response: Response,
  sent: Json,
  expected: ExpectedRecord,
): Promise<Json> {
  const record = await expectCreated(response);
  const refName = expected.variant === "A" ? "template_id" : "policy_id";
  const inner = (expected.variant === "A" ? sent.payload : sent.intent) as Json;
  const members = ["id", "variant", refName, "authorship", "received_at", "state", "request"];
  if (inner.attrs !== undefined) members.push("attrs");
  assert.deepEqual(Object.keys(record).sort(), members.sort());
  assert.equal(record.variant, expected.variant);
  assert.equal(record[refName], expected.ref);
  if (inner.attrs !== undefined) assert.deepEqual(record.attrs, inner.attrs);
  const authorship = record.authorship as { kind: string; signers: string[] };
  assert.deepEqual(Object.keys(authorship).sort(), ["kind", "signers"]);
  assert.equal(authorship.kind, expected.kind);
  assert.deepEqual([...authorship.signers].sort(), [...expected.signers].sort());
  assert.match(
    record.received_at as string,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
  );
  assert.ok(Math.abs(Date.parse(record.received_at as string) - Date.now()) < 60_000);
  assert.equal(record.state, "accepted");
  assert.deepEqual(record.request, sent);

  const got = await h.fetch(`/intents/${encodeURIComponent(record.id as string)}`, {
    headers: { authorization: h.auth },
  });
  assert.equal(got.status, 200);
  assert.deepEqual(await got.json(), record);
  return record;
}
