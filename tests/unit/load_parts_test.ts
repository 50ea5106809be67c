/**
 * The measuring tools' body builder: every body carries the id it reports, as
 * the server will store it, and the percentile picks by rank.
 */

import assert from "node:assert/strict";
import { bodyBuilder, buildBodies } from "../../tools/load/bodies.ts";
import { percentile } from "../../tools/load/figures.ts";

for (const variant of ["A", "B"] as const) {
  Deno.test(`the body builder reports the intent id inside each Variant ${variant} body`, async () => {
    const build = await bodyBuilder({ variant, kind: "ed25519", origin: "" }, "ref");
    const { ids, bodies } = await buildBodies(build, 300);
    assert.equal(new Set(ids).size, 300);
    const decoder = new TextDecoder();
    bodies.forEach((body, i) => {
      const value = JSON.parse(decoder.decode(body));
      const id = variant === "A" ? value.payload.id : value.intent.id;
      assert.equal(id, ids[i]);
      // The server stores UUID ids lower-cased; the reported id must already be that form.
      if (variant === "B") assert.equal(id, id.toLowerCase());
    });
  });
}

Deno.test("percentile picks the value at the rank ceil(p% × n)", () => {
  const sorted = new Float64Array(Array.from({ length: 200 }, (_, i) => i + 1));
  assert.equal(percentile(sorted, 50), 100);
  assert.equal(percentile(sorted, 99), 198);
  assert.equal(percentile(sorted, 100), 200);
  assert.equal(percentile(sorted, 0), 1);
  assert.ok(Number.isNaN(percentile(new Float64Array(0), 50)));
});
