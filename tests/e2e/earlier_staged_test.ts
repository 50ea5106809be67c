/**
 * An earlier version that writes the staged layout (commit `3efe98b`, whose
 * moves copied staged events into the feed and deleted them) beside this one
 * on one networked store: every intent either version answered 201 reaches
 * this version's feed exactly once, within the feed's bound, and reads back
 * by id; an earlier process refuses what it cannot do before it answers
 * (docs/decisions.md, each event is written once).
 *
 * The earlier version is checked out from this repository's history; where
 * the history is not at hand (a shallow clone), the test says so and is ignored.
 */

import assert from "node:assert/strict";
import { auditIntents } from "../support/audit.ts";
import { needsKvConnect } from "../support/stores.ts";
import { hasCommit, STAGED_COPY_COMMIT, startEarlier, submit } from "../support/earlier_version.ts";
import { readFeed } from "../support/governed.ts";
import { startServer, TEST_ADMIN_TOKEN } from "../support/server.ts";
import { sleep } from "../support/time.ts";

const available = await hasCommit(STAGED_COPY_COMMIT, "earlier_staged_test");

Deno.test({
  name: "an earlier staged version beside this one: every 201 of either in the feed once",
  ignore: !available || needsKvConnect().ignore,
  fn: async () => {
    // The earlier version begins the store (staged, on a networked KV) and moves its own events.
    const old = await startEarlier(STAGED_COPY_COMMIT, "kv_connect");
    const { store } = old;
    const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    let current: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const accepted = new Set<string>();
      for (let i = 0; i < 10; i++) {
        const { id, body } = await old.sign();
        assert.equal(await submit(old.url, body), 201);
        accepted.add(id);
      }
      // Moved by the earlier version, into blocks of its own.
      const deadline = performance.now() + 2_000;
      while ((await readFeed(old.url, TEST_ADMIN_TOKEN)).length < 10) {
        assert.ok(performance.now() < deadline, "the earlier version did not move its events");
        await sleep(20);
      }
      current = await startServer({ kvPath: store.kvPath });
      // Both at once, each intent sent to one of them.
      const sent = await Promise.all(Array.from({ length: 60 }, async (_, i) => {
        const { id, body } = await old.sign();
        return { id, status: await submit(i % 2 === 0 ? old.url : current!.url, body) };
      }));
      for (const { id, status } of sent) {
        if (status === 201) accepted.add(id);
        else assert.ok(status >= 500, `${id}: answered ${status}`);
      }
      assert.ok(sent.filter((s) => s.status === 201).length >= 30, "this version stored its own");
      // Every 201 of either version is in this version's feed once, within the bound.
      const within = performance.now() + 2_000;
      let feed = await readFeed(current.url, TEST_ADMIN_TOKEN);
      while (feed.length < accepted.size && performance.now() < within) {
        await sleep(50);
        feed = await readFeed(current.url, TEST_ADMIN_TOKEN);
      }
      const ids = feed.map((e) => e.record.id as string);
      assert.equal(new Set(ids).size, ids.length, "an event twice in the feed");
      for (const id of accepted) assert.ok(ids.includes(id), `${id} is not in the feed`);
      assert.deepEqual(feed.map((e) => Number(e.id)), feed.map((_, i) => i + 1));
      // Each reads back by id from this version, whichever stored it.
      for (const id of accepted) {
        const response: Response = await fetch(`${current.url}/intents/${id}`, { headers: auth });
        assert.equal(response.status, 200, id);
        assert.equal((await response.json()).id, id);
      }
      const kv = await store.open();
      try {
        const audited = await auditIntents(kv, { staged: "none" });
        assert.deepEqual(new Set(audited.map((r) => r.id)), new Set(ids));
      } finally {
        kv.close();
      }
    } finally {
      await current?.stop();
      await old.stop();
    }
  },
});
