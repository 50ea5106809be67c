/**
 * The whole submit path in-process: `app.handler` on a real in-memory KV
 * (strict JSON, schemas, decoding, strict Ed25519, JCS, group commit, record,
 * log line discarded). No sockets: this is the service's own CPU per request,
 * the figure to watch when working on throughput.
 */

import { createApp } from "../src/http/app.ts";
import { readSettings } from "../src/settings.ts";
import { createWriter } from "../src/storage/group_commit.ts";
import { KvStore } from "../src/storage/kv_store.ts";
import { generateEd25519Key, IntentsClient, signVariantB } from "../client/mod.ts";

const kv = await Deno.openKv(":memory:");
// A benchmark is one client at full speed: the abuse limits, on by default, are turned off.
const settings = readSettings({
  ADMIN_TOKEN: "bench-admin-token-0123456",
  RATE_LIMIT_PER_ADDRESS: "0",
  RATE_LIMIT_PER_SIGNER: "0",
});
const store = new KvStore(kv);
const app = createApp({
  store,
  webhooks: store.webhooks,
  settings,
  writer: createWriter(store, { batchMax: settings.commitBatchMax }),
  log: () => {},
});
const admin = new IntentsClient({
  url: "http://bench",
  token: settings.adminToken,
  fetch: (input, init) => app.handler(new Request(input, init)),
});
const { id: policy } = await admin.addPolicy('{"bench": true}');
const key = generateEd25519Key();
const encoder = new TextEncoder();
let n = 0;

/** A fresh signed body per call, so every submission is a new intent. */
function nextBody(): Uint8Array<ArrayBuffer> {
  n++;
  const intent = {
    id: crypto.randomUUID(),
    policy_id: policy,
    attrs: { fields: { amount: `${n % 10_000}`, currency: "EUR", reference: `bench-${n}` } },
  };
  return encoder.encode(JSON.stringify(signVariantB(intent, key)));
}

Deno.bench("POST /intents in-process, Variant B Ed25519 (sign excluded)", async (b) => {
  const body = nextBody();
  b.start();
  const response = await app.handler(
    new Request("http://bench/intents", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }),
  );
  await response.arrayBuffer();
  b.end();
  if (response.status !== 201) throw new Error(`status ${response.status}`);
});
