/**
 * Routing details of the HTTP edge, in-process on a real in-memory KV:
 * HEAD on GET routes, 405 with Allow, and the default passkey origin that
 * follows PORT.
 */

import assert from "node:assert/strict";
import { createApp } from "../../src/http/app.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { readSettings } from "../../src/settings.ts";

async function app() {
  const kv = await Deno.openKv(":memory:");
  const store = new KvStore(kv);
  return {
    kv,
    app: createApp({
      store,
      webhooks: store.webhooks,
      writer: createWriter(store, { batchMax: 1 }),
      settings: readSettings({ ADMIN_TOKEN: "routing-admin-token-0123" }),
      log: () => {},
    }),
  };
}

Deno.test("HEAD is answered on a GET route, with the GET's status and headers and no body", async () => {
  const { kv, app: { handler } } = await app();
  try {
    const res = await handler(new Request("http://x/healthz", { method: "HEAD" }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(await res.text(), "");
  } finally {
    kv.close();
  }
});

Deno.test("a method a route lacks is 405 with Allow listing the route's methods", async () => {
  const { kv, app: { handler } } = await app();
  try {
    const res = await handler(new Request("http://x/config", { method: "DELETE" }));
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, PUT, HEAD");
    assert.deepEqual(await res.json(), {
      message: "DELETE is not allowed here",
      code: "method_not_allowed",
    });
  } finally {
    kv.close();
  }
});

Deno.test("the default accepted passkey origin follows PORT", () => {
  assert.deepEqual(readSettings({ PORT: "9123" }).passkeyOrigins, ["http://localhost:9123"]);
  assert.deepEqual(readSettings({}).passkeyOrigins, ["http://localhost:8000"]);
});
