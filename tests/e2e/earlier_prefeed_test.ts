/**
 * A version from before the feed (commit `9adcb92`, whose intents lived in
 * blocks under `["intent_batches", …]`) beside this one on one store, on a
 * KV file and over KV Connect: every intent either answered 201 reaches this
 * version's feed exactly once, at dense positions, and reads back by id;
 * another instance of this version starting meanwhile changes nothing of
 * that (src/storage/take_in.ts).
 *
 * The earlier version is checked out from this repository's history; where
 * the history is not at hand (a shallow clone), the test says so and is ignored.
 */

import assert from "node:assert/strict";
import { projectRoot } from "../../testing/spawn_server.ts";
import { auditIntents } from "../support/audit.ts";
import { needsKvConnect, type StoreKind } from "../support/stores.ts";
import { hasCommit, PRE_FEED_COMMIT, startEarlier, submit } from "../support/earlier_version.ts";
import { readFeed } from "../support/governed.ts";
import { startServer, TEST_ADMIN_TOKEN } from "../support/server.ts";
import { sleep } from "../support/time.ts";

const available = await hasCommit(PRE_FEED_COMMIT, "earlier_prefeed_test");

for (const kind of ["file", "kv_connect"] as const satisfies readonly StoreKind[]) {
  Deno.test({
    name:
      `a version from before the feed beside this one: every 201 of either in the feed once [${kind}]`,
    ignore: !available || (kind === "kv_connect" && needsKvConnect().ignore),
    fn: async () => {
      const old = await startEarlier(PRE_FEED_COMMIT, kind);
      const { store } = old;
      const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
      const servers: Awaited<ReturnType<typeof startServer>>[] = [];
      try {
        const accepted = new Set<string>();
        const send = async (url: string) => {
          const { id, body } = await old.sign();
          const status = await submit(url, body);
          assert.equal(status, 201, `${id} at ${url === old.url ? "the earlier version" : url}`);
          accepted.add(id);
        };
        // The earlier version one request at a time: over KV Connect its grouped commits pass
        // denokv's limits, which it predates.
        const earlierSends = async (n: number) => {
          for (let i = 0; i < n; i++) await send(old.url);
        };
        await earlierSends(10);
        const current = await startServer({ kvPath: store.kvPath });
        servers.push(current);
        const thisSends = (n: number) =>
          Promise.all(Array.from({ length: n }, () => send(current.url)));
        // Both at once; then another instance of this version starts, and both go on.
        await Promise.all([earlierSends(15), thisSends(15)]);
        servers.push(await startServer({ kvPath: store.kvPath }));
        await Promise.all([earlierSends(15), thisSends(15)]);
        // Every 201 of either version is in this version's feed once.
        const deadline = performance.now() + 5_000;
        let feed = await readFeed(current.url, TEST_ADMIN_TOKEN);
        while (feed.length < accepted.size && performance.now() < deadline) {
          await sleep(50);
          feed = await readFeed(current.url, TEST_ADMIN_TOKEN);
        }
        const ids = feed.map((e) => e.record.id as string);
        assert.equal(new Set(ids).size, ids.length, "an event twice in the feed");
        assert.deepEqual(new Set(ids), accepted);
        assert.deepEqual(feed.map((e) => Number(e.id)), feed.map((_, i) => i + 1));
        for (const id of accepted) {
          const response: Response = await fetch(`${current.url}/intents/${id}`, {
            headers: auth,
          });
          assert.equal(response.status, 200, id);
          assert.equal((await response.json()).id, id);
        }
        // The operator's offline step rewrites what the earlier version kept as JavaScript
        // values (its documents); then every value is bytes.
        await old.stopServer();
        const upgrade = await new Deno.Command(Deno.execPath(), {
          args: ["task", "-q", "store-upgrade"],
          cwd: projectRoot,
          env: {
            KV_PATH: store.kvPath,
            DENO_KV_ACCESS_TOKEN: Deno.env.get("DENO_KV_ACCESS_TOKEN") ?? "",
          },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const said = new TextDecoder().decode(upgrade.stdout) +
          new TextDecoder().decode(upgrade.stderr);
        assert.equal(upgrade.code, 0, said);
        assert.match(said, /this version's store \([1-9][0-9]* values rewritten as bytes/);
        const kv = await store.open();
        try {
          assert.equal((await auditIntents(kv, { staged: "none" })).length, accepted.size);
        } finally {
          kv.close();
        }
      } finally {
        for (const server of servers) await server.stop();
        await old.stop();
      }
    },
  });
}
