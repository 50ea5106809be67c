/**
 * `/readyz` reads the store's latest commit attempt through the app, on a
 * real KV file on a full disk (a small tmpfs, root only): not ready after a
 * failed commit, ready again once a commit succeeds or 30 seconds have passed
 * without one — without a write per probe.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { KvStore } from "../../src/storage/kv_store.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { createApp } from "../../src/http/app.ts";
import { readSettings } from "../../src/settings.ts";
import { fillDisk, withTmpfs } from "../support/tmpfs.ts";

const doc = (n: number) => ({
  contentType: "application/json",
  bytes: new TextEncoder().encode(`{"n":${n},"pad":"${"x".repeat(4000)}"}`),
});

Deno.test("/readyz: not ready after a failed commit, ready again after 30 s without one or after a success", async () => {
  await withTmpfs("1m", async (dir) => {
    const kv = await Deno.openKv(join(dir, "intents.kv"));
    let now = Date.UTC(2026, 0, 1);
    const clock = () => new Date(now);
    const store = new KvStore(kv, { now: clock });
    const app = createApp({
      store,
      webhooks: store.webhooks,
      writer: createWriter(store, { batchMax: 1 }),
      settings: readSettings({ ADMIN_TOKEN: "readiness-admin-token" }),
      now: clock,
      log: () => {},
    });
    const probe = async (path = "/readyz") => {
      const response = await app.handler(new Request(`http://x${path}`));
      return [response.status, await response.json()];
    };
    const admin = (n: number) =>
      app.handler(
        new Request("http://x/templates", {
          method: "POST",
          headers: { authorization: "Bearer readiness-admin-token" },
          body: doc(n).bytes,
        }),
      );
    try {
      assert.deepEqual(await probe(), [200, { status: "ready" }]);
      await fillDisk(join(dir, "filler"));
      let status = 0;
      for (let n = 1; n < 100 && status !== 503; n++) status = (await admin(n)).status;
      assert.equal(status, 503);
      const notReady = [503, {
        message: "the last commit failed: storage full",
        code: "unavailable",
      }];
      assert.deepEqual(await probe(), notReady);
      assert.deepEqual(await probe("/healthz"), [200, { status: "ok" }]);
      now += 29_000;
      assert.deepEqual(await probe(), notReady);
      now += 1_000;
      // No commit in the last 30 s: ready again, though the disk is still full.
      assert.deepEqual(await probe(), [200, { status: "ready" }]);
      assert.equal((await admin(1000)).status, 503);
      assert.deepEqual(await probe(), notReady);
      await Deno.remove(join(dir, "filler"));
      assert.equal((await admin(1001)).status, 201);
      assert.deepEqual(await probe(), [200, { status: "ready" }]);
    } finally {
      kv.close();
    }
  });
});
