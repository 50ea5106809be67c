/**
 * What a webhook endpoint's failures do (docs/interface.md §11), against a real server
 * and receivers that fail as told, on a KV file and over KV Connect, with the
 * retry schedule shortened (`WEBHOOK_RETRY_SCHEDULE_MS`): the same event
 * again after each delay, nothing after it meanwhile; redirects, time-outs
 * and refused connections as failures; `Retry-After` on a 429 or 503
 * replacing the next delay; 410 disabling at once; the failure after the
 * last retry disabling; pause, resume where it stopped, and replay.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { newPayload } from "../support/fixtures.ts";
import type { ProcessHarness } from "../support/process.ts";
import { withProcess } from "../support/process.ts";
import { storeTest, type TestStore } from "../support/stores.ts";
import {
  acknowledged,
  type Delivery,
  LOCAL_WEBHOOKS,
  settled,
  startReceiver,
} from "../support/webhooks.ts";
import { sleep } from "../support/time.ts";
import { freeQuietPort } from "../support/ports.ts";

/** A server on `store` whose retries wait `schedule` (ms each) and attempts time out after 1 s. */
function withRetries(
  store: TestStore,
  schedule: number[],
  fn: (h: ProcessHarness, submit: () => Promise<string>) => Promise<void>,
): Promise<void> {
  const env = {
    ...LOCAL_WEBHOOKS,
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_RETRY_SCHEDULE_MS: schedule.join(","),
  };
  return withProcess({ store, env }, async (h) => {
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    let events = 0;
    await fn(h, async () => {
      const response = await h.submit(signVariantA(newPayload(template), key));
      assert.equal(response.status, 201);
      await response.body?.cancel();
      // A fresh store: the event ids are 1, 2, …
      return String(++events);
    });
  });
}

/** The deliveries of event `id`, in order. */
function of(deliveries: readonly Delivery[], id: string): Delivery[] {
  return deliveries.filter((d) => d.id === id);
}

storeTest(
  "a failing receiver gets the same event again after each delay, and nothing after it meanwhile",
  async (store) => {
    const receiver = startReceiver();
    // 500, then a redirect, then no answer in time, then 204: each attempt of each event.
    receiver.answer((_, attempt) =>
      [
        { status: 500 },
        { status: 302, headers: { location: "/elsewhere" } },
        { status: 500, delayMs: 1500 },
        { status: 204 },
      ][Math.min(attempt, 4) - 1]
    );
    try {
      await withRetries(store, [300, 600, 900], async (h, submit) => {
        const endpoint = await h.client.webhooks.add({ url: receiver.url });
        await submit();
        await submit();
        await receiver.until((d) => acknowledged(d).length === 2, 15_000, "both events");
        const shown = await settled(h.client, endpoint.id, (e) => e.after === "2");
        // Event 2 is first sent once event 1 is acknowledged.
        assert.deepEqual(receiver.deliveries.map((d) => d.id), [
          "1",
          "1",
          "1",
          "1",
          "2",
          "2",
          "2",
          "2",
        ]);
        for (const id of ["1", "2"]) {
          const tries = of(receiver.deliveries, id);
          // Arrival to arrival (the receiver answers the third one after the service gave up).
          const gaps = tries.slice(1).map((d, k) => d.at - tries[k].at);
          // Each delay counts from the end of the failed attempt: at least 300, 600 (+1 s timeout), 900.
          assert.ok(gaps[0] >= 290 && gaps[0] < 2_300, `gap ${gaps[0]}`);
          assert.ok(gaps[1] >= 590 && gaps[1] < 2_600, `gap ${gaps[1]}`);
          assert.ok(gaps[2] >= 1_890 && gaps[2] < 3_900, `gap ${gaps[2]}`);
          // The same webhook-id every time; webhook-timestamp is each attempt's own.
          assert.ok(tries.every((d) => d.id === id && d.event.id === id));
          assert.ok(Number(tries[3].timestamp) >= Number(tries[0].timestamp) + 1);
        }
        const attempts = await h.client.webhooks.attempts(endpoint.id, { limit: 100 });
        assert.deepEqual(
          attempts.map((a) => [a.event_id, a.attempt, a.status, a.error]),
          [
            ["2", 4, 204, null],
            ["2", 3, null, "timeout"],
            ["2", 2, 302, "redirect"],
            ["2", 1, 500, null],
            ["1", 4, 204, null],
            ["1", 3, null, "timeout"],
            ["1", 2, 302, "redirect"],
            ["1", 1, 500, null],
          ],
        );
        assert.ok(attempts.every((a) => a.duration_ms >= 0 && !Number.isNaN(Date.parse(a.at))));
        assert.deepEqual([shown.status, shown.lag], ["active", 0]);
        assert.deepEqual(shown.last_attempt, attempts[0]);
      });
    } finally {
      await receiver.close();
    }
  },
);

storeTest(
  "a Retry-After of at most an hour on a 429 or 503 replaces the next delay",
  async (store) => {
    const receiver = startReceiver();
    receiver.answer((_, attempt) =>
      [
        { status: 429, headers: { "retry-after": "2" } },
        { status: 503, headers: { "retry-after": "7200" } }, // over an hour: the schedule's delay
        { status: 204 },
      ][Math.min(attempt, 3) - 1]
    );
    try {
      await withRetries(store, [200, 200, 200], async (h, submit) => {
        await h.client.webhooks.add({ url: receiver.url });
        await submit();
        await receiver.until((d) => acknowledged(d).length === 1, 10_000, "the event");
        const [first, second, third] = receiver.deliveries.map((d) => d.at);
        assert.ok(second - first >= 1_990, `Retry-After: 2 waited ${second - first} ms`);
        assert.ok(second - first < 4_000);
        assert.ok(third - second >= 190 && third - second < 1_500, `waited ${third - second} ms`);
      });
    } finally {
      await receiver.close();
    }
  },
);

storeTest(
  "a 410 disables an endpoint at once; resuming sends the same event, then the rest",
  async (store) => {
    const receiver = startReceiver();
    receiver.answer(() => ({ status: 410 }));
    try {
      await withRetries(store, [100, 100], async (h, submit) => {
        const endpoint = await h.client.webhooks.add({ url: receiver.url });
        await submit();
        await receiver.until((d) => d.length === 1, 5_000, "the first attempt");
        await submit();
        await sleep(800);
        assert.equal(receiver.deliveries.length, 1, "nothing more is sent to a gone endpoint");
        const gone = await h.client.webhooks.get(endpoint.id);
        assert.deepEqual(
          [gone.status, gone.disabled_reason, gone.after, gone.next_event, gone.lag],
          ["disabled", "gone", null, "1", 2],
        );
        receiver.answer(() => ({ status: 200 }));
        const resumed = await h.client.webhooks.resume(endpoint.id);
        assert.equal(resumed.status, "active");
        assert.equal(resumed.disabled_reason, undefined);
        await receiver.until((d) => acknowledged(d).length === 2, 5_000, "both events");
        assert.deepEqual(receiver.deliveries.map((d) => [d.id, d.status]), [
          ["1", 410],
          ["1", 200],
          ["2", 200],
        ]);
      });
    } finally {
      await receiver.close();
    }
  },
);

storeTest(
  "the failure after the last retry disables an endpoint (failing); refused connections count",
  async (store) => {
    const receiver = startReceiver();
    // A port below the ephemeral range that nothing listens on: no parallel test's listener takes it.
    const closedUrl = `http://127.0.0.1:${freeQuietPort()}/hook`;
    try {
      await withRetries(store, [100, 100], async (h, submit) => {
        // Nothing listens there: each attempt is a connection error.
        const endpoint = await h.client.webhooks.add({ url: closedUrl });
        await submit();
        for (let i = 0; (await h.client.webhooks.get(endpoint.id)).status === "active"; i++) {
          assert.ok(i < 100, "not disabled within 5 s");
          await sleep(50);
        }
        const failing = await h.client.webhooks.get(endpoint.id);
        assert.deepEqual([failing.status, failing.disabled_reason, failing.next_event], [
          "disabled",
          "failing",
          "1",
        ]);
        const attempts = await h.client.webhooks.attempts(endpoint.id);
        assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.error]), [
          [3, null, "connection"],
          [2, null, "connection"],
          [1, null, "connection"],
        ]);
        // Pointed at a receiver that answers and resumed: it goes on where it stopped.
        await h.client.webhooks.update(endpoint.id, { url: receiver.url, status: "active" });
        await receiver.until((d) => acknowledged(d).length === 1, 5_000, "the waiting event");
        assert.equal(receiver.deliveries[0].id, "1");
        await settled(h.client, endpoint.id, (e) => e.after === "1");
        assert.equal((await h.client.webhooks.attempts(endpoint.id))[0].attempt, 1);
      });
    } finally {
      await receiver.close();
    }
  },
);

storeTest(
  "a paused endpoint gets nothing; resumed, it goes on in order; a replay sends again",
  async (store) => {
    const receiver = startReceiver();
    try {
      await withRetries(store, [100], async (h, submit) => {
        const endpoint = await h.client.webhooks.add({ url: receiver.url });
        for (let i = 0; i < 3; i++) await submit();
        await receiver.until((d) => d.length === 3, 5_000, "three events");
        await h.client.webhooks.pause(endpoint.id);
        await submit();
        await submit();
        await sleep(1_000);
        assert.equal(receiver.deliveries.length, 3, "nothing is sent while paused");
        const paused = await h.client.webhooks.replay(endpoint.id, "1");
        assert.deepEqual([paused.status, paused.after, paused.next_event, paused.lag], [
          "paused",
          "1",
          "2",
          4,
        ]);
        await sleep(500);
        assert.equal(receiver.deliveries.length, 3, "a replay does not resume");
        await h.client.webhooks.resume(endpoint.id);
        await receiver.until((d) => d.length === 7, 5_000, "events 2 to 5");
        // The replay, while delivering: from the feed's beginning again.
        await h.client.webhooks.replay(endpoint.id, null);
        await receiver.until((d) => d.length === 12, 5_000, "the whole feed again");
        assert.deepEqual(receiver.deliveries.map((d) => Number(d.id)), [
          1,
          2,
          3,
          2,
          3,
          4,
          5,
          1,
          2,
          3,
          4,
          5,
        ]);
        const caught = await settled(h.client, endpoint.id, (e) => e.after === "5");
        assert.deepEqual([caught.next_event, caught.lag], [null, 0]);
      });
    } finally {
      await receiver.close();
    }
  },
);
