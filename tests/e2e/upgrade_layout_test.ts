/**
 * Upgrading a fleet (docs/deployment.md, upgrading): a process of the earlier
 * version, which writes the head layout, beside one of this version on one
 * store. Before the switch both write the head layout and every id is taken
 * once; the operator's step (`deno task store-layout --switch`) switches the
 * store; after it, an earlier process still running stores nothing (it cannot
 * read the head), so no id is taken twice, and a consumer resumes after an
 * event id handed out before the switch.
 *
 * The earlier version is checked out from this repository's history; where
 * the history is not at hand (a shallow clone), the test says so and is ignored.
 */

import assert from "node:assert/strict";
import type { Payload } from "../../client/mod.ts";
import { projectRoot } from "../../testing/spawn_server.ts";
import { auditIntents } from "../support/audit.ts";
import { needsKvConnect } from "../support/stores.ts";
import { hasCommit, HEAD_LAYOUT_COMMIT, startEarlier, submit } from "../support/earlier_version.ts";
import { bodyOf, ed25519Signer, newSigned, readFeed } from "../support/governed.ts";
import { startServer, TEST_ADMIN_TOKEN } from "../support/server.ts";
import { sleep } from "../support/time.ts";

const available = await hasCommit(HEAD_LAYOUT_COMMIT);
if (!available) {
  console.error(
    `upgrade_layout_test: commit ${HEAD_LAYOUT_COMMIT} is not in this checkout's history ` +
      "(a shallow clone): the test beside the earlier version is ignored",
  );
}

async function storeLayout(kvPath: string, ...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "store-layout", ...args],
    cwd: projectRoot,
    env: { KV_PATH: kvPath, DENO_KV_ACCESS_TOKEN: Deno.env.get("DENO_KV_ACCESS_TOKEN") ?? "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: output.code, text: new TextDecoder().decode(output.stdout).trim() };
}

Deno.test({
  name: "an earlier version beside this one: ids taken once before and after the switch",
  ignore: !available || needsKvConnect().ignore,
  fn: async () => {
    // Over KV Connect, as Deno Deploy's KV is reached: a networked store, where this version
    // begins empty stores in the staged layout and says so of one it finds in the head layout.
    // The store of the earlier version, which began the head layout with its first intent.
    const old = await startEarlier(HEAD_LAYOUT_COMMIT, "kv_connect");
    const { store } = old;
    const kvPath = store.kvPath;
    let current: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const signer = ed25519Signer();
      const first = newSigned("policy", old.policyId) as Payload;
      assert.equal(await submit(old.url, bodyOf(first, await signer.sign(first))), 201);
      current = await startServer({ kvPath });
      assert.match(current.stderr(), /the store is in the head layout/);
      assert.deepEqual((await storeLayout(kvPath)).code, 1);
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

      // Before the switch: both write the head layout; each id is taken once (the second
      // answer is the same submission's replay).
      const before = await race([old.url, current.url], 40);
      for (const { id, statuses } of before) {
        assert.equal(statuses.filter((s) => s === 201).length, 1, `${id}: ${statuses}`);
        assert.deepEqual(statuses.filter((s) => s !== 201), [200], `${id}: ${statuses}`);
      }
      const handedOut = (await readFeed(current.url, TEST_ADMIN_TOKEN)).at(-1)!.id;

      // The operator's step, with the earlier process still running (what the docs warn of).
      const switched = await storeLayout(kvPath, "--switch");
      assert.equal(switched.code, 0);
      assert.match(switched.text, /switched from the head layout to the staged layout/);
      assert.equal((await storeLayout(kvPath)).code, 0);

      // After it: this version stores; the earlier one cannot read the head and stores
      // nothing, so no id is taken twice.
      const after = await race([current.url, old.url], 40);
      for (const { id, statuses } of after) {
        assert.equal(statuses[0], 201, `${id}: ${statuses}`);
        assert.ok(statuses[1] >= 500, `${id}: the earlier version answered ${statuses[1]}`);
      }
      // A consumer resumes after an id handed out before the switch, within the feed's bound.
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
      const kv = await store.open();
      try {
        assert.equal((await auditIntents(kv, { staged: "none" })).length, 81);
      } finally {
        kv.close();
      }
    } finally {
      await current?.stop();
      await old.stop();
    }
  },
});
