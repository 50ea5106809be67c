/**
 * Several instances on one store at once (docs/interface.md §8, §9, §10):
 * three processes submitting, approving, rejecting and expiring together, on
 * a KV file, over KV Connect, and over KV Connect behind a link of 5 ms each
 * way. Every intent answered 201 or 202 is in the feed exactly once, every
 * instance reads the same order, each intent's own events come in their
 * order, no answer is a 5xx, and a follower on another instance sees each
 * accepted intent within 2 seconds of its 201.
 */

import assert from "node:assert/strict";
import type { Payload } from "../../client/mod.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  type FeedEvent,
  newSigned,
  postApproval,
  postRejection,
  readFeed,
} from "../support/governed.ts";
import { followFeed } from "../../testing/feed_follower.ts";
import { harnessFor } from "../support/process.ts";
import { startServer } from "../support/server.ts";
import { needsKvConnect, newTestStore, type TestStore } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

const CASES: { name: string; store: () => Promise<TestStore>; ignore: boolean }[] = [
  { name: "KV file", store: () => newTestStore("file"), ignore: false },
  { name: "KV Connect", store: () => newTestStore("kv_connect"), ...needsKvConnect() },
  {
    name: "KV Connect, 5 ms each way",
    store: () => newTestStore("kv_connect", { delayMs: 5 }),
    ...needsKvConnect(),
  },
];

for (const { name, store: open, ignore } of CASES) {
  Deno.test(`three instances submit, approve, reject and expire at once [${name}]`, {
    ignore,
  }, async () => {
    const store = await open();
    const instances = await Promise.all(
      [0, 1, 2].map(async () => harnessFor(await startServer({ kvPath: store.kvPath }))),
    );
    const follower = followFeed(instances[2].url, instances[2].adminToken);
    try {
      const [a, b] = [ed25519Signer(), ed25519Signer()];
      // Decided well within their window; the others, under a window of 1 s, expire.
      const governed = await addGoverned(instances[0], "policy", authorizationOf([a, b], 2));
      const brief = await addGoverned(instances[0], "policy", {
        ...authorizationOf([a, b], 2),
        approval_window_s: 1,
      });
      const plain = await addGoverned(instances[1], "policy", authorizationOf([a], 1));
      const statuses: number[] = [];
      const answered = new Map<string, number>();
      const send = async (k: number, signed: Payload) => {
        const response = await instances[k % 3].submit(bodyOf(signed, await a.sign(signed)));
        await response.body?.cancel();
        statuses.push(response.status);
        answered.set((signed as unknown as { id: string }).id, performance.now());
        return response.status;
      };
      // Accepted at once, and pending, from every instance at once.
      const accepted = Array.from({ length: 150 }, () => newSigned("policy", plain) as Payload);
      const pending = Array.from(
        { length: 30 },
        (_, k) => newSigned("policy", k < 20 ? governed : brief) as Payload,
      );
      await Promise.all([
        ...accepted.map((signed, k) => send(k, signed)),
        ...pending.map((signed, k) => send(k + 1, signed)),
      ]);
      // A third approved and a third rejected, on an instance other than the one that stored
      // it; the rest expire.
      await Promise.all(
        pending.slice(0, 20).map(async (signed, k) => {
          const id = (signed as unknown as { id: string }).id;
          const h = instances[(k + 2) % 3];
          const response = k < 10
            ? await postApproval(h, id, { signature: await b.sign(signed) })
            : await postRejection(h, id, { signature: await b.reject(signed) });
          await response.body?.cancel();
          statuses.push(response.status);
        }),
      );
      assert.deepEqual(statuses.filter((s) => s >= 500), []);
      assert.deepEqual(
        Object.entries(Object.groupBy(statuses, String)).map(([s, x]) => [s, x!.length]).sort(),
        [["200", 20], ["201", 150], ["202", 30]],
      );
      // Every 201 reached the follower on another instance within 2 s.
      const lateBy = (id: string) => (follower.seen.get(id) ?? Infinity) - answered.get(id)!;
      const waitUntil = performance.now() + 2_500;
      while (
        accepted.some((s) => !follower.seen.has((s as unknown as { id: string }).id)) &&
        performance.now() < waitUntil
      ) await sleep(50);
      for (const signed of accepted) {
        const id = (signed as unknown as { id: string }).id;
        assert.ok(lateBy(id) <= 2_000, `${id} in the feed ${lateBy(id)} ms after its 201`);
      }
      // The expiries (due at 1 s) are recorded within 5 s of their deadline.
      const ends = (events: FeedEvent[]) => events.filter((e) => e.type === "intent.expired");
      let feed = await readFeed(instances[0].url, instances[0].adminToken);
      const expiresBy = performance.now() + 7_000;
      while (ends(feed).length < 10 && performance.now() < expiresBy) {
        await sleep(200);
        feed = await readFeed(instances[0].url, instances[0].adminToken);
      }
      // One order, the same on every instance.
      for (const h of instances.slice(1)) {
        const theirs = await readFeed(h.url, h.adminToken);
        assert.deepEqual(theirs.slice(0, feed.length), feed);
      }
      assert.deepEqual(feed.map((e) => e.id), feed.map((_, i) => String(i + 1)));
      const lives = new Map<string, string[]>();
      for (const event of feed) {
        lives.set(event.record.id, [...lives.get(event.record.id) ?? [], event.type]);
      }
      for (const signed of accepted) {
        assert.deepEqual(lives.get((signed as unknown as { id: string }).id), ["intent.accepted"]);
      }
      pending.forEach((signed, k) => {
        const life = lives.get((signed as unknown as { id: string }).id)?.join(" ");
        const end = k < 10 ? "intent.accepted" : k < 20 ? "intent.rejected" : "intent.expired";
        assert.equal(life, `intent.pending ${end}`);
      });
      assert.equal(lives.size, 180);
    } finally {
      await follower.stop();
      await Promise.all(instances.map((h) => h.close()));
      await store.close();
    }
  });
}
