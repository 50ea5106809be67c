/**
 * Ids on every `{id}` path (`/intents/{id}`, `/templates/{id}`,
 * `/policies/{id}`; docs/interface.md §7): an id no resource can have (over 128 code
 * points, control characters, a malformed percent-encoding) is a plain 404
 * `not_found`, never a 500 from a store asked for an impossible key; an id of
 * exactly 128 code points is an ordinary id (404 when absent, 200 when
 * stored). That no store read happens is checked in-process by
 * `tests/unit/id_paths_test.ts`.
 */

import assert from "node:assert/strict";
import { signVariantA } from "../../client/mod.ts";
import { expectCreated, expectError, newPayload } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { submitKit } from "../support/submit_kit.ts";

/** Path segments (as sent on the wire) that name nothing that can exist, and why. */
const IMPOSSIBLE: [string, string][] = [
  ["x".repeat(5000), "5,000 characters"],
  [encodeURIComponent("é".repeat(129)), "129 code points"],
  ["%00", "NUL"],
  ["a%1Fb", "a C0 control"],
  ["%7F", "DEL"],
  ["a%C2%85b", "a C1 control (NEL)"],
  ["%E0%A4%A", "a cut percent-encoding"],
  ["%", "a lone percent sign"],
  ["%ED%A0%80", "an encoded lone surrogate"],
];

/** 128 code points (192 UTF-16 code units), each outside ASCII. */
const ID_128 = "é😀".repeat(64);

Deno.test("every {id} path answers an impossible id with 404", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, key } = await submitKit(h);
    const admin = { headers: { authorization: h.auth } };
    const paths: [string, RequestInit][] = [
      ["/intents/", admin],
      ["/templates/", {}],
      ["/policies/", {}],
    ];

    for (const [prefix, init] of paths) {
      await t.step(`${prefix}{id} is 404 not_found for impossible ids`, async () => {
        for (const [segment, what] of IMPOSSIBLE) {
          const response = await h.fetch(prefix + segment, init);
          assert.equal(response.status, 404, `${prefix}… with ${what}`);
          await expectError(response, 404, "not_found", { notEcho: segment.slice(0, 8) });
        }
      });
    }

    await t.step("/intents/{id} still asks for the admin token first", async () => {
      const response = await h.fetch(`/intents/${"x".repeat(5000)}`);
      assert.equal(response.headers.get("www-authenticate"), "Bearer");
      await expectError(response, 401, "unauthorized");
    });

    await t.step(
      "an id of exactly 128 code points is 404 while absent and 200 once stored",
      async () => {
        assert.equal([...ID_128].length, 128);
        const path = `/intents/${encodeURIComponent(ID_128)}`;
        await expectError(await h.fetch(path, admin), 404, "not_found");
        await expectError(
          await h.fetch(`/intents/${encodeURIComponent(ID_128 + "é")}`, admin),
          404,
          "not_found",
        );

        const record = await expectCreated(
          await h.submit(signVariantA(newPayload(templateId, { id: ID_128 }), key)),
        );
        assert.equal(record.id, ID_128);
        const got = await h.fetch(path, admin);
        assert.equal(got.status, 200);
        assert.deepEqual(await got.json(), record);
      },
    );
  });
});
