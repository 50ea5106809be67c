/**
 * The hostile cases' mutator (`tests/fuzz/hostile_cases.ts`) on its own: a
 * case never edits the nodes it inserts, so it cannot nest an object inside
 * itself and the same case always makes the same bytes.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import type { VariantABody } from "../../client/mod.ts";
import { type HostileCase, hostileCaseArb, mutate, Obj } from "../fuzz/hostile_cases.ts";

const body = (): VariantABody =>
  ({
    intent: { a: [1, { b: "c" }] },
    signature: { Ed25519: { d: "e" } },
  }) as unknown as VariantABody;

Deno.test("an object added twice, the second time into its first copy, nests once and stays empty", () => {
  const empty = new Obj([]);
  const c = {
    seed: {},
    tree: [
      { op: "add", at: 0, name: "x", with: empty },
      { op: "add", at: 5, name: "y", with: empty }, // the sixth object: the first copy
    ],
    bytes: { op: "none" },
  } as unknown as HostileCase;
  const text = new TextDecoder().decode(mutate(body(), c).bytes);
  assert.equal(
    text,
    '{"intent":{"a":[1,{"b":"c"}]},"signature":{"Ed25519":{"d":"e"}},"x":{"y":{}}}',
  );
  assert.equal(empty.entries.length, 0);
});

Deno.test("a case mutates the same body into the same bytes every time", () => {
  fc.assert(
    fc.property(hostileCaseArb("marker"), (c) => {
      const first = mutate(body(), c).bytes;
      const second = mutate(body(), c).bytes;
      assert.deepEqual(second, first);
    }),
    { numRuns: 3000 },
  );
});
