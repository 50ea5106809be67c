/**
 * The error mapper: anything that is not a ServiceError becomes a bare 500
 * whose body says nothing about the cause, while the log line carries it.
 * Provoked with a real KV handle that has been closed.
 */

import assert from "node:assert/strict";
import { createApp } from "../../src/http/app.ts";
import type { RequestLogLine } from "../../src/http/request_log.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { readSettings } from "../../src/settings.ts";
import { generateEd25519Key, signVariantB } from "../../client/mod.ts";

const TOKEN = "app-errors-admin-token";

async function brokenApp() {
  const kv = await Deno.openKv(":memory:");
  const lines: RequestLogLine[] = [];
  const store = new KvStore(kv);
  const app = createApp({
    store,
    webhooks: store.webhooks,
    writer: createWriter(store, { batchMax: 1 }),
    settings: readSettings({ ADMIN_TOKEN: TOKEN }),
    log: (line) => lines.push(line),
  });
  kv.close();
  return { app, lines };
}

Deno.test("a 500 says nothing about internals and the log line has the cause", async () => {
  const { app, lines } = await brokenApp();
  const body = signVariantB(
    { id: crypto.randomUUID(), policy_id: "p" },
    generateEd25519Key(),
  );
  const res = await app.handler(
    new Request("http://x/intents", {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "broken-1" },
      body: JSON.stringify(body),
    }),
  );
  assert.equal(res.status, 500);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.equal(res.headers.get("x-request-id"), "broken-1");
  const text = await res.text();
  assert.deepEqual(JSON.parse(text), { message: "internal error", code: "internal" });
  assert.doesNotMatch(text, /closed|database|sqlite|TypeError|stack|\.ts\b|\bat /i);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].status, 500);
  assert.equal(lines[0].request_id, "broken-1");
  assert.ok(lines[0].error && lines[0].error.length > 0, "the log line names the cause");
});

Deno.test("healthz answers 503 unavailable when KV does not answer", async () => {
  const { app } = await brokenApp();
  const res = await app.handler(new Request("http://x/healthz"));
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { message: "storage is not answering", code: "unavailable" });
});

Deno.test("an admin read on a broken KV is a bare 500 too", async () => {
  const { app, lines } = await brokenApp();
  const res = await app.handler(
    new Request("http://x/config", { headers: { authorization: `Bearer ${TOKEN}` } }),
  );
  assert.equal(res.status, 500);
  assert.deepEqual(await res.json(), { message: "internal error", code: "internal" });
  assert.ok(lines[0].error);
});
