/**
 * The public reads that need no signature (docs/interface.md §5, §7, §12):
 * `GET /templates/{id}` and `GET /policies/{id}` spend a token of the client
 * address's budget, misses included, and are served from the document cache,
 * a miss remembered for a second (a document stored meanwhile by another
 * process shows once it has passed); `/healthz` and `/readyz` read KV at most
 * once a second however many probes come. KV reads are counted on the real
 * handle the store is built on.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createApp } from "../../src/http/app.ts";
import { readSettings } from "../../src/settings.ts";
import { keys } from "../../src/storage/keys.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { contentAddress, expectError } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const TOKEN = "public-reads-admin-token";

/** A KV handle whose `get`s of keys starting with `prefix` are counted. */
function countedGets(kv: Deno.Kv, prefix: Deno.KvKey): { kv: Deno.Kv; reads: () => number } {
  let reads = 0;
  const wrapped = new Proxy(kv, {
    get(target, name) {
      if (name === "get") {
        return (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
          if (prefix.every((part, i) => key[i] === part)) reads++;
          return target.get(key, options);
        };
      }
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: wrapped, reads: () => reads };
}

/** The app over `kv`, its store's clock and its own given by `clock`. */
function appOn(kv: Deno.Kv, clock: () => Date = () => new Date()) {
  const store = new KvStore(kv, { now: clock });
  return createApp({
    store,
    webhooks: store.webhooks,
    writer: createWriter(store, { batchMax: 1 }),
    settings: readSettings({ ADMIN_TOKEN: TOKEN, RATE_LIMIT_PER_ADDRESS: "0" }),
    now: clock,
    log: () => {},
  });
}

Deno.test("document reads spend a token of the address's budget, misses included", async () => {
  // Bursts of two, and the limits' clock held still: nothing comes back.
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "1" }, limitClock: () => 0 }, async (h) => {
    const template = await h.newTemplate();
    const policy = await h.newPolicy();
    const from = "192.0.2.7";
    const found = await h.fetchFrom(from, `/templates/${template}`);
    await found.body?.cancel();
    assert.equal(found.status, 200);
    assert.equal(found.headers.get("ratelimit-policy"), '"address";q=2;w=2');
    assert.equal(found.headers.get("ratelimit"), '"address";r=1;t=1');
    const missing = await h.fetchFrom(from, `/policies/${await contentAddress("none")}`);
    await expectError(missing, 404, "not_found");
    assert.equal(missing.headers.get("ratelimit"), '"address";r=0;t=2');
    for (const path of [`/policies/${policy}`, `/templates/${template}`, "/intents/x/approvals"]) {
      const refused = await h.fetchFrom(from, path);
      assert.equal(refused.headers.get("retry-after"), "1", path);
      await expectError(refused, 429, "rate_limited");
    }
    // The budget is the address's, shared with the submissions.
    const submission = await h.fetchFrom(from, "/intents", { method: "POST", body: "{}" });
    await expectError(submission, 429, "rate_limited");
    const other = await h.fetchFrom("192.0.2.8", `/policies/${policy}`);
    await other.body?.cancel();
    assert.equal(other.status, 200);
  });
});

Deno.test("a document is read from KV once; a miss is remembered for a second, then read again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "public-reads-" });
  const path = join(dir, "intents.kv");
  const kv = await Deno.openKv(path);
  // Another process on the same file stores the documents.
  const elsewhereKv = await Deno.openKv(path);
  const elsewhere = new KvStore(elsewhereKv);
  try {
    let now = Date.UTC(2026, 0, 1);
    const counted = countedGets(kv, keys.documentsPrefix("template"));
    const app = appOn(counted.kv, () => new Date(now));
    const get = async (id: string) => {
      const response = await app.handler(new Request(`http://x/templates/${id}`));
      return { status: response.status, text: await response.text() };
    };
    const stored = async (text: string) => {
      const id = await contentAddress(text);
      const bytes = new TextEncoder().encode(text);
      await elsewhere.putDocument("template", id, { contentType: "text/plain", bytes });
      return id;
    };

    const found = await stored("a template");
    assert.deepEqual(await get(found), { status: 200, text: "a template" });
    assert.deepEqual(await get(found), { status: 200, text: "a template" });
    assert.equal(counted.reads(), 1, "found once, then served from memory");

    const later = "a template stored a moment later";
    const id = await contentAddress(later);
    assert.equal((await get(id)).status, 404);
    assert.equal((await get(id)).status, 404);
    assert.equal(counted.reads(), 2, "a miss is remembered");
    await stored(later);
    now += 999;
    assert.equal((await get(id)).status, 404, "still remembered as missing");
    assert.equal(counted.reads(), 2);
    now += 1;
    assert.deepEqual(await get(id), { status: 200, text: later });
    assert.deepEqual(await get(id), { status: 200, text: later });
    assert.equal(counted.reads(), 3, "read again once the miss had passed, then kept");
  } finally {
    kv.close();
    elsewhereKv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("/healthz and /readyz under a burst read KV at most once a second", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const counted = countedGets(kv, keys.health);
    const app = appOn(counted.kv);
    const started = performance.now();
    const answers: number[] = [];
    while (performance.now() - started < 2_500) {
      const burst = Array.from({ length: 20 }, async (_, i) => {
        const response = await app.handler(
          new Request(`http://x/${i % 2 === 0 ? "healthz" : "readyz"}`),
        );
        await response.body?.cancel();
        return response.status;
      });
      answers.push(...await Promise.all(burst));
      await sleep(20);
    }
    const elapsed = performance.now() - started;
    assert.ok(answers.length >= 400);
    assert.ok(answers.every((status) => status === 200));
    // One read when the first probe came, then one a second at most.
    assert.ok(counted.reads() <= Math.floor(elapsed / 1_000) + 1, `${counted.reads()} reads`);
    assert.ok(counted.reads() >= 2, "read again once a second had passed");
  } finally {
    kv.close();
  }
});
