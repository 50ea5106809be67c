/**
 * The webhook storage (`src/storage/kv_webhook_store.ts`) on a KV file and over KV
 * Connect (denokv's limits): endpoints within 100, leases that only one
 * holder has at a time and whose due work moves with them, writes of a
 * delivery refused once the endpoint or the lease changed, the attempts log
 * kept to its last 100, and a removal that leaves nothing behind. Every value
 * it writes is bytes or a KvU64.
 */

import assert from "node:assert/strict";
import { isCurrentLayout } from "../../tools/store_upgrade/earlier_layouts.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { keys } from "../../src/storage/keys.ts";
import { cost, keyBytes, plus, SMALL_VALUE_BYTES, within } from "../../src/storage/layout.ts";
import { DUE_REMOVED } from "../../src/storage/kv_webhook_store.ts";
import {
  afterAttempt,
  type AttemptRecord,
  type Endpoint,
  newEndpoint,
  newEndpointId,
  replayEndpoint,
} from "../../src/webhooks/endpoint.ts";
import { ATTEMPTS_KEPT, type Lease, type WebhookStore } from "../../src/webhooks/store.ts";
import { storeTest, type TestStore } from "../support/stores.ts";

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

async function withWebhooks(
  store: TestStore,
  fn: (webhooks: WebhookStore, kv: Deno.Kv) => Promise<void>,
): Promise<void> {
  const kv = await store.open();
  try {
    await fn(new KvStore(kv, { now: () => new Date(T0) }).webhooks, kv);
  } finally {
    kv.close();
  }
}

/** Creation times one millisecond apart: ids sort by their millisecond, not within one. */
let clock = T0;

async function create(webhooks: WebhookStore, limit = 100): Promise<Endpoint> {
  const created = await webhooks.createEndpoint(
    (head) =>
      newEndpoint({
        id: newEndpointId(++clock),
        url: "https://hooks.example/in",
        events: null,
        description: "",
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        head,
        now: new Date(T0),
      }),
    limit,
  );
  assert.notEqual(created, "too_many");
  return created as Endpoint;
}

/** The due work of kind `webhook` for `id`: the times it falls due. */
async function dueTimes(kv: Deno.Kv, id: string): Promise<number[]> {
  const times: number[] = [];
  for await (const entry of kv.list({ prefix: ["due", "webhook"] })) {
    if (entry.key[3] === id) times.push(entry.key[2] as number);
  }
  return times;
}

function attemptOf(n: number): AttemptRecord {
  return {
    eventId: String(n),
    attempt: 1,
    at: new Date(T0 + n).toISOString(),
    status: 204,
    error: null,
    durationMs: 1,
  };
}

storeTest("at most `limit` endpoints; a removal makes room again", async (store) => {
  await withWebhooks(store, async (webhooks) => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await create(webhooks, 3));
    assert.equal(
      await webhooks.createEndpoint(() => {
        throw new Error("must not be made");
      }, 3),
      "too_many",
    );
    assert.deepEqual(
      (await webhooks.listEndpoints()).map((e) => e.endpoint.id),
      made.map((e) => e.id),
    );
    assert.equal(await webhooks.deleteEndpoint(made[1].id), true);
    assert.equal(await webhooks.deleteEndpoint(made[1].id), false);
    await create(webhooks, 3);
    assert.equal((await webhooks.listEndpoints()).length, 3);
  });
});

storeTest(
  "a creation asks for a lease at once; one holder at a time; due work follows the lease",
  async (store) => {
    await withWebhooks(store, async (webhooks, kv) => {
      const e = await create(webhooks);
      assert.deepEqual(await dueTimes(kv, e.id), [T0]);
      const a = await webhooks.takeLease({
        id: e.id,
        holder: "a",
        now: T0,
        until: T0 + 15_000,
        handled: { at: T0 },
      });
      assert.ok(a);
      assert.deepEqual(
        await dueTimes(kv, e.id),
        [T0 + 15_000],
        "the handled entry went with the take",
      );
      // Held and not expired: another holder is refused; the holder itself may take it again.
      assert.equal(
        await webhooks.takeLease({ id: e.id, holder: "b", now: T0 + 14_999, until: T0 + 30_000 }),
        null,
      );
      const renewed = await webhooks.renewLease(a, T0 + 20_000);
      assert.ok(renewed);
      assert.deepEqual(await dueTimes(kv, e.id), [T0 + 20_000]);
      // A renewal checked against an old version fails: the chain proves who held it.
      assert.equal(await webhooks.renewLease(a, T0 + 25_000), null);
      // Expired: another holder takes it over, and the first can neither renew nor release it.
      const b = await webhooks.takeLease({
        id: e.id,
        holder: "b",
        now: T0 + 20_000,
        until: T0 + 35_000,
      });
      assert.ok(b);
      assert.equal(b.holder, "b");
      assert.deepEqual(await dueTimes(kv, e.id), [T0 + 35_000]);
      assert.equal(await webhooks.renewLease(renewed, T0 + 40_000), null);
      assert.equal(await webhooks.releaseLease(renewed, { wake: true, now: T0 }), false);
      // Released with wake: due now, so that another process takes it at once.
      assert.equal(await webhooks.releaseLease(b, { wake: true, now: T0 + 21_000 }), true);
      assert.equal(await webhooks.getLease(e.id), null);
      assert.deepEqual(await dueTimes(kv, e.id), [T0 + 21_000]);
    });
  },
);

storeTest("a delivery's write is refused once the endpoint or the lease changed", async (store) => {
  await withWebhooks(store, async (webhooks) => {
    const e = await create(webhooks);
    let lease = (await webhooks.takeLease({ id: e.id, holder: "a", now: T0, until: T0 + 15_000 }))!;
    let before = (await webhooks.getEndpoint(e.id))!;
    const acked = (n: number, ep: Endpoint) =>
      afterAttempt(ep, { position: n, record: attemptOf(n), endedAt: T0, schedule: [1] });
    // The holder's own renewal does not fail it: the write checks the lease as it stands now.
    lease = (await webhooks.renewLease(lease, T0 + 16_000))!;
    assert.ok(
      await webhooks.recordAttempt(
        { before, leaseVersion: lease.version },
        acked(1, before.endpoint),
        attemptOf(1),
      ),
    );
    before = (await webhooks.getEndpoint(e.id))!;
    assert.equal(before.endpoint.position, 1);
    // A replay made meanwhile wins: the attempt's outcome is not recorded.
    await webhooks.changeEndpoint(e.id, (ep) => replayEndpoint(ep, 0));
    assert.equal(
      await webhooks.recordAttempt(
        { before, leaseVersion: lease.version },
        acked(2, before.endpoint),
        attemptOf(2),
      ),
      null,
    );
    assert.equal(
      await webhooks.moveEndpoint({ before, leaseVersion: lease.version }, {
        ...before.endpoint,
        position: 9,
      }),
      null,
    );
    assert.equal((await webhooks.getEndpoint(e.id))!.endpoint.position, 0);
    // A takeover wins too.
    before = (await webhooks.getEndpoint(e.id))!;
    const b = await webhooks.takeLease({
      id: e.id,
      holder: "b",
      now: T0 + 16_000,
      until: T0 + 30_000,
    });
    assert.ok(b);
    assert.equal(
      await webhooks.recordAttempt(
        { before, leaseVersion: lease.version },
        acked(1, before.endpoint),
        attemptOf(1),
      ),
      null,
    );
    assert.equal((await webhooks.listAttempts(e.id, 100)).length, 1);
  });
});

storeTest(
  "the attempts log keeps the last 100, newest first; a removal leaves nothing",
  async (store) => {
    await withWebhooks(store, async (webhooks, kv) => {
      const e = await create(webhooks);
      const lease: Lease =
        (await webhooks.takeLease({ id: e.id, holder: "a", now: T0, until: T0 + 15_000 }))!;
      for (let n = 1; n <= 105; n++) {
        const before = (await webhooks.getEndpoint(e.id))!;
        const after = afterAttempt(before.endpoint, {
          position: n,
          record: attemptOf(n),
          endedAt: T0,
          schedule: [1],
        });
        assert.ok(
          await webhooks.recordAttempt(
            { before, leaseVersion: lease.version },
            after,
            attemptOf(n),
          ),
        );
      }
      const all = await webhooks.listAttempts(e.id, 100);
      assert.deepEqual(
        all.map((a) => Number(a.eventId)),
        Array.from({ length: 100 }, (_, i) => 105 - i),
      );
      assert.deepEqual((await webhooks.listAttempts(e.id, 3)).map((a) => a.eventId), [
        "105",
        "104",
        "103",
      ]);
      let kept = 0;
      for await (const _ of kv.list({ prefix: ["webhook_attempts", e.id] })) kept++;
      assert.equal(kept, 100);
      // Every value is bytes or a KvU64.
      for await (const entry of kv.list({ prefix: [] })) {
        assert.ok(isCurrentLayout(entry.value), JSON.stringify(entry.key));
      }
      assert.equal(await webhooks.deleteEndpoint(e.id), true);
      const left: string[] = [];
      for await (const entry of kv.list({ prefix: [] })) left.push(JSON.stringify(entry.key));
      assert.deepEqual(
        left.filter((k) => k.includes(e.id)),
        [],
        "its lease, due work and log are gone",
      );
      assert.deepEqual(await webhooks.listAttempts(e.id, 100), []);
      assert.equal(
        await webhooks.renewLease(lease, T0 + 20_000),
        null,
        "the holder learns it is gone",
      );
    });
  },
);

storeTest(
  "admin changes count up for deliverers elsewhere, and tell this process's listeners",
  async (store) => {
    await withWebhooks(store, async (webhooks, kv) => {
      const heard: string[] = [];
      const stop = webhooks.onChange((id) => heard.push(id));
      const start = await webhooks.changeCount();
      const e = await create(webhooks);
      await webhooks.changeEndpoint(e.id, (ep) => ({ ...ep, status: "paused" }));
      // Resumed: due work for now, so that some process takes the lease.
      const before = await dueTimes(kv, e.id);
      await webhooks.changeEndpoint(e.id, (ep) => ({ ...ep, status: "active" }));
      assert.equal(
        (await dueTimes(kv, e.id)).length,
        before.length + (before.includes(T0) ? 0 : 1),
      );
      await webhooks.deleteEndpoint(e.id);
      assert.equal(await webhooks.changeCount(), start + 4n);
      assert.deepEqual(heard, [e.id, e.id, e.id, e.id]);
      stop();
      await create(webhooks);
      assert.equal(heard.length, 4);
    });
  },
);

Deno.test("a removal, the largest webhook commit, stays within denokv's limits", () => {
  // An endpoint id as the longest key part it can be (see `isEndpointId`).
  const id = keyBytes(["wh_00000000000000000000000000000000"]);
  const removal = plus(
    cost.check(id + 16),
    cost.check(keyBytes(keys.webhooksCount)),
    cost.remove(id + 16),
    cost.remove(id + 32),
    ...Array.from({ length: DUE_REMOVED }, () => cost.remove(id + 48)),
    ...Array.from({ length: ATTEMPTS_KEPT }, () => cost.remove(id + 40)),
    cost.set(keyBytes(keys.webhooksCount), SMALL_VALUE_BYTES),
    cost.set(keyBytes(keys.webhookChanges), SMALL_VALUE_BYTES),
  );
  assert.ok(within(removal));
});
