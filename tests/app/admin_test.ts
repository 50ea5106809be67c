/**
 * Admin routes on the whole app: the bearer token on every admin route,
 * `GET /intents` pagination, `GET /intents/{id}`. That intents survive a
 * restart (even a hard kill) of the server is `tests/e2e/restart_test.ts`.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, type IntentRecord, signVariantA } from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  listIntents,
  listPages,
  newPayload,
} from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const TOKEN = "admin-token-for-the-admin-tests-0123";

const ADMIN_ROUTES: [string, string, string?][] = [
  ["PUT", "/config", '{"evidence_extractor_url":""}'],
  ["GET", "/config"],
  ["POST", "/templates", '{"t":1}'],
  ["POST", "/policies", '{"p":1}'],
  ["GET", "/intents"],
  ["GET", "/intents/some-id"],
];

Deno.test("admin routes", async (t) => {
  await withApp({ env: { ADMIN_TOKEN: TOKEN } }, async (h) => {
    await t.step("every admin route answers 401 with WWW-Authenticate: Bearer", async () => {
      const headerSets: [string, Record<string, string>][] = [
        ["no token", {}],
        ["a wrong token", { authorization: "Bearer wrong-token-wrong-token-0000" }],
        ["a token prefix", { authorization: `Bearer ${TOKEN.slice(0, -1)}` }],
        ["a longer token", { authorization: `Bearer ${TOKEN}x` }],
        ["an empty bearer", { authorization: "Bearer " }],
        ["the Basic scheme", { authorization: `Basic ${btoa(`admin:${TOKEN}`)}` }],
        ["another scheme with the right token", { authorization: `Token ${TOKEN}` }],
        ["the bare token", { authorization: TOKEN }],
      ];
      for (const [method, path, body] of ADMIN_ROUTES) {
        for (const [name, headers] of headerSets) {
          const res = await h.fetch(path, {
            method,
            headers: { ...headers, "content-type": "application/json" },
            body,
          });
          assert.equal(res.headers.get("www-authenticate"), "Bearer", `${method} ${path} ${name}`);
          const message = await expectError(res, 401, "unauthorized");
          assert.ok(!message.includes(TOKEN.slice(0, 8)));
        }
      }
    });

    await t.step("checks the token before reading the body", async () => {
      const badBody = await h.fetch("/config", {
        method: "PUT",
        headers: { "content-type": "text/plain" },
        body: "not json",
      });
      await expectError(badBody, 401, "unauthorized");
      const empty = await h.fetch("/templates", { method: "POST", body: "" });
      await expectError(empty, 401, "unauthorized");
    });

    await t.step("the right token opens every admin route", async () => {
      for (const [method, path, body] of ADMIN_ROUTES) {
        const res = await h.fetch(path, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body,
        });
        await res.body?.cancel();
        assert.ok(res.status !== 401, `${method} ${path}: ${res.status}`);
      }
    });

    await t.step("submitting and reading documents need no token", async () => {
      const template = await h.newTemplate();
      const got = await h.fetch(`/templates/${template}`);
      assert.equal(got.status, 200);
      await got.body?.cancel();
      const res = await h.submit(signVariantA(newPayload(template), generateEd25519Key()));
      await expectCreated(res);
    });

    await t.step("GET /intents/{id} of an unknown id is 404", async () => {
      const res = await h.fetch(`/intents/${crypto.randomUUID()}`, {
        headers: { authorization: h.auth },
      });
      await expectError(res, 404, "not_found");
      const odd = await h.fetch(`/intents/${encodeURIComponent("no such id ✓")}`, {
        headers: { authorization: h.auth },
      });
      await expectError(odd, 404, "not_found");
    });

    // The pagination steps below list everything stored so far, so they start from here.
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    const submitted: string[] = (await (await listIntents(h, "?limit=100")).json()).items.map(
      (r: IntentRecord) => r.id,
    ).reverse();
    for (let i = 0; i < 25; i++) {
      // Distinct milliseconds make "newest first" a total order.
      await sleep(3);
      const body = signVariantA(
        newPayload(template, { id: `page-${String(i).padStart(2, "0")}` }),
        key,
      );
      const record = await expectCreated(await h.submit(body));
      submitted.push(record.id as string);
    }
    const newestFirst = [...submitted].reverse();

    await t.step("GET /intents lists newest first with a default limit of 20", async () => {
      const res = await listIntents(h);
      const body = await res.json();
      assert.equal(body.items.length, 20);
      assert.equal(typeof body.cursor, "string");
      assert.deepEqual(body.items.map((r: IntentRecord) => r.id), newestFirst.slice(0, 20));
      const single = await (await h.fetch(`/intents/${body.items[0].id}`, {
        headers: { authorization: h.auth },
      })).json();
      assert.deepEqual(body.items[0], single);
    });

    await t.step("the cursor walks every page without duplicates and ends with null", async () => {
      for (const limit of [1, 7, 10, newestFirst.length, 100]) {
        const pages = await listPages(h, limit);
        const ids = pages.flat().map((r) => r.id);
        assert.deepEqual(ids, newestFirst, `limit ${limit}`);
        assert.equal(new Set(ids).size, ids.length);
        for (const page of pages.slice(0, -1)) assert.equal(page.length, limit);
        assert.ok(pages.at(-1)!.length >= 1 && pages.at(-1)!.length <= limit);
        for (const page of pages) {
          for (let i = 1; i < page.length; i++) {
            assert.ok(page[i - 1].received_at >= page[i].received_at);
          }
        }
      }
    });

    await t.step("the client library pages the same way", async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await h.client.listIntents({ limit: 9, cursor });
        seen.push(...page.items.map((r) => r.id));
        cursor = page.cursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen, newestFirst);
    });

    await t.step("limit outside 1–100 or not a number is 400", async () => {
      for (const limit of ["0", "101", "-1", "abc", "1.5", "1e2", "1000"]) {
        await expectError(await listIntents(h, `?limit=${limit}`), 400, "invalid_body", {
          mentions: "limit",
        });
      }
      for (const limit of ["1", "100"]) {
        const res = await listIntents(h, `?limit=${limit}`);
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
    });

    await t.step("a cursor the service did not hand out is 400", async () => {
      for (const cursor of ["garbage", "!!!", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]) {
        const res = await listIntents(h, `?cursor=${encodeURIComponent(cursor)}`);
        await expectError(res, 400, "invalid_body", { mentions: "cursor" });
      }
    });
  });
});
