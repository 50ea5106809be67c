/**
 * Upgrading a fleet (docs/deployment.md, upgrading): a process of an earlier
 * version, which writes the head layout (every commit checks and moves a
 * KvU64 feed head), beside one of this version on one store. The earlier
 * version begins the store; this version's start makes the fence
 * (`src/storage/fence.ts`); from then on the earlier process stores nothing
 * (it cannot read the head), so no id is taken twice, and a consumer resumes
 * after an event id the earlier version handed out.
 *
 * The earlier version is checked out from this repository's history; where
 * the history is not at hand (a shallow clone), the test says so and is ignored.
 */

import assert from "node:assert/strict";
import type { Payload } from "../../client/mod.ts";
import { auditIntents } from "../support/audit.ts";
import { needsKvConnect } from "../support/stores.ts";
import { hasCommit, HEAD_LAYOUT_COMMIT, startEarlier, submit } from "../support/earlier_version.ts";
import { bodyOf, ed25519Signer, newSigned, readFeed } from "../support/governed.ts";
import { startServer, TEST_ADMIN_TOKEN } from "../support/server.ts";
import { sleep } from "../support/time.ts";

const available = await hasCommit(HEAD_LAYOUT_COMMIT, "upgrade_layout_test");

Deno.test({
  name:
    "an earlier head-layout version beside this one: fenced at this one's start, ids taken once",
  ignore: !available || needsKvConnect().ignore,
  fn: async () => {
    // Over KV Connect, as Deno Deploy's KV is reached.
    // The store of the earlier version, which began the head layout with its first intent.
    const old = await startEarlier(HEAD_LAYOUT_COMMIT, "kv_connect");
    const { store } = old;
    const kvPath = store.kvPath;
    let current: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const signer = ed25519Signer();
      const race = async (urls: string[], count: number) => {
        const bodies = await Promise.all(Array.from({ length: count }, async () => {
          const signed = newSigned("policy", old.policyId) as Payload;
          return {
            id: (signed as unknown as { id: string }).id,
            body: bodyOf(signed, await signer.sign(signed)),
          };
        }));
        return await Promise.all(bodies.map(async ({ id, body }) => ({
          id,
          statuses: await Promise.all(urls.map((url) => submit(url, body))),
        })));
      };
      // The earlier version alone: it begins the head layout, and hands out event ids.
      const before = await race([old.url], 20);
      for (const { id, statuses } of before) assert.deepEqual(statuses, [201], id);
      const handedOut = (await readFeed(old.url, TEST_ADMIN_TOKEN)).at(-1)!.id;
      assert.equal(handedOut, "20");

      current = await startServer({ kvPath });
      assert.match(current.stderr(), /took over a store of an earlier version/);
      // This version stores; the earlier one cannot read the head and stores nothing (it may
      // find the id taken and answer the replay), so no id is taken twice.
      const after = await race([current.url, old.url], 40);
      for (const { id, statuses } of after) {
        assert.equal(statuses[0], 201, `${id}: ${statuses}`);
        assert.ok(statuses[1] === 200 || statuses[1] >= 500, `${id}: ${statuses}`);
      }
      // A consumer resumes after an id the earlier version handed out, within the feed's bound.
      const wanted = new Set(after.map(({ id }) => id));
      const deadline = performance.now() + 2_000;
      let resumed = await readFeed(current.url, TEST_ADMIN_TOKEN, handedOut);
      while (resumed.length < wanted.size && performance.now() < deadline) {
        await sleep(50);
        resumed = await readFeed(current.url, TEST_ADMIN_TOKEN, handedOut);
      }
      assert.deepEqual(new Set(resumed.map((e) => e.record.id)), wanted);
      assert.deepEqual(
        resumed.map((e) => Number(e.id)),
        resumed.map((_, i) => Number(handedOut) + 1 + i),
      );
      // The earlier version's intents read back from this one.
      for (const { id } of before) {
        const response: Response = await fetch(`${current.url}/intents/${id}`, {
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        });
        assert.equal(response.status, 200, id);
        await response.body?.cancel();
      }
      const kv = await store.open();
      try {
        assert.equal((await auditIntents(kv, { staged: "none" })).length, 60);
      } finally {
        kv.close();
      }
    } finally {
      await current?.stop();
      await old.stop();
    }
  },
});
