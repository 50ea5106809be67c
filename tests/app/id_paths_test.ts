/**
 * Ids on every `{id}` path (`/intents/{id}`, `/templates/{id}`,
 * `/policies/{id}`; docs/interface.md §7): an id no resource can have (over 128 code
 * points, control characters, a malformed percent-encoding) is a plain 404
 * `not_found`, never a 500 from a store asked for an impossible key; an id of
 * exactly 128 code points is an ordinary id (404 when absent, 200 when
 * stored). No store read happens for an impossible id: the app is built
 * on a real in-memory KV store whose calls are counted, and an id that could
 * exist is looked up (the counter works).
 */

import assert from "node:assert/strict";
import { signVariantA } from "../../client/mod.ts";
import { expectCreated, expectError, newPayload } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { submitKit } from "../support/submit_kit.ts";
import { createApp } from "../../src/http/app.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { readSettings } from "../../src/settings.ts";
import type { Store } from "../../src/domain/store.ts";

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

const TOKEN = "id-paths-admin-token-0123";

/** The real store, with every method call counted. */
function counted(store: Store): { store: Store; calls: () => number; reset: () => void } {
  let calls = 0;
  const proxy = new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls++;
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, calls: () => calls, reset: () => (calls = 0) };
}

/** Impossible ids, as sent on the wire, for the counted store. */
const IMPOSSIBLE_UNREAD = [
  "x".repeat(5000),
  encodeURIComponent("é".repeat(129)),
  "x".repeat(129),
  "%00",
  "a%1Fb",
  "%7F",
  "a%C2%85b",
  "%E0%A4%A",
  "%ED%A0%80",
];

Deno.test("impossible ids on every {id} path are 404 without a store read", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const kvStore = new KvStore(kv);
    const { store, calls, reset } = counted(kvStore);
    const { handler } = createApp({
      store,
      webhooks: kvStore.webhooks,
      writer: createWriter(store, { batchMax: 1 }),
      settings: readSettings({ ADMIN_TOKEN: TOKEN }),
      log: () => {},
    });
    const get = (path: string) =>
      handler(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    for (const prefix of ["/intents/", "/templates/", "/policies/"]) {
      for (const segment of IMPOSSIBLE_UNREAD) {
        reset();
        const response = await get(prefix + segment);
        assert.equal(response.status, 404, `${prefix}${segment.slice(0, 20)}`);
        assert.equal((await response.json()).code, "not_found");
        assert.equal(calls(), 0, `${prefix}${segment.slice(0, 20)}: the store was asked`);
      }
      // An id that could exist is looked up: the counter sees reads.
      reset();
      const possible = prefix === "/intents/"
        ? encodeURIComponent("é😀".repeat(64))
        : "11111111111111111111111111111111";
      const response = await get(prefix + possible);
      assert.equal(response.status, 404);
      await response.body?.cancel();
      assert.ok(calls() > 0, `${prefix}: a possible id is looked up`);
    }
  } finally {
    kv.close();
  }
});
