/**
 * Impossible ids on every `{id}` path are answered 404 without a store read
 * (docs/interface.md §7), in-process on a real in-memory KV store whose calls are
 * counted; an id that could exist is looked up (the counter works).
 */

import assert from "node:assert/strict";
import { createApp } from "../../src/http/app.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { singleCommitWriter } from "../../src/storage/writer.ts";
import { readSettings } from "../../src/settings.ts";
import type { Store } from "../../src/domain/store.ts";

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

const IMPOSSIBLE = [
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
      writer: singleCommitWriter(store),
      settings: readSettings({ ADMIN_TOKEN: TOKEN }),
      log: () => {},
    });
    const get = (path: string) =>
      handler(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    for (const prefix of ["/intents/", "/templates/", "/policies/"]) {
      for (const segment of IMPOSSIBLE) {
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
