/**
 * A feed older than the log (docs/interface.md §14): a store that the
 * version before the log (commit `3efe98b`) wrote, then served by this
 * version, which covers the whole feed from index 0 in the background. Until
 * it has, `GET /log/checkpoint` is 503 (never a checkpoint that leaves the
 * old events out); then the checkpoint verifies against the served key and
 * its tree is the one every event of the feed, old and new, makes (the
 * client's audit).
 *
 * The earlier version is checked out from this repository's history; where
 * the history is not at hand (a shallow clone), the test says so and is ignored.
 */

import assert from "node:assert/strict";
import { auditLog, IntentsClient } from "../../client/mod.ts";
import { hasCommit, STAGED_COPY_COMMIT, startEarlier, submit } from "../support/earlier_version.ts";
import { readFeed } from "../support/governed.ts";
import { startServer, TEST_ADMIN_TOKEN } from "../support/server.ts";
import { sleep } from "../support/time.ts";

const available = await hasCommit(STAGED_COPY_COMMIT, "earlier_log_test");

Deno.test({
  name: "a feed the version before the log wrote is covered from index 0 by this one",
  ignore: !available,
  fn: async () => {
    const old = await startEarlier(STAGED_COPY_COMMIT, "file");
    let current: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      for (let i = 0; i < 30; i++) {
        assert.equal(await submit(old.url, (await old.sign()).body), 201);
      }
      const moved = performance.now() + 2_000;
      while ((await readFeed(old.url, TEST_ADMIN_TOKEN)).length < 30) {
        assert.ok(performance.now() < moved, "the earlier version did not move its events");
        await sleep(20);
      }
      await old.stopServer();
      current = await startServer({ kvPath: old.store.kvPath });
      for (let i = 0; i < 5; i++) {
        assert.equal(await submit(current.url, (await old.sign()).body), 201);
      }
      const client = new IntentsClient({ url: current.url, token: TEST_ADMIN_TOKEN });
      const logKey = await client.log.key();
      // 503 while catching up, then checkpoints that cover every old event at least.
      const statuses = new Set<number>();
      const by = performance.now() + 8_000;
      for (;;) {
        const response: Response = await fetch(`${current.url}/log/checkpoint`, {
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        });
        statuses.add(response.status);
        if (response.status === 200) {
          const size = Number((await response.text()).split("\n")[1]);
          if (size === 35) break;
          assert.ok(size >= 30 && size <= 35, `a checkpoint of ${size} entries`);
        } else {
          await response.body?.cancel();
          assert.equal(response.status, 503);
        }
        assert.ok(performance.now() < by, `not covered within 8 s: ${[...statuses]}`);
        await sleep(100);
      }
      const audit = await auditLog(client, { logKey });
      assert.equal(audit.entries, 35);
      assert.equal(audit.checkpoint.size, 35);
    } finally {
      await current?.stop();
      await old.stop();
    }
  },
});
